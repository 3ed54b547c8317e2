"""Tests for evaluators.stats.agreement (no Django).

Expected numbers come from published output of Gwet's R package irrCAC
(acceptance values of the brief), from irrCAC-python, sklearn, statsmodels
and from independent textbook implementations written in this file.
"""

from __future__ import annotations

import json
import math
import warnings
from typing import cast

import numpy as np
import pandas as pd
import pytest
from irrCAC.datasets import raw_4raters, raw_ben_gerry, raw_gender
from irrCAC.raw import CAC
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from evaluators.stats.agreement import agreement, agreement_from_wide
from evaluators.stats.coding import derive_categories, long_to_wide, weight_matrix
from evaluators.stats.coefficients import cohen_kappa, pairwise_cohen_kappa

TOL = 1e-4


def melt(wide: pd.DataFrame) -> pd.DataFrame:
    w = wide.reset_index(drop=True)
    w.index.name = "item"
    return w.reset_index().melt(id_vars="item", var_name="rater", value_name="label")


def run(ds, weights="identity", **kw):
    return agreement(melt(ds()), item="item", rater="rater", label="label", weights=weights, **kw)


def irr(ds, method, weights="identity"):
    data = ds().reset_index(drop=True)
    cats = sorted(data.stack().unique().tolist())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CAC(data, weights=weights, categories=cats, digits=12).__getattribute__(method)()["est"]


