"""The replay's subset evaluation equals subset2evaluate 1.0.27 (evaluate.py) on data of our own.

data/replay_ref.json was written by make_replay_ref.py with the package installed outside the
project; the values are compared here to 1e-9.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evaluators.stats.replay import (
    DEFAULT_BUDGETS, CompleteData, Replayer, pairwise_p_values, replay_method, soft_pairwise_accuracy,
)

REF = json.loads((Path(__file__).with_name("data") / "replay_ref.json").read_text(encoding="utf-8"))


def _data() -> CompleteData:
    human = np.array(REF["human"], dtype=float)
    return CompleteData(tuple(REF["systems"]), tuple(str(i) for i in range(human.shape[1])), human)


def test_the_default_budgets_are_the_issues_ten_to_ninety_percent() -> None:
    # subset2evaluate's own PROPS (5%, 10%, …, 50%) are the reference's budgets below.
    assert DEFAULT_BUDGETS == (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@pytest.mark.parametrize("name", sorted(REF["orders"]))
def test_the_curve_equals_subset2evaluates(name: str) -> None:
    ref = REF["orders"][name]
    replayer = Replayer(_data())
    for point, expected in zip(replayer.curve(ref["order"], REF["props"]), ref["curve"], strict=True):
        assert point.items == expected["k"]
        assert point.spa == pytest.approx(expected["spa"], abs=1e-9)
        assert point.top == pytest.approx(expected["top"], abs=1e-9)
        assert point.pairwise_accuracy == pytest.approx(expected["pairwise_accuracy"], abs=1e-9)


@pytest.mark.parametrize("name", sorted(REF["orders"]))
def test_parity_equals_subset2evaluates(name: str) -> None:
    ref = REF["orders"][name]
    assert Replayer(_data()).parity(ref["order"], REF["targets"], REF["props"]) == pytest.approx(ref["parity"], abs=1e-9)


def test_all_the_data_agrees_with_itself() -> None:
    data = _data()
    replayer = Replayer(data)
    full = replayer.curve(list(range(len(data.items))), budgets=(1.0,))[0]
    assert (full.spa, full.top, full.pairwise_accuracy) == (1.0, 1.0, 1.0)
    assert full.kendall_tau == pytest.approx(1.0)


def test_p_values_say_which_system_is_better() -> None:
    better = np.vstack([np.full(30, 2.0) + np.sin(np.arange(30)), np.sin(np.arange(30))])
    p = pairwise_p_values(better)
    assert p[0, 1] <= 0.01 and np.isnan(p[1, 0])
    assert soft_pairwise_accuracy(p, p) == 1.0


def test_random_seeds_give_a_mean_with_an_interval() -> None:
    data = _data()
    rng_orders = lambda d, seed: list(np.random.default_rng(seed).permutation(len(d.items)))  # noqa: E731
    run = replay_method(Replayer(data), rng_orders, method="random", seeds=5, budgets=(0.2, 0.5))
    assert run.seeds == 5 and [p["items"] for p in run.points] == [12, 30]
    assert all(p["spa_low"] <= p["spa"] <= p["spa_high"] for p in run.points)


def test_the_null_data_keeps_each_items_scores_and_mixes_the_systems() -> None:
    data = _data()
    null = data.shuffled_systems(np.random.default_rng(0))
    assert np.array_equal(np.sort(null.human, axis=0), np.sort(data.human, axis=0))
    assert not np.array_equal(null.human, data.human)


def test_incomplete_or_tiny_data_is_refused() -> None:
    with pytest.raises(ValueError, match="shape"):
        CompleteData(("a", "b"), ("1", "2", "3", "4", "5"), np.zeros((2, 4)))
    with pytest.raises(ValueError, match="at least 5 items"):
        CompleteData(("a", "b"), ("1",), np.zeros((2, 1)))
