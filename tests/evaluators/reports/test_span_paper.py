"""Paper outputs of MQM / ESA / DA studies: the WMT-style ranking table (LaTeX, Markdown) and the methods paragraph."""
from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command

from evaluators.reports import paper
from tests.evaluators.reports.test_span_report import answer_all, esa_plan, mqm_plan, span_study

pytestmark = pytest.mark.django_db


def run(*args: str, **kw) -> str:
    out = StringIO()
    call_command("agreement", *args, stdout=out, **kw)
    return out.getvalue()


@pytest.fixture
def mqm():
    study = span_study("paper-mqm", "mqm")
    answer_all(study, mqm_plan)
    return study


def test_mqm_latex_ranking_table_has_a_rule_between_clusters(mqm):
    report = json.loads(run(mqm.slug, json=True))
    latex = run(mqm.slug, table="ranking")
    assert latex.startswith("\\begin{table}") and "\\toprule" in latex and "\\bottomrule" in latex
    header, body = latex.split("\\toprule")[1].split("\\midrule", 1)
    assert "Cluster & Rank & System & MQM & 95\\% CI & z" in header
    body = body.split("\\bottomrule")[0]
    # three clusters of one system each: a \midrule between each pair of rows
    lines = [line.strip() for line in body.strip().splitlines()]
    assert lines == [
        f"1 & 1 & reference$^\\dagger$ & 0.00 & [0.00, 0.00] & {report['ranking']['systems'][0]['z']:.3f} \\\\",
        "\\midrule",
        f"2 & 2 & sys1 & 1.05 & [1.05, 1.05] & {report['ranking']['systems'][1]['z']:.3f} \\\\",
        "\\midrule",
        f"3 & 3 & sys2 & 5.00 & [5.00, 5.00] & $-${abs(report['ranking']['systems'][2]['z']):.3f} \\\\",
    ]
    caption = re.search(r"\\caption\{(.*)\}", latex).group(1)
    assert "lower is better" in caption and "wmt-mqm: minor 1, major 5" in caption and "$^\\dagger$ human reference" in caption


def test_markdown_ranking_and_agreement_tables_for_mqm(mqm):
    report = json.loads(run(mqm.slug, json=True))
    md = run(mqm.slug, table="ranking", table_format="markdown")
    rows = [line for line in md.splitlines() if line.startswith("|")]
    assert rows[0] == "| Cluster | Rank | System | MQM | 95% CI | z |"
    assert rows[2].startswith("| 1 | 1 | reference † | 0.00 |") and rows[3].startswith("| 2 | 2 | sys1 | 1.05 |")
    assert len(rows) == 2 + 3
    agreement = run(mqm.slug, table="agreement", table_format="markdown")
    alpha = report["span_agreement"]["scores"]["krippendorff_alpha_interval"]
    assert f"| Krippendorff's α, interval (segment scores) | {alpha['value']:.3f} |" in agreement
    assert "| Gwet's AC1 (error categories of overlapping spans) | 1.000 |" in agreement
    assert "| Gwet's AC1 (top-level categories of overlapping spans) | 1.000 |" in agreement
    latex = run(mqm.slug, table="agreement")
    assert "Krippendorff's $\\alpha$, interval" in latex and "Gwet's AC$_1$ (error categories" in latex
    caption = re.search(r"\\caption\{(.*)\}", latex).group(1)
    assert "interval $\\alpha$ of the segment scores" in caption and "α" not in latex  # no raw Unicode Greek


def test_mqm_methods_paragraph_names_protocol_weights_taxonomy_agreement_and_ranking(mqm):
    report = json.loads(run(mqm.slug, json=True))
    text = run(mqm.slug, methods=True)
    assert f"version {paper.version()}" in text
    assert "Multidimensional Quality Metrics (MQM) as in Freitag et al., 2021" in text
    assert "minor 1, major 5, critical 25" in text and "minor Fluency/Punctuation 0.1" in text
    assert "Discourse branch" in text and "pronoun reference" in text.lower()
    assert f"a typology of {len(mqm.effective_taxonomy())} categories" in text
    assert ("each segment (item × candidate) was rated by 2 annotators, 2 annotators in all, giving 12 judgments "
            "and 36 segment ratings") in text
    assert "including the human reference reference" in text
    ac1 = report["coefficients"]["gwet_ac1"]["value"]
    assert f"Gwet's AC1 = {ac1:.3f}" in text and "worst severity" in text
    alpha = report["span_agreement"]["scores"]["krippendorff_alpha_interval"]
    assert f"Krippendorff's α (interval) = {alpha['value']:.3f}, 95% CI [{alpha['ci_low']:.3f}" in text
    assert ("(12 matched pairs): Gwet's AC1 = 1.000, 95% CI [1.000, 1.000] on full categories and 1.000, "
            "95% CI [1.000, 1.000] on top-level categories") in text
    assert "Kocmi et al., 2023" in text and "ComputeWMT23Results, Federmann, 2018" in text
    assert "reference (0.00); sys1 (1.05); sys2 (5.00)" in text  # three clusters, in order
    assert "For quality control, answers faster than" in text


def test_esa_and_da_paragraphs_and_tables():
    esa = span_study("paper-esa", "esa")
    answer_all(esa, esa_plan)
    text = run(esa.slug, methods=True)
    assert "Error Span Annotation (ESA; Kocmi et al., 2024)" in text and "(minor and major)" in text
    assert "MQM" not in text and "Categories of overlapping spans" not in text
    assert "Error spans: mean overlap F1" in text
    md = run(esa.slug, table="ranking", table_format="markdown")
    assert "| Cluster | Rank | System | ESA | 95% CI | z |" in md and "higher is better" in md
    report = json.loads(run(esa.slug, json=True))
    top = report["ranking"]["systems"][0]
    assert f"| {top['cluster']} | 1 | reference † | {top['score']:.2f} |" in md

    da = span_study("paper-da", "esa", esa_spans=False)
    answer_all(da, lambda k, item, system: {"score": esa_plan(k, item, system)["score"]})
    text = run(da.slug, methods=True)
    assert "direct assessment, Graham et al., 2013" in text and "no error spans" in text
    assert "score's band (0–33, 34–66, 67–100" in text and "Error spans" not in text
    assert "| Cluster | Rank | System | DA |" in run(da.slug, table="ranking", table_format="markdown")