def walk(obj):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from walk(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from walk(v)
    else:
        yield obj


def assert_clean(result):
    """JSON-able, no NaN/inf, no numpy scalars."""
    json.dumps(result, allow_nan=False)
    for v in walk(result):
        assert v is None or type(v) in (int, float, str, bool), (type(v), v)
        if isinstance(v, float):
            assert math.isfinite(v)


# ---------------------------------------------------------------- acceptance
ACCEPT = [
    # dataset, weights, key, value, se
    (raw_4raters, "identity", "percent_agreement", 0.81818, 0.12561),
    (raw_4raters, "identity", "gwet_ac1", 0.77544, 0.14295),
    (raw_4raters, "identity", "fleiss_kappa", 0.76117, 0.15302),
    (raw_4raters, "identity", "krippendorff_alpha", 0.74342, 0.14548),
    (raw_4raters, "identity", "conger_kappa", 0.76282, 0.14917),
    (raw_4raters, "identity", "brennan_prediger", 0.77273, 0.14472),
    (raw_4raters, "quadratic", "gwet_ac1", 0.91400, 0.10396),
    (raw_4raters, "quadratic", "fleiss_kappa", 0.86494, None),
    (raw_4raters, "quadratic", "krippendorff_alpha", 0.84911, None),
    (raw_4raters, "quadratic", "conger_kappa", 0.85771, None),
    (raw_4raters, "quadratic", "brennan_prediger", 0.90152, None),
    (raw_ben_gerry, "identity", "gwet_ac1", 0.66144, 0.18396),
    (raw_ben_gerry, "identity", "fleiss_kappa", 0.64935, None),
    (raw_ben_gerry, "identity", "krippendorff_alpha", 0.66489, None),
    (raw_ben_gerry, "identity", "conger_kappa", 0.65714, None),
    (raw_ben_gerry, "identity", "brennan_prediger", 0.65909, None),
    (raw_ben_gerry, "identity", "percent_agreement", 0.72727, None),
    (raw_gender, "identity", "gwet_ac1", 0.20808, 0.09070),
    (raw_gender, "identity", "fleiss_kappa", 0.12889, None),
    (raw_gender, "identity", "krippendorff_alpha", 0.14341, None),
    (raw_gender, "identity", "conger_kappa", 0.16572, None),
    (raw_gender, "identity", "brennan_prediger", 0.18333, None),
]


@pytest.mark.parametrize("ds,weights,key,value,se", ACCEPT, ids=[f"{a.__name__}-{b}-{c}" for a, b, c, *_ in ACCEPT])
def test_acceptance_values(ds, weights, key, value, se):
    res = run(ds, weights)
    c = res["coefficients"][key]
    assert c["value"] == pytest.approx(value, abs=TOL)
    if se is not None:
        assert c["se"] == pytest.approx(se, abs=TOL)
    assert c["note"] is None
    assert_clean(res)


def test_acceptance_ac1_ci_and_one_sided_p():
    c = run(raw_4raters)["coefficients"]["gwet_ac1"]
    assert round(c["ci_low"], 3) == 0.461
    assert c["ci_high"] == 1.0
    assert c["p_value"] == pytest.approx(1.0436e-4, rel=1e-3)


def test_shape_of_result():
    res = run(raw_4raters)
    assert res["n_items"] == 12 and res["n_raters"] == 4 and res["n_ratings"] == 41
    assert res["categories"] == [1, 2, 3, 4, 5]
    assert res["weights"] == "identity"
    assert list(res["coefficients"]) == [
        "percent_agreement", "gwet_ac1", "fleiss_kappa", "conger_kappa", "krippendorff_alpha", "brennan_prediger",
    ]  # no cohen_kappa with 4 raters
    assert len(res["pairwise_cohen_kappa"]) == 6
    for c in res["coefficients"].values():
        assert set(c) == {"value", "se", "ci_low", "ci_high", "p_value", "note"}
    two = run(raw_ben_gerry)
    assert "cohen_kappa" in two["coefficients"]


# ------------------------------------------------------- cross-check irrCAC
@pytest.mark.parametrize("ds", [raw_4raters, raw_ben_gerry, raw_gender])
@pytest.mark.parametrize("weights", ["identity", "quadratic", "linear", "ordinal"])
def test_values_and_se_match_irrcac(ds, weights):
    res = run(ds, weights)["coefficients"]
    n = len(ds().dropna(how="all"))
    for key, method in [("gwet_ac1", "gwet"), ("fleiss_kappa", "fleiss"), ("conger_kappa", "conger"),
                        ("krippendorff_alpha", "krippendorff"), ("brennan_prediger", "bp")]:
        est = irr(ds, method, weights)
        assert res[key]["value"] == pytest.approx(est["coefficient_value"], abs=1e-9)
        if key != "krippendorff_alpha":  # SE deliberately differs (R fix)
            assert res[key]["se"] == pytest.approx(est["se"], abs=1e-9)
            # irrCAC-python p is two-sided; ours is R's one-sided 1 - T(coef/se)
            expected_p = stats.t.sf(est["coefficient_value"] / est["se"], n - 1)
            assert res[key]["p_value"] == pytest.approx(expected_p, rel=1e-6, abs=1e-12)
            if est["coefficient_value"] > 0 and method != "bp":  # irrCAC's bp already halves
                assert res[key]["p_value"] == pytest.approx(est["p_value"] / 2, rel=1e-6, abs=1e-12)
            lo, hi = est["confidence_interval"]
            assert res[key]["ci_low"] == pytest.approx(max(-1, lo), abs=1e-9)
            assert res[key]["ci_high"] == pytest.approx(min(1, hi), abs=1e-9)
    # percent agreement == irrCAC's pa
    assert res["percent_agreement"]["value"] == pytest.approx(irr(ds, "gwet", weights)["pa"], abs=1e-9)


@pytest.mark.parametrize("weights", ["identity", "quadratic", "linear", "ordinal"])
@pytest.mark.parametrize("labels", ["numeric", "string"])
def test_vectorised_conger_equals_irrcac_random_missing(weights, labels):
    rng = np.random.default_rng(17)
    wide = pd.DataFrame(rng.integers(1, 6, size=(150, 5)).astype(float), columns=list("vwxyz"))
    wide["w"] = np.where(rng.random(150) < 0.6, wide["v"], wide["w"])
    wide = wide.mask(rng.random(wide.shape) < 0.25)
    cats: list[float] | list[str] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]  # one unused category
    if labels == "string":
        wide = wide.apply(lambda s: s.map(lambda v: None if pd.isna(v) else f"c{int(v)}"))
        cats = [f"c{i}" for i in range(1, 7)]
    wide = wide.dropna(how="all").reset_index(drop=True)
    ours = agreement_from_wide(wide, categories=cats, weights=weights)["coefficients"]["conger_kappa"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = CAC(wide, weights=weights, categories=cats, digits=15).conger()["est"]
    assert ours["value"] == pytest.approx(est["coefficient_value"], abs=1e-10)
    assert ours["se"] == pytest.approx(est["se"], abs=1e-10)


def test_krippendorff_se_differs_from_irrcac_python_and_matches_r():
    ours = run(raw_4raters)["coefficients"]["krippendorff_alpha"]["se"]
    theirs = irr(raw_4raters, "krippendorff")["se"]
    assert theirs == pytest.approx(0.14557, abs=1e-5)  # the unfixed python value
    assert ours == pytest.approx(0.14548, abs=1e-5)  # R irrCAC
    assert abs(ours - theirs) > 5e-5


def _alpha_coincidence(wide: pd.DataFrame, delta) -> float:
    """Krippendorff (2011) alpha via the coincidence matrix: 1 - D_o / D_e."""
    cats = sorted(cast(pd.Series, wide.stack()).unique().tolist())  # one column level: stack() is a Series
    idx = {c: i for i, c in enumerate(cats)}
    q = len(cats)
    o = np.zeros((q, q))
    for _, row in wide.iterrows():
        vals = [idx[v] for v in row.dropna()]
        m = len(vals)
        if m < 2:
            continue
        for a in range(m):
            for b in range(m):
                if a != b:
                    o[vals[a], vals[b]] += 1 / (m - 1)
    nc = o.sum(axis=1)
    n = nc.sum()
    d = np.array([[delta(cats[i], cats[j]) for j in range(q)] for i in range(q)])
    d_o = (o * d).sum() / n
    d_e = (np.outer(nc, nc) * d).sum() / (n * (n - 1))
    return 1 - d_o / d_e


def test_krippendorff_alpha_equals_coincidence_matrix_formula():
    for ds in (raw_4raters, raw_ben_gerry, raw_gender):
        wide = ds().reset_index(drop=True)
        expected = _alpha_coincidence(wide, lambda a, b: float(a != b))
        assert run(ds)["coefficients"]["krippendorff_alpha"]["value"] == pytest.approx(expected, abs=1e-10)
    # interval alpha == alpha with quadratic weights
    wide = raw_4raters().reset_index(drop=True)
    expected = _alpha_coincidence(wide, lambda a, b: (a - b) ** 2)
    assert run(raw_4raters, "quadratic")["coefficients"]["krippendorff_alpha"]["value"] == pytest.approx(expected, abs=1e-10)


def test_fleiss_and_bp_match_statsmodels_on_complete_data():
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    rng = np.random.default_rng(3)
    wide = pd.DataFrame(rng.integers(0, 4, size=(60, 5)))
    wide.iloc[:, 1] = np.where(rng.random(60) < 0.6, wide.iloc[:, 0], wide.iloc[:, 1])
    table, _ = aggregate_raters(wide.to_numpy())
    res = agreement_from_wide(wide)["coefficients"]
    assert res["fleiss_kappa"]["value"] == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-10)
    assert res["brennan_prediger"]["value"] == pytest.approx(fleiss_kappa(table, method="randolph"), abs=1e-10)


