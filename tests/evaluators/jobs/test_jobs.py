"""Evaluation as background work: the compare page queues jobs, a task runs them, the page shows state.

Tasks run with Django's immediate backend here (tests/conftest.py); the job is
queued when the request's transaction commits, which the tests make happen with
``django_capture_on_commit_callbacks(execute=True)``.  test_worker.py runs them
once through the database backend and a real worker process.
"""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluators import progress
from evaluators.jobs import job_execute, job_submit
from evaluators.metrics.scores import scores_import
from evaluators.models import EvaluationJob, Evaluator, JobKind, JobState, MetricScore
from tests.compare_study import compare_study, score_csv
from tests.factories import persona

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    s = compare_study(slug="jobs", spam_rate=0.0)
    scores_import(study=s, file_name="o.csv", content=score_csv(name="oracle"))
    return s


@pytest.fixture
def researcher() -> Client:
    client = Client()
    client.force_login(persona("owner"))  # the owner of the studies the tests make, not a superuser
    return client


def test_running_evaluators_from_the_page_is_a_job_that_reports_its_result(researcher, study,
                                                                             django_capture_on_commit_callbacks):
    url = reverse("compare-run", args=[study.slug])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = researcher.post(url, {"evaluators": ["chrf", "pronoun-f"]})
    assert response.status_code == 302
    job = EvaluationJob.objects.get(study=study)
    # Queued, not run inside the request: nothing is computed until the transaction commits.
    assert job.state == JobState.QUEUED and job.params == {"evaluators": ["chrf", "pronoun-f"]}
    assert not Evaluator.objects.filter(study=study, name="chrf").exists()
    page = researcher.get(reverse("compare-report", args=[study.slug])).content.decode()
    assert f'data-job="{job.pk}" data-state="queued"' in page and 'hx-trigger="every 2s"' in page
    assert f"watch={job.pk}" in page and "Run chrf, pronoun-f" in page
    for callback in callbacks:
        callback()
    job.refresh_from_db()
    assert job.state == JobState.DONE and job.task_id and job.started_at and job.finished_at
    n = MetricScore.objects.filter(evaluator__study=study, evaluator__name="chrf").count()
    assert n > 0 and f"chrf: {n} scores stored" in job.summary and "pronoun-f:" in job.summary
    assert job.requested_by.username == "p-owner" and job.percent == 100
    # The panel the page polls tells htmx to reload once a watched job has finished.
    poll = researcher.get(reverse("compare-jobs", args=[study.slug]), {"watch": job.pk})
    assert poll.status_code == 200 and poll["HX-Refresh"] == "true"
    assert "hx-trigger" not in poll.content.decode()  # nothing left to poll
    page = researcher.get(reverse("compare-report", args=[study.slug])).content.decode()
    assert f'data-job="{job.pk}" data-state="done"' in page and f"chrf: {n} scores stored" in page
    assert 'data-evaluator="chrf"' in page


def test_a_failed_job_shows_its_error_and_stores_nothing(researcher, study):
    job = job_submit(study=study, kind=JobKind.EVALUATE, params={"evaluators": ["no-such-metric"]})
    assert job_execute(job.pk) == JobState.FAILED
    job.refresh_from_db()
    assert job.errors and "unknown evaluator 'no-such-metric'" in job.errors[0]
    assert not Evaluator.objects.filter(name="no-such-metric").exists()
    page = researcher.get(reverse("compare-report", args=[study.slug])).content.decode()
    assert f'data-job="{job.pk}" data-state="failed"' in page and "unknown evaluator &#x27;no-such-metric&#x27;" in page
    # A finished job is never run twice (two workers, or a task delivered again).
    assert job_execute(job.pk) == "skipped"


