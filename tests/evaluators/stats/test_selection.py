"""Item utilities equal subset2evaluate 1.0.27's (to 1e-9) on data of our own, and the pure helpers.

The reference, data/subset2evaluate_ref.json, holds seeded data (6 systems x 40 segments, two metrics,
candidate texts; ties on purpose) and the utilities and rankings subset2evaluate 1.0.27 computed on it;
make_subset2evaluate_ref.py in this folder wrote it in a throwaway environment (its docstring says how).
The package is not needed here.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from evaluators.stats.selection import (
    SelectionInputError, budget_count, diversity, item_utilities, kendall_tau_c, metric_cons, rank_items,
)

REF = json.loads((Path(__file__).with_name("data") / "subset2evaluate_ref.json").read_text(encoding="utf-8"))
SEGMENTS = [s["segment"] for s in REF["segments"]]
TEXTS = [s["tgt"] for s in REF["segments"]]


def matrix(metric: str) -> np.ndarray:
    """Systems x segments, as the command builds it."""
    return np.array([s[metric] for s in REF["segments"]], dtype=float).T


def run_id(run: dict) -> str:
    return f"{run['method']}-{run.get('metric') or run.get('seed')}"


@pytest.mark.parametrize("run", REF["reference"], ids=run_id)
def test_utilities_and_order_equal_subset2evaluate(run):
    method = run["method"]
    if method == "diversity":
        ours = item_utilities(method, scores=matrix("cont"), texts=TEXTS, similarity=run["metric"])
    elif method == "random":
        ours = item_utilities(method, scores=matrix("cont"), seed=run["seed"])
    else:
        ours = item_utilities(method, scores=matrix(run["metric"]))
    assert np.max(np.abs(ours - np.array(run["utilities"]))) <= 1e-9
    assert [r.segment for r in rank_items(SEGMENTS, ours)] == run["order"]


def test_reference_holds_the_ties_it_is_meant_to_test():
    by_id = {run_id(r): r for r in REF["reference"]}
    for key in ("metric_avg-cont", "metric_avg-grid", "metric_var-cont", "metric_cons-grid"):
        utilities = by_id[key]["utilities"]
        assert len(set(utilities)) < len(utilities), key
    assert 0.0 in by_id["metric_cons-cont"]["utilities"]  # an all-tied segment: tau-c undefined, 0


def test_tau_c_equals_scipy_with_ties():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(2, 9))
        x, y = rng.integers(0, 4, n).astype(float), rng.normal(size=n).round(1)
        expected = stats.kendalltau(x, y, variant="c").correlation
        got = kendall_tau_c(x, y)
        assert (np.isnan(expected) and np.isnan(got)) or got == pytest.approx(expected, abs=1e-12)


def test_metric_cons_is_zero_when_undefined_and_one_when_an_item_ranks_as_the_corpus():
    scores = np.array([[1.0, 5.0, 2.0], [2.0, 1.0, 2.0], [3.0, 0.0, 2.0]])
    # system means 8/3, 5/3, 5/3: item 0 ranks them 1<2<3 against 8/3 > 5/3 = 5/3
    cons = metric_cons(scores)
    assert cons[2] == 0.0  # every system tied
    assert cons[1] == pytest.approx(stats.kendalltau(scores[:, 1], scores.mean(axis=1), variant="c").correlation)
    assert cons[1] > 0 > cons[0]


def test_unigram_diversity_by_hand():
    # "a b" vs "a c": 2*1/4 = 0.5; either empty: 1; one candidate: no pair, 0
    got = diversity([["a b", "a c"], ["a b", ""], ["only one"]], "unigram")
    assert list(got) == [-0.5, -1.0, 0.0]


def test_ranking_is_stable_on_ties():
    ranked = rank_items(["a", "b", "c", "d"], np.array([1.0, 2.0, 1.0, 2.0]))
    assert [r.segment for r in ranked] == ["b", "d", "a", "c"]


@pytest.mark.parametrize("budget, n, expected", [("3", 10, 3), ("30", 10, 10), ("25%", 10, 2), ("100%", 7, 7),
                                                 ("12.5%", 40, 5), (" 5 ", 10, 5)])
def test_budget_count(budget, n, expected):
    assert budget_count(budget, n) == expected


@pytest.mark.parametrize("budget, message", [("0", "at least 1"), ("-3", "neither"), ("2.5", "whole number"),
                                             ("0%", "above 0"), ("101%", "at most 100"), ("5%", "less than one"),
                                             ("ten", "neither"), ("", "neither")])
def test_budget_errors(budget, message):
    with pytest.raises(ValueError, match=message):
        budget_count(budget, 10)


def test_input_errors_name_the_problem():
    with pytest.raises(SelectionInputError, match="finite score"):
        item_utilities("metric_avg", scores=np.array([[1.0, np.nan]]))
    with pytest.raises(SelectionInputError, match="method"):
        item_utilities("kmeans", scores=np.ones((2, 2)))
    with pytest.raises(SelectionInputError, match="texts"):
        item_utilities("diversity", scores=np.ones((2, 2)))
    with pytest.raises(SelectionInputError, match="similarity"):
        diversity([["a", "b"]], "lm")
