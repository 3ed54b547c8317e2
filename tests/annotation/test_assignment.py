"""Handing out work: redundancy, per-annotator shuffles, document order, locking."""
from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connections

from annotation.models import Assignment
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.models import Candidate
from tests.factories import make_study

pytestmark = pytest.mark.django_db


def work_through(annotator) -> list:
    """Judge everything the annotator is given (first candidate ranked best); return their items in order."""
    seen = []
    while (assignment := assignment_next(annotator=annotator)) is not None:
        ranks = {Candidate.objects.get(pk=pk).public_id: k + 1 for k, pk in enumerate(assignment.candidate_order)}
        judgment_submit(assignment=assignment, payload={"ranks": ranks})
        seen.append(assignment.item)
    return seen


def test_each_annotator_gets_their_own_item_order_with_documents_kept_in_order():
    study = make_study(n_items=24, documents=6, settings={"redundancy": 3})
    orders = []
    for annotator in annotators_create(study=study, count=3):
        items = work_through(annotator)
        assert len(items) == 24
        # items of one document come together and in document order
        docs = [i.document_id for i in items]
        blocks = [d for k, d in enumerate(docs) if k == 0 or docs[k - 1] != d]
        assert len(blocks) == 6, docs
        for doc in set(docs):
            positions = [i.position for i in items if i.document_id == doc]
            assert positions == sorted(positions)
        orders.append(blocks)
    assert len({tuple(o) for o in orders}) > 1, "every annotator saw the documents in the same order"


def test_orders_are_reproducible_for_the_same_seed():
    def run(slug):
        study = make_study(slug=slug, n_items=12, documents=4, settings={"redundancy": 2, "seed": 1234})
        return [[(i.external_id) for i in work_through(a)] for a in annotators_create(study=study, count=2)]
    assert run("one") == run("two")


def test_candidate_order_is_shuffled_per_annotator_and_stored():
    study = make_study(n_items=30, n_candidates=4, settings={"redundancy": 2})
    a, b = annotators_create(study=study, count=2)
    work_through(a), work_through(b)
    orders: Counter[tuple[str, ...]] = Counter()
    for assignment in Assignment.objects.filter(annotator__study=study).select_related("item"):
        systems = dict(Candidate.objects.filter(item=assignment.item).values_list("pk", "system"))
        assert sorted(assignment.candidate_order) == sorted(systems)
        orders[tuple(systems[pk] for pk in assignment.candidate_order)] += 1
    assert len(orders) > 5  # many different screen orders, not one fixed order


def test_document_unit_keeps_the_same_system_order_throughout_a_document():
    study = make_study(n_items=12, n_candidates=4, documents=3, settings={"redundancy": 1, "unit": "document"})
    annotator = annotators_create(study=study)[0]
    work_through(annotator)
    per_doc: dict[str, set] = {}
    for assignment in annotator.assignments.select_related("item"):
        systems = dict(Candidate.objects.filter(item=assignment.item).values_list("pk", "system"))
        per_doc.setdefault(assignment.item.document_id, set()).add(
            tuple(systems[pk] for pk in assignment.candidate_order))
    assert all(len(orders) == 1 for orders in per_doc.values()), per_doc


def test_redundancy_is_never_exceeded_and_no_annotator_sees_an_item_twice():
    study = make_study(n_items=7, settings={"redundancy": 2})
    annotators = annotators_create(study=study, count=4)
    for annotator in annotators:
        work_through(annotator)
    per_item = Counter(Assignment.objects.filter(item__study=study).values_list("item", flat=True))
    assert set(per_item.values()) == {2} and len(per_item) == 7
    assert sum(a.assignments.count() for a in annotators) == 14


def test_items_per_annotator_caps_the_queue():
    study = make_study(n_items=10, settings={"redundancy": 1, "items_per_annotator": 4})
    annotator = annotators_create(study=study)[0]
    assert len(work_through(annotator)) == 4


def test_closed_study_and_excluded_annotator_get_no_new_work():
    study = make_study(n_items=3, settings={"redundancy": 1})
    a, b = annotators_create(study=study, count=2)
    b.excluded = True
    b.save()
    assert assignment_next(annotator=b) is None
    study.status = "closed"
    study.save()
    assert assignment_next(annotator=a) is None