def test_a_job_runs_registry_evaluators_with_its_backend_and_paired_choice(study):
    job = job_submit(study=study, kind=JobKind.EVALUATE,
                     params={"evaluators": ["bleu", "pronoun-r"], "paired": "none", "nlp": "lexicon"})
    assert job_execute(job.pk) == JobState.DONE
    bleu = Evaluator.objects.get(study=study, name="bleu")
    assert bleu.paired is None and bleu.backend == "lexicon" and bleu.signature.startswith("nrefs:1|")
    assert set(bleu.system_scores) == {"sys1", "sys2", "sys3", "sys4"}
    bad = job_submit(study=study, kind=JobKind.EVALUATE, params={"evaluators": ["blonde-lex"], "nlp": "nonsense"})
    assert job_execute(bad.pk) == JobState.FAILED
    bad.refresh_from_db()
    assert bad.errors[0].startswith("nlp: unknown language backend 'nonsense'")
    assert not Evaluator.objects.filter(study=study, name="blonde-lex").exists()


def test_a_large_score_file_is_imported_in_the_background(researcher, study, settings,
                                                          django_capture_on_commit_callbacks):
    settings.SCORE_IMPORT_INLINE_BYTES = 10
    url = reverse("compare-import", args=[study.slug])
    bad = SimpleUploadedFile("big.csv", b"item,system,score\next-0,sys1,1\next-404,sys1,2\n")
    with django_capture_on_commit_callbacks(execute=True):
        assert researcher.post(url, {"file": bad, "name": "big", "orientation": "higher"}).status_code == 302
    job = EvaluationJob.objects.get(study=study, kind=JobKind.IMPORT_SCORES)
    assert job.state == JobState.FAILED and job.errors == ["line 3: item: unknown item id 'ext-404' in study 'jobs'"]
    assert job.payload == "" and not Evaluator.objects.filter(name="big").exists()
    good = SimpleUploadedFile("big.csv", b"item,system,score\next-0,sys1,1\next-1,sys1,2\n")
    with django_capture_on_commit_callbacks(execute=True):
        researcher.post(url, {"file": good, "name": "big", "orientation": "lower"})
    job = EvaluationJob.objects.filter(study=study, kind=JobKind.IMPORT_SCORES).first()
    assert job.state == JobState.DONE and job.summary == "big: 2 scores imported"
    assert Evaluator.objects.get(study=study, name="big").higher_is_better is False


def test_progress_reported_by_evaluator_code_reaches_the_job_row(study, monkeypatch):
    from evaluators.metrics.scores import PreparedRun

    seen = []

    def fake_run(*, study, name, **options):
        for i in progress.steps(range(4), 4, "segments"):
            seen.append(EvaluationJob.objects.values_list("progress_done", "progress_total", "progress_label")
                        .get(pk=job.pk))
        return PreparedRun(study=study, name="oracle", fields={}, rows=[])

    monkeypatch.setattr("evaluators.metrics.scores.evaluator_prepare", fake_run)
    monkeypatch.setattr("evaluators.jobs.PROGRESS_INTERVAL", 0.0)
    job = job_submit(study=study, kind=JobKind.EVALUATE, params={"evaluators": ["oracle"]})
    assert job_execute(job.pk) == JobState.DONE
    assert seen[0] == (0, 4, "oracle (1 of 1): segments") and seen[-1] == (3, 4, "oracle (1 of 1): segments")
    # Without a listener the same calls do nothing.
    assert list(progress.steps(range(3), 3)) == [0, 1, 2]


