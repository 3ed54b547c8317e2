"""Reads on the annotator's side: what an annotator may see of an assignment.

Everything returned here is safe to send to an annotator: no system names, no
reference or spam flags, no database ids (only opaque public ids).
"""
from __future__ import annotations

from typing import Any

from django.db.models import Count, Exists, OuterRef

from studies.models import Candidate, Item, Study

from .models import Annotator, Assignment, AssignmentStatus, Judgment


def annotator_by_token(token: str) -> Annotator | None:
    if not token or len(token) > 64:
        return None
    return Annotator.objects.select_related("study").filter(token=token).first()


def assignment_for_annotator(*, annotator: Annotator, public_id: str) -> Assignment | None:
    """The annotator's own assignment with this public id (None for anyone else's)."""
    return (Assignment.objects.select_related("item", "item__study")
            .filter(annotator=annotator, public_id=public_id).first())


def assignment_previous(*, annotator: Annotator, before: Assignment | None) -> Assignment | None:
    """The judged assignment just before ``before`` (or the last judged one), for going back."""
    qs = annotator.assignments.filter(status=AssignmentStatus.DONE).select_related("item", "item__study")
    if before is not None:
        qs = qs.filter(sequence__lt=before.sequence)
    return qs.order_by("-sequence").first()


def assignment_following(*, annotator: Annotator, after: Assignment) -> Assignment | None:
    """The assignment just after ``after`` in the annotator's queue (done or pending)."""
    return (annotator.assignments.filter(sequence__gt=after.sequence).select_related("item", "item__study")
            .order_by("sequence").first())


def progress(*, annotator: Annotator) -> dict[str, int]:
    """{"done": judged items, "total": what this annotator can expect to judge in all}.

    The total is what they have judged, plus their unjudged item (also while they
    go back to revise an earlier one), plus what is still open to them (capped by
    the study's ``items_per_annotator``), so it can shrink while other
    annotators take the last slots of some items. Two queries.
    """
    study: Study = annotator.study
    counts = dict(annotator.assignments.values_list("status").annotate(n=Count("pk")).order_by())
    done = counts.get(AssignmentStatus.DONE, 0)
    pending = counts.get(AssignmentStatus.PENDING, 0)
    mine = Assignment.objects.filter(annotator=annotator, item=OuterRef("pk"))
    open_to_me = (Item.objects.filter(study=study, n_assigned__lt=study.redundancy)
                  .filter(~Exists(mine)).count())
    total = done + pending + open_to_me
    if study.items_per_annotator:
        total = min(total, study.items_per_annotator)
    return {"done": done, "total": max(total, done)}


def ordered_candidates(assignment: Assignment, candidates: list[Candidate] | None = None) -> list[Candidate]:
    if candidates is None:
        candidates = list(assignment.item.candidates.all())
    position = {pk: k for k, pk in enumerate(assignment.candidate_order)}
    return sorted(candidates, key=lambda c: position.get(c.pk, len(position)))


def current_judgment(assignment: Assignment) -> Judgment | None:
    return assignment.judgments.filter(is_current=True).first()


def answer_for_client(judgment: Judgment | None, candidates: list[Candidate]) -> dict[str, Any] | None:
    """A stored answer re-expressed with opaque candidate ids (to pre-fill a revision)."""
    if judgment is None:
        return None
    by_pk = {c.pk: c.public_id for c in candidates}
    answer = judgment.answer
    if "ranks" in answer:
        return {"ranks": {by_pk[int(pk)]: rank for pk, rank in answer["ranks"].items() if int(pk) in by_pk}}
    if "choice" in answer:
        choice = answer["choice"]
        return {"choice": by_pk.get(choice.get("candidate")) if "candidate" in choice else choice["option"]}
    return {"labels": answer.get("labels", [])}


def assignment_payload(*, assignment: Assignment, progress_data: dict[str, int],
                       candidates: list[Candidate] | None = None, judgment: Judgment | None = None) -> dict[str, Any]:
    """The API's view of an assignment (the annotator-safe fields only)."""
    item = assignment.item
    study = item.study
    cands = ordered_candidates(assignment, candidates)
    return {
        "assignment": assignment.public_id,
        "protocol": study.protocol,
        "unit": study.unit,
        "question": study.question,
        "allow_ties": study.allow_ties,
        "options": list(study.options),
        "labels": list(study.labels),
        "multi_label": study.multi_label,
        "context": {
            "source": list(item.source_context) if study.show_source else [],
            "target": [] if study.show_source else list(item.target_context),
        },
        "source": item.source if study.show_source else None,
        "candidates": [{"id": c.public_id, "text": c.text, "highlights": c.highlights} for c in cands],
        "progress": progress_data,
        "answer": answer_for_client(judgment, cands),
    }


def study_by_slug(slug: str) -> Study | None:
    """The study behind a public entry link (e.g. Prolific's), or None."""
    if not slug or len(slug) > 80:
        return None
    return Study.objects.filter(slug=slug).first()


def assignments_done_count(*, annotator: Annotator) -> int:
    return annotator.assignments.filter(status=AssignmentStatus.DONE).count()
