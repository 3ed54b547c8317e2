"""Background jobs through the default database task backend and a real ``db_worker`` process.

The job is queued by the web code (here: the service the page calls) into the
test database's tasks table; a separate ``manage.py db_worker --batch`` process,
pointed at the same database, takes it, runs the evaluator and writes progress
and the result to the job row.  Runs on SQLite (the test database is a file)
and on the PostgreSQL pass of ``make test``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from evaluators.jobs import job_submit
from evaluators.models import EvaluationJob, Evaluator, JobKind, JobState, MetricScore
from tests.compare_study import compare_study

ROOT = Path(__file__).resolve().parents[3]


def _database_url() -> str:
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    host, port = s.get("HOST") or "127.0.0.1", s.get("PORT") or 5432
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    return f"postgres://{s['USER']}{password}@{host}:{port}/{s['NAME']}"


@pytest.mark.django_db(transaction=True)
def test_the_database_backend_and_a_worker_process_run_a_queued_job(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
    study = compare_study(slug="worker", spam_rate=0.0)
    # Registry evaluators (chrf: sacrebleu's corpus chrF; pronoun-f: word lists), one with paired AR requested.
    job = job_submit(study=study, kind=JobKind.EVALUATE,  # autocommit: queued now
                     params={"evaluators": ["chrf", "pronoun-f"], "paired": "ar"})
    job.refresh_from_db()
    assert job.state == JobState.QUEUED and job.task_id  # in the tasks table, waiting for a worker

    from django_tasks_db.models import DBTaskResult

    assert DBTaskResult.objects.filter(id=job.task_id, status="READY").exists()
    env = {**os.environ, "DATABASE_URL": _database_url(), "TASKS_BACKEND": "database",
           "DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "worker-test-key", "DEBUG": "1"}
    done = subprocess.run([sys.executable, "manage.py", "db_worker", "--batch", "--no-startup-delay", "--no-reload"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    job.refresh_from_db()
    assert job.state == JobState.DONE, (job.errors, done.stderr[-2000:])
    n = MetricScore.objects.filter(evaluator__study=study, evaluator__name="chrf").count()
    n_pronoun = MetricScore.objects.filter(evaluator__study=study, evaluator__name="pronoun-f").count()
    assert n > 0 and job.summary == f"chrf: {n} scores stored\npronoun-f: {n_pronoun} scores stored"
    chrf = Evaluator.objects.get(study=study, name="chrf")
    assert chrf.signature.startswith("nrefs:1|case:mixed|eff:yes|nc:6") and set(chrf.system_scores) == {
        "sys1", "sys2", "sys3", "sys4"}
    assert chrf.paired is not None and chrf.paired["method"] == "ar" and chrf.paired["baseline"] == "sys1"
    assert Evaluator.objects.get(study=study, name="pronoun-f").signature.startswith("pronoun-f|")
    assert DBTaskResult.objects.get(id=job.task_id).status == "SUCCESSFUL"
    assert EvaluationJob.objects.get(pk=job.pk).started_at is not None
