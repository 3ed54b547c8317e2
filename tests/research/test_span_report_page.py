"""The report page of MQM / ESA / DA studies: WMT ranking table, errors per category, span agreement, downloads.

Studies answered through the annotation API by two annotators (helpers from
tests/evaluators/reports/test_span_report.py), so every figure has a known value.
"""
from __future__ import annotations

import csv
import io
import re
from html import unescape

import pytest
from django.urls import reverse

from evaluators.reports.study_stats import study_report
from tests.evaluators.reports.test_span_report import answer_all, esa_plan, mqm_plan, span_study
from tests.research.test_report_page import assert_page_matches
from tests.factories import persona

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    user = persona("owner")  # the owner of the studies the tests make (tests/factories.py), not a superuser
    client.force_login(user)
    return client


@pytest.fixture
def mqm_study():
    study = span_study("page-mqm", "mqm")
    answer_all(study, mqm_plan)
    return study


def _get(client, name: str, *args: str, **params: str):
    return client.get(reverse(name, args=list(args)), params)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def _section(html: str, heading_id: str) -> str:
    start = html.index(f'id="{heading_id}"')
    end = html.find("</section>", start)
    return html[start:end]


def test_mqm_page_shows_the_wmt_ranking_with_clusters_weights_and_the_reports_numbers(staff_client, mqm_study):
    resp = _get(staff_client, "evaluators:report", mqm_study.slug, bootstrap="200")
    assert resp.status_code == 200
    html = resp.content.decode()
    report = study_report(mqm_study, n_boot=200)
    # every data-path on the page is the JSON's number (score, z, cluster, wins, alpha, AC1 …)
    assert assert_page_matches(html, report) > 20
    ranking = _section(html, "ranking-h")
    text = _text(ranking)
    # the three systems in order, each its own cluster → two rules between rows
    assert text.index("reference") < text.index("sys1") < text.index("sys2")
    assert ranking.count('class="cluster-start') == 2
    assert "1.050" in text and "5.000" in text  # sys1 (1 + 1.1) / 2 and sys2 MQM points
    assert "reference reference" in text or 'ref-tag">reference' in ranking  # reference system marked
    assert "wmt-mqm: minor 1, major 5, critical 25" in text and "minor Fluency/Punctuation 0.1" in text
    assert "wmt23" in text and "lower is better" in text
    assert ranking.count("<svg") == 1 and "MQM system scores with 95% bootstrap CI" in ranking
    assert "Head-to-head tests (3 pairs, 3 significant)" in text
    # the old expected-wins ranking and hidden-reference control are not shown for MQM
    assert "Expected wins" not in html and "Control: the hidden reference" not in html


def test_mqm_page_errors_table_groups_discourse_and_plots_the_categories(staff_client, mqm_study):
    html = _get(staff_client, "evaluators:report", mqm_study.slug, bootstrap="100").content.decode()
    errors = _section(html, "errors-h")
    text = _text(errors)
    assert "30 errors in 36 rated segments" in text
    assert "Discourse categories marked: Discourse/Pronoun reference" in text
    # the Discourse group comes first, highlighted, with sys1's 12 pronoun errors (all minor)
    groups = re.findall(r'<tbody class="error-group( discourse)?">', errors)
    assert groups[0] == " discourse" and len(groups) == 3  # Discourse, Accuracy, Fluency
    discourse = errors[errors.index('class="error-group discourse"'):errors.index("</tbody>")]
    assert "Pronoun reference" in discourse and "minor 12" in _text(discourse)
    assert "major 12" in text  # sys2's Accuracy/Mistranslation
    svg = errors[errors.index("<svg"):errors.index("</svg>")]
    assert "Errors per rated segment, by top-level category" in svg
    assert 'data-group="Discourse"' in svg and "url(#discourse-hatch)" in svg
    # text labels, not colour alone: the legend names each group with its letters
    for name in ("Discourse", "Accuracy", "Fluency"):
        assert f">{name}</text>" in svg
    assert 'errors.csv' in errors


def test_errors_and_ranking_csv_downloads_carry_the_reports_rows(staff_client, mqm_study):
    resp = _get(staff_client, "evaluators:report-csv", mqm_study.slug, "errors", bootstrap="100")
    assert resp.status_code == 200 and resp["Content-Disposition"].endswith('-errors.csv"')
    rows = list(csv.DictReader(io.StringIO(b"".join(resp.streaming_content).decode())))
    by_key = {(r["system"], r["category"], r["severity"]): r for r in rows}
    assert len(rows) == 3
    pronoun = by_key[("sys1", "Discourse/Pronoun reference", "minor")]
    assert pronoun["count"] == "12" and pronoun["discourse"] == "True" and pronoun["top_level"] == "Discourse"
    assert float(by_key[("sys1", "Fluency/Punctuation", "minor")]["penalty"]) == pytest.approx(0.6)
    assert by_key[("sys2", "Accuracy/Mistranslation", "major")]["discourse"] == "False"

    resp = _get(staff_client, "evaluators:report-csv", mqm_study.slug, "ranking", bootstrap="100")
    ranking = list(csv.DictReader(io.StringIO(b"".join(resp.streaming_content).decode())))
    assert [(r["system"], r["cluster"], r["is_reference"]) for r in ranking] == [
        ("reference", "1", "True"), ("sys1", "2", "False"), ("sys2", "3", "False")]
    assert float(ranking[1]["score"]) == pytest.approx(1.05)

    resp = _get(staff_client, "evaluators:report-csv", mqm_study.slug, "span_agreement", bootstrap="100")
    [pair] = list(csv.DictReader(io.StringIO(b"".join(resp.streaming_content).decode())))
    assert float(pair["exact_f1"]) == pytest.approx(0.8) and float(pair["category_ac1"]) == pytest.approx(1.0)
    assert float(pair["kendall_tau"]) == pytest.approx(1.0) and pair["unitized_alpha"] != ""
    # the other protocols' control table does not exist for a span study
    assert _get(staff_client, "evaluators:report-csv", mqm_study.slug, "control").status_code == 404


