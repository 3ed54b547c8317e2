"""One MQM/ESA error span checked against its study: the rules of an annotator's answer and of a tutorial's gold.

The annotation API (``annotation/handout/answers.py``) and a study file's tutorial gold answers
(``studies/importing/tutorial.py``) check spans with these same rules and messages, so a gold answer
is always one an annotator could give. It lives in ``studies`` because both use it and
studies imports nothing of annotation (import-linter).
"""
from __future__ import annotations

from typing import Any

from studies.definition import taxonomy as tx
from studies.models import Study

SPAN_FIELDS = {"start", "end", "side", "category", "severity", "note"}
#: What a stored span may hold besides: ``whole``, an MQM TSV error without markers, spanning the whole text
#: (annotation/importing/mqm.py); never sent by annotators.
STORED_SPAN_FIELDS = SPAN_FIELDS | {"whole"}
SIDES = ("target", "source")


def category_names(study: Study) -> dict[str, str]:
    """The study's categories by their lower-case name (categories match case-insensitively)."""
    return {c["name"].lower(): c["name"] for c in study.effective_taxonomy()}


def span_checked(span: Any, study: Study, texts: dict[str, str], categories: dict[str, str], severities: list[str],
                 where: str, *, source_allowed: bool) -> tuple[dict[str, Any] | None, list[str]]:
    """``(normalised span, [])`` or ``(None, problems)``, each problem naming ``where`` and the field.

    ``texts`` maps "target" and "source" to the texts the offsets point into; ``source_allowed``
    says whether this study takes spans in the source (omissions).
    """
    if not isinstance(span, dict):
        return None, [f"{where}: must be an object with start, end, severity"
                      f"{', category' if study.effective_taxonomy() else ''}."]
    problems: list[str] = []
    unknown = sorted(set(span) - SPAN_FIELDS)
    if unknown:
        problems.append(f"{where}: unknown field(s) {', '.join(unknown)}.")
    side = span.get("side", "target")
    if side not in SIDES:
        problems.append(f"{where}.side: must be target or source.")
        side = None
    elif side == "source" and not source_allowed:
        problems.append(f"{where}.side: source spans (omissions) are for MQM studies that show the source.")
        side = None
    elif side == "source" and not texts["source"]:
        problems.append(f"{where}.side: this item has no source text to mark.")
        side = None
    start, end = span.get("start"), span.get("end")
    if isinstance(start, bool) or not isinstance(start, int) or isinstance(end, bool) or not isinstance(end, int):
        problems.append(f"{where}: start and end must be whole numbers (character offsets, end excluded).")
    elif side is not None:
        length = len(texts[side])
        if not 0 <= start < end <= length:
            what = "empty" if start >= end else "outside the text"
            problems.append(f"{where}: span [{start}, {end}) is {what} (the {side} text has {length} characters).")
    severity = span.get("severity")
    if severity not in severities:
        problems.append(f"{where}.severity: {'required' if severity in (None, '') else repr(severity) + ' is not a severity of this study'}"
                        f" ({', '.join(severities)}).")
    category = span.get("category")
    has_categories = bool(study.effective_taxonomy())  # MQM's spans carry a category, ESA's do not
    if has_categories:
        if not isinstance(category, str) or not category.strip():
            problems.append(f"{where}.category: required, one of the study's categories.")
        elif category.strip().lower() not in categories:
            problems.append(f"{where}.category: {category!r} is not a category of this study.")
    elif category not in (None, ""):
        problems.append(f"{where}.category: ESA spans have no category.")
    note = span.get("note", "")
    if not isinstance(note, str) or len(note) > tx.NOTE_MAX_LENGTH:
        problems.append(f"{where}.note: must be a string of at most {tx.NOTE_MAX_LENGTH} characters.")
    if problems:
        return None, problems
    out: dict[str, Any] = {"start": start, "end": end, "side": side, "severity": severity}
    if has_categories and isinstance(category, str):
        out["category"] = categories[category.strip().lower()]
    if note:
        out["note"] = note
    return out, []


def overlap_problems(study: Study, spans: list[dict[str, Any]], where: str) -> list[str]:
    """The first overlap of two spans on each side, unless the study allows overlapping spans (touching is fine)."""
    if study.allow_overlap:
        return []
    problems = []
    for side in SIDES:
        marks = sorted((s["start"], s["end"]) for s in spans if s["side"] == side)
        clash = [(a, b) for a, b in zip(marks, marks[1:]) if b[0] < a[1]]
        if clash:
            (a0, a1), (b0, b1) = clash[0]
            problems.append(f"{where}.spans: [{a0}, {a1}) and [{b0}, {b1}) overlap in the {side} text, and this "
                            "study does not allow overlapping spans.")
    return problems


def sorted_spans(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stored order: target spans first, then by start and end."""
    return sorted(spans, key=lambda s: (s["side"] != "target", s["start"], s["end"]))
