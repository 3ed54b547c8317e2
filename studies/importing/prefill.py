"""``import_prefill``: automatic error spans attached to a study's candidates as suggestions (docs/ai-assistance.md).

Two formats: JSON Lines, one candidate a line ``{"item": "<item id>", "system": "<name>",
"spans": [{"start", "end", "severity", "category" (MQM), "side" (optional), "score" (optional)}]}``
(``"spans": []``: the system found no error, the data marks the candidate clean); and Google's
MQM TSV (one row per error, ``<v>…</v>`` around it; ``No-error`` marks a candidate clean), items
found by ``doc:doc_id:seg_id`` or by ``seg_id``. Spans follow the study's own rules (its severities,
its categories, offsets inside the text); a bad line is named and nothing is stored. Decoys
(studies/controls/decoys.py) are placed in the same transaction, from the study's seed, and so are
the items left out of the hand-out under ``prefill_skip_clean`` (``Item.skipped_clean``).
"""
from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from formats.mqm_tsv import MqmTsvError, is_no_error, parse_mqm_tsv
from studies.controls.decoys import decoy_count, place_decoys
from studies.definition.prefill import draw, skips_clean
from studies.importing.span_checks import category_names, span_checked
from studies.lifecycle.invariants import study_has_assignments
from studies.models import Candidate, PrefillSource, Study, Suggestion

FORMATS = ("jsonl", "mqm-tsv")
MAX_ERRORS = 50


class PrefillError(ValueError):
    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass
class _Parsed:
    spans: dict[int, list[dict[str, Any]]] = field(default_factory=dict)   # candidate pk -> spans
    lines: dict[int, int] = field(default_factory=dict)                     # candidate pk -> first line


def _candidates(study: Study) -> dict[tuple[str, str], Candidate]:
    return {(c.item.external_id, c.system): c
            for c in Candidate.objects.filter(item__study=study, item__is_spam=False).select_related("item")}


