"""A skip racing an answer or a stale release of the same assignment (real concurrent transactions).

Run like tests/annotation/test_races.py (one thread and connection each, released together; on
PostgreSQL the transactions interleave): whatever order wins, every item's stored count equals
its counted assignments, and no slot is freed twice.
"""
from __future__ import annotations

from datetime import timedelta
from functools import partial
from typing import Any, Callable

import pytest
from django.utils import timezone

from annotation.handout import skips
from annotation.models import Assignment, AssignmentStatus
from annotation.handout.services import annotators_create, assignment_next, assignments_release_stale, judgment_submit
from tests.annotation.test_races import answer, counted_mismatches, run_together
from tests.factories import make_study

pytestmark = pytest.mark.django_db(transaction=True)


def _skip(assignment: Assignment) -> None:
    try:
        skips.assignment_skip(assignment=assignment, reason="Race.")
    except skips.SkipConflict:
        pass  # the answer came first: a 409, nothing changed


def test_a_skip_and_an_answer_of_one_assignment_leave_the_counts_exact():
    study = make_study(slug="skip-race", n_items=6, settings={"redundancy": 1})
    held = [assignment_next(annotator=a) for a in annotators_create(study=study, count=6)]
    assert all(h is not None for h in held)
    targets: list[Callable[[], Any]] = []
    for assignment in held:
        assert assignment is not None
        fresh = Assignment.objects.select_related("item__study").get(pk=assignment.pk)
        targets += [partial(_skip, fresh), partial(judgment_submit, assignment=fresh, payload=answer(fresh))]
    assert run_together(targets) == []
    # Either order ends answered: skip then answer (a late answer counts again) or answer then a refused skip.
    assert set(Assignment.objects.filter(item__study=study).values_list("status", flat=True)) == {AssignmentStatus.DONE}
    assert not counted_mismatches(study)
    assert sorted(study.items.values_list("n_assigned", flat=True)) == [1] * 6


def test_a_skip_and_a_stale_release_free_the_slot_once():
    study = make_study(slug="skip-stale", n_items=6, settings={"redundancy": 1, "reservation_minutes": 30})
    held = [assignment_next(annotator=a) for a in annotators_create(study=study, count=6)]
    Assignment.objects.filter(pk__in=[h.pk for h in held if h is not None]).update(
        opened_at=timezone.now() - timedelta(hours=2))
    targets: list[Callable[[], Any]] = [partial(assignments_release_stale, study=study)]
    for assignment in held:
        assert assignment is not None
        targets.append(partial(_skip, Assignment.objects.select_related("item__study").get(pk=assignment.pk)))
    assert run_together(targets) == []
    assert set(Assignment.objects.filter(item__study=study).values_list("status", flat=True)) == {AssignmentStatus.SKIPPED}
    assert sorted(study.items.values_list("n_assigned", flat=True)) == [0] * 6
    assert not counted_mismatches(study)