# ------------------------------------------------------------ Cohen's kappa
def test_pairwise_cohen_equals_sklearn_random_with_missing():
    rng = np.random.default_rng(42)
    n, raters = 300, ["a", "b", "c"]
    truth = rng.integers(1, 6, n)
    wide = pd.DataFrame({r: np.where(rng.random(n) < 0.6, truth, rng.integers(1, 6, n)).astype(float) for r in raters})
    wide = wide.mask(rng.random(wide.shape) < 0.2)
    long = melt(wide)
    for weights, skw in [("identity", None), ("linear", "linear"), ("quadratic", "quadratic")]:
        res = agreement(long, item="item", rater="rater", label="label", weights=weights)
        assert len(res["pairwise_cohen_kappa"]) == 3
        for p in res["pairwise_cohen_kappa"]:
            both = wide[[p["rater_a"], p["rater_b"]]].dropna()
            assert p["n"] == len(both)
            expected = cohen_kappa_score(both.iloc[:, 0], both.iloc[:, 1], weights=skw, labels=[1.0, 2, 3, 4, 5])
            assert p["value"] == pytest.approx(expected, abs=1e-10)
        direct = pairwise_cohen_kappa(long, weights=weights)
        assert [d["value"] for d in direct] == pytest.approx([p["value"] for p in res["pairwise_cohen_kappa"]])


