"""Tests for evaluators.stats.correlation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evaluators.stats.correlation import (
    bootstrap_mean_ci,
    compare_correlations,
    contrapro_accuracy,
    correlation,
    dip_scores,
    paired_t_test,
    system_means,
    williams_test,
    wmt_kendall_tau,
)

RNG = np.random.default_rng(2024)
HUMAN = RNG.normal(size=15)
METRIC = HUMAN + RNG.normal(scale=0.7, size=15)


def test_pearson_with_fisher_ci_hand_computed():
    res = correlation(METRIC, HUMAN)
    r = np.corrcoef(METRIC, HUMAN)[0, 1]
    assert res["r"] == pytest.approx(r, abs=1e-12)
    assert res["p_value"] == pytest.approx(stats.pearsonr(METRIC, HUMAN)[1])
    z, se = 0.5 * math.log((1 + r) / (1 - r)), 1 / math.sqrt(15 - 3)
    assert res["ci_low"] == pytest.approx(math.tanh(z - 1.959963984540054 * se), abs=1e-9)
    assert res["ci_high"] == pytest.approx(math.tanh(z + 1.959963984540054 * se), abs=1e-9)
    assert res["ci_method"] == "fisher_z"


@pytest.mark.parametrize("method,fn", [("spearman", stats.spearmanr), ("kendall", stats.kendalltau)])
def test_rank_correlations_and_bootstrap(method, fn):
    res = correlation(METRIC, HUMAN, method=method, n_boot=500, seed=1)
    assert res["r"] == pytest.approx(fn(METRIC, HUMAN)[0])
    assert res["ci_low"] < res["r"] < res["ci_high"] <= 1
    assert res == correlation(METRIC, HUMAN, method=method, n_boot=500, seed=1)
    assert res != correlation(METRIC, HUMAN, method=method, n_boot=500, seed=2)


def _scipy_bootstrap_reference(x, y, method, n_boot, seed):
    """The former implementation: one scipy call per resample (reference only)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    fn = stats.spearmanr if method == "spearman" else stats.kendalltau
    idx = np.random.default_rng(seed).integers(0, len(x), size=(n_boot, len(x)))
    vals = []
    for row in idx:
        xb, yb = x[row], y[row]
        if np.ptp(xb) == 0 or np.ptp(yb) == 0:
            continue
        v = float(fn(xb, yb)[0])
        if math.isfinite(v):
            vals.append(v)
    if not vals:
        return n_boot, None, None
    lo, hi = np.percentile(vals, [2.5, 97.5])
    return n_boot - len(vals), float(lo), float(hi)


@pytest.mark.parametrize("method", ["spearman", "kendall"])
@pytest.mark.parametrize("case", range(8))
def test_vectorised_bootstrap_equals_the_scipy_loop(method, case):
    rng = np.random.default_rng(100 + case)
    n = [3, 4, 5, 7, 10, 16, 25, 40][case]
    x = rng.normal(size=n)
    y = 0.5 * x + rng.normal(size=n)
    if case % 2:  # ties (and, for small n, many constant resamples)
        x, y = np.round(x), np.round(y * 2) / 2
    res = correlation(x, y, method=method, n_boot=400, seed=case)
    undefined, lo, hi = _scipy_bootstrap_reference(x, y, method, 400, case)
    assert res["n_boot_undefined"] == undefined
    if lo is None:
        assert res["ci_low"] is None and res["ci_high"] is None
    else:
        assert res["ci_low"] == pytest.approx(lo, abs=1e-12)
        assert res["ci_high"] == pytest.approx(hi, abs=1e-12)


@pytest.mark.parametrize("method", ["spearman", "kendall"])
def test_vectorised_bootstrap_per_resample_values_equal_scipy(method):
    from evaluators.stats.correlation import _bootstrap_rank_correlations

    rng = np.random.default_rng(7)
    x, y = np.round(rng.normal(size=9), 1), np.round(rng.normal(size=9))
    idx = rng.integers(0, 9, size=(300, 9))
    got = _bootstrap_rank_correlations(x, y, idx, method)
    fn = stats.spearmanr if method == "spearman" else stats.kendalltau
    for row, value in zip(idx, got):
        if np.ptp(x[row]) == 0 or np.ptp(y[row]) == 0:
            assert np.isnan(value)
        else:
            assert value == pytest.approx(float(fn(x[row], y[row])[0]), abs=1e-12)
    assert np.isnan(got).any() and np.isfinite(got).sum() > 200


