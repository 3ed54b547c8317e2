"""Human vs evaluator comparison: a metric that matches the humans, a reversed one, DiP Eq. 1, the command."""
from __future__ import annotations

import json
from io import StringIO

import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluators.comparison.selectors import scores_frame, study_comparison
from evaluators.comparison.core import compare_frames
from evaluators.models import MetricScore
from evaluators.metrics.scores import ScoreFileError, evaluator_run, scores_import
from annotation.exporting.judgments import judgments_frame
from tests.compare_study import compare_study, score_csv, true_rank

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    s = compare_study(spam_rate=0.2)
    scores_import(study=s, file_name="o.csv", content=score_csv(name="oracle"))
    scores_import(study=s, file_name="r.csv", content=score_csv(name="reversed", reverse=True))
    return s


def by_name(result: dict) -> dict:
    return {e["name"]: e for e in result["evaluators"]}


def test_matching_metric_agrees_perfectly(study):
    r = study_comparison(study=study, n_boot=200)
    oracle = by_name(r)["oracle"]
    il = oracle["item_level"]
    # 8 real items x 6 pairs of the 4 non-reference systems (the reference was not scored); spam items dropped
    assert il["n"] == 48 and il["n_no_majority"] == 0
    assert il["accuracy"] == 1.0 and il["kendall_tau"] == 1.0
    assert il["kendall"]["concordant"] == 48 * 3 and il["kendall"]["discordant"] == 0
    assert il["ac1"]["value"] == pytest.approx(1.0)
    sl = oracle["system_level"]
    assert sl["pearson"]["value"] > 0.95 and sl["pearson"]["n"] == 4
    assert sl["spearman"]["value"] == pytest.approx(1.0) and sl["kendall"]["value"] == pytest.approx(1.0)
    ranks = {s: v["rank"] for s, v in oracle["systems"].items()}
    assert ranks == {"sys1": 1, "sys2": 2, "sys3": 3, "sys4": 4}
    assert {s: v["rank"] for s, v in r["human"]["systems"].items()} == ranks
    assert r["n_systems"] == 4 and "reference" not in r["human"]["systems"]


def test_reversed_metric_disagrees(study):
    rev = by_name(study_comparison(study=study, n_boot=200))["reversed"]
    assert rev["item_level"]["kendall_tau"] == -1.0 and rev["item_level"]["accuracy"] == 0.0
    assert rev["item_level"]["ac1"]["value"] < 0
    assert rev["system_level"]["spearman"]["value"] == pytest.approx(-1.0)
    assert rev["systems"]["sys4"]["rank"] == 1


def test_lower_is_better_metric_is_oriented(study):
    # the reversed scores ARE a good metric when lower is better (rank-like)
    scores_import(study=study, file_name="e.csv", content=score_csv(name="errors", reverse=True, hib="false"))
    err = by_name(study_comparison(study=study, n_boot=200))["errors"]
    assert err["higher_is_better"] is False and err["system_score_higher_is_better"] is False
    assert err["item_level"]["kendall_tau"] == 1.0 and err["item_level"]["accuracy"] == 1.0
    assert err["system_level"]["spearman"]["value"] == pytest.approx(1.0)
    assert err["systems"]["sys1"]["rank"] == 1


def test_dip_eq1_when_the_reference_was_scored(study):
    scores_import(study=study, file_name="d.csv", content=score_csv(name="model", reference=True))
    model = by_name(study_comparison(study=study, n_boot=200))["model"]
    assert model["system_score"] == "dip_eq1" and model["system_score_higher_is_better"] is False
    # Σ_items score(ref) − score(sys) with score = 10 − true rank
    expected = sum((10 - true_rank(f"ext-{i}", "reference")) - (10 - true_rank(f"ext-{i}", "sys2")) for i in range(8))
    assert model["systems"]["sys2"]["dip_eq1"] == pytest.approx(expected)
    assert model["systems"]["sys2"]["score"] == pytest.approx(expected)
    assert model["systems"]["sys1"]["rank"] == 1 and model["systems"]["sys4"]["rank"] == 4
    # pairs with the reference are scored too: 10 pairs per item
    assert model["item_level"]["n"] == 80 and model["item_level"]["accuracy"] == 1.0


