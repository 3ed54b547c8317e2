"""Item slots: the counters behind exact redundancy and O(1) progress.

``Item.n_assigned`` counts the assignments that count toward the redundancy:
pending or done, of annotators who are not excluded. ``Item.is_open`` is
``n_assigned < redundancy``, written in the same UPDATE, and
``Study.n_open_items`` counts the open items. Every change goes through this
module, inside the caller's transaction:

- a claim (hand-out, reclaim) raises n_assigned only from the value just read,
  so concurrent claims never push an item past its redundancy (the UPDATE takes
  the row lock; a lost race changes nothing and the caller tries another item);
- a release, an exclusion, a re-inclusion or a late answer moves a set of items
  by ±1 and corrects the study's open count by how many items changed state.

The study row is written only when an item fills or reopens (one claim in
``redundancy``), as the last statement of the transaction, so its lock is held
for the commit alone.
"""
from __future__ import annotations

from django.db import transaction
from django.db.models import BooleanField, ExpressionWrapper, F, Q, QuerySet

from studies.models import Candidate, Item, Study

from annotation.handout import statements


def slot_claim(*, item_id: int, seen: int, redundancy: int) -> tuple[bool, bool]:
    """Raise the item's count from ``seen`` (as just read) to seen+1; (claimed, the item is now full).

    Nothing changes when someone else changed the count since (claimed False).
    """
    full = _full_after_claim(seen, redundancy)
    if full is None:
        return False, True
    return statements.item_slot_update(item_id=item_id, seen=seen, full=full), full


def _full_after_claim(seen: int, redundancy: int) -> bool | None:
    """Whether the item is full once a claim raises its count from ``seen``; None when it has no free slot."""
    return None if seen >= redundancy else seen + 1 >= redundancy


def slot_claim_loading(*, item_id: int, seen: int,
                       redundancy: int) -> tuple[Item, list[Candidate], bool] | None:
    """``slot_claim``, then the item (as the claim left it) and its candidates; None when not claimed.
    One statement on PostgreSQL, two elsewhere."""
    if not statements.writes_return_rows():
        claimed, full = slot_claim(item_id=item_id, seen=seen, redundancy=redundancy)
        return (*statements.item_with_candidates(item_id), full) if claimed else None
    full_after = _full_after_claim(seen, redundancy)
    if full_after is None:
        return None
    loaded = statements.item_claim_with_candidates(item_id=item_id, seen=seen, full=full_after)
    return None if loaded is None else (*loaded, full_after)


def study_open_items_add(*, study: Study, delta: int) -> None:
    """Correct the study's count of open items (call it last in the transaction: it locks the study row)."""
    if delta:
        statements.study_open_items_add(study_id=study.pk, delta=delta)


@transaction.atomic
def items_count_add(*, study: Study, items: QuerySet[Item], delta: int) -> int:
    """Move every item in ``items`` by ``delta`` counted assignments; return how many are then over the redundancy.

    Counts may go past the redundancy (a re-included annotator, an answer to a
    released item): nothing is ever deleted to make room, the excess is reported.
    """
    ids = list(items.select_for_update().values_list("pk", flat=True).order_by("pk"))
    if not ids:
        return 0
    scope = Item.objects.filter(pk__in=ids)
    open_before = scope.filter(is_open=True).count()
    scope.update(n_assigned=F("n_assigned") + delta,
                 is_open=ExpressionWrapper(Q(n_assigned__lt=study.redundancy - delta), output_field=BooleanField()))
    open_after = scope.filter(is_open=True).count()
    study_open_items_add(study=study, delta=open_after - open_before)
    return scope.filter(n_assigned__gt=study.redundancy).count()