def test_mqm_page_span_agreement_section_and_paper_links(staff_client, mqm_study):
    html = _get(staff_client, "evaluators:report", mqm_study.slug, bootstrap="100").content.decode()
    section = _section(html, "spanagr-h")
    text = _text(section)
    for words in ("Krippendorff's α (interval) = 1.000", "characters", "exact", "overlap", "Category AC1",
                  "top level", "Unitized α", "uα"):
        assert words in text, words
    assert "0.800" in text  # exact and overlap F1 of the pair (12 of 18 spans matched)
    assert section.count("docs/statistics.md") >= 3 and "/help/statistics.md#7-span" in section
    paper = _section(html, "paper-h")
    assert "ranking.tex" in paper and "Freitag et al., 2021" in unescape(paper)


def test_esa_and_da_pages(staff_client):
    esa = span_study("page-esa", "esa")
    answer_all(esa, esa_plan)
    html = _get(staff_client, "evaluators:report", esa.slug, bootstrap="100").content.decode()
    assert_page_matches(html, study_report(esa, n_boot=100))
    text = _text(_section(html, "ranking-h"))
    assert "ESA score (0–100, higher is better)" in html and "esa: the annotators' 0–100 scores as given" in text
    errors = _text(_section(html, "errors-h"))
    # ESA spans have no category: one row per severity, systems in ranking order (reference clean)
    assert "Severity reference sys1 sys2" in errors and "Discourse" not in errors
    assert "major · · 12 minor · 12 ·" in errors
    assert "Errors per rated segment, by severity" in html
    assert "Category AC1" not in html  # ESA spans carry no category

    da = span_study("page-da", "esa", esa_spans=False)
    answer_all(da, lambda k, item, system: {"score": esa_plan(k, item, system)["score"]})
    resp = _get(staff_client, "evaluators:report", da.slug, bootstrap="50")
    html = resp.content.decode()
    assert resp.status_code == 200 and "DA score (0–100" in html
    assert "gave scores only, no errors to count" in html and "DA: no spans, score agreement only" in html
    assert _get(staff_client, "evaluators:report-csv", da.slug, "errors").status_code == 200


def test_span_page_without_judgments_does_not_crash(staff_client):
    study = span_study("page-empty", "mqm")
    resp = _get(staff_client, "evaluators:report", study.slug)
    assert resp.status_code == 200
    assert "No system ranking" in resp.content.decode()


def test_mqm_page_per_phenomenon_has_no_hidden_reference_columns(staff_client):
    from tests.factories import owned_import, study_file

    data = study_file(slug="page-phen", protocol="mqm", n_items=6, n_candidates=3, settings={"redundancy": 2},
                      phenomena=("pronoun", "connective"))
    study = owned_import(status="open", data=data)
    answer_all(study, mqm_plan)
    html = _get(staff_client, "evaluators:report", study.slug, bootstrap="100").content.decode()
    report = study_report(study, n_boot=100)
    assert set(report["by_phenomenon"]) == {"pronoun", "connective"}
    assert_page_matches(html, report)  # every data-path exists in the JSON (no DiP counts of the control)
    phen = _section(html, "phen-h")
    assert "#Ref" not in phen and "connective" in phen and "pronoun" in phen


def test_control_items_with_injected_errors_are_reported(staff_client):
    study = span_study("page-controls", "mqm", n_items=6, spam_rate=0.5)
    answer_all(study, lambda k, item, system: {"spans": []})  # nobody marks the injected errors
    html = _get(staff_client, "evaluators:report", study.slug, bootstrap="50").content.decode()
    report = study_report(study, n_boot=50)
    assert report["control"]["n_checks"] > 0
    assert_page_matches(html, report)
    section = _text(_section(html, "control-h"))
    n = report["control"]["n_checks"]
    assert f"Annotators missed {n} of {n} injected errors: miss rate 100.0%" in section
    assert "major or critical span overlaps" in section
    for kind in report["control"]["by_kind"]:
        assert kind in section
    text = _text(_section(html, "paper-h"))
    assert f"missed {n} of the {n} injected errors" in text


def test_span_page_policies_are_the_protocols_own(staff_client, mqm_study):
    """No ties in a span study: the agreement column is 'all ratings', the form offers the ranking order instead of
    ties, its help names only the policies offered, and the command shown uses the command's own flag."""
    html = unescape(_get(staff_client, "evaluators:report", mqm_study.slug, ranking_order="z",
                         bootstrap="50").content.decode())
    assert "all ratings" in html and "without ties" not in html
    assert 'name="ranking_order"' in html and 'name="ties"' not in html
    assert "ranking_order: order the WMT ranking" in html and "ties: keep" not in html
    assert "ranking_coding" not in html
    assert "--ranking-order z" in html and "--ranking_order" not in html
