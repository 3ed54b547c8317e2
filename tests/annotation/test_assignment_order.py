"""The hand-out at scale (issue 8): the seeded document walk, its fairness, counters, constant query counts."""
from __future__ import annotations

import random
import threading
from collections import Counter

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from annotation.models import Assignment, AssignmentStatus
from annotation.handout.ordering import WINDOW, prime_at_least, walk_for
from annotation.items.selectors import progress
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.models import Candidate, Item, Study
from tests.conftest import annotator_client
from tests.factories import make_study
from tests.annotation.test_api_annotate import rank_all

pytestmark = pytest.mark.django_db


def judge(assignment) -> None:
    ranks = {Candidate.objects.get(pk=pk).public_id: k + 1 for k, pk in enumerate(assignment.candidate_order)}
    judgment_submit(assignment=assignment, payload={"ranks": ranks})


def test_primes():
    assert [prime_at_least(n) for n in (0, 1, 2, 3, 4, 14, 100, 7919)] == [2, 2, 2, 3, 5, 17, 101, 7919]


@pytest.mark.parametrize("n_documents", [1, 2, 3, 10, 16, 17, 100, 1000])
def test_every_walk_is_a_permutation_of_the_documents(n_documents):
    for sequence in range(1, 30):
        walk = walk_for(seed=5, sequence=sequence, n_documents=n_documents)
        assert sorted(walk.documents()) == list(range(n_documents))
        # windows taken one after another give the same order
        docs, step = [], 0
        while step < walk.p:
            window, step = walk.window(step)
            docs += [d for _, d in window]
        assert docs == walk.documents()


def test_same_seed_same_walk_and_annotators_differ():
    walks = [walk_for(seed=11, sequence=s, n_documents=50).documents() for s in range(1, 6)]
    assert walks == [walk_for(seed=11, sequence=s, n_documents=50).documents() for s in range(1, 6)]
    assert len({tuple(w) for w in walks}) == 5
    assert walk_for(seed=12, sequence=1, n_documents=50).documents() != walks[0]


def test_every_document_is_equally_likely_at_every_position():
    """Fixed seed, 4,000 annotators, 12 documents (P = 13: cycle walking is exercised): each position is uniform."""
    n_docs, n_walks = 12, 4000
    at: list[Counter[int]] = [Counter() for _ in range(n_docs)]
    for sequence in range(1, n_walks + 1):
        for position, doc in enumerate(walk_for(seed=2026, sequence=sequence, n_documents=n_docs).documents()):
            at[position][doc] += 1
    expected = n_walks / n_docs
    for position, counts in enumerate(at):
        chi2 = sum((counts[d] - expected) ** 2 / expected for d in range(n_docs))
        assert chi2 < 40, (position, counts)  # 11 degrees of freedom: P(chi2 > 40) < 1e-4 under uniformity


def test_first_item_handed_out_is_spread_over_the_study():
    study = make_study(slug="fair", n_items=8, settings={"redundancy": 100, "seed": 3})
    firsts = Counter(assignment_next(annotator=a).item.external_id for a in annotators_create(study=study, count=240))
    assert set(firsts) == {f"ext-{i}" for i in range(8)}
    assert all(12 <= n <= 50 for n in firsts.values()), firsts  # 30 expected each


def test_documents_come_whole_and_in_order_across_windows():
    """More documents than one window: the walk continues where the last hand-out left it."""
    study = make_study(slug="many-docs", n_items=120, documents=3 * WINDOW, settings={"redundancy": 1, "seed": 9})
    annotator = annotators_create(study=study)[0]
    items = []
    while (assignment := assignment_next(annotator=annotator)) is not None:
        items.append(assignment.item)
        judge(assignment)
    assert len(items) == 120
    docs = [i.document_id for i in items]
    assert len([d for k, d in enumerate(docs) if k == 0 or docs[k - 1] != d]) == 3 * WINDOW
    expected = walk_for(seed=9, sequence=annotator.sequence, n_documents=study.n_documents).documents()
    by_index = dict(Item.objects.filter(study=study).values_list("document_id", "doc_index"))
    assert [by_index[d] for k, d in enumerate(docs) if k == 0 or docs[k - 1] != d] == expected


def test_counters_match_the_assignments_throughout():
    study = make_study(slug="count", n_items=15, documents=4, settings={"redundancy": 2, "spam_rate": 0.2})
    annotators = annotators_create(study=study, count=4)
    rng = random.Random(1)
    for _ in range(60):
        annotator = rng.choice(annotators)
        assignment = assignment_next(annotator=annotator)
        if assignment is not None and rng.random() < 0.8:
            judge(assignment)
        study.refresh_from_db()
        items = list(Item.objects.filter(study=study))
        for item in items:
            n = Assignment.objects.filter(item=item, status__in=[AssignmentStatus.PENDING, AssignmentStatus.DONE]).count()
            assert item.n_assigned == n and item.is_open == (n < study.redundancy)
        assert study.n_open_items == sum(i.is_open for i in items)
        for a in annotators:  # progress() as it was computed before: a count over the open items
            mine = set(a.assignments.values_list("item_id", flat=True))
            open_to_me = sum(1 for i in items if i.is_open and i.pk not in mine)
            done = a.assignments.filter(status=AssignmentStatus.DONE).count()
            pending = a.assignments.filter(status=AssignmentStatus.PENDING).count()
            assert progress(annotator=a) == {"done": done, "total": max(done, done + pending + open_to_me)}