def _checked(study: Study, cand: Candidate, raw: Any, where: str, problems: list[str]) -> dict[str, Any] | None:
    """A span of the file checked with the annotators' rules, its optional ``score`` kept."""
    score = None
    if isinstance(raw, dict) and "score" in raw:
        raw = dict(raw)
        score = raw.pop("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or score != score:
            problems.append(f"{where}.score: must be a number.")
            return None
    texts = {"target": cand.text, "source": cand.item.source or ""}
    span, found = span_checked(raw, study, texts, category_names(study), study.effective_severities(), where,
                               source_allowed=study.spec.source_spans_allowed(study))
    if span is None:
        problems.extend(found)
        return None
    span.pop("note", None)
    if score is not None:
        span["score"] = float(score)
    return span


def _parse_jsonl(study: Study, text: str, name: str) -> _Parsed:
    cands = _candidates(study)
    parsed, problems = _Parsed(), []
    for ln, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{name}: line {ln}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: not JSON ({exc.msg}).")
            continue
        if not isinstance(row, dict):
            problems.append(f"{where}: must be an object with item, system and spans.")
            continue
        unknown = sorted(set(row) - {"item", "system", "spans"})
        if unknown:
            problems.append(f"{where}: unknown field(s) {', '.join(unknown)} (a line has item, system, spans).")
        item, system, spans = row.get("item"), row.get("system"), row.get("spans")
        if not isinstance(item, str) or not item:
            problems.append(f"{where}.item: required, the study file's item id.")
            continue
        if not isinstance(system, str) or not system:
            problems.append(f"{where}.system: required, the candidate's system.")
            continue
        cand = cands.get((item, system))
        if cand is None:
            problems.append(f"{where}: no candidate of system {system!r} in item {item!r} of this study.")
            continue
        if cand.pk in parsed.lines:
            problems.append(f"{where}: item {item!r}, system {system!r} again (first on line {parsed.lines[cand.pk]}).")
            continue
        if not isinstance(spans, list):
            problems.append(f"{where}.spans: required, a list of spans ([]: no error found).")
            continue
        parsed.lines[cand.pk] = ln
        kept = [_checked(study, cand, raw, f"{where}.spans[{k}]", problems) for k, raw in enumerate(spans)]
        parsed.spans[cand.pk] = [s for s in kept if s is not None]
    if problems:
        raise PrefillError(problems)
    return parsed


def _parse_mqm_tsv(study: Study, text: str, name: str) -> _Parsed:
    try:
        data = parse_mqm_tsv(text, source=name)
    except MqmTsvError as exc:
        raise PrefillError([str(exc)]) from None
    cands = _candidates(study)
    parsed, problems = _Parsed(), []
    raters: dict[int, str] = {}
    for judgment in data.judgments:
        seg = data.segments[judgment.segment]
        where = f"{name}: line {judgment.line}"
        found = cands.get((f"{seg.doc}:{seg.doc_seg_id}:{seg.global_seg_id}", seg.system)) \
            or cands.get((seg.global_seg_id, seg.system))
        if found is None:
            problems.append(f"{where}: no candidate of system {seg.system!r} for doc {seg.doc!r}, "
                            f"seg_id {seg.global_seg_id!r} in this study.")
            continue
        cand = found
        if seg.target != cand.text:
            problems.append(f"{where}.target: differs from the candidate's text in the study.")
            continue
        if cand.pk in raters and raters[cand.pk] != judgment.rater:
            problems.append(f"{where}.rater: a second rater ({judgment.rater!r}) for a candidate "
                            f"{raters[cand.pk]!r} already marked; a file holds one automatic system.")
            continue
        raters[cand.pk] = judgment.rater
        parsed.lines.setdefault(cand.pk, judgment.line)
        spans = parsed.spans.setdefault(cand.pk, [])
        for error in judgment.errors:
            ewhere = f"{name}: line {error.line or judgment.line}"
            if is_no_error(error.category):
                continue
            if len(error.spans) != 1:
                problems.append(f"{ewhere}: an error needs exactly one span marked with <v>…</v> "
                                f"(found {len(error.spans)}).")
                continue
            span = error.spans[0]
            raw: dict[str, Any] = {"start": span.start, "end": span.end, "side": span.side,
                                   "severity": error.severity.strip().lower()}
            if study.effective_taxonomy():
                raw["category"] = error.category
            checked = _checked(study, cand, raw, ewhere, problems)
            if checked is not None:
                spans.append(checked)
    if problems:
        raise PrefillError(problems)
    return parsed


def _skipped_candidates(study: Study, clean: set[int]) -> set[int]:
    """The candidates of the items ``prefill_skip_clean`` will leave out of the hand-out (as ``Study._apply_skip_clean``
    draws them): every candidate of the item clean, and the item's draw below the share."""
    share = study.skip_clean_share()
    if share <= 0:
        return set()
    by_item: dict[int, list[int]] = {}
    for item_id, pk in Candidate.objects.filter(item__study=study, item__is_spam=False).values_list("item_id", "pk"):
        by_item.setdefault(item_id, []).append(pk)
    return {pk for item_id, pks in by_item.items() if all(p in clean for p in pks)
            and skips_clean(seed=study.seed, item=item_id, share=share) for pk in pks}


def prefill_import(*, study: Study, content: str, file_format: str, source: str, file_name: str = "") -> PrefillSource:
    """Store the file's spans as the study's suggestions, with its decoys; PrefillError naming every bad line."""
    problem = study.spec.prefill_problem(study)
    if problem:
        raise PrefillError([f"slug: {problem}"])
    if file_format not in FORMATS:
        raise PrefillError([f"--format: {file_format!r} is not one of {', '.join(FORMATS)}."])
    source = source.strip()
    if not source or len(source) > 100:
        raise PrefillError(["--source: required, the automatic system's name (at most 100 characters)."])
    existing = PrefillSource.objects.filter(study=study).first()
    if existing is not None:
        raise PrefillError([f"slug: study {study.slug} already has suggestions from {existing.name!r} "
                            f"(imported {existing.created_at:%Y-%m-%d}); a study takes one source."])
    if study.skip_clean_share() > 0 and study_has_assignments(study=study):
        raise PrefillError([f"slug: study {study.slug} has prefill_skip_clean {study.skip_clean_share():g}, and items "
                            "were already handed out: which items are skipped as clean is fixed before that "
                            "(copy_study makes a fresh copy)."])
    reader = _parse_jsonl if file_format == "jsonl" else _parse_mqm_tsv
    parsed = reader(study, content, file_name or "FILE")
    if not parsed.spans:
        raise PrefillError([f"{file_name or 'FILE'}: no candidate of this study in the file."])
    problems = []
    for pk, spans in parsed.spans.items():
        marks = sorted((s["side"], s["start"], s["end"]) for s in spans)
        for a, b in zip(marks, marks[1:]):
            if a[0] == b[0] and b[1] < a[2] and not study.allow_overlap:
                problems.append(f"{file_name or 'FILE'}: line {parsed.lines[pk]}: spans [{a[1]}, {a[2]}) and "
                                f"[{b[1]}, {b[2]}) overlap, and this study does not allow overlapping spans.")
                break
    if problems:
        raise PrefillError(problems[:MAX_ERRORS])
    share = float(study.spec.setting(study, "prefill_decoys") or 0.0)
    seed = int(draw(study.seed, "decoys", source) * 2 ** 62)
    clean = sorted(pk for pk, spans in parsed.spans.items() if not spans)
    # Decoys go only where they will be shown: not on the items left out of the hand-out as clean.
    hidden = _skipped_candidates(study, set(clean))
    texts = dict(Candidate.objects.filter(pk__in=parsed.spans).exclude(pk__in=hidden).values_list("pk", "text"))
    styles = [(s["severity"], s.get("category", "")) for spans in parsed.spans.values() for s in spans
              if s["side"] == "target"]
    n_real = sum(len(spans) for spans in parsed.spans.values())
    taken = {pk: [(s["start"], s["end"]) for s in spans if s["side"] == "target"] for pk, spans in parsed.spans.items()}
    decoys = place_decoys(texts=texts, taken=taken, clean=[pk for pk in clean if pk not in hidden],
                          n=decoy_count(n_real, share), styles=styles,
                          rng=random.Random(seed))
    with transaction.atomic():
        record = PrefillSource.objects.create(
            study=study, name=source, file_name=file_name, file_format=file_format,
            sha256=hashlib.sha256(content.encode()).hexdigest(), clean_candidates=clean, decoy_share=share, seed=seed)
        rows = [Suggestion(source=record, candidate_id=pk, side=s["side"], start=s["start"], end=s["end"],
                           category=s.get("category", ""), severity=s["severity"], score=s.get("score"))
                for pk, spans in parsed.spans.items() for s in spans]
        rows += [Suggestion(source=record, candidate_id=d.candidate, side="target", start=d.start, end=d.end,
                            category=d.category, severity=d.severity, is_decoy=True) for d in decoys]
        Suggestion.objects.bulk_create(rows)
        # Read by the hand-out (no query for a study without suggestions) and by the report's facts.
        provenance = dict(study.provenance) if isinstance(study.provenance, dict) else {}
        provenance["prefill"] = {
            "source": source, "format": file_format, "file": file_name, "sha256": record.sha256,
            "imported_at": record.created_at.isoformat(), "n_candidates": len(parsed.spans), "n_clean": len(clean),
            "n_suggestions": n_real, "n_decoys": len(decoys), "decoy_share": share}
        Study.objects.filter(pk=study.pk).update(provenance=provenance)
        study.provenance = provenance
        # Items whose every candidate the source marks clean leave the hand-out under prefill_skip_clean.
        study._recount_open_items()
    return record
