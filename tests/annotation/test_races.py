"""Races closed (issue 14): real concurrent transactions, one thread and one database connection each.

Like the 12-annotator hand-out race in test_assignment.py, these run on both
databases: on PostgreSQL (the suite's ``DATABASE_URL`` pass) the transactions
really interleave under READ COMMITTED; on SQLite (transactions are IMMEDIATE,
config/settings.py) they are serialised, but the statements each request runs
*before* its transaction (the reads a request starts with) still interleave,
so the stale-read halves of these races are exercised there too. Nothing is
monkeypatched: the threads only start together at a barrier.
"""
from __future__ import annotations

import json
import threading
from collections import Counter
from datetime import timedelta
from functools import partial
from typing import Any, Callable

import pytest
from django.db import connections, transaction
from django.utils import timezone

from annotation.exporting.judgments import COLUMNS, export_lines
from annotation.models import Annotator, Assignment, AssignmentStatus
from annotation.handout.services import (annotator_for_external_id, annotators_create, assignment_next,
                                 assignments_release_stale, judgment_submit)
from annotation.handout.exclusion import annotator_exclude
from studies.models import Candidate, Item, Study
from tests.factories import make_study

pytestmark = pytest.mark.django_db(transaction=True)


def run_together(targets: list[Callable[[], Any]]) -> list[BaseException]:
    """Run each target in its own thread (own connection), all released at once; the exceptions raised."""
    barrier = threading.Barrier(len(targets))
    errors: list[BaseException] = []

    def run(target: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            target()
        except BaseException as exc:  # noqa: BLE001 (reported to the test, which fails on it)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(t,)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def counted_mismatches(study: Study) -> dict[str, tuple[int, int]]:
    """Items whose stored count (n_assigned) differs from their counted assignments (pending or done, of
    annotators not excluded): {item: (stored, counted)}."""
    counted = Counter(Assignment.objects.filter(
        item__study=study, annotator__excluded=False,
        status__in=[AssignmentStatus.PENDING, AssignmentStatus.DONE]).values_list("item_id", flat=True))
    return {ext: (n, counted[pk]) for pk, ext, n in
            Item.objects.filter(study=study).values_list("pk", "external_id", "n_assigned") if n != counted[pk]}


def answer(assignment: Assignment) -> dict[str, Any]:
    public = dict(Candidate.objects.filter(item_id=assignment.item_id).values_list("pk", "public_id"))
    return {"ranks": {public[pk]: k + 1 for k, pk in enumerate(assignment.candidate_order)}}


def released_assignments(study: Study, n: int) -> list[Annotator]:
    """``n`` annotators, each holding one assignment that went unanswered too long and was released."""
    annotators = annotators_create(study=study, count=n)
    for annotator in annotators:  # one at a time: each release moves one item (test_release_counts_... below)
        held = assignment_next(annotator=annotator)
        assert held is not None
        Assignment.objects.filter(pk=held.pk).update(opened_at=timezone.now() - timedelta(hours=2))
        assert assignments_release_stale(study=study) == 1
    assert not counted_mismatches(study)
    return annotators


def test_arrivals_at_the_same_moment_get_distinct_sequences():
    """Prolific participants arriving together each get their own arrival number (item and screen orders)."""
    study = make_study(slug="arrivals", n_items=4)
    for round_ in range(3):
        def arrive(external_id: str) -> None:
            annotator_for_external_id(study=Study.objects.get(pk=study.pk), external_id=external_id)

        errors = run_together([partial(arrive, f"pid-{round_}-{k}") for k in range(12)])
        assert not errors, errors
    sequences = list(study.annotators.values_list("sequence", flat=True))
    duplicated = sorted(s for s, n in Counter(sequences).items() if n > 1)
    assert not duplicated, f"sequences handed out twice: {duplicated}"
    assert sorted(sequences) == list(range(1, 37))


def test_one_participant_arriving_twice_at_once_is_one_annotator():
    """A double click on the recruiting platform's link: both requests get the same annotator, no error."""
    study = make_study(slug="double-click", n_items=4)
    got: list[int] = []

    def arrive() -> None:
        got.append(annotator_for_external_id(study=Study.objects.get(pk=study.pk), external_id="pid-1").pk)

    errors = run_together([arrive for _ in range(6)])
    assert not errors, errors
    assert len(set(got)) == 1 and study.annotators.count() == 1


def test_two_tabs_reclaiming_one_released_item_count_it_once():
    """Two requests of one annotator (two tabs, a double click) both find their released item: one reclaim."""
    study = make_study(slug="reclaim", n_items=24, settings={"redundancy": 3, "reservation_minutes": 30})
    annotators = released_assignments(study, 8)
    def ask(pk: int) -> None:  # each request loads its annotator, as the token look-up does
        assignment_next(annotator=Annotator.objects.select_related("study").get(pk=pk))

    errors = run_together([partial(ask, a.pk) for a in annotators for _tab in range(2)])
    assert not errors, errors
    assert not counted_mismatches(study), "an item counted one reclaimed assignment twice"
    for annotator in annotators:
        assert annotator.assignments.filter(status=AssignmentStatus.PENDING).count() == 1


def test_an_exclusion_racing_a_late_answer_leaves_the_counts_exact():
    """A late answer to a released item and the annotator's exclusion, at the same moment: the answer never
    counts for an excluded annotator, whichever commits first."""
    study = make_study(slug="exclude-race", n_items=24, settings={"redundancy": 2, "reservation_minutes": 30})
    annotators = released_assignments(study, 8)
    targets: list[Callable[[], Any]] = []
    for annotator in annotators:
        # Each request starts by loading what it works on (as the page and the API do), then they race.
        held = Assignment.objects.select_related("annotator__study", "item__study").get(annotator=annotator)
        payload = answer(held)
        targets.append(partial(judgment_submit, assignment=held, payload=payload))
        excluded = Annotator.objects.select_related("study").get(pk=annotator.pk)
        targets.append(partial(annotator_exclude, annotator=excluded, reason="race"))
    errors = run_together(targets)
    assert not errors, errors
    assert Assignment.objects.filter(item__study=study, status=AssignmentStatus.DONE).count() == 8
    assert not counted_mismatches(study), "an excluded annotator's late answer counted toward the redundancy"
    assert not Item.objects.filter(study=study, n_assigned__gt=0).exists()


def test_an_exclusion_racing_a_hand_out_leaves_the_counts_exact():
    """An annotator asks for work while being excluded: the hand-out either comes first (and the exclusion
    uncounts it) or finds them excluded and stores nothing — never a counted item for an excluded annotator."""
    study = make_study(slug="exclude-next", n_items=40, settings={"redundancy": 2})
    annotators = annotators_create(study=study, count=10)
    for annotator in annotators:  # each has answered one item already; the race is over their second
        held = assignment_next(annotator=annotator)
        assert held is not None
        judgment_submit(assignment=held, payload=answer(held))

    def ask(pk: int) -> None:
        assignment_next(annotator=Annotator.objects.select_related("study").get(pk=pk))

    targets: list[Callable[[], Any]] = []
    for annotator in annotators:
        targets.append(partial(ask, annotator.pk))
        targets.append(partial(annotator_exclude, annotator=Annotator.objects.select_related("study")
                               .get(pk=annotator.pk), reason="race"))
    errors = run_together(targets)
    assert not errors, errors
    assert not counted_mismatches(study), "an item counts a hand-out to an excluded annotator"
    assert not Item.objects.filter(study=study, n_assigned__gt=0).exists()


def test_the_export_is_one_snapshot_while_annotators_arrive_and_answer():
    """Exports running while new annotators arrive and answer: every export is complete and consistent
    (no error mid-stream, every judgment with its annotator), never a stream cut short."""
    study = make_study(slug="export-race", n_items=60, settings={"redundancy": 60})
    # Many annotators without work: reading them takes a while, as in a large crowd study.
    Annotator.objects.bulk_create([Annotator(study=study, sequence=k) for k in range(1, 3001)])
    stop = threading.Event()
    written: list[int] = []

    def write() -> None:
        live = Study.objects.get(pk=study.pk)
        while not stop.is_set() and len(written) < 400:
            with transaction.atomic():  # the annotator and their answer appear in one commit
                annotator = annotators_create(study=live)[0]
                held = assignment_next(annotator=annotator)
                assert held is not None
                judgment_submit(assignment=held, payload=answer(held))
            written.append(annotator.pk)

    def read() -> None:
        try:
            for _ in range(60):
                lines = "".join(export_lines(Study.objects.get(pk=study.pk), fmt="jsonl")).splitlines()
                rows = [json.loads(line) for line in lines]
                assert all(list(row) == COLUMNS for row in rows)
                per_judgment = Counter(row["judgment"] for row in rows)
                assert set(per_judgment.values()) <= {3}, "a judgment exported without all its candidates"
                assert all(row["annotator"] for row in rows)
        finally:
            stop.set()

    errors = run_together([write, read])
    assert not errors, errors
    assert written, "the writer never committed during the exports"


def test_stale_assignments_of_one_item_released_together_each_give_their_slot_back():
    """Found with the races above: two annotators' assignments of one item released in one sweep moved the
    item's count down by one, not two, and the item stayed full for good."""
    study = make_study(slug="release-two", n_items=1, settings={"redundancy": 2, "reservation_minutes": 30})
    for annotator in annotators_create(study=study, count=2):
        assert assignment_next(annotator=annotator) is not None
    assert Item.objects.get(study=study).n_assigned == 2
    Assignment.objects.filter(item__study=study).update(opened_at=timezone.now() - timedelta(hours=2))
    assert assignments_release_stale(study=study) == 2
    item = Item.objects.get(study=study)
    assert (item.n_assigned, item.is_open) == (0, True)
    assert Study.objects.get(pk=study.pk).n_open_items == 1
    assert not counted_mismatches(study)


@pytest.mark.skipif(connections["default"].vendor != "postgresql",
                    reason="PostgreSQL only: a server process killed mid-stream (SQLite has no server)")
def test_an_export_whose_connection_dies_mid_stream_raises_instead_of_ending():
    """The stream's consumer (a streaming response) sees the error, never a clean short end: gunicorn then
    closes the connection without the last chunk, and the client sees a broken transfer (docs/export.md)."""
    study = make_study(slug="cut", n_items=60, settings={"redundancy": 60})
    annotators = annotators_create(study=study, count=50)
    items = list(Item.objects.filter(study=study).order_by("pk"))
    order = {item.pk: list(Candidate.objects.filter(item=item).values_list("pk", flat=True)) for item in items}
    Assignment.objects.bulk_create([Assignment(annotator=a, item=item, sequence=k + 1, candidate_order=order[item.pk],
                                               status=AssignmentStatus.DONE)
                                    for a in annotators for k, item in enumerate(items)])
    from annotation.models import Judgment
    now = timezone.now()
    Judgment.objects.bulk_create([Judgment(assignment=g, answer={"ranks": {}}, payload_digest="x", started_at=now)
                                  for g in Assignment.objects.filter(item__study=study)])
    total = 50 * 60 * 3
    lines = export_lines(Study.objects.get(pk=study.pk), fmt="jsonl")
    got = [next(lines)]  # the queries ran; the judgments come from a server-side cursor, 2,000 at a time
    backend = connections["default"].connection.info.backend_pid

    def kill() -> None:
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [backend])

    assert not run_together([kill])
    from django.db import Error
    with pytest.raises(Error):
        for line in lines:
            got.append(line)
    assert 0 < len(got) < total
    connections["default"].close()
