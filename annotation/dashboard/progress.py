"""Reads for the researcher's side: studies with their progress, annotators with theirs.

Every count is a correlated subquery, so a list of studies (or annotators) costs
one query however many items, assignments and judgments there are; joining and
counting with ``distinct`` would multiply items by annotators first.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Iterable, TypedDict

from django.db.models import Count, F, IntegerField, Max, Min, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import Annotator, Assignment, AssignmentStatus, Judgment
from studies.models import Item, Status, Study

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations  # a dev-only package: types only


class StudyCounts(TypedDict):
    """The counts ``study_list`` annotates on each study."""

    n_items: int
    n_spam: int
    n_skipped: int
    n_annotators: int
    n_done: int
    n_needed: int


class AnnotatorCounts(TypedDict):
    """The figures ``annotator_list`` annotates on each annotator."""

    n_done: int
    n_pending: int
    last_activity: datetime | None


if TYPE_CHECKING:
    StudyWithCounts = WithAnnotations[Study, StudyCounts]
    AnnotatorWithCounts = WithAnnotations[Annotator, AnnotatorCounts]


def _count(qs: QuerySet, outer: str = "study") -> Coalesce:
    """COUNT(*) of ``qs`` filtered on ``outer`` = the outer row, as an integer annotation."""
    sub = qs.filter(**{outer: OuterRef("pk")}).order_by().values(outer).annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(sub, output_field=IntegerField()), Value(0))


def study_list(*, queryset: QuerySet[Study] | None = None) -> QuerySet[StudyWithCounts]:
    """Studies annotated with n_items (real), n_spam, n_skipped, n_annotators, n_done and n_needed.

    n_skipped: real items left out of the hand-out because the suggestions' source marks every candidate
    clean (``Item.skipped_clean``, ``prefill_skip_clean``); they are never handed out, so they are not needed.
    n_needed = (real + spam items − skipped items) × redundancy: the judgments the study asks for;
    n_done counts judged assignments (an item judged and later revised counts once)
    of annotators who are not excluded: excluded work is kept but does not count,
    and its items go back to the pool (annotation.handout.slots).
    """
    qs = queryset if queryset is not None else Study.objects.all()
    return (qs.annotate(
        n_items=_count(Item.objects.filter(is_spam=False)),
        n_spam=_count(Item.objects.filter(is_spam=True)),
        n_skipped=_count(Item.objects.filter(skipped_clean=True)),
        n_annotators=_count(Annotator.objects.all()),
        n_done=_count(Assignment.objects.filter(status=AssignmentStatus.DONE, annotator__excluded=False),
                      outer="item__study"),
    ).annotate(n_needed=(F("n_items") + F("n_spam") - F("n_skipped")) * F("redundancy")))


def study_progress(study: Study) -> dict[str, int | float]:
    """The counts of ``study_list`` for one study, plus ``percent`` done (0–100) and ``n_over_redundancy``.

    n_over_redundancy: items with more counted assignments than the redundancy
    (re-handed while an annotator was excluded, who was then put back); their
    extra judgments are kept, so n_done may pass n_needed (percent stops at 100).
    """
    row = study_list(queryset=Study.objects.filter(pk=study.pk)).values(
        "n_items", "n_spam", "n_skipped", "n_annotators", "n_done", "n_needed").get()
    row["percent"] = min(100.0, round(100 * row["n_done"] / row["n_needed"], 1)) if row["n_needed"] else 0.0
    row["n_over_redundancy"] = Item.objects.filter(study=study, n_assigned__gt=study.redundancy).count()
    return row


def annotator_list(*, study: Study) -> QuerySet[AnnotatorWithCounts]:
    """The study's annotators with n_done and n_pending assignments and last_activity (one query)."""
    last = (Judgment.objects.filter(assignment__annotator=OuterRef("pk")).order_by("-submitted_at")
            .values("submitted_at")[:1])
    return (study.annotators.order_by("sequence").annotate(
        n_done=Count("assignments", filter=Q(assignments__status=AssignmentStatus.DONE)),
        n_pending=Count("assignments", filter=Q(assignments__status=AssignmentStatus.PENDING)),
        last_activity=Subquery(last),
    ))


# --- activity and ETA ---------------------------------------------------------------------------------

#: The window whose pace the ETA extrapolates when the study was active in it.
RECENT_WINDOW = timedelta(hours=1)


@dataclass(frozen=True)
class StudyActivity:
    """When a study last saw an answer, and how long the remaining judgments should take.

    ``eta`` is None when there is no estimate; ``eta_note`` then says why (and otherwise
    which pace the estimate assumes).
    """

    last_activity: datetime | None
    eta: timedelta | None
    eta_note: str


def _last_judgments(study_ids: list[int]) -> dict[int, datetime]:
    """{study pk: latest judgment submitted_at} (one query). Kept apart so it can be re-pointed."""
    rows = (Judgment.objects.filter(assignment__item__study_id__in=study_ids).order_by()
            .values("assignment__item__study_id").annotate(last=Max("submitted_at")))
    return {r["assignment__item__study_id"]: r["last"] for r in rows}


def _done_pace(study_ids: list[int], since: datetime) -> dict[int, dict]:
    """{study pk: first/last completion, completions in total and since ``since``} (one query).

    Like ``study_list``'s n_done, excluded annotators' completions do not count toward the pace.
    """
    rows = (Assignment.objects.filter(item__study_id__in=study_ids, status=AssignmentStatus.DONE,
                                      annotator__excluded=False, completed_at__isnull=False).order_by()
            .values("item__study_id").annotate(first=Min("completed_at"), last=Max("completed_at"),
                                               total=Count("pk"), recent=Count("pk", filter=Q(completed_at__gte=since))))
    return {r["item__study_id"]: r for r in rows}


def _eta(*, remaining: int, status: str, pace: dict | None, now: datetime) -> tuple[timedelta | None, str]:
    """Remaining judgments ÷ pace: the last hour's if anything was done in it, else the whole study's."""
    if remaining <= 0:
        return None, "complete"
    if status != Status.OPEN:
        return None, f"study {status}"
    if not pace or not pace["total"]:
        return None, "no answers yet"
    if pace["recent"]:
        # A study that started less than an hour ago has been running for less than the window.
        span = min(RECENT_WINDOW, now - pace["first"])
        count, note = pace["recent"], "at the last hour's pace"
    else:
        # n completions between the first and the last are n - 1 intervals.
        span, count, note = pace["last"] - pace["first"], pace["total"] - 1, "at the overall pace (idle for over an hour)"
    if count < 1 or span.total_seconds() <= 0:
        return None, "too few answers to estimate"
    return timedelta(seconds=remaining * span.total_seconds() / count), note


def study_activity(*, studies: Iterable[StudyWithCounts], now: datetime | None = None) -> dict[int, StudyActivity]:
    """{study pk: StudyActivity} for studies from ``study_list`` (they carry n_done and n_needed).

    Two queries however many studies: the dashboard lists them all.
    """
    studies = list(studies)
    now = now or timezone.now()
    ids = [s.pk for s in studies]
    if not ids:
        return {}
    last = _last_judgments(ids)
    pace = _done_pace(ids, now - RECENT_WINDOW)
    result = {}
    for s in studies:
        eta, note = _eta(remaining=s.n_needed - s.n_done, status=s.status, pace=pace.get(s.pk), now=now)
        result[s.pk] = StudyActivity(last_activity=last.get(s.pk), eta=eta, eta_note=note)
    return result
