"""Uniform and adaptive allocation: requests follow one item order, every pair's data is the same prefix, the replay."""
from __future__ import annotations

import numpy as np
import pytest

from evaluators.stats.allocation import (
    AdaptivePolicy, Request, UniformPolicy, replay_allocation, run_policy, summarise,
)
from evaluators.stats.sequential import FIRST_BETTER, OPEN, SequentialConfig

CONFIG = SequentialConfig(low=0, high=100, alpha=0.05)


def scores(rng: np.random.Generator, means: list[float], items: int) -> np.ndarray:
    return np.stack([rng.normal(m, 12, items) for m in means]).clip(0, 100)


def test_uniform_asks_every_system_on_each_item_in_the_seeded_order() -> None:
    policy = UniformPolicy(3, 5, CONFIG, seed=7)
    seen = []
    while (request := policy.next_request()) is not None:
        assert request.systems == (0, 1, 2)
        seen.append(request.item)
        policy.observe(request, [50.0, 50.0, 50.0])
    assert seen == list(np.random.default_rng(7).permutation(5))
    assert policy.judgments == 15


def test_adaptive_warms_up_then_asks_only_for_open_pairs() -> None:
    rng = np.random.default_rng(1)
    human = scores(rng, [80, 40, 41, 42], 300)
    policy = AdaptivePolicy(4, 300, CONFIG, seed=0, warmup=10)
    for _ in range(10):
        request = policy.next_request()
        assert request is not None and request.systems == (0, 1, 2, 3)
        policy.observe(request, [float(human[s, request.item]) for s in request.systems])
    run = run_policy(policy, human)
    # System 0 is far ahead: its pairs are decided and it stops being asked long before the others.
    assert all(run.decisions[k] == FIRST_BETTER for k in range(3))
    assert policy.progress[0] < policy.progress[1:].min()
    assert run.judgments_total < 4 * 300


def test_a_pair_sees_the_same_items_in_the_same_order_under_both_policies() -> None:
    rng = np.random.default_rng(2)
    human = scores(rng, [70, 50, 55], 200)
    uniform, adaptive = UniformPolicy(3, 200, CONFIG, seed=3), AdaptivePolicy(3, 200, CONFIG, seed=3, warmup=5)
    run_policy(uniform, human)
    run_policy(adaptive, human)
    # Decisions are reached after the same number of the pair's observations.
    decided = adaptive.sequences.decided_at >= 0
    assert decided.any()
    assert np.array_equal(adaptive.sequences.decided_at[decided], uniform.sequences.decided_at[decided])


@pytest.mark.parametrize("target", ["all", "top"])
@pytest.mark.parametrize("preference", [False, True])
def test_adaptive_never_needs_more_judgments_than_uniform(target: str, preference: bool) -> None:
    # Elimination: an open pair's systems are judged on every item, so every decision comes at the same item
    # of the order as under uniform, with no more judgments; systems with no open pair left are skipped.
    rng = np.random.default_rng(11)
    human = scores(rng, [70, 69, 60, 55, 40], 240)
    config = SequentialConfig(low=0, high=1, preference=True) if preference else CONFIG
    replay = replay_allocation(human, config, policies=("uniform", "adaptive"), seeds=6, warmup=10, target=target)
    saved = 0
    for uni, ada in zip(replay.runs["uniform"], replay.runs["adaptive"], strict=True):
        assert uni.judgments_to_reference is not None and ada.judgments_to_reference is not None
        assert ada.judgments_to_reference <= uni.judgments_to_reference
        assert ada.contradictions == 0
        saved += uni.judgments_to_reference - ada.judgments_to_reference
    # System 4 is far behind: once all its target pairs are decided it is skipped, which saves judgments.
    assert saved > 0


def test_adaptive_skips_exactly_the_systems_without_an_open_target_pair() -> None:
    rng = np.random.default_rng(12)
    human = scores(rng, [90, 50, 51, 52], 300)
    policy = AdaptivePolicy(4, 300, CONFIG, seed=2, warmup=5, refresh_every=1)
    while (request := policy.next_request()) is not None:
        if policy.progress.min() >= 5:
            pos = int(policy.position[request.item])
            expected = {int(s) for s in np.flatnonzero(policy.active() & (policy.progress == pos))}
            assert set(request.systems) == expected and expected
            open_systems = {int(s) for row in policy.target_open() for s in policy.sequences.pairs[row]}
            assert set(request.systems) <= open_systems
        policy.observe(request, [float(human[s, request.item]) for s in request.systems])
        if policy.settled:
            break
    assert policy.progress[0] < 300 and policy.progress[1:].min() == 300


@pytest.mark.parametrize("every", [3, 10])
def test_with_refresh_every_k_the_policy_follows_the_view_of_its_last_refresh(every: int) -> None:
    # The view (the systems let through, settled) is looked at after requests 1, K + 1, 2K + 1, … (refresh_due
    # with ids 1, 2, …, as a live study alone on its server) and followed in between: a system eliminated in
    # between is still asked for until the next refresh, never after it; the policy stops at the first
    # refresh that sees it settled.
    rng = np.random.default_rng(12)
    human = scores(rng, [90, 50, 51, 52], 300)
    policy = AdaptivePolicy(4, 300, CONFIG, seed=2, warmup=5, refresh_every=every)
    stale = np.zeros(4, dtype=int)
    while (request := policy.next_request()) is not None:
        pos = int(policy.position[request.item])
        view_at_refresh = policy.view.copy()
        assert set(request.systems) == {int(s) for s in np.flatnonzero(view_at_refresh & (policy.progress == pos))}
        if policy.progress.min() >= 5:
            # The view holds every system of an open pair now (decisions are sticky), maybe more.
            assert not (policy.active() & ~view_at_refresh).any()
            stale += view_at_refresh & ~policy.active()
        policy.observe(request, [float(human[s, request.item]) for s in request.systems])
        if policy.stopped:
            break
    assert policy.refreshes == list(range(1, policy.requests + 1, every))
    # System 0 may be asked for after its pairs were decided, until the next refresh sees it: K − 1 requests at most.
    assert stale.max() <= every - 1 and stale[1:].sum() == 0
    if every == 10:
        assert stale[0] > 0
    assert policy.progress[0] < 300 and policy.progress[1:].min() == 300