def test_williams_between_evaluators(study):
    # a noisy metric: right order except sys2/sys3 swapped on half the items
    lines = ["item,system,score"]
    for i in range(8):
        for s in ("sys1", "sys2", "sys3", "sys4"):
            rank = true_rank(f"ext-{i}", s)
            if i % 2 and s in ("sys2", "sys3"):
                rank = 5 - rank
            lines.append(f"ext-{i},{s},{10 - rank + 0.1 * i}")
    scores_import(study=study, file_name="n.csv", content="\n".join(lines), name="noisy", higher_is_better=True)
    r = study_comparison(study=study, n_boot=200, names=["oracle", "noisy"])
    assert [w["a"] for w in r["williams"]] == ["noisy", "oracle"]
    w = next(w for w in r["williams"] if w["a"] == "oracle")
    assert w["b"] == "noisy" and w["n"] == 4
    assert w["r_a"] > w["r_b"] and w["t"] is not None and w["t"] > 0 and 0 <= w["p_value"] <= 0.5
    back = next(w for w in r["williams"] if w["a"] == "noisy")
    assert back["t"] == pytest.approx(-w["t"]) and back["p_value"] == pytest.approx(1 - w["p_value"])


def test_too_few_systems_gives_null_williams_with_note():
    scores = pd.DataFrame({"evaluator": ["a", "a", "b", "b"], "item": ["1", "1", "1", "1"],
                           "system": ["x", "y", "x", "y"], "score": [1.0, 0.0, 0.0, 1.0]})
    judgments = pd.DataFrame({"judgment": ["j", "j"], "item": ["1", "1"], "annotator": ["h", "h"],
                              "system": ["x", "y"], "rank": [1, 2], "is_reference": [False, False]})
    r = compare_frames(judgments, scores, protocol="ranking", n_boot=50)
    assert all(w["t"] is None and w["p_value"] is None for w in r["williams"])
    assert any("Williams tests need at least 4 systems" in n for n in r["notes"])
    a = next(e for e in r["evaluators"] if e["name"] == "a")
    assert a["item_level"]["accuracy"] == 1.0 and a["system_level"]["pearson"]["value"] is None


def test_bad_score_file_stores_nothing(study):
    before = MetricScore.objects.count()
    with pytest.raises(ScoreFileError) as exc:
        scores_import(study=study, file_name="bad.csv", content="item,system,score,name\next-1,sys1,x,m\n",
                      higher_is_better=True)
    assert exc.value.errors == ["line 2: score: 'x' is not a finite number"]
    assert MetricScore.objects.count() == before


def test_reproducible_from_frames(study):
    """The command's numbers come from the two frames alone (export + scores)."""
    evaluator_run(study=study, name="chrf")
    via_study = study_comparison(study=study, n_boot=100)
    via_frames = compare_frames(judgments_frame(study), scores_frame(study=study), protocol="ranking",
                                evaluators=[{"name": e["name"], "higher_is_better": e["higher_is_better"],
                                             "kind": e["kind"], "description": e["description"],
                                             "signature": e["signature"], "backend": e["backend"],
                                             "notes": e["evaluator_notes"], "paired": e["paired"],
                                             "system_scores": e["corpus"], "references": e["references"]}
                                            for e in via_study["evaluators"]],
                                study=study.slug, n_boot=100)
    assert via_study.pop("references") == {"study": ["reference"], "chosen": None, "human_side": ["reference"]}
    assert json.dumps(via_frames, sort_keys=True) == json.dumps(via_study, sort_keys=True)


def test_compare_command_json_and_errors(study):
    out = StringIO()
    call_command("compare", study.slug, "--json", "--bootstrap", "100", stdout=out)
    data = json.loads(out.getvalue())
    assert set(data) >= {"study", "n_systems", "human", "evaluators", "williams", "notes"}
    e = data["evaluators"][0]
    assert set(e) >= {"name", "higher_is_better", "systems", "item_level", "system_level"}
    assert set(e["item_level"]) >= {"n", "ac1", "accuracy", "kendall_tau"}
    assert set(e["item_level"]["ac1"]) >= {"value", "se", "ci_low", "ci_high", "p_value"}
    assert set(e["system_level"]["pearson"]) >= {"value", "ci_low", "ci_high", "p_value"}
    assert set(data["williams"][0]) >= {"a", "b", "r_a", "r_b", "r_ab", "t", "p_value"}
    text = StringIO()
    call_command("compare", study.slug, "--bootstrap", "50", stdout=text)
    assert "oracle (imported, system score = mean, higher is better)" in text.getvalue()
    with pytest.raises(CommandError, match="no study with slug"):
        call_command("compare", "nope", "--json")
    with pytest.raises(CommandError, match="available: oracle, reversed"):
        call_command("compare", study.slug, "--evaluator", "bleu")


