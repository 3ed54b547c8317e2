"""Reads for the researcher's side: studies with their progress, annotators with theirs.

Every count is a correlated subquery, so a list of studies (or annotators) costs
one query however many items, assignments and judgments there are; joining and
counting with ``distinct`` would multiply items by annotators first.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from django.db.models import Count, F, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from annotation.models import Annotator, Assignment, AssignmentStatus
from .models import Item, Study

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations  # a dev-only package: types only

    from .importing import ParsedStudy


class StudyCounts(TypedDict):
    """The counts ``study_list`` annotates on each study."""

    n_items: int
    n_spam: int
    n_annotators: int
    n_done: int
    n_needed: int


if TYPE_CHECKING:
    StudyWithCounts = WithAnnotations[Study, StudyCounts]


def _count(qs: QuerySet, outer: str = "study") -> Coalesce:
    """COUNT(*) of ``qs`` filtered on ``outer`` = the outer row, as an integer annotation."""
    sub = qs.filter(**{outer: OuterRef("pk")}).order_by().values(outer).annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(sub, output_field=IntegerField()), Value(0))


def study_list(*, queryset: QuerySet[Study] | None = None) -> QuerySet[StudyWithCounts]:
    """Studies annotated with n_items (real), n_spam, n_annotators, n_done and n_needed.

    n_needed = (real + spam items) × redundancy: the judgments the study asks for;
    n_done counts judged assignments (an item judged and later revised counts once).
    """
    qs = queryset if queryset is not None else Study.objects.all()
    return (qs.annotate(
        n_items=_count(Item.objects.filter(is_spam=False)),
        n_spam=_count(Item.objects.filter(is_spam=True)),
        n_annotators=_count(Annotator.objects.all()),
        n_done=_count(Assignment.objects.filter(status=AssignmentStatus.DONE), outer="item__study"),
    ).annotate(n_needed=(F("n_items") + F("n_spam")) * F("redundancy")))


def study_progress(study: Study) -> dict[str, int | float]:
    """The counts of ``study_list`` for one study, plus ``percent`` done (0–100)."""
    row = study_list(queryset=Study.objects.filter(pk=study.pk)).values(
        "n_items", "n_spam", "n_annotators", "n_done", "n_needed").get()
    row["percent"] = round(100 * row["n_done"] / row["n_needed"], 1) if row["n_needed"] else 0.0
    return row


def annotator_list(*, study: Study) -> QuerySet[Annotator]:
    """The study's annotators with n_done and n_pending assignments (one query)."""
    return (study.annotators.order_by("sequence").annotate(
        n_done=Count("assignments", filter=Q(assignments__status=AssignmentStatus.DONE)),
        n_pending=Count("assignments", filter=Q(assignments__status=AssignmentStatus.PENDING)),
    ))


def study_file_summary(parsed: ParsedStudy) -> dict[str, Any]:
    """What a validated study file will create: counts, systems, phenomena, spam items, judgments needed."""
    from collections import Counter

    from .spam import spam_count

    fields = parsed.fields
    items = parsed.items
    per_item = Counter(len(i["candidates"]) for i in items)
    systems = Counter(c["system"] for i in items for c in i["candidates"])
    references = Counter(c["system"] for i in items for c in i["candidates"] if c["is_reference"])
    phenomena = Counter(i["phenomenon"] or "(none)" for i in items)
    documents = {i["document_id"] for i in items if i["document_id"]}
    spam_rate = fields.get("spam_rate", Study._meta.get_field("spam_rate").default)
    redundancy = fields.get("redundancy", Study._meta.get_field("redundancy").default)
    n_spam = spam_count(len(items), spam_rate)
    return {
        "slug": fields["slug"], "title": fields["title"], "protocol": fields["protocol"],
        "n_items": len(items), "n_documents": len(documents),
        "candidates_per_item": sorted(per_item.items()),
        "systems": sorted(systems.items()), "references": sorted(references.items()),
        "phenomena": sorted(phenomena.items()),
        "spam_rate": spam_rate, "n_spam": n_spam, "redundancy": redundancy,
        "n_needed": (len(items) + n_spam) * redundancy,
        "settings": {k: v for k, v in fields.items() if k not in ("slug", "title", "protocol", "description")},
    }
