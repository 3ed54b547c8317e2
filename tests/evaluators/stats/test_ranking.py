"""Tests for evaluators.stats.ranking."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from evaluators.stats.ranking import (
    bootstrap_ci,
    bradley_terry,
    expected_wins,
    pairwise_table,
    sign_test,
    system_ranking,
)
from evaluators.stats.ratings import ranking_to_pairs


def make_pairs(outcomes):
    """outcomes: list of (item, a, b, label)."""
    rows = []
    for item, a, b, lab in outcomes:
        a, b = sorted([a, b])
        rows.append({"source_item": item, "system_a": a, "system_b": b, "label": lab})
    return pd.DataFrame(rows)


SMALL = make_pairs(
    [(1, "A", "B", "A")] * 3 + [(2, "A", "B", "B")] * 1 + [(3, "A", "B", "tie")] * 2
    + [(4, "A", "C", "A")] * 2 + [(5, "A", "C", "C")] * 2
    + [(6, "B", "C", "B")] * 4 + [(7, "B", "C", "C")] * 1 + [(8, "B", "C", "tie")] * 1
)


def _row(table: pd.DataFrame, key: tuple[str, str]) -> dict:
    row = table.loc[key]
    assert isinstance(row, pd.Series)  # a full (system, opponent) key selects one row
    return row.to_dict()


def test_pairwise_table_counts():
    t = pairwise_table(SMALL).set_index(["system", "opponent"])
    assert _row(t, ("A", "B")) == {"wins": 3, "ties": 2, "losses": 1, "n": 6}
    assert _row(t, ("B", "A")) == {"wins": 1, "ties": 2, "losses": 3, "n": 6}
    assert _row(t, ("C", "B")) == {"wins": 1, "ties": 1, "losses": 4, "n": 6}
    assert len(t) == 6


def test_expected_wins_hand_computed():
    ew = expected_wins(SMALL)
    # A: (3/4 + 2/4)/2 ; B: (1/4 + 4/5)/2 ; C: (2/4 + 1/5)/2  (ties excluded)
    assert ew["A"] == pytest.approx((0.75 + 0.5) / 2)
    assert ew["B"] == pytest.approx((0.25 + 0.8) / 2)
    assert ew["C"] == pytest.approx((0.5 + 0.2) / 2)
    only_ties = make_pairs([(1, "A", "B", "tie")])
    assert expected_wins(only_ties) == {"A": None, "B": None}


def _bt_loglik(theta, w):
    k = len(theta)
    ll = 0.0
    for i in range(k):
        for j in range(k):
            if i != j and w[i, j]:
                ll += w[i, j] * (theta[i] - np.logaddexp(theta[i], theta[j]))
    return ll


def _counts(pairs, systems):
    k = len(systems)
    w, t = np.zeros((k, k)), np.zeros((k, k))
    for r in pairs.itertuples():
        a, b = systems.index(r.system_a), systems.index(r.system_b)
        if r.label == "tie":
            t[a, b] += 1
            t[b, a] += 1
        elif r.label == r.system_a:
            w[a, b] += 1
        else:
            w[b, a] += 1
    return w, t


def test_bt_matches_scipy_mle():
    systems = ["A", "B", "C"]
    w, _ = _counts(SMALL, systems)
    for prior in (0.0, 0.1, 1.0):
        wp = w + prior * (1 - np.eye(3))
        res = optimize.minimize(lambda th: -_bt_loglik(np.r_[0.0, th], wp), np.zeros(2), method="BFGS", options={"gtol": 1e-10})
        th = np.r_[0.0, res.x]
        th -= th.mean()
        ours = bradley_terry(SMALL, prior=prior)
        assert ours["converged"]
        assert [ours["strength"][s] for s in systems] == pytest.approx(th, abs=1e-5)


def test_newton_equals_hunter_mm():
    from evaluators.stats.ranking import _bt_mm, _newton_fit

    rng = np.random.default_rng(8)
    w = rng.integers(0, 20, size=(50, 5, 5)).astype(float) * (1 - np.eye(5)) + 0.1 * (1 - np.eye(5))
    th_newton, _, ok = _newton_fit(w, None)
    th_mm, ok_mm = _bt_mm(w)
    assert ok and ok_mm
    np.testing.assert_allclose(th_newton, th_mm, atol=1e-7)


def test_ranks_min_method():
    from evaluators.stats.ranking import _ranks

    got = _ranks(np.array([[0.5, 2.0, 0.5, np.nan, -1.0]]))
    assert got.tolist() == [[2, 1, 2, 5, 4]]
    assert got.tolist() == [stats.rankdata([-0.5, -2.0, -0.5, np.inf, 1.0], method="min").astype(int).tolist()]


def test_bt_recovers_true_strengths():
    rng = np.random.default_rng(5)
    true = np.array([-1.0, 0.0, 0.5, 0.5])
    true -= true.mean()
    systems = ["s0", "s1", "s2", "s3"]
    rows = []
    for it in range(20000):
        i, j = sorted(rng.choice(4, 2, replace=False))
        p = 1 / (1 + math.exp(true[j] - true[i]))
        rows.append((it, systems[i], systems[j], systems[i] if rng.random() < p else systems[j]))
    bt = bradley_terry(make_pairs(rows))["strength"]
    assert [bt[s] for s in systems] == pytest.approx(true, abs=0.06)


def _davidson_loglik(params, w, t):
    k = w.shape[0]
    theta = np.r_[0.0, params[: k - 1]]
    lognu = params[-1]
    ll = 0.0
    for i in range(k):
        for j in range(k):
            if i == j:
                continue
            lse = np.logaddexp(np.logaddexp(theta[i], theta[j]), lognu + (theta[i] + theta[j]) / 2)
            ll += w[i, j] * (theta[i] - lse)
            if i < j:
                ll += t[i, j] * (lognu + (theta[i] + theta[j]) / 2 - lse)
    return ll


def test_davidson_matches_scipy_mle():
    systems = ["A", "B", "C"]
    w, t = _counts(SMALL, systems)
    prior = 0.1
    wp = w + prior * (1 - np.eye(3))
    res = optimize.minimize(lambda x: -_davidson_loglik(x, wp, t), np.zeros(3), method="BFGS", options={"gtol": 1e-10})
    th = np.r_[0.0, res.x[:2]]
    th -= th.mean()
    ours = bradley_terry(SMALL, ties="davidson", prior=prior)
    assert ours["converged"]
    assert [ours["strength"][s] for s in systems] == pytest.approx(th, abs=1e-5)
    assert ours["nu"] == pytest.approx(math.exp(res.x[2]), abs=1e-5)


def test_ties_policy_ignore_vs_davidson():
    no_ties = SMALL[SMALL["label"] != "tie"]
    assert bradley_terry(no_ties)["strength"] == pytest.approx(bradley_terry(SMALL)["strength"])
    d_no = bradley_terry(no_ties, ties="davidson")
    assert d_no["nu"] == 0.0
    assert d_no["strength"] == pytest.approx(bradley_terry(no_ties)["strength"], abs=1e-6)
    assert bradley_terry(SMALL, ties="davidson")["nu"] > 0


def test_system_that_never_wins_is_finite_and_last():
    pairs = make_pairs([(i, "A", "Z", "A") for i in range(10)] + [(10 + i, "B", "Z", "B") for i in range(10)]
                       + [(20 + i, "A", "B", "A" if i % 2 else "B") for i in range(10)])
    bt = bradley_terry(pairs)
    assert all(math.isfinite(v) for v in bt["strength"].values())
    assert bt["strength"]["Z"] == min(bt["strength"].values())
    assert bt["converged"]
    with pytest.raises(ValueError):
        bradley_terry(pairs, prior=-1)
    # without the prior there is no finite MLE; a larger prior shrinks towards 0
    assert abs(bradley_terry(pairs, prior=1.0)["strength"]["Z"]) < abs(bt["strength"]["Z"])


def test_sign_test():
    res = sign_test(8, 2)
    assert res["p_value"] == pytest.approx(2 * (45 + 10 + 1) / 1024)
    assert sign_test(2, 8)["p_value"] == res["p_value"]
    assert sign_test(30, 12)["p_value"] == pytest.approx(stats.binomtest(30, 42).pvalue)
    assert sign_test(5, 5)["p_value"] == 1.0
    assert sign_test(0, 0)["p_value"] is None


def test_bootstrap_reproducible_and_brackets_estimate():
    a = bootstrap_ci(SMALL, n_boot=300, seed=11)
    b = bootstrap_ci(SMALL, n_boot=300, seed=11)
    c = bootstrap_ci(SMALL, n_boot=300, seed=12)
    assert a == b and a != c
    bt = bradley_terry(SMALL)["strength"]
    for s in "ABC":
        lo, hi = a[s]["bt"]
        assert lo <= bt[s] <= hi
        assert 1 <= a[s]["rank"][0] <= a[s]["rank"][1] <= 3


def test_bootstrap_resamples_items_not_pairs():
    # same 40 outcomes; clustered: 4 items x 10 identical outcomes, spread: 40 items
    outcomes = ["A"] * 3 + ["B"]
    clustered = make_pairs([(i, "A", "B", lab) for i, lab in enumerate(outcomes) for _ in range(10)])
    spread = make_pairs([(i * 10 + r, "A", "B", lab) for i, lab in enumerate(outcomes) for r in range(10)])
    wc = bootstrap_ci(clustered, n_boot=500, seed=0)["A"]["win_rate"]
    ws = bootstrap_ci(spread, n_boot=500, seed=0)["A"]["win_rate"]
    assert (wc[1] - wc[0]) > 1.5 * (ws[1] - ws[0])


def test_bootstrap_win_rate_matches_manual_item_resampling():
    rng = np.random.default_rng(0)
    rows = [(i, "A", "B", rng.choice(["A", "B", "tie"], p=[0.5, 0.3, 0.2])) for i in range(200) for _ in range(3)]
    pairs = make_pairs(rows)
    ci = bootstrap_ci(pairs, n_boot=2000, seed=3)["A"]["win_rate"]
    # independent slow bootstrap (different random stream): intervals agree closely
    items = pairs.groupby("source_item")["label"].apply(list)
    rng2 = np.random.default_rng(99)
    vals = []
    for _ in range(2000):
        pick = items.iloc[rng2.integers(0, len(items), len(items))]
        labs = [x for lst in pick for x in lst]
        vals.append(labs.count("A") / len(labs))
    lo, hi = np.percentile(vals, [2.5, 97.5])
    assert ci[0] == pytest.approx(lo, abs=0.015) and ci[1] == pytest.approx(hi, abs=0.015)


def test_system_ranking_two_systems_and_json():
    pairs = make_pairs([(i, "A", "B", "A") for i in range(30)] + [(30 + i, "A", "B", "B") for i in range(12)]
                       + [(50 + i, "A", "B", "tie") for i in range(5)])
    res = system_ranking(pairs, seed=1, n_boot=200)
    json.dumps(res, allow_nan=False)
    first = res["systems"][0]
    assert first["system"] == "A" and first["rank"] == 1
    assert (first["wins"], first["ties"], first["losses"], first["n"]) == (30, 5, 12, 47)
    assert first["win_rate"] == pytest.approx(30 / 47)
    assert first["expected_wins"] == pytest.approx(30 / 42)
    st = res["sign_test"]
    assert st["wins_a"] == 30 and st["wins_b"] == 12 and st["ties"] == 5
    assert st["p_value"] == pytest.approx(stats.binomtest(30, 42).pvalue)
    three = system_ranking(SMALL, n_boot=50)
    assert three["sign_test"] is None
    assert [s["rank"] for s in three["systems"]] == [1, 2, 3]


def test_unknown_label_raises():
    bad = make_pairs([(1, "A", "B", "C")])
    with pytest.raises(ValueError, match="neither"):
        system_ranking(bad)
    with pytest.raises(KeyError):
        system_ranking(SMALL.rename(columns={"source_item": "unit"}))


def test_20k_items_5_candidates_3_annotators_ranked_right():
    rng = np.random.default_rng(1)
    n_items, n_ann, k = 20_000, 3, 5
    quality = np.array([0.0, 0.2, 0.4, 0.5, 1.0])
    n_j = n_items * n_ann
    sys_idx = np.tile(np.arange(k), n_j)
    df = pd.DataFrame(
        {
            "judgment": np.repeat(np.arange(n_j), k),
            "item": np.repeat(np.repeat(np.arange(n_items), n_ann), k),
            "annotator": np.repeat(np.tile(np.arange(n_ann), n_items), k),
            "system": np.array([f"sys{i}" for i in range(k)])[sys_idx],
            "rank": -np.round(2 * (quality[sys_idx] + rng.normal(0, 1, n_j * k))),
        }
    )
    pairs, _ = ranking_to_pairs(df)
    res = system_ranking(pairs, seed=0, n_boot=1000)
    assert len(pairs) == 600_000
    assert [s["system"] for s in res["systems"]] == ["sys4", "sys3", "sys2", "sys1", "sys0"]
    assert all(s["rank_range"] == [s["rank"], s["rank"]] for s in res["systems"])


def test_fuzz_small_tables_json_clean_and_converged():
    rng = np.random.default_rng(0)
    for _ in range(60):
        k, n = rng.integers(2, 5), rng.integers(1, 6)
        systems = [f"s{i}" for i in range(k)]
        rows = []
        for _ in range(rng.integers(1, 8)):
            a, b = sorted(rng.choice(systems, 2, replace=False))
            rows.append((int(rng.integers(0, n)), a, b, str(rng.choice([a, b, "tie"]))))
        for ties in ("ignore", "davidson"):
            res = system_ranking(make_pairs(rows), n_boot=30, ties=ties)
            json.dumps(res, allow_nan=False)
            assert res["bt_converged"]


_RANKING_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np, pandas as pd
    from evaluators.stats.ranking import bradley_terry, system_ranking

    heap = [np.ones(int(n)) for n in sys.argv[1:]]  # a different memory layout per process
    rng = np.random.default_rng(11)
    systems = ["s0", "s1", "s2", "s3", "s4", "s5"]
    rows = []
    for item in range(150):
        for a in range(6):
            for b in range(a + 1, 6):
                if rng.random() < 0.4:
                    u = rng.random()
                    win = 0.5 + 0.06 * (b - a)
                    label = systems[a] if u < 0.85 * win else systems[b] if u < 0.85 else "tie"
                    rows.append((f"i{item}", systems[a], systems[b], label))
    # s6 and s7 have identical records: mathematically equal strengths
    for item in range(40):
        for twin in ("s6", "s7"):
            rows.append((f"t{item}", "s0", twin, twin if item % 3 else "s0"))
        rows.append((f"t{item}", "s6", "s7", "s6" if item % 2 else "s7"))
    pairs = pd.DataFrame(rows, columns=["source_item", "system_a", "system_b", "label"])
    out = {ties: system_ranking(pairs, n_boot=300, ties=ties) for ties in ("ignore", "davidson")}
    out["bt"] = bradley_terry(pairs, ties="davidson")
    print(json.dumps(out, sort_keys=True))
    """
)


