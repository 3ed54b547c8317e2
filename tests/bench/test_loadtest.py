"""The load benchmark's pure helpers (bench/loadtest_integrity.py): percentiles and the integrity SQL.

The benchmark itself (make loadtest) is run by hand (docs/load.md); this only checks that its
integrity check finds each kind of violation in a tiny database, and finds
none in a clean one — on SQLite and on PostgreSQL alike.
"""
from __future__ import annotations

import math
from typing import Any, cast

import pytest
from django.db import connection
from django.utils import timezone

from annotation.models import Assignment, Judgment
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from bench.loadtest_integrity import integrity_check, percentile
from tests.factories import make_study


def test_percentile_interpolates_between_closest_ranks():
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 95) == pytest.approx(4.8)
    assert percentile([7.0], 99) == 7.0
    assert percentile([1.0, 2.0], 0) == 1.0 and percentile([1.0, 2.0], 100) == 2.0
    assert math.isnan(percentile([], 50))


def _judge(annotator) -> tuple[str, str]:
    """Hand the annotator an item and answer it through the services, as a client would; (judgment id, assignment id)."""
    assignment = assignment_next(annotator=annotator)
    ids = [c.public_id for c in assignment.item.candidates.all()]
    judgment, created = judgment_submit(assignment=assignment, payload={"ranks": {c: k + 1 for k, c in enumerate(ids)}})
    assert created
    return judgment.public_id, assignment.public_id


def _check(acked: dict[str, str]) -> dict:
    with connection.cursor() as cursor:
        return integrity_check(cursor, slug="lt", acked=acked)


@pytest.mark.django_db(transaction=True)
def test_integrity_check_clean_run_then_each_violation():
    study = make_study(slug="lt", n_items=3, settings={"redundancy": 1})
    a1, a2 = annotators_create(study=study, count=2)
    acked = dict([_judge(a1), _judge(a2)])
    clean = _check(acked)
    assert clean["violations"] == 0 and clean["rows"] == clean["acknowledged"] == 2
    assert clean["lost"] == clean["doubled"] == clean["unacknowledged"] == 0

    # An acknowledged id with no row is lost; a row nobody acknowledged is only reported.
    lost = _check({**acked, "no-such-judgment": "x"})
    assert lost["lost"] == 1 and lost["violations"] == 1
    only_one = dict(list(acked.items())[:1])
    assert _check(only_one)["unacknowledged"] == 1 and _check(only_one)["violations"] == 0

    # A retry stored twice: a second row for the same assignment; and one assignment acknowledged with two ids.
    first = Judgment.objects.get(public_id=next(iter(acked)))
    Judgment.objects.filter(pk=first.pk).update(is_current=False)
    twice = Judgment.objects.create(assignment=first.assignment, revision=2, answer=first.answer,
                                    payload_digest=first.payload_digest, started_at=timezone.now())
    doubled = _check({**acked, twice.public_id: first.assignment.public_id})
    assert doubled["doubled_rows"] == 1 and doubled["doubled"] == 2 and doubled["two_current"] == 0

    # Redundancy 1: a second annotator on a1's item (and a1 holding that item twice is refused by the schema,
    # so over-redundancy is what a broken hand-out would show).
    item = first.assignment.item
    extra = Assignment.objects.create(annotator=a2, item=item, sequence=99, candidate_order=[])
    Judgment.objects.create(assignment=extra, answer=first.answer, payload_digest="x", started_at=timezone.now())
    over = _check(acked)
    assert over["over_redundancy"] == 1 and over["over_handed_out"] == 1
    assert over["violations"] >= 2


@pytest.mark.django_db
def test_integrity_check_names_a_missing_study():
    with pytest.raises(LookupError, match="no study 'lt'"):
        _check({})


class _FakeConnection:
    """Answers the catalog query with ``tables`` and each EXISTS with whether the table has rows; records the rest."""

    def __init__(self, tables: dict[str, int]):
        self.tables = tables
        self.sent: list[str] = []

    def execute(self, sql: str) -> _FakeResult:
        self.sent.append(sql)
        rows: list[tuple[Any, ...]]
        if sql.startswith("SELECT format("):
            rows = [(name,) for name in self.tables]
        elif sql.startswith("SELECT EXISTS"):
            rows = [(self.tables[sql.rsplit(" FROM ", 1)[1].rstrip(")")] > 0,)]
        else:
            rows = []
        return _FakeResult(rows)


class _FakeResult:
    def __init__(self, rows: list[tuple[Any, ...]]):
        self.rows = rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows

    def fetchone(self) -> tuple[Any, ...]:
        return self.rows[0]


def test_the_benchmark_leaves_the_tables_the_run_fills_unanalyzed():
    """Analyzed while empty, the assignment and judgment tables would get sequential-scan plans that every
    connection's prepared statements keep while the run fills them (docs/load.md)."""
    from bench.loadtest import analyze_filled_tables

    conn = _FakeConnection({"pg_catalog.pg_class": 400, "public.studies_item": 2000, "public.annotation_assignment": 0,
                            "public.annotation_judgment": 0, "public.annotation_annotator": 100})
    analyze_filled_tables(cast(Any, conn))
    assert conn.sent[-1] == "VACUUM ANALYZE pg_catalog.pg_class, public.studies_item, public.annotation_annotator"