@pytest.mark.django_db(transaction=True)
def test_annotators_arriving_together_never_push_an_item_past_its_redundancy():
    study = make_study(slug="race", n_items=10, settings={"redundancy": 1})
    annotators = annotators_create(study=study, count=16)
    barrier = threading.Barrier(len(annotators))
    got: list = []

    def arrive(annotator):
        try:
            barrier.wait()
            assignment = assignment_next(annotator=annotator)
            if assignment is not None:
                got.append(assignment.item_id)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=arrive, args=(a,)) for a in annotators]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 10 and len(set(got)) == 10
    assert Assignment.objects.filter(item__study=study).count() == 10


def _backdate(assignment, minutes):
    from datetime import timedelta

    from django.utils import timezone
    Assignment.objects.filter(pk=assignment.pk).update(opened_at=timezone.now() - timedelta(minutes=minutes))


def test_an_item_left_unanswered_too_long_goes_to_someone_else_and_a_late_answer_is_kept():
    from annotation.models import AssignmentStatus, Judgment
    study = make_study(slug="stale", n_items=2, settings={"redundancy": 1, "reservation_minutes": 30})
    a, b = annotators_create(study=study, count=2)
    held = assignment_next(annotator=a)
    assert len(work_through(b)) == 1  # only the other item is free
    _backdate(held, 31)
    taken = assignment_next(annotator=b)
    assert taken is not None and taken.item_id == held.item_id
    held.refresh_from_db()
    assert held.status == AssignmentStatus.RELEASED
    assert assignment_next(annotator=a) is None  # the slot is gone and nothing else is left
    ranks = {Candidate.objects.get(pk=pk).public_id: k + 1 for k, pk in enumerate(held.candidate_order)}
    judgment, created = judgment_submit(assignment=held, payload={"ranks": ranks})
    assert created and Judgment.objects.filter(assignment=held).count() == 1  # never lost
    held.item.refresh_from_db()
    assert held.item.n_assigned == 2


def test_a_released_item_returns_to_its_annotator_when_still_free():
    from annotation.models import AssignmentStatus
    from annotation.handout.services import assignments_release_stale
    study = make_study(slug="back", n_items=3, settings={"redundancy": 1, "reservation_minutes": 30})
    annotator = annotators_create(study=study)[0]
    held = assignment_next(annotator=annotator)
    assert assignments_release_stale(study=study) == 0  # still fresh
    _backdate(held, 45)
    assert assignments_release_stale(study=study) == 1
    held.item.refresh_from_db()
    assert held.item.n_assigned == 0
    again = assignment_next(annotator=annotator)
    assert again.pk == held.pk and again.status == AssignmentStatus.PENDING
    held.item.refresh_from_db()
    assert held.item.n_assigned == 1


def test_reservation_zero_keeps_items_reserved_forever():
    from annotation.handout.services import assignments_release_stale
    study = make_study(slug="forever", n_items=1, settings={"redundancy": 1, "reservation_minutes": 0})
    a, b = annotators_create(study=study, count=2)
    _backdate(assignment_next(annotator=a), 10_000)
    assert assignments_release_stale(study=study) == 0
    assert assignment_next(annotator=b) is None


def test_two_simultaneous_requests_of_one_annotator_get_the_same_assignment(monkeypatch):
    """The loser of the race for a sequence number gets the winner's assignment, not a 500."""
    from annotation.handout import services
    study = make_study(slug="twice", n_items=3, settings={"redundancy": 1})
    annotator = annotators_create(study=study)[0]
    winner = assignment_next(annotator=annotator)  # the other request, committed first
    real = services._last_assignment
    reads = []

    def stale_then_real(a):  # our request read the annotator's queue before the winner was stored
        reads.append(a)
        return None if len(reads) == 1 else real(a)

    monkeypatch.setattr(services, "_last_assignment", stale_then_real)
    got = assignment_next(annotator=annotator)
    assert got.pk == winner.pk
    assert annotator.assignments.count() == 1
    assert sorted(study.items.values_list("n_assigned", flat=True)) == [0, 0, 1]  # our claim rolled back


def test_released_items_do_not_count_against_the_quota():
    from annotation.handout.services import assignments_release_stale
    study = make_study(slug="quota", n_items=5, settings={"redundancy": 1, "items_per_annotator": 2,
                                                           "reservation_minutes": 30})
    a, b = annotators_create(study=study, count=2)
    held = assignment_next(annotator=a)
    _backdate(held, 60)
    assert assignments_release_stale(study=study) == 1
    b_items = work_through(b)  # b takes the released item among others (quota 2)
    assert len(b_items) == 2
    if held.item in b_items:
        assert len(work_through(a)) == 2  # a's released item does not use up one of a's two
