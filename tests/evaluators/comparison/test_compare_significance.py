"""System means with bootstrap CIs and paired t-tests in the comparison (BlonDe Fig. 4 / Table 4)."""
from __future__ import annotations

import json
from io import StringIO
from typing import Any

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from scipy import stats

from evaluators.comparison.selectors import study_comparison
from evaluators.comparison.core import compare_frames
from evaluators.metrics.scores import scores_import
from evaluators.stats.correlation import system_means
from tests.compare_study import compare_study, score_csv
from tests.factories import make_study

# five items, three systems; B is A + 1 with noise, C is A − 2 with noise
A = [10.0, 12.0, 9.0, 14.0, 11.0]
B = [11.5, 12.5, 10.0, 15.5, 11.0]
C = [8.0, 10.5, 7.0, 11.0, 9.5]


def frame(values: dict[str, list[float]], evaluator: str = "m") -> pd.DataFrame:
    return pd.DataFrame([{"evaluator": evaluator, "item": f"i{k}", "system": s, "score": v}
                         for s, vs in values.items() for k, v in enumerate(vs)])


def run(scores: pd.DataFrame, hib: bool = True, seed: int = 0, **kw) -> dict:
    r = compare_frames(pd.DataFrame(), scores, protocol="ranking", n_boot=500, seed=seed,
                       evaluators=[{"name": "m", "higher_is_better": hib}], **kw)
    return r["evaluators"][0]


def test_means_with_seeded_ci_on_items():
    m = run(frame({"A": A, "B": B, "C": C}))
    means = m["system_means"]
    assert means["unit"] == "item" and means["confidence"] == 0.95 and means["n_boot"] == 500
    for name, values in (("A", A), ("B", B), ("C", C)):
        entry = means["systems"][name]
        assert entry["mean"] == pytest.approx(np.mean(values)) and entry["n"] == 5
        assert entry["ci_low"] <= entry["mean"] <= entry["ci_high"] and entry["ci_low"] < entry["ci_high"]
        assert entry["ci_low"] >= min(values) and entry["ci_high"] <= max(values)
        assert entry["is_reference"] is False
    # the same numbers as the stats function on the same units, and reproducible with the seed
    direct = {r["system"]: r for r in system_means(frame({"A": A, "B": B, "C": C}), n_boot=500, seed=0)}
    assert means["systems"]["B"]["ci_low"] == direct["B"]["ci_low"]
    assert run(frame({"A": A, "B": B, "C": C}))["system_means"] == means
    other = run(frame({"A": A, "B": B, "C": C}), seed=7)["system_means"]
    assert other["seed"] == 7 and other["systems"]["A"]["mean"] == means["systems"]["A"]["mean"]


def test_paired_t_tests_equal_scipy():
    m = run(frame({"A": A, "B": B, "C": C}))
    block = m["paired_t_tests"]
    assert block["unit"] == "item" and block["alternative"] == "two-sided"
    assert [(t["a"], t["b"]) for t in block["tests"]] == [("A", "B"), ("A", "C"), ("B", "C")]
    ab = block["tests"][0]
    expected = stats.ttest_rel(A, B)
    assert ab["t"] == pytest.approx(expected.statistic) and ab["p_value"] == pytest.approx(expected.pvalue)
    assert ab["n"] == 5 and ab["df"] == 4 and ab["mean_diff"] == pytest.approx(np.mean(A) - np.mean(B))
    assert ab["ci_low"] < ab["mean_diff"] < ab["ci_high"]
    assert ab["favours"] == "B"  # higher is better and B is higher
    # 5 items: too few for a verdict, whatever p is (issue 22)
    assert ab["better"] is None and ab["verdict"].startswith("5 items: too few for a per-item test")
    assert block["note"] == "5 items: too few for a per-item test (at least 10): no verdict"
    ac = block["tests"][1]
    assert ac["p_value"] == pytest.approx(stats.ttest_rel(A, C).pvalue) and ac["favours"] == "A"
    lower = run(frame({"A": A, "B": B, "C": C}), hib=False)["paired_t_tests"]["tests"][0]
    assert lower["favours"] == "A" and lower["t"] == pytest.approx(ab["t"])  # same test, other direction


def test_constant_difference_is_undefined_not_absurd():
    m = run(frame({"ref": [0.9] * 4, "sys": [0.1] * 4}))
    test = m["paired_t_tests"]["tests"][0]
    assert test["t"] is None and test["p_value"] is None and test["note"] == "all differences are equal: t undefined"
    assert test["mean_diff"] == pytest.approx(0.8) and test["favours"] == "ref" and test["better"] is None


