"""The LLM judges' section of the report and compare pages, judges.json and a judge's answers as a download."""
from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from evaluators.judges.importing import judge_import
from evaluators.models import StoredReport
from evaluators.reports.judges import judges_report
from evaluators.reports.study_stats import report_options, study_report
from studies.models import Study
from tests.factories import member_of
from tests.report_study import ranking_study

pytestmark = pytest.mark.django_db


def with_judges(slug: str, *names: str) -> Study:
    """A judged ranking study (24 items, 3 annotators, two phenomena) and judges ranking the reference first."""
    study = ranking_study(slug, n_items=24, n_annotators=3)
    for name in names:
        lines = [json.dumps({"item": i.external_id, "ranks": {"reference": 1, "sys1": 2, "sys2": 3}})
                 for i in study.items.filter(is_spam=False).order_by("pk")]
        judge_import(study=study, name=name, file_name=f"{name}.jsonl", content="\n".join(lines) + "\n",
                     description=f"{name} with prompt v1")
    return study


def test_the_report_page_shows_each_judge_from_its_facts(staff: Any) -> None:
    study = with_judges("pj", "gpt-x")
    page = staff.get(reverse("evaluators:report", args=[study.slug]))
    assert page.status_code == 200
    html = page.content.decode()
    block = judges_report(study, options=report_options({})[0], human_ranking=study_report(study)["ranking"])
    (judge,) = block["judges"]
    facts = judge["facts"]
    assert "LLM judges beside the annotators" in html
    assert (f"Imported on {facts['imported_at'][:10]} from gpt-x.jsonl (jsonl,") in html
    assert f"with 24 answers, 24 of them to the study's 24 real items." in html
    test = judge["alt_test"]
    assert f'data-value="{test["winning_rate"]!r}"' in html
    assert ("yes (passes)" if test["passed"] else "no (does not pass)") in html
    section = html[html.index('id="judges"'):]
    section = section[:section.index("</section>")]
    for name in ("it-er", "it-sie"):  # one row per phenomenon in the test and the agreement tables
        assert section.count(f'<th scope="row">{name}</th>') == 2
    assert judge["methods"].replace("'", "&#x27;") in html
    assert "Kendall&#x27;s τ with the human ranking" in html or "Kendall's τ with the human ranking" in html
    labels_url = reverse("evaluators:report-judge-labels", args=[study.slug, facts["pk"]])
    assert labels_url in html  # the owner may export
    assert f"python manage.py alt_test --slug {study.slug} --pilot drop --json" in html


def test_no_judge_no_section(staff: Any) -> None:
    study = ranking_study("pn", n_items=6, n_annotators=2)
    html = staff.get(reverse("evaluators:report", args=[study.slug])).content.decode()
    assert "LLM judges" not in html


def test_a_viewer_sees_the_section_without_the_answers(login_as: Any) -> None:
    study = with_judges("pv", "gpt-x")
    viewer = member_of(study, "viewer")
    html = login_as(viewer).get(reverse("evaluators:report", args=[study.slug])).content.decode()
    assert "LLM judges beside the annotators" in html
    pk = study.llm_judges.get().pk
    assert reverse("evaluators:report-judge-labels", args=[study.slug, pk]) not in html
    assert login_as(viewer).get(reverse("evaluators:report-judge-labels", args=[study.slug, pk])).status_code == 403


def test_the_compare_page_shows_the_same_block(staff: Any) -> None:
    study = with_judges("pc", "gpt-x")
    html = staff.get(reverse("compare-report", args=[study.slug])).content.decode()
    assert "LLM judges beside the annotators" in html and "gpt-x with prompt v1" in html


def test_judges_json_and_the_answers_download(staff: Any) -> None:
    study = with_judges("pd", "a", "b")
    response = staff.get(reverse("evaluators:report-judges-json", args=[study.slug]))
    assert response.status_code == 200
    block = judges_report(study, options=report_options({})[0], human_ranking=study_report(study)["ranking"])
    assert json.loads(response.content) == json.loads(json.dumps(block))
    assert staff.get(reverse("evaluators:report-judges-json", args=[study.slug]) + "?ties=x").status_code == 400
    judge = study.llm_judges.get(name="b")
    download = staff.get(reverse("evaluators:report-judge-labels", args=[study.slug, judge.pk]))
    out = io.StringIO()
    call_command("export_judge", study.slug, "--name", "b", stdout=out)
    assert b"".join(download.streaming_content).decode() == out.getvalue()
    assert staff.get(reverse("evaluators:report-judge-labels", args=[study.slug, judge.pk + 100])).status_code == 404
    empty = ranking_study("pe", n_items=4, n_annotators=2)
    assert staff.get(reverse("evaluators:report-judges-json", args=[empty.slug])).status_code == 404


def test_the_page_reads_judges_in_constant_queries(staff: Any) -> None:
    study = with_judges("pq", "a")
    url = reverse("evaluators:report", args=[study.slug])
    cache.clear()
    with CaptureQueriesContext(connection) as one:
        assert staff.get(url).status_code == 200
    lines = [json.dumps({"item": i.external_id, "ranks": {"reference": 3, "sys1": 2, "sys2": 1}})
             for i in study.items.filter(is_spam=False)]
    for name in ("b", "c"):
        judge_import(study=study, name=name, file_name="x.jsonl", content="\n".join(lines))
    cache.clear()
    StoredReport.objects.all().delete()  # both requests compute the study report
    with CaptureQueriesContext(connection) as three:
        html = staff.get(url).content.decode()
    assert html.count('class="judge"') == 3
    assert len(three.captured_queries) == len(one.captured_queries)
    with CaptureQueriesContext(connection) as cached:
        staff.get(url)
    assert len(cached.captured_queries) < len(three.captured_queries)


def test_a_judge_before_any_annotator(staff: Any) -> None:
    from tests.factories import make_study

    study = make_study(slug="p0", n_items=3)
    lines = [json.dumps({"item": f"ext-{i}", "ranks": {"reference": 1, "sys1": 2, "sys2": 3}}) for i in range(3)]
    judge_import(study=study, name="early", file_name="early.jsonl", content="\n".join(lines))
    for url in (reverse("evaluators:report", args=[study.slug]), reverse("compare-report", args=[study.slug])):
        html = staff.get(url).content.decode()
        assert "not run: no annotator has 30 or more instances" in html and "LLM judges beside" in html
    block = staff.get(reverse("evaluators:report-judges-json", args=[study.slug])).json()
    (judge,) = block["judges"]
    assert block["n_annotators"] == 0 and judge["agreement"]["n_judge_pairs"] == 0
    assert judge["methods"].count(". ") == 1  # the facts, then why the test could not run: nothing else is claimed
    assert [r["position"] for r in judge["ranking"]["systems"]] == [1, 2, 3]
