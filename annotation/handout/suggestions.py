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