@pytest.mark.parametrize("every", [1, 5, 25])
@pytest.mark.parametrize("target", ["all", "top"])
def test_stale_views_still_never_need_more_judgments_than_uniform(every: int, target: str) -> None:
    rng = np.random.default_rng(11)
    human = scores(rng, [70, 69, 60, 55, 40], 240)
    replay = replay_allocation(human, CONFIG, policies=("uniform", "adaptive"), seeds=6, warmup=10, target=target,
                               refresh_every=every)
    for uni, ada in zip(replay.runs["uniform"], replay.runs["adaptive"], strict=True):
        assert uni.judgments_to_reference is not None and ada.judgments_to_reference is not None
        assert ada.judgments_to_reference <= uni.judgments_to_reference
        assert ada.contradictions == 0
        assert ada.judgments_total <= uni.judgments_total


def test_a_settled_policy_stops_at_the_refresh_that_sees_it() -> None:
    # Target top, one system far ahead: settled early; with K = 1 the policy stops at once, with K it asks for
    # up to K − 1 more items (exactly the requests until the next refresh), and its decisions are the same.
    rng = np.random.default_rng(6)
    human = scores(rng, [95, 40, 42, 41], 300)
    runs = {}
    for every in (1, 7):
        policy = AdaptivePolicy(4, 300, CONFIG, seed=1, target="top", warmup=5, refresh_every=every)
        runs[every] = (run_policy(policy, human), policy)
    (once, p1), (seven, p7) = runs[1], runs[7]
    assert once.settled and seven.settled and p1.requests < 300
    assert np.array_equal(once.decisions, seven.decisions)
    # The K = 1 run stopped at the request that settled it; the K = 7 one at the next refresh after that one.
    assert p7.requests == next(r for r in p7.refreshes if r >= p1.requests)
    assert p1.requests <= p7.requests <= p1.requests + 6


def test_judgments_must_follow_the_order() -> None:
    policy = UniformPolicy(2, 4, CONFIG, seed=0)
    second = int(policy.order[1])
    with pytest.raises(ValueError, match="must follow the order"):
        policy.observe(Request(second, (0,)), [10.0])
    with pytest.raises(ValueError, match="score"):
        policy.observe(Request(int(policy.order[0]), (0, 1)), [10.0])


def test_replay_reaches_the_reference_and_counts_the_saving() -> None:
    rng = np.random.default_rng(4)
    human = scores(rng, [85, 45, 50, 48, 47], 250)
    replay = replay_allocation(human, CONFIG, policies=("uniform", "adaptive"), seeds=3, warmup=10)
    summary = summarise(replay, ["a", "b", "c", "d", "e"])
    assert summary["reference_decisions"]["mean"] >= 4
    for name in ("uniform", "adaptive"):
        entry = summary["policies"][name]
        assert entry["reached_share"] == 1.0 and entry["contradictions"] == 0
    assert summary["saving"] > 0
    assert sum(summary["policies"]["adaptive"]["per_system"].values()) == pytest.approx(
        summary["policies"]["adaptive"]["judgments_to_reference"]["mean"])


def test_null_replay_reports_false_decisions() -> None:
    rng = np.random.default_rng(5)
    human = scores(rng, [60, 40, 50], 120)
    replay = replay_allocation(human, CONFIG, policies=("adaptive",), seeds=4, null=True)
    summary = summarise(replay, ["a", "b", "c"])
    entry = summary["policies"]["adaptive"]
    assert 0 <= entry["false_decision_runs"] <= 4
    assert entry["false_decision_share"] == entry["false_decision_runs"] / 4
    assert all(r.decisions.shape == (3,) for r in replay.runs["adaptive"])
    assert OPEN in {d for r in replay.runs["adaptive"] for d in r.decisions} or entry["false_decision_runs"] > 0


def test_top_target_puts_the_weak_systems_out_and_stops_asking_for_them() -> None:
    rng = np.random.default_rng(6)
    human = scores(rng, [80, 79, 45, 40], 300)
    policy = AdaptivePolicy(4, 300, CONFIG, seed=1, target="top", warmup=10)
    run_policy(policy, human)
    assert list(policy.out_of_top()) == [False, False, True, True]
    # Once out, a system gets no more judgments: the two leaders are judged on more items.
    assert policy.progress[2:].max() < policy.progress[:2].max()
    # The pair of the two leaders stays open; the pair of the two weak ones is no target.
    assert len(policy.target_open()) == 1


def test_the_oracle_never_needs_more_than_uniform() -> None:
    rng = np.random.default_rng(7)
    human = scores(rng, [85, 45, 50, 48, 70], 200)
    for target in ("all", "top"):
        replay = replay_allocation(human, CONFIG, policies=("uniform",), seeds=3, target=target)
        for oracle, run in zip(replay.oracle, replay.runs["uniform"], strict=True):
            assert run.judgments_to_reference is not None
            assert 0 < oracle <= run.judgments_to_reference


def test_unknown_target_is_refused() -> None:
    with pytest.raises(ValueError, match="target 'best'"):
        UniformPolicy(2, 3, CONFIG, seed=0, target="best")
