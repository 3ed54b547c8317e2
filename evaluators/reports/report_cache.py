"""One study report per data version and options, shared by the page, its downloads, the API and ``agreement``.

A report is looked up in Django's cache (per process without Redis, shared with it), then in the database
(:class:`evaluators.models.StoredReport`, shared by every process), and computed only when neither holds one
younger than :data:`REPORT_SECONDS` for the same key.  The key covers what the report reads: the current judgments
(their number and last id), the excluded and the pilot annotators, the items (number and last id), the study's MQM
weights, the options, and the code that computes a report (a digest of the sources of ``evaluators`` and
``protocols``, so an upgraded product never prints a report the previous code computed).

This module imports no pandas: a report read back costs a few queries, not the statistics' start-up.
"""
from __future__ import annotations

import functools
import hashlib
import json
import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.core.cache import cache
from django.db import DatabaseError, transaction
from django.db.models import Count, Max
from django.utils import timezone

from annotation.models import Judgment
from studies.models import Study

from evaluators.models import StoredReport

log = logging.getLogger(__name__)

#: How long a computed report is read back (seconds), in the cache and from the database.
REPORT_SECONDS = 600


def data_version(study: Study) -> str:
    """Digest of what the report reads: current judgments, exclusions, pilot annotators, items, MQM weights."""
    judgments = Judgment.objects.filter(assignment__annotator__study=study).aggregate(
        n=Count("pk"), last=Max("pk"))
    excluded = list(study.annotators.filter(excluded=True).order_by("pk").values_list("pk", flat=True))
    pilots = list(study.annotators.filter(is_pilot=True).order_by("pk").values_list("pk", flat=True))
    items = study.items.aggregate(n=Count("pk"), last=Max("pk"))
    parts = [study.pk, study.slug, study.created_at.isoformat(), judgments, excluded, items, pilots,
             study.mqm_weights or None]
    return hashlib.sha256(json.dumps(parts, default=str, sort_keys=True).encode()).hexdigest()[:24]


@functools.cache
def code_version() -> str:
    """Digest of the Python sources that compute a report (``evaluators/`` and ``protocols/``), once per process."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parents[2]
    for package in ("evaluators", "protocols"):
        for path in sorted((root / package).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:24]


def report_key(study: Study, options: dict[str, Any]) -> str:
    """The key of the study's report with ``options`` at the study's current data version and code version."""
    return hashlib.sha256(json.dumps([data_version(study), code_version(), options],
                                     sort_keys=True).encode()).hexdigest()


def study_report_cached(*, study: Study, options: dict[str, Any]) -> dict:
    """:func:`evaluators.reports.study_stats.study_report` with ``options``, computed once per data version.

    Raises what ``study_report`` raises (``ReportError``); an error is never stored.
    """
    key = report_key(study, options)
    report = cache.get("study-report:" + key)
    if report is not None:
        return report
    stored = (StoredReport.objects.filter(key=key, computed_at__gte=timezone.now() - timedelta(seconds=REPORT_SECONDS))
              .values_list("report", flat=True).first())
    if stored is not None:
        report = json.loads(stored)
    else:
        from evaluators.reports.study_stats import study_report

        report = study_report(study, **options)
        _store(study, key, report)
    cache.set("study-report:" + key, report, REPORT_SECONDS)
    return report


def _store(study: Study, key: str, report: dict) -> None:
    """Keep ``report`` under ``key`` (dropping the study's reports older than REPORT_SECONDS), when its JSON text
    reads back equal to it; a database that refuses the write (a read-only replica, a concurrent writer of the same
    key) costs the next process a recomputation, never the report."""
    try:
        text = json.dumps(report, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):  # not JSON (a NaN, a NumPy number): not kept
        return
    if json.loads(text) != report:  # a tuple or a non-text key would come back changed: not kept
        return
    now = timezone.now()
    try:
        with transaction.atomic():
            StoredReport.objects.filter(study=study, computed_at__lt=now - timedelta(seconds=REPORT_SECONDS)).delete()
            StoredReport.objects.update_or_create(key=key, defaults={"study": study, "report": text,
                                                                     "computed_at": now})
    except DatabaseError as exc:
        log.warning("report of study %s not stored: %s", study.slug, exc)