def test_cohen_kappa_function_and_two_rater_coefficient():
    rng = np.random.default_rng(7)
    a = rng.choice(list("xyz"), 200)
    b = np.where(rng.random(200) < 0.5, a, rng.choice(list("xyz"), 200))
    assert cohen_kappa(a, b)["value"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    res = agreement_from_wide(pd.DataFrame({"r1": a, "r2": b}))
    ck = res["coefficients"]["cohen_kappa"]
    assert ck["value"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    # complete two-rater data: Conger's kappa is Cohen's kappa (Conger 1980)
    assert res["coefficients"]["conger_kappa"]["value"] == pytest.approx(ck["value"], abs=1e-12)
    assert ck["se"] == pytest.approx(res["coefficients"]["conger_kappa"]["se"], abs=1e-12)
    assert 0 < ck["se"] < 0.2 and ck["ci_low"] < ck["value"] < ck["ci_high"]


def test_cohen_kappa_hand_computed():
    # 2x2 table [[20, 5], [10, 15]] -> po = .7, pe = .5*.6 + .5*.4 = .5, kappa = .4
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b)["value"] == pytest.approx(0.4, abs=1e-12)
    # missing pairs are dropped (complete case)
    res = cohen_kappa(a + [None, "y"], b + ["y", ""])
    assert res["n"] == 50 and res["value"] == pytest.approx(0.4)


# --------------------------------------------------------------- degenerate
def test_everyone_agrees_single_category():
    long = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "rater": list("ababab"), "label": ["ok"] * 6})
    res = agreement(long)
    assert_clean(res)
    c = res["coefficients"]
    assert c["percent_agreement"]["value"] == 1.0
    for k in ("gwet_ac1", "fleiss_kappa", "conger_kappa", "krippendorff_alpha", "brennan_prediger", "cohen_kappa"):
        assert c[k]["value"] is None and "categor" in c[k]["note"]
    assert res["pairwise_cohen_kappa"][0]["value"] is None
    assert "0/0" in res["pairwise_cohen_kappa"][0]["note"]


def test_everyone_agrees_with_explicit_categories_kappa_paradox():
    long = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "rater": list("ababab"), "label": ["ok"] * 6})
    res = agreement(long, categories=["bad", "ok", "good"])
    assert_clean(res)
    c = res["coefficients"]
    assert c["fleiss_kappa"]["value"] is None and "p_e = 1" in c["fleiss_kappa"]["note"]
    assert c["krippendorff_alpha"]["value"] is None and c["krippendorff_alpha"]["note"]
    assert c["cohen_kappa"]["value"] is None and c["cohen_kappa"]["note"]
    # AC1 and BP are defined (pe < 1): perfect agreement
    assert c["gwet_ac1"]["value"] == pytest.approx(1.0)
    assert c["brennan_prediger"]["value"] == pytest.approx(1.0)
    assert c["brennan_prediger"]["se"] == 0.0 and c["brennan_prediger"]["note"]


def test_one_item():
    long = pd.DataFrame({"item": [1, 1, 1], "rater": list("abc"), "label": [1, 2, 2]})
    res = agreement(long, categories=[1, 2, 3])
    assert_clean(res)
    for c in res["coefficients"].values():
        assert c["se"] is None and c["p_value"] is None and c["note"]


def test_no_overlap_pair_and_single_ratings():
    long = pd.DataFrame({"item": [1, 2, 3, 3], "rater": ["a", "b", "c", "a"], "label": ["x", "y", "x", "x"]})
    res = agreement(long)
    assert_clean(res)
    pairs = {(p["rater_a"], p["rater_b"]): p for p in res["pairwise_cohen_kappa"]}
    assert pairs[("a", "b")]["n"] == 0 and pairs[("a", "b")]["value"] is None
    assert "no item in common" in pairs[("a", "b")]["note"]


def test_nobody_overlaps_at_all_and_empty():
    long = pd.DataFrame({"item": [1, 2], "rater": ["a", "b"], "label": ["x", "y"]})
    res = agreement(long)
    assert_clean(res)
    assert res["coefficients"]["cohen_kappa"]["value"] is None
    assert all(c["value"] is None and "two or more" in c["note"] for c in res["coefficients"].values())
    empty = agreement(pd.DataFrame({"item": [1, 2], "rater": ["a", "b"], "label": [None, " "]}))
    assert_clean(empty)
    assert empty["n_items"] == 0 and empty["n_ratings"] == 0
    assert all(c["value"] is None for c in empty["coefficients"].values())


def test_blank_labels_are_missing():
    base = melt(raw_4raters())
    blanked = base.copy()
    blanked["label"] = blanked["label"].astype(object).where(blanked["label"].notna(), "")
    a, b = agreement(base), agreement(blanked)
    assert a == b


# ----------------------------------------------------------------- labels
def test_numeric_labels_sorted_numerically_and_numeric_strings():
    long = pd.DataFrame({"item": [1, 1, 2, 2], "rater": ["a", "b"] * 2, "label": ["10", "2", "2", "2"]})
    assert agreement(long)["categories"] == [2, 10]
    assert derive_categories([3.0, 1, "2", None, ""]) == [1, 2, 3]
    assert derive_categories(["b", "a", "b", float("nan")]) == ["a", "b"]


