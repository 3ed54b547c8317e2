"""Which suggestions (AI pre-filled error spans, ``import_prefill``) an assignment shows.

A study with suggestions records their import in ``Study.provenance["prefill"]``, so a study
without costs no query here. Whether an annotator sees an item with suggestions is drawn
per annotator and item from the study's seed and its ``prefill_share`` setting
(studies/definition/prefill.py); decoys come out exactly like the others, in text order.
"""
from __future__ import annotations

from typing import Any

from studies.definition.prefill import Shown, shows_suggestions
from studies.models import Candidate, Study, Suggestion

from annotation.models import Assignment


def prefill_record(study: Study) -> dict[str, Any] | None:
    """The study's record of its suggestions' import, or None when it has none."""
    record = study.provenance.get("prefill") if isinstance(study.provenance, dict) else None
    return record if isinstance(record, dict) else None


def is_assisted(study: Study, *, annotator_id: int, item_id: int) -> bool:
    share = float(study.spec.setting(study, "prefill_share") or 0.0)
    return shows_suggestions(seed=study.seed, annotator=annotator_id, item=item_id, share=share)


def suggestions_shown(assignment: Assignment, candidates: list[Candidate]) -> Shown | None:
    """None for a study without suggestions; else whether this assignment is assisted, and its suggestions."""
    study = assignment.item.study
    if prefill_record(study) is None:
        return None
    if not is_assisted(study, annotator_id=assignment.annotator_id, item_id=assignment.item_id):
        return Shown(assisted=False, suggestions=[])
    rows = list(Suggestion.objects.filter(candidate__in=[c.pk for c in candidates]).order_by("candidate_id", "side", "start", "end", "public_id"))
    return Shown(assisted=True, suggestions=rows)


def suggestion_payload(suggestion: Suggestion, public_id: str) -> dict[str, Any]:
    """What an annotator (page or API) learns of a suggestion: its opaque id, its candidate's, its span."""
    return {"id": suggestion.public_id, "candidate": public_id, **suggestion.as_span()}


def study_suggestions(study: Study) -> dict[int, list[Suggestion]]:
    """Every suggestion of a study by candidate pk ({} without suggestions): for exports and reports."""
    if prefill_record(study) is None:
        return {}
    out: dict[int, list[Suggestion]] = {}
    for row in Suggestion.objects.filter(source__study=study).order_by("candidate_id", "side", "start", "end", "pk"):
        out.setdefault(row.candidate_id, []).append(row)
    return out


def candidate_suggestions(answer: dict[str, Any], rows: list[Suggestion]) -> list[dict[str, Any]]:
    """A candidate's suggestions with what this answer did with them (researchers only: decoy flag, score):
    ``{id, start, end, side, severity[, category], score, decoy, fate, edit}``; ``fate`` None when the item was
    shown without suggestions."""
    record = answer.get("prefill") if isinstance(answer, dict) else None
    fates = (record or {}).get("suggestions") or {}
    out = []
    for row in rows:
        given = fates.get(row.public_id) or {}
        out.append({"id": row.public_id, **row.as_span(), "score": row.score, "decoy": row.is_decoy,
                    "fate": given.get("fate"), "edit": given.get("edit")})
    return out


def span_origins(answer: dict[str, Any], spans: list[dict[str, Any]],
                 rows: list[Suggestion]) -> list[tuple[str, str | None]]:
    """For each stored span of a candidate: ("annotator", None), ("kept", id) or ("edited", id)."""
    pending: list[tuple[dict[str, Any], str, str]] = []
    for item in candidate_suggestions(answer, rows):
        if item["fate"] == "kept":
            pending.append(({k: item[k] for k in ("start", "end", "side", "severity", "category") if k in item},
                            "kept", item["id"]))
        elif item["fate"] == "edited" and item["edit"]:
            pending.append((item["edit"], "edited", item["id"]))
    out: list[tuple[str, str | None]] = []
    for span in spans:
        found = next((k for k, (s, _, _) in enumerate(pending) if all(span.get(x) == v for x, v in s.items())), None)
        if found is None:
            out.append(("annotator", None))
        else:
            _, origin, sid = pending.pop(found)
            out.append((origin, sid))
    return out
