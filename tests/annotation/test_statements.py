"""The hot path's fixed SQL (annotation/handout/statements.py) reads and writes exactly what the ORM would.

Every field of every instance it builds is compared with the ORM's own read of the same row
(JSON, dates, booleans and foreign keys included), on SQLite and on PostgreSQL (make test runs both).
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from annotation.handout import statements
from annotation.models import Annotator, Assignment, AssignmentStatus, Judgment
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.models import Candidate, Item, Study
from tests.factories import make_study

pytestmark = pytest.mark.django_db


def fields(obj) -> dict:
    return {f.attname: getattr(obj, f.attname) for f in type(obj)._meta.concrete_fields}


def ranked(assignment: Assignment) -> dict:
    return {"ranks": {Candidate.objects.get(pk=pk).public_id: k + 1 for k, pk in enumerate(assignment.candidate_order)}}


@pytest.fixture
def judged():
    study = make_study(n_items=6)
    annotator = annotators_create(study=study)[0]
    assignment = assignment_next(annotator=annotator)
    assert assignment is not None
    judgment, created = judgment_submit(assignment=assignment, payload=ranked(assignment))
    assert created
    return study, annotator, assignment, judgment


def test_annotator_with_study_equals_the_orm(judged):
    study, annotator, _, _ = judged
    Annotator.objects.filter(pk=annotator.pk).update(external_sessions=[{"STUDY_ID": "x"}],
                                                     instructions_seen_at=timezone.now())
    got = statements.annotator_with_study(annotator.token)
    assert got is not None
    assert fields(got) == fields(Annotator.objects.get(pk=annotator.pk))
    assert fields(got.study) == fields(Study.objects.get(pk=study.pk))
    assert statements.annotator_with_study("no-such-token") is None


def test_assignment_by_token_loads_assignment_item_study_and_annotator(judged):
    study, annotator, assignment, _ = judged
    got = statements.assignment_by_token(token=annotator.token, public_id=assignment.public_id)
    assert got is not None
    assert fields(got) == fields(Assignment.objects.get(pk=assignment.pk))
    assert fields(got.item) == fields(Item.objects.get(pk=assignment.item_id))
    assert fields(got.item.study) == fields(Study.objects.get(pk=study.pk))
    assert fields(got.annotator) == fields(Annotator.objects.get(pk=annotator.pk))
    assert got.status == AssignmentStatus.DONE and isinstance(got.candidate_order, list)
    other = annotators_create(study=study)[0]
    assert statements.assignment_by_token(token=other.token, public_id=assignment.public_id) is None


def test_assignment_by_token_with_candidates(judged):
    study, annotator, assignment, _ = judged
    got = statements.assignment_by_token(token=annotator.token, public_id=assignment.public_id, candidates=True)
    assert got is not None and got.candidates_loaded is not None
    assert fields(got) == fields(Assignment.objects.get(pk=assignment.pk))
    assert fields(got.item.study) == fields(Study.objects.get(pk=study.pk))
    assert fields(got.annotator) == fields(Annotator.objects.get(pk=annotator.pk))
    orm = list(Item.objects.get(pk=assignment.item_id).candidates.all())
    assert len(orm) > 1 and [fields(c) for c in got.candidates_loaded] == [fields(c) for c in orm]
    other = annotators_create(study=study)[0]
    assert statements.assignment_by_token(token=other.token, public_id=assignment.public_id, candidates=True) is None


def test_annotator_for_next_reads_annotator_last_assignment_and_counts(judged):
    study, annotator, assignment, _ = judged
    second = assignment_next(annotator=annotator)
    assert second is not None
    got = statements.annotator_for_next(annotator.token, done=AssignmentStatus.DONE, pending=AssignmentStatus.PENDING)
    assert got is not None
    found, last, counts = got
    assert fields(found) == fields(Annotator.objects.get(pk=annotator.pk))
    assert fields(found.study) == fields(Study.objects.get(pk=study.pk))
    assert last is not None and fields(last) == fields(Assignment.objects.get(pk=second.pk))
    assert fields(last.item) == fields(Item.objects.get(pk=second.item_id))
    assert counts == statements.progress_counts(annotator_id=annotator.pk, study_id=study.pk,
                                                done=AssignmentStatus.DONE, pending=AssignmentStatus.PENDING)
    newcomer = annotators_create(study=study)[0]
    got = statements.annotator_for_next(newcomer.token, done=AssignmentStatus.DONE, pending=AssignmentStatus.PENDING)
    assert got is not None and got[1] is None and got[2][:3] == (0, 0, 0)
    assert statements.annotator_for_next("no-such-token", done=AssignmentStatus.DONE,
                                         pending=AssignmentStatus.PENDING) is None


def test_item_with_candidates_and_last_assignment(judged):
    study, annotator, assignment, _ = judged
    item, candidates = statements.item_with_candidates(assignment.item_id)
    assert fields(item) == fields(Item.objects.get(pk=assignment.item_id))
    orm = list(Item.objects.get(pk=assignment.item_id).candidates.all())
    assert [fields(c) for c in candidates] == [fields(c) for c in orm]
    assert [fields(c) for c in statements.candidates_of(assignment.item_id)] == [fields(c) for c in orm]
    last = statements.last_assignment(Annotator.objects.select_related("study").get(pk=annotator.pk))
    assert last is not None and fields(last) == fields(assignment.__class__.objects.get(pk=assignment.pk))


def test_window_query_equals_its_orm_form(judged):
    study, annotator, _, _ = judged
    documents = sorted(set(Item.objects.filter(study=study).values_list("doc_index", flat=True)), reverse=True)
    got = statements.window_slots(study_id=study.pk, annotator_id=annotator.pk, documents=documents, limit=50)
    mine = Assignment.objects.filter(annotator=annotator, item=OuterRef("pk"))
    rank = {doc: k for k, doc in enumerate(documents)}
    expected = sorted(((i.pk, i.n_assigned, i.doc_index, i.position) for i in
                       Item.objects.filter(study=study, is_open=True, doc_index__in=documents).filter(~Exists(mine))),
                      key=lambda row: (rank[row[2]], row[3], row[0]))
    assert got == [row[:3] for row in expected] and got
    assert statements.window_slots(study_id=study.pk, annotator_id=annotator.pk, documents=[], limit=8) == []


def test_progress_counts_and_locked_read(judged):
    study, annotator, assignment, judgment = judged
    second = assignment_next(annotator=annotator)
    assert second is not None
    done, pending, mine_open, n_open = statements.progress_counts(
        annotator_id=annotator.pk, study_id=study.pk, done=AssignmentStatus.DONE, pending=AssignmentStatus.PENDING)
    items = Item.objects.filter(assignments__annotator=annotator)
    assert (done, pending) == (1, 1)
    assert mine_open == items.filter(is_open=True).count()
    assert n_open == Study.objects.get(pk=study.pk).n_open_items
    with transaction.atomic():
        locked, pk, digest, revision = statements.assignment_locked(assignment.pk)
    assert fields(locked) == fields(Assignment.objects.get(pk=assignment.pk))
    assert (pk, digest, revision) == (judgment.pk, judgment.payload_digest, judgment.revision)
    with transaction.atomic():
        _, pk, digest, revision = statements.assignment_locked(second.pk)
    assert (pk, digest, revision) == (None, None, None)


def test_insert_stores_what_save_would(judged):
    _, _, assignment, judgment = judged
    Judgment.objects.filter(pk=judgment.pk).update(is_current=False)
    started = timezone.now() - timedelta(seconds=7)
    new = statements.insert(Judgment(assignment=assignment, revision=2, answer={"ranks": {"1": 1}, "é": [1.5, None]},
                                     payload_digest="d" * 64, started_at=started, duration_ms=7000))
    assert new.pk and not new._state.adding and len(new.public_id) > 8 and new.submitted_at is not None
    assert fields(new) == fields(Judgment.objects.get(pk=new.pk))
    with pytest.raises(IntegrityError), transaction.atomic():  # the database's constraints still apply
        statements.insert(Judgment(assignment=assignment, revision=2, answer={}, payload_digest="x",
                                   started_at=started))


def test_insert_assignment_stores_what_save_would_and_nothing_for_an_excluded_annotator(judged):
    study, annotator, assignment, _ = judged
    item = Item.objects.filter(study=study).exclude(pk=assignment.item_id).first()
    new = statements.insert_assignment(Assignment(annotator=annotator, item=item, sequence=2, candidate_order=[3, 1],
                                                  opened_at=timezone.now(), order_step=4, checks_owed=1))
    assert new is not None and new.pk and not new._state.adding and len(new.public_id) > 8
    assert fields(new) == fields(Assignment.objects.get(pk=new.pk))
    Annotator.objects.filter(pk=annotator.pk).update(excluded=True)
    other = Item.objects.filter(study=study).exclude(pk__in=[assignment.item_id, item.pk]).first()
    assert statements.insert_assignment(Assignment(annotator=annotator, item=other, sequence=3)) is None
    assert not Assignment.objects.filter(annotator=annotator, item=other).exists()


def test_slot_update_only_from_the_count_just_read(judged):
    _, _, assignment, _ = judged
    item = Item.objects.get(pk=assignment.item_id)
    assert not statements.item_slot_update(item_id=item.pk, seen=item.n_assigned + 1, full=False)
    assert statements.item_slot_update(item_id=item.pk, seen=item.n_assigned, full=True)
    after = Item.objects.get(pk=item.pk)
    assert (after.n_assigned, after.is_open) == (item.n_assigned + 1, False)


def test_claim_loading_takes_the_slot_and_reads_what_the_two_statements_read(judged):
    study, _, assignment, _ = judged
    item = Item.objects.filter(study=study).exclude(pk=assignment.item_id).first()
    assert item is not None
    from annotation.handout import slots
    assert slots.slot_claim_loading(item_id=item.pk, seen=item.n_assigned + 1, redundancy=study.redundancy) is None
    assert Item.objects.get(pk=item.pk).n_assigned == item.n_assigned  # a count read too early changes nothing
    assert slots.slot_claim_loading(item_id=item.pk, seen=study.redundancy, redundancy=study.redundancy) is None
    loaded = slots.slot_claim_loading(item_id=item.pk, seen=item.n_assigned, redundancy=study.redundancy)
    assert loaded is not None
    claimed, candidates, full = loaded
    after = Item.objects.get(pk=item.pk)
    assert after.n_assigned == item.n_assigned + 1 and full == (after.n_assigned >= study.redundancy)
    assert after.is_open == (not full)
    assert fields(claimed) == fields(after)  # the item as the claim left it
    assert [fields(c) for c in candidates] == [fields(c) for c in after.candidates.all()] and candidates
    if statements.writes_return_rows():  # an item without candidates is still claimed (the study file refuses those)
        bare = Item.objects.filter(study=study).exclude(pk__in=[assignment.item_id, item.pk]).first()
        assert bare is not None
        bare.candidates.all().delete()
        got = statements.item_claim_with_candidates(item_id=bare.pk, seen=bare.n_assigned, full=False)
        assert got is not None and got[1] == [] and fields(got[0]) == fields(Item.objects.get(pk=bare.pk))


@pytest.mark.parametrize("mark_done", [True, False])
def test_insert_judgment_marks_its_assignment_done_when_asked(judged, mark_done):
    study, annotator, _, _ = judged
    second = assignment_next(annotator=annotator)
    assert second is not None and second.status == AssignmentStatus.PENDING
    at = timezone.now() - timedelta(seconds=3)
    with transaction.atomic():
        new = statements.insert_judgment(
            Judgment(assignment=second, revision=1, answer={"ranks": {}}, payload_digest="e" * 64, started_at=at),
            done_at=at if mark_done else None, status=AssignmentStatus.DONE)
    assert fields(new) == fields(Judgment.objects.get(pk=new.pk)) and not new._state.adding
    stored = Assignment.objects.get(pk=second.pk)
    if mark_done:
        assert (stored.status, stored.completed_at) == (AssignmentStatus.DONE, at)
    else:
        assert (stored.status, stored.completed_at) == (AssignmentStatus.PENDING, None)
    with pytest.raises(IntegrityError), transaction.atomic():  # nothing half-done: the UPDATE goes with the INSERT
        statements.insert_judgment(Judgment(assignment=second, revision=1, answer={}, payload_digest="x",
                                            started_at=at), done_at=timezone.now(), status="skipped")
    assert Assignment.objects.get(pk=second.pk).status == stored.status