def test_unknown_label_raises_and_duplicates_raise():
    long = pd.DataFrame({"item": [1, 1], "rater": ["a", "b"], "label": ["x", "z"]})
    with pytest.raises(ValueError, match="not among categories"):
        agreement(long, categories=["x", "y"])
    dup = pd.DataFrame({"item": [1, 1, 1], "rater": ["a", "a", "b"], "label": ["x", "y", "x"]})
    with pytest.raises(ValueError, match="same"):
        agreement(dup)
    assert agreement(dup, duplicates="first")["n_ratings"] == 2


def test_explicit_unused_category_changes_ac1_not_fleiss():
    base = run(raw_gender)["coefficients"]
    more = run(raw_gender, categories=["a", "b", "c", "d"])["coefficients"]
    # Fleiss' pe only uses observed marginals; Gwet's pe divides by q(q-1)
    assert more["fleiss_kappa"]["value"] == pytest.approx(base["fleiss_kappa"]["value"], abs=1e-12)
    assert more["gwet_ac1"]["value"] > base["gwet_ac1"]["value"]
    data = raw_gender().reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = CAC(data, categories=["a", "b", "c", "d"], digits=12).gwet()["est"]["coefficient_value"]
    assert more["gwet_ac1"]["value"] == pytest.approx(ref, abs=1e-10)


def test_weights_use_category_order_for_strings():
    w = weight_matrix(["low", "mid", "high"], "quadratic")
    assert w[0, 2] == 0.0 and w[0, 1] == pytest.approx(0.75)
    with pytest.raises(ValueError):
        weight_matrix([1, 2], "bipolarish")


def test_wide_equals_long_and_long_to_wide_roundtrip():
    wide = raw_4raters().reset_index(drop=True)
    assert agreement_from_wide(wide) == run(raw_4raters)
    back = long_to_wide(melt(raw_4raters()))
    assert back.shape == (12, 4)
    assert back.notna().sum().sum() == 41


def test_python_types_only():
    for ds in (raw_4raters, raw_ben_gerry, raw_gender):
        for w in ("identity", "quadratic"):
            assert_clean(run(ds, w))


# ------------------------------------------------------------- performance
def test_100k_items_4_raters_counted_right():
    """Scale, not speed (speed: ``make bench``, bench/run.py item 1)."""
    rng = np.random.default_rng(0)
    n = 100_000
    truth = rng.integers(1, 6, n)
    d = np.where(rng.random((n, 4)) < 0.7, truth[:, None], rng.integers(1, 6, (n, 4))).astype(float)
    d[rng.random((n, 4)) < 0.1] = np.nan
    long = melt(pd.DataFrame(d, columns=["w", "x", "y", "z"]))
    long["label"] = long["label"].map({1.0: "bad", 2.0: "poor", 3.0: "fair", 4.0: "good", 5.0: "great"})
    res = agreement(long)
    assert res["n_items"] == int((~np.isnan(d)).any(axis=1).sum()) and res["n_raters"] == 4
    assert res["n_ratings"] == int((~np.isnan(d)).sum())
    assert 0.4 < res["coefficients"]["gwet_ac1"]["value"] < 0.6
    assert_clean(res)


def test_fuzz_small_degenerate_tables_never_crash_or_nan():
    rng = np.random.default_rng(0)
    for _ in range(150):
        n, r, q = rng.integers(1, 5), rng.integers(1, 4), rng.integers(1, 4)
        cats = list("abc")[:q] if rng.random() < 0.5 else [1, 2, 3][:q]
        vals = rng.choice(np.array(cats, dtype=object), size=(n, r))
        vals[rng.random((n, r)) < 0.3] = None
        long = pd.DataFrame([(i, j, vals[i, j]) for i in range(n) for j in range(r)], columns=["item", "rater", "label"])
        weights = str(rng.choice(["identity", "quadratic", "linear", "ordinal"]))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no RuntimeWarning leaks either
            res = agreement(long, weights=weights, categories=cats if rng.random() < 0.5 else None)
        assert_clean(res)
        for c in res["coefficients"].values():
            if c["value"] is None or c["se"] is None:
                assert c["note"]
            if c["ci_low"] is not None:
                assert c["ci_low"] <= c["value"] + 1e-12 and c["value"] <= c["ci_high"] + 1e-12
        for p in res["pairwise_cohen_kappa"]:
            assert (p["value"] is None) == bool(p["note"])
