"""The WMT human ranking (evaluators/stats/wmt_ranking.py): z-scores, Mann-Whitney clusters, rank ranges.

Equality with Appraise's ComputeWMT23Results on generated data (10 and 15 systems, repeated judgments,
missing segments) is checked by bench/wmt_ranking_upstream.py: same order, scores, p-values (5e-26),
rank ranges and clusters.
"""
from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from scipy.stats import mannwhitneyu

from evaluators.stats.wmt_ranking import _greater_asymptotic, wmt_ranking, z_scores


def frame(rows):
    return pd.DataFrame(rows, columns=["annotator", "system", "segment", "score"])


def test_z_scores_use_the_sample_sd_and_treat_a_constant_annotator_as_sd_1():
    f = frame([("a", "s", "1", 10), ("a", "s", "2", 20), ("a", "s", "3", 30), ("b", "s", "1", 50)])
    z = z_scores(f)
    assert list(z[:3]) == pytest.approx([-1.0, 0.0, 1.0])  # mean 20, sample sd 10
    assert z.iloc[3] == 0.0  # one score: sd 0 counts as 1


def test_repeated_judgments_of_a_segment_count_once():
    f = frame([("a", "A", "1", 100), ("b", "A", "1", 0), ("a", "A", "2", 50), ("a", "B", "1", 10), ("a", "B", "2", 10)])
    r = wmt_ranking(f)
    a = next(s for s in r.systems if s["system"] == "A")
    assert a["score"] == pytest.approx((50 + 50) / 2) and a["n"] == 3 and a["n_segments"] == 2


def test_clusters_rank_ranges_and_the_one_sided_test():
    rng = np.random.default_rng(0)
    rows = []
    means = {"best": 90, "good1": 60, "good2": 60, "bad": 20}
    for seg in range(40):
        for system, mean in means.items():
            rows.append((f"u{seg % 4}", system, str(seg), float(mean + rng.normal(0, 5))))
    r = wmt_ranking(frame(rows))
    by = {s["system"]: s for s in r.systems}
    assert [s["system"] for s in r.systems][0] == "best" and r.systems[-1]["system"] == "bad"
    assert by["best"]["cluster"] == 1 and by["best"]["rank_range"] == [1, 1] and by["best"]["wins"] == 3
    assert by["good1"]["cluster"] == by["good2"]["cluster"] == 2
    assert by["good1"]["rank_range"] == [2, 3] and by["good2"]["rank_range"] == [2, 3]
    assert by["bad"]["cluster"] == 3 and by["bad"]["rank_range"] == [4, 4]
    pair = next(h for h in r.head_to_head if h["better"] == "best" and h["worse"] == "bad")
    xa = [m for (a, s, g, m) in rows if s == "best"]
    xb = [m for (a, s, g, m) in rows if s == "bad"]
    assert pair["p_value"] == pytest.approx(mannwhitneyu(xa, xb, alternative="greater").pvalue)


def test_order_by_z_and_bad_arguments():
    f = frame([("a", "A", "1", 80), ("a", "B", "1", 70), ("b", "A", "2", 10), ("b", "B", "2", 30)])
    assert wmt_ranking(f, order="z").settings["order"] == "z"
    with pytest.raises(ValueError, match="order"):
        wmt_ranking(f, order="median")


