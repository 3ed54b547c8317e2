"""Skipping an item: the annotator gives it back, with a reason, and never gets it again.

A skip is stored on the assignment (status ``skipped``, ``skip_reason``,
``skipped_at``), never deleted, so quality control can count it
(``annotation.quality.checks``: ``n_skipped``). The item's slot goes back to the pool
exactly as a stale reservation's does (``services.assignments_release_stale``):
the item's count of counted assignments drops by one, so the next annotator who
asks may get it. The skipping annotator never does: the hand-out only offers
items they have never had (``services._open_items``), and ``next`` moves on to
their following item because a skipped assignment is no longer pending.
"""
from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from studies.models import Item

from annotation.handout import slots
from annotation.models import Annotator, Assignment, AssignmentStatus

#: Longest reason kept (the column's length); longer ones are refused, never cut.
REASON_MAX_LENGTH = 300


class SkipError(Exception):
    """A refused skip request; ``errors`` maps each field to its messages (the API's 400 body)."""

    def __init__(self, errors: dict[str, list[str]]):
        super().__init__(str(errors))
        self.errors = errors


class SkipConflict(Exception):
    """The assignment cannot be skipped any more (it has an answer): the API's 409."""


def skip_reason_validate(payload: Any) -> str:
    """The reason of a skip request (stripped), or SkipError naming the field.

    Required, at most REASON_MAX_LENGTH characters, not only white space; the
    body takes no other field, so a typo ("reson") is named instead of ignored.
    """
    if not isinstance(payload, dict):
        raise SkipError({"body": ['Must be a JSON object: {"reason": "…"}.']})
    errors: dict[str, list[str]] = {}
    unknown = sorted(str(k) for k in payload if k != "reason")
    if unknown:
        errors["body"] = [f"Unknown field(s) {', '.join(unknown)}; a skip takes only reason."]
    reason = payload.get("reason")
    if reason is None:
        errors["reason"] = ["This field is required: say in a few words why you skip this item."]
    elif not isinstance(reason, str):
        errors["reason"] = ["Must be a string."]
    elif not reason.strip():
        errors["reason"] = ["Must not be blank: say in a few words why you skip this item."]
    elif len(reason) > REASON_MAX_LENGTH:
        errors["reason"] = [f"At most {REASON_MAX_LENGTH} characters ({len(reason)} given)."]
    if errors:
        raise SkipError(errors)
    assert isinstance(reason, str)
    return reason.strip()


def _excluded_locked(annotator_id: int) -> bool:
    """The annotator's exclusion flag under their row lock (as ``services._excluded_locked``): an excluded
    annotator's assignments stopped counting when they were excluded, so their skip frees no slot."""
    return Annotator.objects.select_for_update().filter(pk=annotator_id).values_list("excluded", flat=True).get()


def assignment_skip(*, assignment: Assignment, reason: str) -> tuple[Assignment, bool]:
    """Skip the assignment; return (it, whether this request skipped it).

    Idempotent: an assignment already skipped is returned unchanged (its first
    reason kept). SkipConflict when it has an answer. The status is read and
    written under the assignment's row lock, so a skip and an answer (or a
    stale release, or a reclaim) of the same assignment are serialised: a
    pending assignment frees its slot once, a released one (its slot already
    back in the pool) frees nothing.
    """
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if locked.status == AssignmentStatus.SKIPPED:
            return locked, False
        if locked.status == AssignmentStatus.DONE:
            raise SkipConflict("This item has an answer already; an answered item cannot be skipped "
                               "(send a new answer to revise it).")
        counted = locked.status == AssignmentStatus.PENDING and not _excluded_locked(locked.annotator_id)
        locked.status = AssignmentStatus.SKIPPED
        locked.skipped_at = timezone.now()
        locked.skip_reason = reason
        locked.save(update_fields=["status", "skipped_at", "skip_reason"])
        if counted:
            slots.items_count_add(study=assignment.item.study, items=Item.objects.filter(pk=locked.item_id), delta=-1)
    return locked, True
