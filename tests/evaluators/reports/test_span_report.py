"""The study report of MQM / ESA / DA studies: scores, WMT ranking, errors per category, span agreement.

Hand-made judgments with known MQM points; every figure is checked against arithmetic done here.
"""
from __future__ import annotations

import io
import json
from typing import Any

import pandas as pd
import pytest
from django.core.management import call_command

from annotation.exporting.judgments import judgments_frame
from annotation.models import Judgment
from evaluators.reports.study_stats import report_from_export, study_report
from tests.factories import owned_import, study_file
from tests.span_study import answer_all

pytestmark = pytest.mark.django_db

SYSTEMS = ("reference", "sys1", "sys2")


def span_study(slug: str, protocol: str, n_items: int = 6, **settings: Any):
    data = study_file(slug=slug, protocol=protocol, n_items=n_items, n_candidates=3,
                      settings={"redundancy": 2, **settings})
    return owned_import(status="open", data=data)




def mqm_plan(k: int, item: str, system: str) -> dict:
    """reference: clean; sys1: one minor error (annotator 1 also a minor punctuation one); sys2: a major error."""
    if system == "reference":
        return {"spans": []}
    if system == "sys1":
        spans = [{"start": 0, "end": 4, "category": "Discourse/Pronoun reference", "severity": "minor"}]
        if k == 1:
            spans.append({"start": 10, "end": 11, "category": "Fluency/Punctuation", "severity": "minor"})
        return {"spans": spans}
    return {"spans": [{"start": 0, "end": 4, "category": "Accuracy/Mistranslation", "severity": "major"}]}


def test_mqm_report_scores_ranks_and_errors():
    study = span_study("mqm-report", "mqm")
    answer_all(study, mqm_plan)
    report = study_report(study, n_boot=200)
    assert report["protocol"] == "mqm" and report["n_raters"] == 2
    systems = {row["system"]: row for row in report["ranking"]["systems"]}
    assert systems["reference"]["score"] == pytest.approx(0.0)
    assert systems["sys1"]["score"] == pytest.approx((1 + 1.1) / 2)  # mean over raters, then over items
    assert systems["sys2"]["score"] == pytest.approx(5.0)
    assert [r["system"] for r in report["ranking"]["systems"]] == ["reference", "sys1", "sys2"]
    assert systems["reference"]["is_reference"] and not systems["sys1"]["is_reference"]
    assert systems["sys2"]["score_ci"] == pytest.approx([5.0, 5.0])
    assert systems["sys1"]["score_ci"][0] <= systems["sys1"]["score"] <= systems["sys1"]["score_ci"][1]
    for row in systems.values():
        assert {"z", "cluster", "rank_range", "rank"} <= set(row)
    # 6 items, scores constant per system: every ordered pair differs significantly → three clusters
    assert [systems[s]["cluster"] for s in SYSTEMS] == [1, 2, 3]
    score = report["ranking"]["score"]
    assert score["name"] == "wmt-mqm" and score["weights"]["major"] == 5 and score["weights"]["critical"] == 25
    assert report["ranking"]["method"] == "wmt23"
    errors = {(r["system"], r["category"], r["severity"]): r for r in report["errors"]["rows"]}
    assert errors[("sys1", "Discourse/Pronoun reference", "minor")]["count"] == 12
    assert errors[("sys1", "Fluency/Punctuation", "minor")]["penalty"] == pytest.approx(0.6)
    assert errors[("sys2", "Accuracy/Mistranslation", "major")]["per_segment"] == pytest.approx(1.0)
    assert report["errors"]["discourse_categories"] == ["Discourse/Pronoun reference"]
    # agreement on the worst severity per (item, system): sys1's minor vs minor, etc. → perfect
    assert report["categories"] == ["no-error", "minor", "major"]  # mild to severe (ordinal weights use the order)
    assert report["coefficients"]["percent_agreement"]["value"] == pytest.approx(1.0)
    spans = report["span_agreement"]
    [pair] = spans["spans"]
    assert pair["exact"]["matched"] == 12 and pair["exact"]["a"] + pair["exact"]["b"] == (6 + 6) + (12 + 6)
    assert spans["categories"]["n_matched"] == 12
    assert spans["unitized_alpha"] and spans["unitized_alpha"][0]["n_units"] == 18


