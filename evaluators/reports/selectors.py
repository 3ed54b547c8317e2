"""Reads for the report page, its downloads and the API: one cached study report.

The page, its CSV/JSON downloads, ``GET /api/v1/studies/<slug>/agreement`` and the
``agreement`` command all ask for the same report; computing it once per change of
the data keeps a large study's page from recomputing the bootstrap for every
download (``evaluators.reports.report_cache``).  The key covers everything the report
depends on (the judgments, the exclusions, the items, the options), so a new
judgment or an exclusion is seen at once.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from django.core.cache import cache

from studies.models import Study

from evaluators.models import LLMJudge
from evaluators.reports import judges as judge_reports
from evaluators.reports.report_cache import data_version as _data_version
from evaluators.reports.report_cache import study_report_cached
from evaluators.reports.study_pilot import study_pilot
from evaluators.stats.planning import Pilot, PlanningError

CACHE_SECONDS = 600


__all__ = ["CACHE_SECONDS", "judges_report_cached", "study_pilot_cached", "study_report_cached"]


def judges_report_cached(*, study: Study, options: dict[str, Any]) -> dict | None:
    """:func:`evaluators.reports.judges.judges_report` beside the cached study report (whose human ranking it
    shows the judges' beside), cached until the judgments or a judge change; None when the study has no judge."""
    stored = list(LLMJudge.objects.filter(study=study).order_by("name").values_list("pk", "sha256", "imported_at"))
    if not stored:
        return None
    key = "judges-report:" + hashlib.sha256(
        json.dumps([_data_version(study), stored, options], sort_keys=True, default=str).encode()).hexdigest()
    block = cache.get(key)
    if block is None:
        report = study_report_cached(study=study, options=options)
        block = judge_reports.judges_report(study, options=options, human_ranking=report.get("ranking"))
        cache.set(key, block, CACHE_SECONDS)
    return block


def study_pilot_cached(*, study: Study) -> Pilot:
    """:func:`evaluators.reports.study_pilot.study_pilot` of the study, cached until its data changes.

    The planning page (``/reports/SLUG/plan/``) asks for the pilot on every request, and building it reads the
    whole export frame; the key is the report's data version (current judgments, exclusions, items) with the
    study's MQM weights, the one setting the pilot's scores read. A PlanningError (no segment scores, no
    judgments) is cached as well and raised again.
    """
    key = "study-pilot:" + hashlib.sha256(json.dumps(
        [_data_version(study), study.mqm_weights or None], sort_keys=True, default=str).encode()).hexdigest()
    cached = cache.get(key)
    if cached is None:
        try:
            cached = ("pilot", study_pilot(study))
        except PlanningError as exc:
            cached = ("error", str(exc))
        cache.set(key, cached, CACHE_SECONDS)
    kind, value = cached
    if kind == "error":
        raise PlanningError(value)
    return value
