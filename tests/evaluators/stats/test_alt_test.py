"""The alt-test equals the authors' notebook (nitaytech/AltTest) on data of our own.

data/alt_test_ref.json was written by make_alt_test_ref.py, which ran the notebook's ``alt_test``;
winning rate and advantage probability are compared to 1e-9, pass/fail exactly.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import false_discovery_control

from evaluators.stats.alt_test import AltTestError, accuracy, alt_test, benjamini_yekutieli

REF = json.loads((Path(__file__).with_name("data") / "alt_test_ref.json").read_text(encoding="utf-8"))
RUNS = REF["runs"]


@pytest.mark.parametrize("run", RUNS, ids=[f"{r['kind']}-{r['epsilon']}-{r['judge_name']}" for r in RUNS])
def test_equal_to_the_authors_alt_test(run: dict) -> None:
    result = alt_test(run["judge"], run["humans"], scoring=run["scoring"], epsilon=run["epsilon"])
    assert result.winning_rate == pytest.approx(run["winning_rate"], abs=1e-9)
    assert result.advantage_probability == pytest.approx(run["advantage_probability"], abs=1e-9)
    assert result.passed == (run["winning_rate"] >= 0.5)


def test_the_reference_has_judges_that_pass_fail_and_fall_between() -> None:
    rates = {r["winning_rate"] for r in RUNS}
    assert 0.0 in rates and 1.0 in rates and rates - {0.0, 1.0}


def test_incomplete_designs_drop_what_the_authors_drop() -> None:
    run = RUNS[0]
    result = alt_test(run["judge"], run["humans"], scoring=run["scoring"])
    assert ("ann8", result.dropped_annotators[0][1]) == result.dropped_annotators[0]
    assert result.dropped_annotators[0][1] < 30 and len(result.per_annotator) == 8
    raters: dict[str, int] = {}
    for labels in run["humans"].values():
        for i in labels:
            raters[i] = raters.get(i, 0) + 1
    expected = {i for i, n in raters.items() if n < 2 or i not in run["judge"]}
    assert set(result.dropped_instances) == expected and expected


def test_benjamini_yekutieli_matches_scipy() -> None:
    rng = np.random.default_rng(5)
    for _ in range(50):
        p = rng.uniform(0, 0.05, size=rng.integers(1, 20))
        adjusted = false_discovery_control(p, method="by")
        assert set(benjamini_yekutieli(p, 0.05)) == set(np.flatnonzero(adjusted <= 0.05))


def test_nothing_to_test_is_said() -> None:
    with pytest.raises(AltTestError, match="no annotator has 30 or more instances"):
        alt_test({"a": 1}, {"h1": {"a": 1}, "h2": {"a": 1}})
    with pytest.raises(AltTestError, match="scoring: 'f1'"):
        alt_test({"a": 1}, {"h1": {"a": 1}}, scoring="f1")


#: A second reference, made independently (make_alt_test_annotators_ref.py): two data sets with judges that copy
#: an annotator (zero-variance differences) or miss items, at several epsilons, with the notebook's per-annotator
#: p-values and rejections recorded by wrapping its own ``ttest`` and ``by_procedure``.
ANNOTATORS_REF = json.loads((Path(__file__).with_name("data") / "alt_test_annotators_ref.json").read_text(
    encoding="utf-8"))
CASES = [(name, case, ref) for name, case in ANNOTATORS_REF["cases"].items() for ref in case["reference"]]


@pytest.mark.parametrize(("name", "case", "ref"), CASES,
                         ids=[f"{n}-{r['judge']}-{r['epsilon']}" for n, _, r in CASES])
def test_per_annotator_p_values_and_rejections_equal_the_authors(name: str, case: dict, ref: dict) -> None:
    humans: dict = {}
    for annotator, item, label in case["ratings"]:
        humans.setdefault(annotator, {})[item] = label
    result = alt_test(case["judges"][ref["judge"]], humans, scoring=case["scoring"], epsilon=ref["epsilon"],
                      q=ANNOTATORS_REF["q"])
    assert [a.annotator for a in result.per_annotator] == ref["annotators"]
    for got, expected in zip(result.per_annotator, ref["p_values"], strict=True):
        if expected is None or (isinstance(expected, float) and math.isnan(expected)):
            assert math.isnan(got.p_value)
        else:
            assert got.p_value == pytest.approx(expected, abs=1e-9)
    assert sorted(str(a.annotator) for a in result.per_annotator if a.rejected) == sorted(ref["rejected"])
    assert result.winning_rate == pytest.approx(ref["winning_rate"], abs=1e-9)
    assert result.advantage_probability == pytest.approx(ref["advantage_probability"], abs=1e-9)
    assert result.passed == ref["passed"]
    assert [list(s) for s in result.dropped_annotators] == ref["skipped"]
    assert len(result.dropped_instances) == ref["n_dropped_items"]


def test_accuracy_is_the_notebook_s_mean_to_the_last_bit() -> None:
    """``accuracy`` counts instead of calling np.mean per instance (the report runs it on every unit); the float
    is the same: an exact integer sum divided once."""
    rng = np.random.default_rng(3)
    for _ in range(2000):
        others = list(rng.integers(0, 4, size=int(rng.integers(1, 40))))
        label = int(rng.integers(0, 4))
        assert accuracy(label, others) == float(np.mean([label == o for o in others]))
        assert accuracy(str(label), [str(o) for o in others]) == float(np.mean([label == o for o in others]))
