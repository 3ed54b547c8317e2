"""The alt-test equals the authors' notebook (nitaytech/AltTest) on data of our own.

data/alt_test_ref.json was written by make_alt_test_ref.py, which ran the notebook's ``alt_test``;
winning rate and advantage probability are compared to 1e-9, pass/fail exactly.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import false_discovery_control

from evaluators.stats.alt_test import AltTestError, alt_test, benjamini_yekutieli

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