def test_correlation_alignment_missing_and_degenerate():
    h = pd.Series([1.0, 2, 3, 4, 5], index=list("abcde"))
    m = pd.Series([5.0, 4, np.nan, 2, 1, 9], index=list("edcbaz"))
    res = correlation(m, h)
    assert res["n"] == 4 and res["n_missing"] == 1
    assert res["r"] == pytest.approx(1.0)
    const = correlation([1, 1, 1, 1], [1, 2, 3, 4])
    assert const["r"] is None and "constant" in const["note"]
    small = correlation([1, 2, 3], [1, 3, 2])
    assert small["r"] is not None and small["ci_low"] is None and small["note"]


def _williams_by_hand(r12, r13, r23, n):
    detr = 1 - r12 * r12 - r13 * r13 - r23 * r23 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    t = (r12 - r13) * math.sqrt(((n - 1) * (1 + r23)) / (2 * ((n - 1) / (n - 3)) * detr + rbar * rbar * (1 - r23) ** 3))
    return t


def test_williams_formula_and_symmetry():
    res = williams_test(0.8, 0.6, 0.5, 30)
    assert res["t"] == pytest.approx(_williams_by_hand(0.8, 0.6, 0.5, 30))
    assert res["p_value"] == pytest.approx(stats.t.sf(res["t"], 27))
    swapped = williams_test(0.6, 0.8, 0.5, 30)
    assert swapped["t"] == pytest.approx(-res["t"])
    assert swapped["p_value"] == pytest.approx(1 - res["p_value"])
    assert williams_test(0.7, 0.7, 0.3, 20)["t"] == 0.0
    # larger samples give smaller p for the same correlations
    assert williams_test(0.8, 0.6, 0.5, 100)["p_value"] < res["p_value"]
    assert williams_test(0.8, 0.6, 0.5, 3)["t"] is None


def test_williams_size_under_null_and_power():
    rng = np.random.default_rng(0)
    n, sims = 25, 1500
    # human h; metrics a and b equally correlated with h (rho = .6), r(a, b) = .5
    cov = np.array([[1, 0.6, 0.6], [0.6, 1, 0.5], [0.6, 0.5, 1]])
    rejections = 0
    for _ in range(sims):
        x = rng.multivariate_normal(np.zeros(3), cov, size=n)
        c = np.corrcoef(x.T)
        rejections += williams_test(c[0, 1], c[0, 2], c[1, 2], n)["p_value"] < 0.05
    res = compare_correlations(x[:, 0], x[:, 1], x[:, 2])
    c = np.corrcoef(x.T)
    assert res["p_value"] == pytest.approx(williams_test(c[0, 1], c[0, 2], c[1, 2], n)["p_value"])
    assert 0.03 < rejections / sims < 0.075
    cov_alt = np.array([[1, 0.9, 0.5], [0.9, 1, 0.45], [0.5, 0.45, 1]])
    x = rng.multivariate_normal(np.zeros(3), cov_alt, size=200)
    assert compare_correlations(x[:, 0], x[:, 1], x[:, 2])["p_value"] < 0.001


def test_wmt_kendall_tau_hand_example():
    human = pd.DataFrame(
        {
            "source_item": [1, 1, 1, 2, 2, 3],
            "system_a": ["A", "A", "B", "A", "A", "A"],
            "system_b": ["B", "C", "C", "B", "C", "B"],
            "label": ["A", "C", "tie", "B", "A", "A"],
        }
    )
    scores = pd.DataFrame(
        {
            "item": [1, 1, 1, 2, 2, 2, 3],
            "system": ["A", "B", "C", "A", "B", "C", "A"],
            "score": [0.9, 0.5, 0.7, 0.4, 0.4, 0.1, 0.3],
        }
    )
    # 1: A>B conc; C>A disc (0.7 < 0.9); tie excluded; 2: B>A metric tie; A>C conc; 3: B missing
    res = wmt_kendall_tau(human, scores)
    assert (res["concordant"], res["discordant"], res["metric_ties"]) == (2, 2, 1)
    assert res["tau"] == pytest.approx(0.0)
    assert res["human_ties_excluded"] == 1 and res["missing_scores"] == 1
    drop = wmt_kendall_tau(human, scores, metric_ties="drop")
    assert drop["tau"] == pytest.approx((2 - 1) / 3)
    assert wmt_kendall_tau(human, scores, metric_ties="concordant")["tau"] == pytest.approx((3 - 1) / 4)