def test_documents_are_the_unit_when_the_study_has_them():
    # items i0,i1 in d1, i2,i3 in d2, i4 in d3 (sentence-level scores averaged per document)
    items = pd.DataFrame({"item": [f"i{k}" for k in range(5)], "document": ["d1", "d1", "d2", "d2", "d3"],
                          "phenomenon": ""})
    m = run(frame({"A": A, "B": B, "C": C}), items=items)
    doc: dict[str, list[Any]] = {s: [np.mean(v[0:2]), np.mean(v[2:4]), v[4]] for s, v in (("A", A), ("B", B), ("C", C))}
    assert m["system_means"]["unit"] == "document" and m["paired_t_tests"]["unit"] == "document"
    assert m["system_means"]["systems"]["A"]["n"] == 3
    assert m["system_means"]["systems"]["A"]["mean"] == pytest.approx(np.mean(doc["A"]))
    ab = m["paired_t_tests"]["tests"][0]
    assert ab["n"] == 3 and ab["t"] == pytest.approx(stats.ttest_rel(doc["A"], doc["B"]).statistic)
    assert ab["p_value"] == pytest.approx(stats.ttest_rel(doc["A"], doc["B"]).pvalue)


def test_document_level_scores_count_once_per_document():
    scores = pd.DataFrame({"evaluator": "m", "item": ["i0", "i1", "i2", "i0", "i1", "i2"],
                           "system": ["A", "A", "A", "B", "B", "B"], "score": [5.0, 5.0, 2.0, 4.0, 4.0, 3.0],
                           "document": ["d1", "d1", "d2", "d1", "d1", "d2"]})
    m = run(scores)
    assert m["system_means"]["unit"] == "document"
    a = m["system_means"]["systems"]["A"]
    assert a["mean"] == pytest.approx(3.5) and a["n"] == 2  # (5 + 2) / 2, not (5 + 5 + 2) / 3
    assert m["paired_t_tests"]["tests"][0]["mean_diff"] == pytest.approx(0.0)
    assert m["paired_t_tests"]["tests"][0]["better"] is None


@pytest.mark.django_db
def test_stored_study_reference_and_command():
    study = compare_study(slug="sig", n_items=6, n_annotators=1)
    scores_import(study=study, file_name="o.csv", content=score_csv(name="model", reference=True, n_items=6))
    out = StringIO()
    call_command("compare", study.slug, "--json", "--bootstrap", "100", "--seed", "4", stdout=out)
    model = json.loads(out.getvalue())["evaluators"][0]
    sm = model["system_means"]
    assert sm["unit"] == "item" and sm["seed"] == 4
    assert sm["systems"]["reference"]["is_reference"] is True and sm["systems"]["sys1"]["is_reference"] is False
    assert set(sm["systems"]) == {"reference", "sys1", "sys2", "sys3", "sys4"}
    assert len(model["paired_t_tests"]["tests"]) == 10
    assert model["systems"]["sys3"]["mean"] == pytest.approx(sm["systems"]["sys3"]["mean"])


@pytest.mark.django_db
def test_stored_study_with_documents_uses_documents():
    study = make_study(slug="sigdoc", n_items=6, n_candidates=3, documents=2)
    lines = ["item,system,score"] + [f"ext-{i},{s},{i + k}" for i in range(6) for k, s in ((1, "sys1"), (3, "sys2"))]
    scores_import(study=study, file_name="s.csv", content="\n".join(lines), name="m", higher_is_better=True)
    m = study_comparison(study=study, n_boot=50)["evaluators"][0]
    assert m["system_means"]["unit"] == "document" and m["system_means"]["systems"]["sys1"]["n"] == 2
    # doc-0 = ext-0, 2, 4; doc-1 = ext-1, 3, 5 → sys1 means 3 and 4
    assert m["system_means"]["systems"]["sys1"]["mean"] == pytest.approx(3.5)
    test = m["paired_t_tests"]["tests"][0]
    assert (test["a"], test["b"], test["n"], test["favours"], test["better"]) == ("sys1", "sys2", 2, "sys2", None)
    assert test["verdict"] == "2 documents: too few for a per-document test (at least 10): no verdict"
    assert test["mean_diff"] == pytest.approx(-2.0) and test["t"] is None  # constant difference
