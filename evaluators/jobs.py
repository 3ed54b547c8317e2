"""Long evaluation work as background jobs: queue, run, report.

The web pages never run an evaluator, a large score import or a large
comparison inside a request (a gunicorn timeout would kill it half way).  They
call :func:`job_submit`, which stores an :class:`~evaluators.models.EvaluationJob`
and queues :func:`run_evaluation_job` on Django's Tasks
framework once the surrounding transaction commits; a worker process
(``python manage.py db_worker`` with the default database backend,
``rqworker default --job-class django_tasks_rq.Job`` with
``TASKS_BACKEND=rq``) then calls :func:`job_execute`, which
claims the row, runs the work with progress going to the row, and leaves it
done (with a summary) or failed (with its errors).  The row, not the task
backend's own bookkeeping, is what the compare page shows, so it survives a
reload and looks the same whichever backend runs the tasks.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.utils import timezone
from django_tasks import task

from annotation.models import Judgment
from evaluators import progress
from evaluators.comparison.selectors import (
    comparison_cache_put, comparison_data_version, study_comparison, study_comparison_cached,
)
from evaluators.metrics import scores
from evaluators.metrics.study_corpus import build_study_corpus
from evaluators.models import EvaluationJob, JobKind, JobState, MetricScore
from studies.models import Study

logger = logging.getLogger(__name__)

#: Seconds between two progress writes of one job (the last one is always written).
PROGRESS_INTERVAL = 0.5


class JobError(ValueError):
    """A job request that cannot be queued (unknown kind, missing parameter)."""


def job_submit(*, study: Study, kind: str, params: dict[str, Any] | None = None, payload: str = "",
               user: AbstractBaseUser | AnonymousUser | None = None) -> EvaluationJob:
    """Store a job and queue its task when the current transaction commits; return the job."""
    if kind not in JobKind.values:
        raise JobError(f"kind: unknown job kind {kind!r}; one of {', '.join(JobKind.values)}")
    params = dict(params or {})
    if kind == JobKind.EVALUATE and not params.get("evaluators"):
        raise JobError("evaluators: name at least one evaluator to run")
    if kind == JobKind.IMPORT_SCORES and not payload:
        raise JobError("payload: an import job needs the score file's text")
    job = EvaluationJob.objects.create(
        study=study, kind=kind, params=params, payload=payload,
        requested_by_id=user.pk if user is not None and user.is_authenticated else None)
    transaction.on_commit(lambda: _enqueue(job.pk))
    return job


def _enqueue(job_id: int) -> None:
    try:
        result = run_evaluation_job.enqueue(job_id)
    except Exception as exc:  # e.g. Redis unreachable: say so on the job instead of losing it silently
        logger.exception("could not queue evaluation job %s", job_id)
        EvaluationJob.objects.filter(pk=job_id, state=JobState.QUEUED).update(
            state=JobState.FAILED, finished_at=timezone.now(),
            errors=[f"could not queue the job: {type(exc).__name__}: {exc}"])
        return
    EvaluationJob.objects.filter(pk=job_id).update(task_id=str(result.id))


def _claim(job_id: int) -> EvaluationJob | None:
    """Mark a queued job running; None when it is gone or another worker already took it."""
    with transaction.atomic():
        job = EvaluationJob.objects.select_for_update().filter(pk=job_id).select_related("study").first()
        if job is None or job.state != JobState.QUEUED:
            return None
        job.state, job.started_at = JobState.RUNNING, timezone.now()
        job.save(update_fields=["state", "started_at"])
    return job


def _progress_writer(job: EvaluationJob, prefix: str = "") -> progress.Listener:
    last = [0.0]

    def write(done: int, total: int, label: str) -> None:
        now = time.monotonic()
        if now - last[0] < PROGRESS_INTERVAL and done < total:
            return
        last[0] = now
        text = f"{prefix}: {label}" if prefix and label else (prefix or label)
        EvaluationJob.objects.filter(pk=job.pk, state=JobState.RUNNING).update(
            progress_done=min(done, 2**31 - 1), progress_total=min(total, 2**31 - 1), progress_label=text[:200])
    return write


def _run_evaluate(job: EvaluationJob) -> list[str]:
    """Run every evaluator of the job, then store them all together: one failing stores none."""
    names = list(dict.fromkeys(job.params["evaluators"]))
    nlp = job.params.get("nlp") or None
    paired = job.params.get("paired", "bs")  # the page's default: sacrebleu's paired bootstrap
    reference = job.params.get("reference") or None
    built = build_study_corpus(job.study, reference)  # once for all the evaluators
    runs = []
    for i, name in enumerate(names):
        _progress_writer(job)(i, len(names), f"{name} ({i + 1} of {len(names)} evaluators)")
        with progress.listening(_progress_writer(job, f"{name} ({i + 1} of {len(names)})")):
            try:
                runs.append(scores.evaluator_prepare(study=job.study, name=name, nlp=nlp, built=built,
                                                     reference=reference, paired=None if paired == "none" else paired))
            except ValueError as exc:
                if len(names) == 1:
                    raise
                raise ValueError(f"{name}: {exc} (none of {', '.join(names)} was stored)") from exc
    lines = [f"{e.name}: {e.scores.count()} scores stored" for e in scores.evaluators_store(runs)]
    _precompute_comparison(job)
    return lines


#: The compare page's options when it is opened without a query (research/views/compare.py).
DEFAULT_COMPARISON = {"human_score": "expected_wins", "n_boot": 1000, "seed": 0}


def _precompute_comparison(job: EvaluationJob) -> None:
    """Queue the page's default comparison on the new scores, so that opening the page finds it computed.

    Only for a study whose comparison the page would not compute inline (``comparison_or_job`` decides and
    queues; a job already running on the same data is reused).
    """
    try:
        comparison_or_job(study=job.study, options=dict(DEFAULT_COMPARISON), user=job.requested_by)
    except Exception:  # the scores are stored; the page computes or queues the comparison itself when opened
        logger.exception("evaluation job %s: could not precompute the comparison", job.pk)


def _run_import(job: EvaluationJob) -> list[str]:
    p = job.params
    _progress_writer(job)(0, 1, f"reading {p.get('file_name', 'the file')}")
    evaluators = scores.scores_import(study=job.study, file_name=p.get("file_name", "scores.csv"),
                                      content=job.payload, name=p.get("name") or None,
                                      higher_is_better=p.get("higher_is_better"))
    return [f"{e.name}: {e.scores.count()} scores imported" for e in evaluators]


def _run_compare(job: EvaluationJob) -> list[str]:
    p = job.params
    version = comparison_data_version(job.study)
    _progress_writer(job)(0, 1, "bootstrapping")
    result = study_comparison(study=job.study, names=p.get("names"), human_score=p.get("human_score", "expected_wins"),
                              n_boot=int(p.get("n_boot", 1000)), seed=int(p.get("seed", 0)),
                              reference=p.get("reference") or None)
    job.result, job.data_version = result, version
    job.save(update_fields=["result", "data_version"])
    return [f"comparison of {len(result.get('evaluators', []))} evaluator(s) computed"]


RUNNERS: dict[str, Callable[[EvaluationJob], list[str]]] = {
    JobKind.EVALUATE: _run_evaluate,
    JobKind.IMPORT_SCORES: _run_import,
    JobKind.COMPARE: _run_compare,
}


def job_execute(job_id: int) -> str:
    """Run a queued job to its end (the task's body); returns its final state.

    Every failure ends on the job row (state ``failed`` and the errors the
    researcher needs, a traceback in the log); nothing is raised, so one bad
    job never stops a worker.
    """
    job = _claim(job_id)
    if job is None:
        return "skipped"
    try:
        lines = RUNNERS[job.kind](job)
    except scores.ScoreFileError as exc:
        _finish(job, JobState.FAILED, errors=exc.errors)
    except (scores.UnknownEvaluatorError, ValueError) as exc:
        logger.warning("evaluation job %s failed: %s", job.pk, exc)
        _finish(job, JobState.FAILED, errors=[str(exc)])
    except Exception as exc:
        logger.exception("evaluation job %s failed", job.pk)
        _finish(job, JobState.FAILED, errors=[f"{type(exc).__name__}: {exc}"])
    else:
        _finish(job, JobState.DONE, summary="\n".join(lines))
    return EvaluationJob.objects.values_list("state", flat=True).get(pk=job.pk)


@task()
def run_evaluation_job(job_id: int) -> str:
    """The background task: run one :class:`~evaluators.models.EvaluationJob`; returns its final state."""
    return job_execute(job_id)


def _finish(job: EvaluationJob, state: str, *, summary: str = "", errors: list[str] | None = None) -> None:
    fields: dict[str, Any] = {"state": state, "finished_at": timezone.now(), "summary": summary,
                              "errors": errors or [], "progress_label": ""}
    if job.kind == JobKind.IMPORT_SCORES:
        fields["payload"] = ""  # the scores are in the database now (or were refused): don't keep megabytes twice
    if state == JobState.DONE:
        fields["progress_done"] = fields["progress_total"] = max(job.progress_total, 1)
    EvaluationJob.objects.filter(pk=job.pk).update(**fields)


def study_jobs(study: Study, *, limit: int = 10) -> list[EvaluationJob]:
    """The study's most recent jobs, newest first (the compare page's list)."""
    return list(EvaluationJob.objects.filter(study=study).exclude(kind=JobKind.COMPARE)
                .select_related("requested_by")[:limit])


def comparison_or_job(*, study: Study, options: dict[str, Any], user: AbstractBaseUser | AnonymousUser | None = None,
                      inline_limit: int | None = None) -> tuple[dict[str, Any] | None, EvaluationJob | None]:
    """The comparison for ``options`` if it is at hand, else the background job computing it.

    At hand means: cached, or computed by a finished job on the same data, or
    cheap enough to compute now (a study with at most ``inline_limit``
    judgments, ``settings.COMPARE_INLINE_JUDGMENTS`` by default, and at most
    ``settings.COMPARE_INLINE_SCORES`` stored evaluator scores: the 14 evaluators of a
    WMT release, 3,275 judgments but ~92,000 scores, took ~28 s of CPU).  Otherwise the
    running job for the same options and data is returned, or a new one queued.
    """
    limit = settings.COMPARE_INLINE_JUDGMENTS if inline_limit is None else inline_limit
    n_judgments = Judgment.objects.filter(assignment__annotator__study=study).count()
    if n_judgments <= limit and (inline_limit is not None or MetricScore.objects.filter(
            evaluator__study=study).count() <= settings.COMPARE_INLINE_SCORES):
        return study_comparison_cached(study=study, **options), None
    version = comparison_data_version(study)
    params = {"names": sorted(options["names"]) if options.get("names") else None,
              "human_score": options.get("human_score", "expected_wins"),
              "n_boot": int(options.get("n_boot", 1000)), "seed": int(options.get("seed", 0))}
    if options.get("reference"):
        params["reference"] = options["reference"]
    recent = [j for j in EvaluationJob.objects.filter(study=study, kind=JobKind.COMPARE)[:50] if j.params == params]
    done = next((j for j in recent if j.state == JobState.DONE and j.data_version == version and j.result), None)
    if done is not None and done.result is not None:
        comparison_cache_put(study=study, result=done.result, version=version, **params)
        return done.result, None
    active = next((j for j in recent if j.active), None)
    if active is not None:
        return None, active
    return None, job_submit(study=study, kind=JobKind.COMPARE, params=params, user=user)