def test_paired_t_test_matches_scipy_and_ci():
    rng = np.random.default_rng(9)
    a = rng.normal(0.3, 1, 40)
    b = a - 0.2 + rng.normal(0, 0.5, 40)
    res = paired_t_test(a, b)
    ref = stats.ttest_rel(a, b)
    assert res["t"] == pytest.approx(ref.statistic) and res["p_value"] == pytest.approx(ref.pvalue)
    d = a - b
    half = stats.t.ppf(0.975, 39) * d.std(ddof=1) / math.sqrt(40)
    assert res["ci_low"] == pytest.approx(d.mean() - half) and res["ci_high"] == pytest.approx(d.mean() + half)
    # the CI excludes 0 exactly when p < .05
    assert (res["ci_low"] > 0 or res["ci_high"] < 0) == (res["p_value"] < 0.05)
    same = paired_t_test([1, 2, 3], [0, 1, 2])
    assert same["t"] is None and same["note"] and same["mean_diff"] == 1.0


def test_bootstrap_mean_ci_and_system_means():
    rng = np.random.default_rng(4)
    x = rng.normal(70, 10, 2000)
    res = bootstrap_mean_ci(x, n_boot=2000, seed=0)
    se = x.std(ddof=1) / math.sqrt(len(x))
    assert res["ci_low"] == pytest.approx(x.mean() - 1.96 * se, abs=0.15 * se * 1.96 + 0.05)
    assert res["ci_high"] == pytest.approx(x.mean() + 1.96 * se, abs=0.15 * se * 1.96 + 0.05)
    assert res == bootstrap_mean_ci(x, n_boot=2000, seed=0)
    df = pd.DataFrame({"system": ["a"] * 50 + ["b"] * 50, "score": np.r_[rng.normal(1, 1, 50), rng.normal(3, 1, 50)]})
    means = system_means(df, n_boot=200)
    assert [m["system"] for m in means] == ["b", "a"]
    assert bootstrap_mean_ci([np.nan])["mean"] is None


def test_dip_scores_hand_example():
    df = pd.DataFrame(
        {
            "item": [1, 1, 1, 2, 2, 2, 3, 3],
            "system": ["ref", "s1", "s2", "ref", "s1", "s2", "ref", "s1"],
            "score": [0.9, 0.7, 0.95, 0.8, 0.8, 0.5, 0.6, 0.1],
        }
    )
    res = dip_scores(df, reference_system="ref")
    assert res["s1"]["dip"] == pytest.approx(0.2 + 0.0 + 0.5) and res["s1"]["n_items"] == 3
    assert res["s2"]["dip"] == pytest.approx(-0.05 + 0.3) and res["s2"]["n_items"] == 2
    assert res["s2"]["dip"] < res["s1"]["dip"]  # lower is better: s2 closer to the reference


def test_contrapro_accuracy_hand_example():
    df = pd.DataFrame(
        {
            "item": [1, 1, 1, 2, 2, 3, 3, 4, 5, 5],
            "is_reference": [True, False, False, True, False, True, False, True, True, False],
            "score": [-1.0, -2.0, -3.0, -2.0, -1.0, -1.0, -1.0, -0.5, -1.0, np.nan],
            "phenomenon": ["a", "a", "a", "a", "a", "b", "b", "b", "b", "b"],
        }
    )
    res = contrapro_accuracy(df, by="phenomenon")
    # item1 correct; item2 wrong; item3 tie -> wrong; item4 no contrastive; item5 contrastive NaN
    assert res["n_items"] == 3 and res["n_correct"] == 1 and res["n_skipped"] == 2
    assert res["accuracy"] == pytest.approx(1 / 3)
    assert res["by"]["a"]["accuracy"] == pytest.approx(0.5)
    assert res["by"]["b"]["accuracy"] == 0.0
    low = contrapro_accuracy(df, higher_is_better=False)
    assert low["n_correct"] == 1  # item 2 is now the correct one