def test_choice_study_connective_preference():
    """DiP A.4-like: reference vs one system; a model that always prefers the reference."""
    from annotation.handout.services import annotators_create, assignment_next, judgment_submit
    from tests.factories import make_study

    study = make_study(slug="cmp-choice", protocol="choice", n_items=6, n_candidates=2,
                       settings={"options": ["neither", "invalid"], "redundancy": 3})
    for annotator in annotators_create(study=study, count=3):
        while (assignment := assignment_next(annotator=annotator)) is not None:
            cands = {c.system: c for c in assignment.item.candidates.all()}
            i = int(assignment.item.external_id.split("-")[1])
            pick = "reference" if i < 4 else "sys1"
            if i == 3 and annotator.sequence == 1:
                payload = {"choice": "invalid"}  # dropped, the other two still agree
            else:
                payload = {"choice": cands[pick].public_id}
            judgment_submit(assignment=assignment, payload=payload)
    lines = ["item,system,score"] + [f"ext-{i},{s},{v}" for i in range(6) for s, v in (("reference", 0.9), ("sys1", 0.1))]
    scores_import(study=study, file_name="m.csv", content="\n".join(lines), name="model", higher_is_better=True)
    r = study_comparison(study=study, n_boot=50)
    il = by_name(r)["model"]["item_level"]
    assert il["n"] == 6 and il["accuracy"] == pytest.approx(4 / 6)
    # 11 reference preferences (one invalid dropped) concordant, 6 sys1 preferences discordant
    assert il["kendall"]["concordant"] == 11 and il["kendall"]["discordant"] == 6
    assert il["kendall_tau"] == pytest.approx((11 - 6) / 17)
    assert by_name(r)["model"]["system_score"] == "dip_eq1"
    assert by_name(r)["model"]["systems"]["sys1"]["dip_eq1"] == pytest.approx(6 * 0.8)
    # the reference is an opponent, not a ranked system: sys1 beat it in 6 of 17 decisive comparisons
    assert list(r["human"]["systems"]) == ["sys1"]
    assert r["human"]["systems"]["sys1"]["expected_wins"] == pytest.approx(6 / 17)
    assert r["human"]["systems"]["sys1"]["rank"] == 1 and r["n_systems"] == 1
    pearson = by_name(r)["model"]["system_level"]["pearson"]
    assert pearson["value"] is None and pearson["note"] == "need at least 3 systems"
    assert r["williams"] == []


def test_judgment_protocol_reports_system_scores_only():
    judgments = pd.DataFrame({"judgment": ["j1"], "item": ["1"], "annotator": ["h"], "system": ["x"],
                              "label": ["correct"], "is_reference": [False]})
    scores = pd.DataFrame({"evaluator": ["m", "m"], "item": ["1", "1"], "system": ["x", "y"], "score": [0.2, 0.4]})
    r = compare_frames(judgments, scores, protocol="judgment", evaluators=[{"name": "m", "higher_is_better": False}])
    m = r["evaluators"][0]
    assert m["item_level"] is None and m["system_level"] is None
    assert m["systems"] == {"x": {"mean": 0.2, "n": 1, "score": 0.2, "rank": 1},
                            "y": {"mean": 0.4, "n": 1, "score": 0.4, "rank": 2}}
    assert any("gives no pairwise preferences" in n for n in r["notes"])


def test_compare_carries_the_wmt_meta_evaluation_block(study, tmp_path):
    """INTERFACES.md: ``compare SLUG --json`` carries the same ``meta`` block as ``meta_evaluate``."""
    scores_import(study=study, file_name="e.csv", content=score_csv(name="errors", reverse=True, hib="false"))
    r = study_comparison(study=study, n_boot=200)
    meta = r["meta"]
    assert set(meta) >= {"system", "segment", "clusters", "settings"}
    oracle, reversed_, errors = (meta["system"][n] for n in ("oracle", "reversed", "errors"))
    assert oracle["pairwise_accuracy"] == 1.0 and reversed_["pairwise_accuracy"] == 0.0
    assert errors["pairwise_accuracy"] == 1.0  # lower is better: oriented before the statistics
    assert meta["segment"]["oracle"]["acc_eq"] == pytest.approx(1.0)
    assert meta["segment"]["reversed"]["acc_eq"] < 0.5
    assert {c["metric"] for c in meta["clusters"]} == {"oracle", "reversed", "errors"}
    assert meta["settings"]["systems"] == ["sys1", "sys2", "sys3", "sys4"]
    # --output writes the same JSON to a file.
    target = tmp_path / "compare.json"
    call_command("compare", study.slug, "--json", "--bootstrap", "200", "--output", str(target), stderr=StringIO())
    written = json.loads(target.read_text())
    assert written["meta"]["system"]["oracle"] == meta["system"]["oracle"]
