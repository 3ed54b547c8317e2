"""What the hand-out of an adaptive study reads: the stored allocation state, and the hook that refreshes it.

A study with ``Study.allocation`` empty (uniform, the default) never reaches this module: the hand-out and
the submit test that dict's truth on the study already loaded, nothing more. For an adaptive study
(docs/assignment.md, "Adaptive allocation"):

* after each stored judgment, :func:`after_judgment` runs the refreshers registered here with the judgment's
  id; the one refresher is ``evaluators.live_allocation.allocation_refresh_after_judgment`` (registered by
  ``EvaluatorsConfig.ready``: the statistics live in ``evaluators``, which this app may not import), which
  every ``allocation.refresh_every`` judgments extends the confidence sequences with the judgments stored
  since its last look and stores them in ``Study.allocation_state``;
* the hand-out reads that state from the study row it has loaded anyway: before the warm-up's judgments
  nothing changes; once the study is settled (no pair of the target set open) no new item is handed out;
  in between, only items holding both systems of at least one open pair (:func:`open_pair_filter`).

The item's candidates never change and the slot counters are the uniform path's: an item left out stays
open (it is simply not handed out), so redundancy, exclusion and exact counts hold as before.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Q

from studies.definition.allocation import is_adaptive
from studies.models import Candidate, Study

logger = logging.getLogger(__name__)
_refreshers: list[Callable[[Study, int], object]] = []


def register_refresher(refresher: Callable[[Study, int], object]) -> None:
    """Add the function that refreshes a study's ``allocation_state`` after a judgment (called with the study and
    the new judgment's id; once per process)."""
    if refresher not in _refreshers:
        _refreshers.append(refresher)


def after_judgment(study: Study, judgment_id: int) -> None:
    """Refresh the state of an adaptive study after its judgment ``judgment_id`` (the caller checked
    ``study.allocation``).

    The judgment is stored before this runs; a refresher that fails is logged and the answer still gets its
    201 (the state is refreshed again at a later judgment and whenever the study page is opened).
    """
    if is_adaptive(study.allocation):
        for refresher in _refreshers:
            try:
                refresher(study, judgment_id)
            except Exception:  # noqa: BLE001 - the annotator's stored answer must not turn into an error page
                logger.exception("allocation refresh failed for study %s", study.slug)


@dataclass(frozen=True)
class Restriction:
    """What an adaptive study's state allows now: nothing (settled), or the items of these open pairs."""

    settled: bool
    open_pairs: tuple[tuple[str, str], ...]


def restriction(study: Study) -> Restriction | None:
    """None while every item may go out (uniform, or the warm-up not over, or no state yet, or not settled in a
    study where every item holds every system: then every item holds both systems of every open pair, and
    filtering the windows would keep them all at the cost of a query)."""
    if not is_adaptive(study.allocation):
        return None
    state = study.allocation_state or {}
    if not state.get("warmed_up"):
        return None
    if not state.get("settled") and state.get("every_item_holds_every_system"):
        return None
    return Restriction(settled=bool(state.get("settled")),
                       open_pairs=tuple((str(a), str(b)) for a, b in state.get("open_pairs", [])))


def open_pair_filter(limit: Restriction) -> Q:
    """Items holding both systems of some open pair (one EXISTS per system named, OR-ed over the pairs)."""
    def has(system: str) -> Exists:
        return Exists(Candidate.objects.filter(item=OuterRef("pk"), system=system))

    condition = Q(pk__in=[])
    for a, b in limit.open_pairs:
        condition |= Q(has(a)) & Q(has(b))
    return condition


def items_with_open_pair(limit: Restriction, item_ids: list[int]) -> set[int]:
    """Which of ``item_ids`` hold both systems of some open pair (one query)."""
    systems: dict[int, set[str]] = {}
    for item_id, system in Candidate.objects.filter(item_id__in=item_ids).values_list("item_id", "system"):
        systems.setdefault(item_id, set()).add(system)
    return {item_id for item_id, present in systems.items()
            if any(a in present and b in present for a, b in limit.open_pairs)}
