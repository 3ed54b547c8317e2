"""Meta-evaluation statistics (evaluators/stats/meta.py) on hand-computed examples.

The equality with Google's mt-metrics-eval on generated data (8 systems x 300 segments, ties,
missing scores, a lower-is-better metric) is checked by bench/meta_upstream.py (largest
difference 5.6e-16; same SPA; same PERM-BOTH clusters).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from evaluators.stats import meta

nan = np.nan


def test_pairwise_accuracy_counts_ties_as_mt_metrics_eval_does():
    gold = np.array([3.0, 2.0, 2.0, 1.0])
    # Pairs: (0,1) + +, (0,2) + +, (0,3) + +, (1,2) gold tie and metric tie: agree; (1,3) and (2,3): + -.
    metric = np.array([4.0, 1.0, 1.0, 2.0])
    acc, pairs = meta.pairwise_accuracy(gold, metric)
    assert pairs == 6 and acc == pytest.approx(4 / 6)
    # A tie on one side only disagrees.
    acc, _ = meta.pairwise_accuracy(np.array([1.0, 1.0]), np.array([1.0, 2.0]))
    assert acc == 0.0
    # A missing gold score drops its pairs.
    acc, pairs = meta.pairwise_accuracy(np.array([1.0, nan, 3.0]), np.array([1.0, 5.0, 2.0]))
    assert pairs == 1 and acc == 1.0


def test_acc_eq_chooses_the_tie_threshold_that_maximises_the_item_average():
    # One item, three systems. Human: A=B tie, C worse. Metric: A 0.50, B 0.52, C 0.10.
    human = np.array([[5.0, 5.0, 1.0]])
    metric = np.array([[0.50, 0.52, 0.10]])
    # eps = 0: (A,B) metric orders, human ties -> wrong; (A,C), (B,C) right -> 2/3.
    # eps = 0.02: (A,B) tied on both sides -> right: 3/3. eps = 0.40 ties (A,C) too -> worse.
    result = meta.acc_eq(human, metric)
    assert result.accuracy == pytest.approx(1.0)
    assert result.threshold == pytest.approx(0.02)
    assert (result.n_groups, result.n_pairs) == (1, 3)


def test_acc_eq_averages_per_item_and_skips_missing_cells():
    human = np.array([[1.0, 2.0, 3.0], [1.0, nan, 2.0], [nan, nan, 4.0]])
    metric = np.array([[3.0, 2.0, 1.0], [1.0, 9.0, 2.0], [1.0, 2.0, 3.0]])
    result = meta.acc_eq(human, metric)
    # Item 1: all three pairs discordant -> 0 (any eps > 0 can only add ties, which the human never has);
    # item 2: one valid pair, concordant -> 1; item 3: fewer than two cells -> not counted.
    assert result.n_groups == 2 and result.accuracy == pytest.approx(0.5) and result.threshold == 0.0


def test_lower_is_better_metrics_are_negated_before_everything():
    human = np.array([[1.0, 2.0], [2.0, 3.0], [3.0, 4.0]])  # 3 systems x 2 segments
    ter = -human * 10
    out = meta.meta_evaluate(human_seg=human, metrics_seg={"ter": ter}, lower_is_better=["ter"],
                             settings=meta.MetaSettings(resamples=10))
    assert out.system["ter"]["pairwise_accuracy"] == 1.0 and out.system["ter"]["pearson"] == pytest.approx(1.0)
    assert out.segment["ter"]["acc_eq"] == pytest.approx(1.0)
    # Left as it is, the same scores look perfectly wrong.
    wrong = meta.meta_evaluate(human_seg=human, metrics_seg={"ter": ter}, settings=meta.MetaSettings(resamples=10))
    assert wrong.system["ter"]["pairwise_accuracy"] == 0.0 and wrong.system["ter"]["kendall"] == pytest.approx(-1.0)


def test_spa_is_one_when_metric_and_humans_give_the_same_p_values():
    rng = np.random.default_rng(0)
    human = rng.normal(size=(4, 50))
    same = meta.soft_pairwise_accuracy(human, human * 3 + 1, resamples=200, seed=4)
    assert same[0] == pytest.approx(1.0) and same[1] == 50
    reversed_ = meta.soft_pairwise_accuracy(human, -human, resamples=200, seed=4)
    assert reversed_[0] < 0.9


def test_permutation_p_values_are_seeded_and_one_sided():
    seg = np.array([[1.0] * 20, [0.0] * 20])
    p = meta.permutation_p_values(seg, resamples=500, seed=4)
    assert p[0, 1] <= 0.01  # system 0 is better on every segment
    assert np.array_equal(p, meta.permutation_p_values(seg, resamples=500, seed=4), equal_nan=True)
    flipped = meta.permutation_p_values(seg[::-1], resamples=500, seed=4)
    assert flipped[0, 1] >= 0.99


def test_assign_ranks_starts_a_cluster_at_the_first_significant_loss():
    sig = np.array([[0, 0.3, 0.01, 0.01], [0, 0, 0.2, 0.04], [0, 0, 0, 0.5], [0, 0, 0, 0]], dtype=float)
    # Metric 2 is beaten by metric 0 (p .01): rank 2 starts at 2; metric 3 is beaten only by 0 and 1, which
    # are in an earlier cluster, and not by 2 (p .5): it stays in rank 2.
    assert meta.assign_ranks(sig, 0.05) == [1, 1, 2, 2]


def test_assign_ranks_depends_on_the_order_of_equal_metrics_and_the_result_says_so():
    # Z > X = Y.  Z beats Y significantly (p .01) but not X (p .3); X and Y do not differ (p .5).
    p = {("Z", "X"): 0.3, ("Z", "Y"): 0.01, ("X", "Y"): 0.5, ("Y", "X"): 0.5}

    def ranks(order: list[str]) -> dict[str, int]:
        sig = np.zeros((3, 3))
        for i, a in enumerate(order):
            for j in range(i + 1, 3):
                sig[i, j] = p[(a, order[j])]
        return dict(zip(order, meta.assign_ranks(sig, 0.05)))

    assert ranks(["Z", "X", "Y"]) == {"Z": 1, "X": 1, "Y": 2}  # X, then Y: Y opens cluster 2 alone
    assert ranks(["Z", "Y", "X"]) == {"Z": 1, "Y": 2, "X": 2}  # Y, then X: X follows Y into cluster 2
    notes = meta.split_ties(["Z", "X", "Y"], {"Z": 0.9, "X": 0.8, "Y": 0.8}, [1, 1, 2])
    assert notes == ["X and Y have the same 0.8 but land in clusters 1 and 2: AssignRanks depends on the order "
                     "of equal metrics (here by name)"]
    assert meta.split_ties(["Z", "Y", "X"], {"Z": 0.9, "X": 0.8, "Y": 0.8}, [1, 2, 2]) == []


def test_perm_both_separates_a_good_metric_from_noise_and_not_from_itself():
    rng = np.random.default_rng(1)
    gold = np.arange(12, dtype=float)
    good = gold + rng.normal(0, 0.5, size=12)
    noise = rng.normal(size=12)
    p = meta.perm_both(gold, good, noise, statistic="pearson", rng=np.random.default_rng(0), resamples=500)
    assert p < 0.05
    p_same = meta.perm_both(gold, good, good.copy(), statistic="pearson", rng=np.random.default_rng(0),
                            resamples=200)
    assert p_same == 1.0  # identical metrics: every resample's difference is 0 >= 0


def test_meta_evaluate_clusters_and_settings():
    rng = np.random.default_rng(2)
    latent = np.linspace(0, 1, 8)[:, None] + rng.normal(0, 0.5, size=(8, 80))
    human = latent.copy()
    metrics = {"good": latent + rng.normal(0, 0.1, size=latent.shape), "bad": -latent + rng.normal(0, 0.1, size=latent.shape)}
    out = meta.meta_evaluate(human_seg=human, metrics_seg=metrics, settings=meta.MetaSettings(resamples=300))
    assert [c["metric"] for c in out.clusters] == ["good", "bad"]
    assert out.clusters[0]["rank"] == 1 and out.clusters[1]["rank"] == 2
    assert out.settings["resamples"] == 300 and out.settings["cluster_statistic"] == "system:pairwise_accuracy"
    assert set(out.system["good"]) >= {"pairwise_accuracy", "pearson", "kendall", "spearman", "spa"}
    assert set(out.segment["good"]) >= {"acc_eq", "acc_eq_threshold", "pearson", "kendall"}
    with pytest.raises(ValueError, match="cluster statistic"):
        meta.meta_evaluate(human_seg=human, metrics_seg=metrics, settings=meta.MetaSettings(cluster_statistic="x"))


def test_constant_scores_give_no_correlation_rather_than_a_number():
    human = np.array([[1.0], [2.0], [3.0]])
    out = meta.meta_evaluate(human_seg=human, metrics_seg={"flat": np.ones((3, 1))},
                             settings=meta.MetaSettings(resamples=10))
    assert out.system["flat"]["pearson"] is None and out.system["flat"]["spearman"] is None
    assert out.system["flat"]["pairwise_accuracy"] == 0.0
    assert not math.isnan(out.segment["flat"]["acc_eq_threshold"])