def test_a_large_comparison_is_computed_by_a_job_page_and_api_wait_for_it(researcher, study, settings,
                                                                          django_capture_on_commit_callbacks):
    settings.COMPARE_INLINE_JUDGMENTS = 0  # every study is "large"
    url = reverse("compare-report", args=[study.slug])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        pending = researcher.get(url, {"bootstrap": 50})
    assert pending.status_code == 200
    html = pending.content.decode()
    assert "being computed in the background" in html and 'hx-trigger="every 2s"' in html
    job = EvaluationJob.objects.get(study=study, kind=JobKind.COMPARE)
    assert job.params == {"names": None, "human_score": "expected_wins", "n_boot": 50, "seed": 0}
    # Asking again while it waits queues nothing more; the API says 202 with the job.
    assert "being computed" in researcher.get(url, {"bootstrap": 50}).content.decode()
    user = persona("owner")  # the owner of the studies the tests make (tests/factories.py), not a superuser
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    api_url = reverse("api-study-compare", args=[study.slug])
    waiting = api.get(api_url, {"bootstrap": 50})
    assert waiting.status_code == 202 and waiting.json()["job"] == job.pk and waiting["Retry-After"] == "5"
    assert EvaluationJob.objects.filter(kind=JobKind.COMPARE).count() == 1
    for callback in callbacks:
        callback()
    job.refresh_from_db()
    assert job.state == JobState.DONE and job.data_version
    ready = researcher.get(url, {"bootstrap": 50})
    assert 'data-evaluator="oracle" data-field="tau">1.000<' in ready.content.decode()
    out = StringIO()
    call_command("compare", study.slug, "--json", "--bootstrap", "50", stdout=out)
    assert api.get(api_url, {"bootstrap": 50}).json() == json.loads(out.getvalue()) == job.result
    # New scores change the data: the stored result no longer applies and a new job is queued.
    scores_import(study=study, file_name="r.csv", content=score_csv(name="reversed", reverse=True))
    with django_capture_on_commit_callbacks(execute=False):
        assert "being computed" in researcher.get(url, {"bootstrap": 50}).content.decode()
    assert EvaluationJob.objects.filter(kind=JobKind.COMPARE).count() == 2


def test_a_job_request_with_missing_input_is_refused(study):
    from evaluators.jobs import JobError

    with pytest.raises(JobError, match="evaluators: name at least one"):
        job_submit(study=study, kind=JobKind.EVALUATE, params={})
    with pytest.raises(JobError, match="kind: unknown job kind"):
        job_submit(study=study, kind="mine-bitcoin")
    assert not EvaluationJob.objects.exists()


def test_a_job_running_several_evaluators_stores_none_when_one_fails(study):
    job = job_submit(study=study, kind=JobKind.EVALUATE, params={"evaluators": ["chrf", "blonde"], "paired": "none"})
    assert job_execute(job.pk) == JobState.FAILED
    job.refresh_from_db()
    assert job.errors[0].startswith("blonde: blonde needs a spaCy pipeline")
    assert job.errors[0].endswith("(none of chrf, blonde was stored)")
    assert not Evaluator.objects.filter(study=study, name__in=["chrf", "blonde"]).exists()
    # Whatever the failure: chrf runs first, then an unknown name fails; chrf is not stored either.
    job = job_submit(study=study, kind=JobKind.EVALUATE, params={"evaluators": ["chrf", "no-such-metric"]})
    assert job_execute(job.pk) == JobState.FAILED
    job.refresh_from_db()
    assert job.errors[0].startswith("no-such-metric: unknown evaluator 'no-such-metric'")
    assert not Evaluator.objects.filter(study=study, name="chrf").exists()


def test_a_study_with_many_scores_gets_its_comparison_from_a_job_queued_after_evaluate(study, settings,
                                                                                   django_capture_on_commit_callbacks):
    """Few judgments but many stored scores: not computed inline; an evaluate job queues the page's default."""
    from evaluators.jobs import DEFAULT_COMPARISON, comparison_or_job

    settings.COMPARE_INLINE_SCORES = 0
    with django_capture_on_commit_callbacks(execute=False):
        job = job_submit(study=study, kind=JobKind.EVALUATE, params={"evaluators": ["bleu"], "paired": "none"})
    assert job_execute(job.pk) == JobState.DONE
    queued = EvaluationJob.objects.get(study=study, kind=JobKind.COMPARE)
    assert queued.params == {"names": None, **DEFAULT_COMPARISON}
    assert job_execute(queued.pk) == JobState.DONE
    result, pending = comparison_or_job(study=study, options=dict(DEFAULT_COMPARISON))
    assert pending is None and result is not None and "bleu" in [e["name"] for e in result["evaluators"]]
    settings.COMPARE_INLINE_SCORES = 10 ** 6  # few scores: computed inline, no job
    assert comparison_or_job(study=study, options={**DEFAULT_COMPARISON, "seed": 1})[1] is None