def test_custom_weights_and_the_export_gives_the_same_report(tmp_path):
    study = span_study("mqm-weights", "mqm", mqm_weights={"major": 10})
    answer_all(study, mqm_plan)
    report = study_report(study, n_boot=100)
    assert {r["system"]: r["score"] for r in report["ranking"]["systems"]}["sys2"] == pytest.approx(10.0)
    out = tmp_path / "export.csv"
    call_command("export_judgments", study.slug, "--format", "csv", "--output", str(out), stdout=io.StringIO())
    again = report_from_export(pd.read_csv(out, dtype=str, keep_default_na=False), n_boot=100,
                               mqm_weights={"major": 10})
    for key in ("coefficients", "errors"):
        assert json.dumps(again[key], sort_keys=True, default=str) == json.dumps(report[key], sort_keys=True, default=str)
    assert [(r["system"], r["score"], r["cluster"]) for r in again["ranking"]["systems"]] == \
        [(r["system"], r["score"], r["cluster"]) for r in report["ranking"]["systems"]]


def esa_plan(k: int, item: str, system: str) -> dict:
    base = {"reference": 90, "sys1": 70, "sys2": 30}[system] + (5 if k else 0) + int(item.split("-")[1])
    spans = [] if system == "reference" else [{"start": 0, "end": 3, "severity": "major" if system == "sys2" else "minor"}]
    return {"spans": spans, "score": base}


def test_esa_report_orders_by_score_and_reports_score_agreement():
    study = span_study("esa-report", "esa")
    answer_all(study, esa_plan)
    report = study_report(study, n_boot=100)
    systems = report["ranking"]["systems"]
    assert [r["system"] for r in systems] == ["reference", "sys1", "sys2"]
    assert systems[0]["score"] == pytest.approx(90 + 2.5 + 2.5)  # items 0..5 → mean 2.5; annotators 0 and +5
    assert report["ranking"]["score"]["higher_is_better"] is True
    scores = report["span_agreement"]["scores"]
    [pair] = scores["pairs"]
    assert pair["pearson"] == pytest.approx(1.0) and pair["kendall_tau"] == pytest.approx(1.0)
    assert scores["krippendorff_alpha_interval"]["value"] > 0.9
    assert report["span_agreement"]["categories"] is None
    assert {r["category"] for r in report["errors"]["rows"]} == {"(ESA span)"}


def test_da_report_uses_score_bands():
    study = span_study("da-report", "esa", esa_spans=False)
    answer_all(study, lambda k, item, system: {"score": esa_plan(k, item, system)["score"]})
    report = study_report(study, n_boot=50)
    assert set(report["categories"]) <= {"0-33", "34-66", "67-100"}
    assert report["errors"] is None and report["span_agreement"]["spans"] is None
    assert [r["system"] for r in report["ranking"]["systems"]] == ["reference", "sys1", "sys2"]


def test_agreement_command_json_for_an_mqm_study():
    study = span_study("mqm-cmd", "mqm", n_items=3)
    answer_all(study, mqm_plan)
    out = io.StringIO()
    call_command("agreement", study.slug, "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["ranking"]["systems"][0]["system"] == "reference"
    assert {"score", "score_ci", "z", "cluster", "rank_range"} <= set(report["ranking"]["systems"][0])
    assert Judgment.objects.filter(assignment__annotator__study=study).count() == 6
    assert len(judgments_frame(study)) == 18


def test_ranking_order_z_is_the_wmt21_variant():
    study = span_study("esa-z", "esa", n_items=4)
    answer_all(study, esa_plan)
    out = io.StringIO()
    call_command("agreement", study.slug, "--json", "--ranking-order", "z", "--bootstrap", "50", stdout=out)
    ranking = json.loads(out.getvalue())["ranking"]
    assert ranking["method"] == "wmt22-z" and ranking["settings"]["order"] == "z"
    text = io.StringIO()
    call_command("agreement", study.slug, stdout=text)
    assert "Human ranking (wmt23" in text.getvalue() and "reference" in text.getvalue()


def test_the_report_carries_the_control_items_with_injected_errors():
    study = span_study("mqm-controls", "mqm", n_items=6, spam_rate=0.5)
    assert study.items.filter(is_spam=True).exists()
    answer_all(study, lambda k, item, system: {"spans": []})  # nobody marks the injected errors
    report = study_report(study, n_boot=50)
    control = report["control"]
    assert control["n_checks"] > 0 and control["n_missed"] == control["n_checks"]
    assert control["miss_rate"] == pytest.approx(1.0)
    assert "control" in report["methods"]