def test_command_text_json_and_errors(tmp_path):
    path = tmp_path / "scores.csv"
    rows = ["annotator,system,segment,score"] + [f"u{k % 3},{s},{k},{v + (k % 7)}"
                                                  for k in range(30) for s, v in (("A", 80), ("B", 40))]
    path.write_text("\n".join(rows) + "\n")
    out = io.StringIO()
    call_command("wmt_ranking", "--scores", str(path), "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert [s["system"] for s in data["systems"]] == ["A", "B"] and data["systems"][0]["wins"] == 1
    assert data["method"] == "wmt23"
    text = io.StringIO()
    call_command("wmt_ranking", "--scores", str(path), "--lower-is-better", stdout=text)
    assert text.getvalue().splitlines()[1].split()[1] == "B"  # errors: fewer is better
    bad = tmp_path / "bad.csv"
    bad.write_text("annotator,system,segment,score\nu1,A,1,x\nu1,,2,3\n")
    with pytest.raises(CommandError) as exc:
        call_command("wmt_ranking", "--scores", str(bad), stdout=io.StringIO())
    assert "line 2: score 'x' is not a number" in str(exc.value) and "line 3: system is empty" in str(exc.value)
    assert exc.value.returncode == 2


def test_head_to_head_p_values_equal_one_mannwhitneyu_call_per_pair():
    """Every p-value is the one of its own SciPy call: pairs longer than 8 (computed without SciPy's stats, ties
    included), pairs of other lengths (systems missing segments), short pairs (SciPy's exact test) and a pair with
    no shared segment (p = 1)."""
    rng = np.random.default_rng(7)
    rows = []
    spread = {"A": range(30), "B": range(30), "C": range(30), "D": range(20, 36), "E": range(25, 31),
              "F": range(100, 106)}
    for k, (system, segments) in enumerate(spread.items()):
        for seg in segments:
            for annotator in ("x", "y"):
                rows.append((annotator, system, f"{seg:03d}", float(rng.integers(0, 4)) + 0.3 * k))
    result = wmt_ranking(frame(rows))
    data = frame(rows)
    means = data.groupby(["system", "segment"])["score"].mean()
    lengths = set()
    for pair in result.head_to_head:
        a, b = means.loc[pair["better"]], means.loc[pair["worse"]]
        shared = sorted(set(a.index) & set(b.index))
        lengths.add(len(shared))
        expected = 1.0 if not shared else float(mannwhitneyu(a.loc[shared].to_numpy(), b.loc[shared].to_numpy(),
                                                             alternative="greater").pvalue)
        assert pair["p_value"] == expected and pair["n_segments"] == len(shared)
    assert lengths == {0, 5, 6, 10, 30}  # no shared segment, two short pairs, two longer lengths


@pytest.mark.parametrize("kind", ["normal", "few values", "quarters", "constant", "negative"])
def test_the_asymptotic_test_equals_scipys_mannwhitneyu_to_the_bit(kind):
    """_greater_asymptotic is SciPy's one-sided asymptotic Mann-Whitney U (samples longer than 8, finite), ==."""
    rng = np.random.default_rng(len(kind))
    for _ in range(150):
        n = int(rng.integers(9, 400))
        if kind == "normal":
            a, b = rng.normal(size=n), rng.normal(0.1, 1, size=n)
        elif kind == "few values":  # many ties
            a, b = rng.integers(0, 4, n).astype(float), rng.integers(0, 5, n).astype(float)
        elif kind == "quarters":  # MQM-like scores
            a, b = np.round(rng.exponential(size=n) * 4) / 4, np.round(rng.exponential(1.3, size=n) * 4) / 4
        elif kind == "constant":  # every value tied: s = 0, z = -inf, p = 1
            a, b = np.full(n, 2.5), np.full(n, 2.5)
        else:
            a, b = -np.round(rng.gamma(1.0, 3, n)), -np.round(rng.gamma(1.2, 3, n))
        expected = float(mannwhitneyu(a, b, alternative="greater").pvalue)
        assert _greater_asymptotic(a, b) == expected
        assert _greater_asymptotic(b, a) == float(mannwhitneyu(b, a, alternative="greater").pvalue)


def test_a_pair_with_an_infinite_mean_goes_to_scipy():
    """A sample holding an infinity is tested by SciPy itself (whose asymptotic p-value can then be NaN)."""
    rows = [(a, s, f"{g:02d}", float("inf") if (s, g) == ("A", 3) else float((g * (k + 2)) % 5))
            for k, s in enumerate("AB") for g in range(12) for a in ("x", "y")]
    (pair,) = wmt_ranking(frame(rows)).head_to_head
    means = frame(rows).groupby(["system", "segment"])["score"].mean()
    expected = float(mannwhitneyu(means.loc[pair["better"]].to_numpy(), means.loc[pair["worse"]].to_numpy(),
                                  alternative="greater").pvalue)
    assert pair["p_value"] == expected or (np.isnan(expected) and np.isnan(pair["p_value"]))
