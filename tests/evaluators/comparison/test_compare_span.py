"""`compare` on score/span studies (MQM, ESA): the human side from the segment scores, oriented.

Two annotators judge every item of a 5-candidate study (reference, sys1..sys4). Each
candidate's human score follows ``true_rank`` (the reference best, then sys1 … sys4; sys1
and sys2 swapped on two items): MQM = one minor error per rank step below the reference
(0, 1, 2, 3, 4 points: LOWER is better), ESA = 100 − 10·rank (higher is better). A metric
built from the same order must then agree perfectly (pairwise accuracy 1.0), the reversed
one never (0.0) — which fails if MQM were not negated before the statistics.
"""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from evaluators.comparison.selectors import study_comparison
from evaluators.metrics.scores import scores_import
from evaluators.reports.study_stats import study_report
from studies.models import Study
from tests.compare_study import score_csv, true_rank
from tests.factories import make_study

pytestmark = pytest.mark.django_db


def mqm_answer(item: str, system: str) -> dict:
    """``true_rank − 1`` minor errors, one character each, not overlapping."""
    n = true_rank(item, system) - 1
    return {"spans": [{"start": 2 * k, "end": 2 * k + 1, "side": "target", "category": "Accuracy/Mistranslation",
                       "severity": "minor"} for k in range(n)]}


def esa_answer(item: str, system: str) -> dict:
    return {"spans": [], "score": 100 - 10 * true_rank(item, system)}


def span_study(protocol: str, slug: str) -> Study:
    study = make_study(slug=slug, protocol=protocol, n_items=8, n_candidates=5, settings={"redundancy": 2})
    answer = mqm_answer if protocol == "mqm" else esa_answer
    for annotator in annotators_create(study=study, count=2):
        while (assignment := assignment_next(annotator=annotator)) is not None:
            item = assignment.item
            annotations = {c.public_id: answer(item.external_id, c.system) for c in item.candidates.all()}
            judgment_submit(assignment=assignment, payload={"annotations": annotations})
    scores_import(study=study, file_name="o.csv", content=score_csv(name="oracle"))
    scores_import(study=study, file_name="r.csv", content=score_csv(name="reversed", reverse=True))
    return study


@pytest.fixture(params=["mqm", "esa"])
def study(request) -> Study:
    return span_study(request.param, f"cmp-{request.param}")


def by_name(result: dict) -> dict:
    return {e["name"]: e for e in result["evaluators"]}


def test_human_side_is_the_reports_scores(study):
    result = study_comparison(study=study, n_boot=100)
    report = study_report(study, n_boot=100)
    human = result["human"]
    assert human["score"] == study.protocol and human["higher_is_better"] is (study.protocol == "esa")
    reported = {r["system"]: r["score"] for r in report["ranking"]["systems"]}
    assert "reference" not in human["systems"]  # scored, but not ranked nor correlated
    for system, entry in human["systems"].items():
        assert entry["score"] == pytest.approx(reported[system])
    # mean over the 8 items of (rank − 1) points: sys1 is rank 2 on six items and rank 3 on two
    if study.protocol == "mqm":
        assert human["systems"]["sys1"]["score"] == pytest.approx((6 * 1 + 2 * 2) / 8)
        assert human["systems"]["sys4"]["oriented"] == pytest.approx(-4.0)
    else:
        assert human["systems"]["sys1"]["score"] == pytest.approx((6 * 80 + 2 * 70) / 8)
        assert human["systems"]["sys4"]["oriented"] == pytest.approx(50.0)
    assert {s: e["rank"] for s, e in human["systems"].items()} == {"sys1": 1, "sys2": 2, "sys3": 3, "sys4": 4}
    assert human["n_items"] == 8 and human["n_ratings"] == 8 * 5 * 2
    # 8 items × C(5, 2) pairs derived from the segment means (the reference included)
    assert human["n_pairs"] == 80
    assert any("DERIVED" in n for n in result["notes"])