def _queries_of_next_and_submit(n_items: int, redundancy: int) -> tuple[int, int, int, int]:
    """(next, submit) query counts of a fresh annotator's 6th item, then of a second annotator's 6th."""
    study = make_study(slug=f"scale{n_items}-{redundancy}", n_items=n_items, settings={"redundancy": redundancy, "seed": 1})
    counts = []
    for annotator in annotators_create(study=study, count=2):
        client = annotator_client(annotator)
        for _ in range(5):
            assert rank_all(client, client.get("/api/v1/annotate/next").json()).status_code == 201
        with CaptureQueriesContext(connection) as next_q:
            data = client.get("/api/v1/annotate/next").json()
        with CaptureQueriesContext(connection) as submit_q:
            assert rank_all(client, data).status_code == 201
        counts += [len(next_q), len(submit_q)]
    return counts[0], counts[1], counts[2], counts[3]


@pytest.mark.parametrize("redundancy", [1, 5])
def test_next_and_submit_run_the_same_queries_at_20_and_5000_items(redundancy):
    """Redundancy 1: every claim fills its item (one more UPDATE, of the study's open count); 5: none does."""
    small = _queries_of_next_and_submit(20, redundancy)
    large = _queries_of_next_and_submit(5000, redundancy)
    assert small == large
    # savepoints included (tests run inside a transaction): 5 + 2 for next (the token, the latest assignment and
    # the progress counts in one query), 4 + 2 for submit (the token, the assignment and its candidates in one).
    # PostgreSQL claims the item and reads it with its candidates in one statement, and inserts the judgment and
    # marks its assignment done in one: one statement fewer in each request.
    fewer = 1 if connection.vendor == "postgresql" else 0
    expected = (8, 6, 8, 6) if redundancy == 1 else (7, 6, 7, 6)
    assert small == tuple(n - fewer for n in expected)


def test_a_study_judged_to_the_end_hands_out_every_slot_once():
    """Three annotators with overlapping walks and redundancy 2: the tail is found by the fallback scan."""
    study = make_study(slug="tail", n_items=40, documents=10, settings={"redundancy": 2})
    annotators = annotators_create(study=study, count=3)
    active = list(annotators)
    while active:
        for annotator in list(active):
            assignment = assignment_next(annotator=annotator)
            if assignment is None:
                active.remove(annotator)
            else:
                judge(assignment)
    per_item = Counter(Assignment.objects.filter(item__study=study).values_list("item_id", flat=True))
    assert len(per_item) == 40 and set(per_item.values()) == {2}
    assert Study.objects.get(pk=study.pk).n_open_items == 0


@pytest.mark.django_db(transaction=True)
def test_many_annotators_working_at_once_give_exactly_the_redundancy():
    study = make_study(slug="race2", n_items=24, documents=6, settings={"redundancy": 2})
    annotators = annotators_create(study=study, count=12)
    barrier = threading.Barrier(len(annotators))
    errors: list = []

    def work(annotator):
        try:
            barrier.wait()
            for _ in range(30):
                assignment = assignment_next(annotator=annotator)
                if assignment is None:
                    break
                judge(assignment)
        except Exception as exc:  # reported below: a thread's exception would otherwise vanish
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(a,)) for a in annotators]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    per_item = Counter(Assignment.objects.filter(item__study=study).values_list("item_id", flat=True))
    assert len(per_item) == 24 and set(per_item.values()) == {2}
    assert set(Item.objects.filter(study=study).values_list("n_assigned", "is_open")) == {(2, False)}
    assert Study.objects.get(pk=study.pk).n_open_items == 0


class _PgError(Exception):
    def __init__(self, sqlstate: str):
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


def _operational(sqlstate: str):
    from django.db import OperationalError
    error = OperationalError(f"sqlstate {sqlstate}")
    error.__cause__ = _PgError(sqlstate)
    return error


def test_a_hand_out_chosen_as_deadlock_victim_is_tried_again():
    """PostgreSQL rolls one transaction of a lock cycle back (40P01): the hand-out looks again, once stored."""
    from unittest import mock

    from annotation.handout import services
    study = make_study(slug="deadlock", n_items=4, settings={"redundancy": 1})
    annotator = annotators_create(study=study)[0]
    real_claim = services._claim
    calls = []

    def claim_once_deadlocked(*args, **kwargs):
        calls.append(args[2])
        if len(calls) == 1:
            raise _operational("40P01")
        return real_claim(*args, **kwargs)

    with mock.patch.object(services, "_claim", side_effect=claim_once_deadlocked):
        assignment = assignment_next(annotator=annotator)
    assert assignment is not None and len(calls) == 2 and calls[0] == calls[1] == assignment.item_id
    assert Assignment.objects.filter(annotator=annotator).count() == 1
    assert Item.objects.get(pk=assignment.item_id).n_assigned == 1


def test_other_database_errors_of_the_hand_out_are_not_retried():
    from unittest import mock

    from annotation.handout import services
    study = make_study(slug="outage", n_items=2, settings={"redundancy": 1})
    annotator = annotators_create(study=study)[0]
    with mock.patch.object(services, "_claim", side_effect=_operational("08006")) as claim:
        with pytest.raises(Exception) as raised:
            assignment_next(annotator=annotator)
    assert getattr(raised.value.__cause__, "sqlstate", None) == "08006" and claim.call_count == 1
    assert not Assignment.objects.filter(annotator=annotator).exists()