def test_ranking_json_identical_across_processes():
    """Two interpreters (other hash seed, BLAS threads, heap layout) give byte-identical JSON."""
    root = Path(__file__).resolve().parents[3]
    outputs = []
    for hash_seed, threads, heap in (("1", "1", []), ("97", "2", ["1237", "55", "40001"])):
        env = {**os.environ, "PYTHONPATH": str(root), "PYTHONHASHSEED": hash_seed,
               "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads}
        done = subprocess.run([sys.executable, "-c", _RANKING_SCRIPT, *heap], cwd=root, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    result = json.loads(outputs[0])
    for ties in ("ignore", "davidson"):
        assert result[ties]["bt_converged"]
        rows = {r["system"]: r for r in result[ties]["systems"]}
        # twins: the exact same strength and rank, not an ulp apart
        assert rows["s6"]["bt"] == rows["s7"]["bt"] and rows["s6"]["rank"] == rows["s7"]["rank"]
        assert len({r["bt"] for r in rows.values()}) == 7
    assert result["bt"]["nu"] > 0


def test_bt_estimates_are_rounded_to_12_decimals():
    from evaluators.stats.ranking import _fit_bt, _fit_bt_unrounded

    rng = np.random.default_rng(3)
    w = rng.integers(0, 30, size=(40, 5, 5)).astype(float) * (1 - np.eye(5))
    t = rng.integers(0, 4, size=(40, 5, 5)).astype(float)
    t = np.triu(t, 1) + np.swapaxes(np.triu(t, 1), 1, 2)
    for ties in ("ignore", "davidson"):
        raw, raw_nu, _ = _fit_bt_unrounded(w, t, ties, 0.1)
        theta, nu, ok = _fit_bt(w, t, ties, 0.1)
        assert ok
        np.testing.assert_allclose(theta, raw, rtol=0, atol=5e-13)
        assert np.array_equal(theta, np.round(theta, 12))
        assert not np.signbit(theta[theta == 0]).any()
        if ties == "davidson":
            np.testing.assert_allclose(nu, raw_nu, rtol=1e-11)
            assert all(float(f"{v:.12g}") == v for v in nu)


def test_systems_with_identical_records_get_identical_strength():
    """Twins differ in the last bits before rounding (noise decides their order); not after."""
    from evaluators.stats.ranking import _fit_bt, _fit_bt_unrounded

    rng = np.random.default_rng(0)
    unrounded_differ = 0
    for _ in range(60):
        k = int(rng.integers(3, 9))
        w = rng.integers(0, 20, size=(1, k, k)).astype(float) * (1 - np.eye(k))
        i, j = rng.choice(k, 2, replace=False)
        others = [m for m in range(k) if m not in (i, j)]
        w[0, j, others], w[0, others, j] = w[0, i, others], w[0, others, i]
        w[0, i, j] = w[0, j, i]
        t = np.zeros_like(w)
        raw, _, _ = _fit_bt_unrounded(w, t, "ignore", 0.1)
        theta, _, _ = _fit_bt(w, t, "ignore", 0.1)
        unrounded_differ += raw[0, i] != raw[0, j]
        assert theta[0, i] == theta[0, j]
    assert unrounded_differ > 0


def test_system_ranking_without_bootstrap():
    full = system_ranking(SMALL, n_boot=200, seed=4)
    bare = system_ranking(SMALL, n_boot=0, seed=4)
    json.dumps(bare, allow_nan=False)
    assert bare["n_boot"] == 0 and "no bootstrap" in bare["note"] and full["note"] is None
    for with_ci, without in zip(full["systems"], bare["systems"]):
        assert with_ci["win_rate_ci"] is not None and with_ci["rank_range"] is not None
        for key in ("win_rate_ci", "expected_wins_ci", "bt_ci", "rank_range"):
            assert without[key] is None
        # the point estimates do not depend on the bootstrap
        same = {k: v for k, v in with_ci.items() if not k.endswith("_ci") and k != "rank_range"}
        assert same == {k: v for k, v in without.items() if not k.endswith("_ci") and k != "rank_range"}
    assert bare["sign_test"] == full["sign_test"]
    with pytest.raises(ValueError, match="n_boot must be >= 0"):
        system_ranking(SMALL, n_boot=-1)
    with pytest.raises(ValueError, match="n_boot must be >= 1"):
        bootstrap_ci(SMALL, n_boot=0)