def test_agreeing_metric_is_perfect_and_reversed_is_not(study):
    result = study_comparison(study=study, n_boot=100)
    oracle, reversed_ = by_name(result)["oracle"], by_name(result)["reversed"]
    meta = result["meta"]
    assert meta["system"]["oracle"]["pairwise_accuracy"] == pytest.approx(1.0)
    assert meta["system"]["reversed"]["pairwise_accuracy"] == pytest.approx(0.0)
    assert meta["system"]["oracle"]["kendall"] == pytest.approx(1.0)
    assert meta["system"]["reversed"]["spearman"] == pytest.approx(-1.0)
    assert meta["segment"]["oracle"]["acc_eq"] == pytest.approx(1.0)
    assert meta["segment"]["reversed"]["acc_eq"] < 0.5
    assert meta["segment"]["oracle"]["pearson"] > 0.9 and meta["segment"]["reversed"]["pearson"] < -0.9
    assert [c["metric"] for c in meta["clusters"]][0] == "oracle"
    assert meta["settings"]["systems"] == ["sys1", "sys2", "sys3", "sys4"]
    assert meta["settings"]["n_segments"] == 8
    assert study.protocol.upper() in meta["settings"]["human_segment_score"]
    # system level (Pearson/Spearman/Kendall with CIs) on the oriented human score
    assert oracle["system_level"]["spearman"]["value"] == pytest.approx(1.0)
    assert reversed_["system_level"]["spearman"]["value"] == pytest.approx(-1.0)
    # item level against the derived preferences: 8 items × 6 pairs of scored systems (reference unscored)
    il = oracle["item_level"]
    assert il["n"] == 48 and il["accuracy"] == 1.0 and il["kendall_tau"] == 1.0
    assert il["ac1"]["value"] == pytest.approx(1.0) and il["human_ac1"]["value"] is None
    assert reversed_["item_level"]["accuracy"] == 0.0


def test_mqm_orientation_with_a_lower_is_better_metric():
    """An error-count metric (lower = better) that follows the MQM points agrees perfectly once both are oriented."""
    study = span_study("mqm", "cmp-mqm-lower")
    scores_import(study=study, file_name="e.csv", content=score_csv(name="errors", reverse=True, hib="false"))
    result = study_comparison(study=study, n_boot=100, names=["errors"])
    assert result["meta"]["system"]["errors"]["pairwise_accuracy"] == pytest.approx(1.0)
    assert result["meta"]["segment"]["errors"]["acc_eq"] == pytest.approx(1.0)
    assert by_name(result)["errors"]["system_level"]["pearson"]["value"] == pytest.approx(1.0)


def test_mqm_weights_change_the_human_scores():
    study = span_study("mqm", "cmp-mqm-weights")
    study.mqm_weights = {"minor": 2.0}
    study.save(update_fields=["mqm_weights"])
    human = study_comparison(study=study, n_boot=50)["human"]
    assert human["systems"]["sys4"]["score"] == pytest.approx(8.0)


def test_compare_command_json(study):
    out = StringIO()
    call_command("compare", study.slug, "--json", "--bootstrap", "50", stdout=out)
    data = json.loads(out.getvalue())
    assert data["protocol"] == study.protocol and data["meta"]["system"]["oracle"]["pairwise_accuracy"] == 1.0
    text = StringIO()
    call_command("compare", study.slug, "--bootstrap", "50", stdout=text)
    assert f"human score = {study.protocol}" in text.getvalue()


def test_compare_page_shows_the_span_human_side(study, admin_client):
    resp = admin_client.get(reverse("compare-report", args=[study.slug]))
    assert resp.status_code == 200, resp.content[:500]
    html = resp.content.decode()
    assert "Meta-evaluation" in html or "meta-evaluation" in html
    label = "MQM points, lower is better" if study.protocol == "mqm" else "ESA score, higher is better"
    assert label in html


def test_span_study_without_judgments_has_no_human_side():
    study = make_study(slug="cmp-mqm-empty", protocol="mqm", n_items=4, n_candidates=5)
    scores_import(study=study, file_name="o.csv", content=score_csv(name="oracle", n_items=4))
    result = study_comparison(study=study, n_boot=20)
    assert result["human"]["systems"] == {} and result["meta"] is None
    assert "no usable human judgments yet" in result["notes"]
    assert by_name(result)["oracle"]["system_level"] is None


def test_da_study_scores_without_spans():
    """ESA with spans switched off (DA): the score alone is the human side."""
    study = make_study(slug="cmp-da", protocol="esa", n_items=8, n_candidates=5,
                       settings={"redundancy": 2, "esa_spans": False})
    for annotator in annotators_create(study=study, count=2):
        while (assignment := assignment_next(annotator=annotator)) is not None:
            item = assignment.item
            annotations = {c.public_id: {"score": 100 - 10 * true_rank(item.external_id, c.system)}
                           for c in item.candidates.all()}
            judgment_submit(assignment=assignment, payload={"annotations": annotations})
    scores_import(study=study, file_name="o.csv", content=score_csv(name="oracle"))
    result = study_comparison(study=study, n_boot=50)
    assert result["human"]["systems"]["sys1"]["score"] == pytest.approx((6 * 80 + 2 * 70) / 8)
    assert result["meta"]["system"]["oracle"]["pairwise_accuracy"] == pytest.approx(1.0)
