"""The compare page says up front when it cannot compare, why, and what to do (with links to its forms)."""
from __future__ import annotations

import pytest
from django.urls import reverse

from evaluators.comparison.readiness import study_compare_readiness
from evaluators.metrics.scores import scores_import
from tests.compare_study import compare_study, score_csv
from tests.factories import make_study

pytestmark = pytest.mark.django_db


def test_one_system_per_item_and_no_scores(staff):
    study = make_study(slug="one", n_items=4, n_candidates=2)  # reference + sys1: DiaBLa-like
    readiness = study_compare_readiness(study=study)
    assert readiness.too_few_systems and readiness.no_scores and readiness.max_systems_per_item == 1
    response = staff.get(reverse("compare-report", args=["one"]))
    assert response.status_code == 200
    page = response.content.decode()
    notice = page.split('id="cannot-compare"', 1)[1].split("</section>", 1)[0]
    assert "Fewer than two systems per item" in notice and "DiaBLa" in notice
    assert "No evaluator scores yet" in notice and "evaluate one --evaluator chrf" in notice
    assert 'href="#run-form"' in notice and 'href="#import-form"' in notice
    assert 'id="run-form"' in page and 'id="import-form"' in page
    # Up front: before the options and any table.
    assert page.index('id="cannot-compare"') < page.index('id="opts-h"')


def test_scores_but_still_one_system(staff):
    study = make_study(slug="one2", n_items=8, n_candidates=2)
    scores_import(study=study, file_name="o.csv", content="item,system,score\n" + "".join(
        f"ext-{i},sys1,{i / 10}\n" for i in range(8)), name="m", higher_is_better=True)
    page = staff.get(reverse("compare-report", args=["one2"])).content.decode()
    notice = page.split('id="cannot-compare"', 1)[1].split("</section>", 1)[0]
    assert "Fewer than two systems per item" in notice and "No evaluator scores yet" not in notice


def test_no_notice_when_comparable(staff):
    study = compare_study(slug="ok", spam_rate=0.0)
    scores_import(study=study, file_name="o.csv", content=score_csv(name="oracle"))
    readiness = study_compare_readiness(study=study)
    assert not readiness.too_few_systems and not readiness.no_scores
    assert readiness.n_items_comparable == readiness.n_items == 8
    assert 'id="cannot-compare"' not in staff.get(reverse("compare-report", args=["ok"])).content.decode()


def test_comparable_without_scores(staff):
    compare_study(slug="noscore", spam_rate=0.0, n_items=3, n_annotators=1)
    notice = staff.get(reverse("compare-report", args=["noscore"])).content.decode().split(
        'id="cannot-compare"', 1)[1].split("</section>", 1)[0]
    assert "No evaluator scores yet" in notice and "Fewer than two systems" not in notice
