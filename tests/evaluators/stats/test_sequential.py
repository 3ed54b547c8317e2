"""The betting confidence sequences: coverage, the null's false decisions, monotone capital, sticky decisions."""
from __future__ import annotations

import math

import numpy as np
import pytest

from evaluators.stats.sequential import (
    FIRST_BETTER, INDISTINGUISHABLE, OPEN, SECOND_BETTER, PairwiseSequences, SequentialConfig,
)


def _run(scores: np.ndarray, config: SequentialConfig) -> PairwiseSequences:
    seq = PairwiseSequences(scores.shape[0], config)
    for i in range(scores.shape[1]):
        seq.observe(scores[:, i])
    return seq


def test_coverage_at_every_time_over_simulated_pairs() -> None:
    """The true mean difference stays inside the interval at every time in ≥ 1 − α of the runs."""
    rng = np.random.default_rng(1)
    config = SequentialConfig(low=0, high=100, alpha=0.1)
    # The true mean difference of the clipped normals, by a large sample.
    true_mean = float((rng.normal(60, 15, 400_000).clip(0, 100) - rng.normal(55, 15, 400_000).clip(0, 100)).mean())
    misses = 0
    runs = 60
    for _ in range(runs):
        seq = PairwiseSequences(2, config)
        missed = False
        for _t in range(150):
            seq.observe(np.array([rng.normal(60, 15), rng.normal(55, 15)]).clip(0, 100))
            lo, hi = seq.interval(0)
            missed = missed or not lo <= true_mean <= hi
        misses += missed
    assert misses / runs <= 0.1
    # The final interval of a 5-point gap after 150 items is informative but not a point.
    assert 0 < hi - lo < 40


def test_null_false_decisions_at_most_alpha() -> None:
    """Exchangeable systems (labels shuffled within items): any 'better' decision is false."""
    rng = np.random.default_rng(2)
    config = SequentialConfig(low=-25, high=0, alpha=0.05)
    base = -np.minimum(25, rng.exponential(2.0, size=(5, 300)))
    false = 0
    runs = 40
    for _ in range(runs):
        shuffled = np.stack([base[rng.permutation(5), i] for i in rng.permutation(300)], axis=1)
        seq = _run(shuffled, config)
        false += bool(np.isin(seq.decision, [FIRST_BETTER, SECOND_BETTER]).any())
    assert false / runs <= 0.05


def test_clear_difference_is_decided_in_the_right_direction_and_stays() -> None:
    rng = np.random.default_rng(3)
    config = SequentialConfig(low=0, high=100, alpha=0.05)
    scores = np.stack([rng.normal(70, 10, 400).clip(0, 100), rng.normal(50, 10, 400).clip(0, 100),
                       rng.normal(50, 10, 400).clip(0, 100)])
    seq = PairwiseSequences(3, config)
    history = []
    for i in range(400):
        seq.observe(scores[:, i])
        history.append(seq.decision[0])
    # Pairs: (0, 1), (0, 2), (1, 2); the first two are decided, once for good.
    assert seq.decision[0] == FIRST_BETTER and seq.decision[1] == FIRST_BETTER
    first = history.index(FIRST_BETTER)
    assert all(h == FIRST_BETTER for h in history[first:])
    assert 0 < seq.decided_at[0] < 400
    assert seq.decision[2] in (OPEN, INDISTINGUISHABLE)
    lo, hi = seq.interval(0)
    assert 0 < lo < 20 < hi


def test_swapped_systems_give_the_mirror_decision() -> None:
    rng = np.random.default_rng(4)
    config = SequentialConfig(low=0, high=100, alpha=0.05)
    scores = np.stack([rng.normal(40, 10, 300).clip(0, 100), rng.normal(60, 10, 300).clip(0, 100)])
    assert _run(scores, config).decision[0] == SECOND_BETTER
    assert _run(scores[::-1], config).decision[0] == FIRST_BETTER


def test_indistinguishable_with_a_minimum_effect() -> None:
    rng = np.random.default_rng(5)
    common = rng.normal(60, 15, 2000).clip(0, 100)
    scores = np.stack([common, (common + rng.normal(0, 2, 2000)).clip(0, 100)])
    with_delta = _run(scores, SequentialConfig(low=0, high=100, alpha=0.05, min_effect=5))
    assert with_delta.decision[0] == INDISTINGUISHABLE
    assert _run(scores, SequentialConfig(low=0, high=100, alpha=0.05)).decision[0] == OPEN


def test_capital_is_monotone_in_the_candidate_mean() -> None:
    """K⁺ falls and K⁻ rises with m: the decisions read one point each."""
    rng = np.random.default_rng(6)
    seq = _run(rng.uniform(0, 100, size=(2, 200)), SequentialConfig(low=0, high=100))
    order = np.argsort(seq.m)
    assert np.all(np.diff(seq.log_k_plus[0, order]) <= 1e-12)
    assert np.all(np.diff(seq.log_k_minus[0, order]) >= -1e-12)


def test_unjudged_systems_leave_their_pairs_unchanged() -> None:
    seq = PairwiseSequences(3, SequentialConfig(low=0, high=100))
    seq.observe(np.array([50.0, math.nan, 40.0]))
    assert list(seq.count) == [0, 1, 0]


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="score range"):
        SequentialConfig(low=1, high=0)
    with pytest.raises(ValueError, match="alpha"):
        SequentialConfig(low=0, high=1, alpha=1.5)
    with pytest.raises(ValueError, match="min_effect"):
        SequentialConfig(low=0, high=1, min_effect=2)
    seq = PairwiseSequences(2, SequentialConfig(low=0, high=100))
    with pytest.raises(ValueError, match="outside the stated range"):
        seq.observe(np.array([120.0, 10.0]))
    with pytest.raises(ValueError, match="shape"):
        seq.observe(np.array([1.0]))
    with pytest.raises(ValueError, match="pairs"):
        PairwiseSequences(2, SequentialConfig(low=0, high=1), pairs=[(0, 0)])
