"""Last activity and ETA on the dashboard: constant queries, and the estimate's arithmetic."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.dashboard import progress
from annotation.models import Assignment, Judgment
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from tests.factories import make_study

pytestmark = pytest.mark.django_db


def _answer(annotator, n):
    for _ in range(n):
        assignment = assignment_next(annotator=annotator)
        ranks = {c.public_id: i + 1 for i, c in enumerate(ordered_candidates(assignment))}
        judgment_submit(assignment=assignment, payload={"ranks": ranks})


def _open_study(slug, n_items=10):
    study = make_study(slug=slug, n_items=n_items, settings={"redundancy": 1, "spam_rate": 0})
    study.status = "open"
    study.save()
    return study


def test_eta_from_the_last_hours_pace():
    study = _open_study("eta")
    (annotator,) = annotators_create(study=study, count=1)
    _answer(annotator, 4)
    now = timezone.now()
    # Four completions spread over the last 40 minutes: 6 remaining at 10 min each = 60 min.
    for i, a in enumerate(Assignment.objects.filter(annotator=annotator, status="done").order_by("pk")):
        Assignment.objects.filter(pk=a.pk).update(completed_at=now - timedelta(minutes=40 - 10 * i))
    row = progress.study_list(queryset=type(study).objects.filter(pk=study.pk)).get()
    activity = progress.study_activity(studies=[row], now=now)[study.pk]
    assert activity.eta == timedelta(minutes=60)
    assert activity.eta_note == "at the last hour's pace"
    assert activity.last_activity == Judgment.objects.order_by("-submitted_at").first().submitted_at


def test_eta_reasons():
    fresh = _open_study("fresh")
    draft = make_study(slug="draft", n_items=2)
    draft.status = "draft"
    draft.save()
    idle = _open_study("idle")
    (annotator,) = annotators_create(study=idle, count=1)
    _answer(annotator, 3)
    now = timezone.now()
    done = list(Assignment.objects.filter(annotator=annotator, status="done").order_by("pk"))
    for i, a in enumerate(done):  # 3 completions 30 min apart, 2-3 hours ago: 7 left at 30 min each
        Assignment.objects.filter(pk=a.pk).update(completed_at=now - timedelta(hours=3) + timedelta(minutes=30 * i))
    rows = list(progress.study_list().filter(slug__in=["fresh", "draft", "idle"]))
    activity = progress.study_activity(studies=rows, now=now)
    assert (activity[fresh.pk].eta, activity[fresh.pk].eta_note) == (None, "no answers yet")
    assert activity[fresh.pk].last_activity is None
    assert (activity[draft.pk].eta, activity[draft.pk].eta_note) == (None, "study draft")
    assert activity[idle.pk].eta == timedelta(minutes=7 * 30)
    assert "overall pace" in activity[idle.pk].eta_note


def test_constant_queries_for_many_studies():
    for i in range(4):
        study = _open_study(f"many{i}", n_items=3)
        (annotator,) = annotators_create(study=study, count=1)
        _answer(annotator, 2)
    rows = list(progress.study_list())
    with CaptureQueriesContext(connection) as queries:
        activity = progress.study_activity(studies=rows)
    assert len(queries) == 2 and len(activity) == 4
    assert all(a.last_activity is not None for a in activity.values())


def test_annotator_list_last_activity():
    study = _open_study("al", n_items=4)
    busy, idle = annotators_create(study=study, count=2)
    _answer(busy, 2)
    rows = {a.code: a for a in progress.annotator_list(study=study)}
    assert rows[busy.code].last_activity == Judgment.objects.order_by("-submitted_at").first().submitted_at
    assert rows[busy.code].n_done == 2 and rows[idle.code].last_activity is None
