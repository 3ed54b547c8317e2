"""The stored study report (evaluators/reports/report_cache.py): read back by another process, recomputed when the
data it reads changes or when it is older than REPORT_SECONDS."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.utils import timezone

from annotation.handout.exclusion import annotator_exclude
from evaluators.management.commands import agreement as agreement_command
from evaluators.models import StoredReport
from evaluators.reports import report_cache, study_stats
from evaluators.stats.coding import WEIGHT_SCHEMES
from tests.report_study import ranking_study

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[3]


def printed(slug: str, *args: str) -> str:
    cache.clear()  # what another process sees: no report in its own cache
    out = StringIO()
    call_command("agreement", slug, "--json", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The slugs of the reports computed (not read back) from now on."""
    computed: list[str] = []
    real = study_stats.study_report

    def study_report(study, **options):
        computed.append(study.slug)
        return real(study, **options)

    monkeypatch.setattr(study_stats, "study_report", study_report)
    return computed


def test_a_stored_report_is_read_back_and_prints_the_same(counted):
    study = ranking_study()
    first = printed(study.slug)
    assert counted == ["rk"] and StoredReport.objects.filter(study=study).count() == 1
    assert printed(study.slug) == first and counted == ["rk"]
    assert printed(study.slug, "--seed", "3") != first and counted == ["rk", "rk"]  # other options, other report


def test_the_data_it_reads_changes_the_key(counted):
    study = ranking_study()
    printed(study.slug)
    annotator = study.annotators.order_by("pk").first()
    annotator_exclude(annotator=annotator, reason="test")
    printed(study.slug)
    annotator.refresh_from_db()
    type(annotator).objects.filter(pk=annotator.pk).update(is_pilot=True)
    printed(study.slug)
    type(study).objects.filter(pk=study.pk).update(mqm_weights={"major": 10})
    study.refresh_from_db()
    printed(study.slug)
    assert counted == ["rk"] * 4


def test_other_code_computes_its_own_report(counted, monkeypatch):
    study = ranking_study()
    first = printed(study.slug)
    monkeypatch.setattr(report_cache, "code_version", lambda: "an upgraded product")
    assert printed(study.slug) == first and counted == ["rk", "rk"]


def test_the_code_version_follows_the_statistics_sources():
    report_cache.code_version.cache_clear()
    version = report_cache.code_version()
    assert len(version) == 24 and version == report_cache.code_version()


def test_a_report_older_than_report_seconds_is_computed_again(counted):
    study = ranking_study()
    first = printed(study.slug)
    StoredReport.objects.update(computed_at=timezone.now() - timedelta(seconds=report_cache.REPORT_SECONDS + 1))
    assert printed(study.slug) == first and counted == ["rk", "rk"]
    assert StoredReport.objects.count() == 1  # the old one dropped when the new one was stored


def test_a_report_whose_json_reads_back_different_is_not_stored():
    study = ranking_study()
    report_cache._store(study, "k1", {"pair": ("a", "b")})
    report_cache._store(study, "k2", {1: "one"})
    report_cache._store(study, "k3", {"value": float("nan")})
    report_cache._store(study, "k4", {"value": 0.1, "list": ["a"]})
    assert list(StoredReport.objects.values_list("key", flat=True)) == ["k4"]


def test_the_weight_choices_are_the_statistics_ones():
    assert agreement_command.WEIGHT_SCHEMES == WEIGHT_SCHEMES


def test_the_command_starts_without_the_statistics_libraries():
    """What a stored report is read back with: Django, the command and the cache module, no pandas/SciPy/irrCAC."""
    code = ("import sys, django; django.setup(); import evaluators.management.commands.agreement; "
            "print(sorted(m for m in ('pandas', 'numpy', 'scipy', 'irrCAC') if m in sys.modules))")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_tests", "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            check=True)
    assert json.loads(result.stdout.strip().replace("'", '"')) == []


def test_a_computed_mqm_report_imports_no_scipy_stats():
    """The report modules, the statistics package and the WMT ranking's test load neither ``scipy.stats`` (nor
    the ``scipy.spatial`` it loads) nor ``irrCAC.raw``: they are imported where a coefficient or a test needs them
    (an MQM/ESA/DA report whose items have one rater each needs none: 0.2-0.3 s of ``agreement SLUG``)."""
    code = ("import sys, django; django.setup()\n"
            "import pandas as pd\n"
            "import evaluators.stats, evaluators.reports.study_stats, evaluators.reports.span_report\n"
            "from evaluators.stats.wmt_ranking import wmt_ranking\n"
            "rows = [(a, s, str(g), float((g * (k + 3) + len(a)) % 5)) for k, s in enumerate('ABC') for g in range(12)\n"
            "        for a in ('x', 'y')]\n"
            "result = wmt_ranking(pd.DataFrame(rows, columns=['annotator', 'system', 'segment', 'score']))\n"
            "assert len(result.head_to_head) == 3 and all(h['n_segments'] == 12 for h in result.head_to_head)\n"
            "print(sorted(m for m in ('scipy.stats', 'scipy.spatial', 'irrCAC.raw') if m in sys.modules))")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_tests", "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.strip().replace("'", '"')) == []
