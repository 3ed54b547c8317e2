"""Reads for the researcher's per-annotator page: counts, every judgment in time order, failed spam checks.

Staff see everything here (systems, which candidate was the scrambled one); none of
it is ever rendered on an annotator's page. Four queries for counts and judgments,
plus the three of ``annotator_quality`` and one for the failed checks' candidates.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, Q

from studies.models import Candidate, Study

from annotation.models import Annotator, Assignment, AssignmentStatus, Judgment
from annotation.quality.checks import spam_check_failed
from annotation.quality.span_controls import study_controls


@dataclass(frozen=True)
class JudgmentRow:
    item: str
    is_spam: bool
    revision: int
    is_current: bool
    submitted_at: datetime
    seconds: float | None
    fast: bool
    failed_check: bool


@dataclass(frozen=True)
class FailedCheck:
    item: str
    spam_of: str
    submitted_at: datetime
    answered: list[str]
    would_pass: str


def annotator_counts(*, annotator: Annotator) -> dict[str, int]:
    """Assignments done, pending and released (one query)."""
    return Assignment.objects.filter(annotator=annotator).aggregate(
        done=Count("pk", filter=Q(status=AssignmentStatus.DONE)),
        pending=Count("pk", filter=Q(status=AssignmentStatus.PENDING)),
        released=Count("pk", filter=Q(status=AssignmentStatus.RELEASED)),
    )


def _judgments(annotator: Annotator) -> list[dict[str, Any]]:
    return [dict(row) for row in Judgment.objects.filter(assignment__annotator=annotator).order_by("submitted_at", "pk").values(
        "assignment__item_id", "assignment__item__external_id", "assignment__item__is_spam",
        "assignment__item__spam_of__external_id", "revision", "is_current", "submitted_at", "duration_ms", "answer")]


def _spam_candidates(study: Study, item_ids: set[int]) -> dict[int, list[Candidate]]:
    by_item: dict[int, list[Candidate]] = {}
    for c in Candidate.objects.filter(item_id__in=item_ids).select_related("item").order_by("item_id", "position", "pk"):
        by_item.setdefault(c.item_id, []).append(c)
    return by_item


def annotator_activity(*, annotator: Annotator) -> tuple[list[JudgmentRow], list[FailedCheck]]:
    """Every judgment (revisions included) in submission order, and the current answers that failed a spam check."""
    study = annotator.study
    rows = _judgments(annotator)
    spam_items = {r["assignment__item_id"] for r in rows if r["assignment__item__is_spam"]}
    candidates = _spam_candidates(study, spam_items) if spam_items else {}
    controls = study_controls(study) if spam_items else {}
    minimum_ms = (study.min_seconds or 0) * 1000
    timeline: list[JudgmentRow] = []
    failed: list[FailedCheck] = []
    for r in rows:
        item_id = r["assignment__item_id"]
        scrambled = [c.pk for c in candidates.get(item_id, []) if c.is_spam]
        fails = bool(scrambled) and spam_check_failed(study=study, answer=r["answer"], spam_pk=scrambled[0],
                                                      control=controls.get(item_id))
        duration = r["duration_ms"]
        timeline.append(JudgmentRow(
            item=r["assignment__item__external_id"], is_spam=r["assignment__item__is_spam"], revision=r["revision"],
            is_current=r["is_current"], submitted_at=r["submitted_at"],
            seconds=None if duration is None else duration / 1000,
            fast=duration is not None and duration < minimum_ms, failed_check=fails))
        if fails and r["is_current"]:  # the quality figures count current answers only; so does this list
            answered, would_pass = study.spec.spam_answer_words(study, r["answer"], candidates[item_id])
            failed.append(FailedCheck(item=r["assignment__item__external_id"],
                                      spam_of=r["assignment__item__spam_of__external_id"] or "",
                                      submitted_at=r["submitted_at"], answered=answered, would_pass=would_pass))
    return timeline, failed
