"""annotation/0008 (issue 14): duplicate arrival numbers renumbered before the unique constraint; the client's
duration moved to client_duration_ms and duration_ms recomputed from the server's times."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.factories import make_study

BEFORE = [("annotation", "0007_i12_check_schedule")]
AFTER = [("annotation", "0008_i14_unique_sequence_server_duration")]


@pytest.mark.django_db(transaction=True)
def test_duplicate_sequences_are_renumbered_and_durations_become_server_time():
    study = make_study(slug="old-i14", n_items=3)
    other = make_study(slug="other-i14", n_items=1)
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    Annotator, Assignment = apps.get_model("annotation", "Annotator"), apps.get_model("annotation", "Assignment")
    Judgment = apps.get_model("annotation", "Judgment")
    made = [Annotator.objects.create(study_id=study.pk, token=f"t{k}", code=f"a{k}", sequence=seq)
            for k, seq in enumerate([1, 2, 2, 3, 2])]
    Annotator.objects.create(study_id=other.pk, token="tx", code="ax", sequence=2)  # another study's 2: no clash
    start = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)
    # the historical Item: later migrations that depend on annotation's were unapplied with it
    items = list(apps.get_model("studies", "Item").objects.filter(study_id=study.pk).order_by("pk"))
    g1 = Assignment.objects.create(annotator=made[0], item_id=items[0].pk, sequence=1)
    g2 = Assignment.objects.create(annotator=made[1], item_id=items[1].pk, sequence=1)
    with_client = Judgment.objects.create(
        assignment=g1, answer={}, payload_digest="x", started_at=start, duration_ms=120_000,
        client_started_at=start, client_submitted_at=start + timedelta(minutes=2))
    without = Judgment.objects.create(assignment=g2, answer={}, payload_digest="y", started_at=start, duration_ms=4321)
    Judgment.objects.filter(pk=with_client.pk).update(submitted_at=start + timedelta(seconds=3, milliseconds=250))

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    apps = executor.loader.project_state(AFTER).apps
    Annotator, Judgment = apps.get_model("annotation", "Annotator"), apps.get_model("annotation", "Judgment")
    got = dict(Annotator.objects.filter(study_id=study.pk).values_list("code", "sequence"))
    # The earliest holder of each number keeps it; later duplicates follow the study's highest, in id order.
    assert got == {"a0": 1, "a1": 2, "a2": 4, "a3": 3, "a4": 5}
    assert Annotator.objects.get(code="ax").sequence == 2
    moved = Judgment.objects.get(pk=with_client.pk)
    assert (moved.duration_ms, moved.client_duration_ms) == (3250, 120_000)
    kept = Judgment.objects.get(pk=without.pk)
    assert (kept.duration_ms, kept.client_duration_ms) == (4321, None)

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # back to the latest schema for the other tests
