"""Study planning (evaluators/stats/planning.py): the ranking's test, power, rank ranges, cost, the inverse."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import mannwhitneyu

from evaluators.stats import planning as pl
from evaluators.stats.planning_data import pilot_from_mqm
from evaluators.stats.replay_data import from_mqm
from formats.mqm_tsv import parse_mqm_tsv
from evaluators.stats.wmt_ranking import wmt_ranking


def _pilot(n_sys: int = 4, n_items: int = 60, *, discrete: bool = True, gap: float = 0.4, seed: int = 1) -> pl.Pilot:
    rng = np.random.default_rng(seed)
    item = rng.normal(size=n_items)
    scores = np.stack([gap * s + item + rng.normal(size=n_items) for s in range(n_sys)])
    if discrete:
        scores = np.round(scores)
    return pl.Pilot(tuple(f"s{s}" for s in range(n_sys)), tuple(f"i{i}" for i in range(n_items)), scores)


def test_mann_whitney_matches_scipy_asymptotic_with_ties() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 5, size=(6, 40)).astype(float)
    y = rng.integers(0, 7, size=(6, 40)).astype(float)
    greater, less = pl._mwu_both(x, y)
    assert np.allclose(greater, mannwhitneyu(x, y, axis=-1, alternative="greater").pvalue)
    assert np.allclose(less, mannwhitneyu(x, y, axis=-1, alternative="less").pvalue)
    cx = np.stack([np.bincount(r.astype(int), minlength=7) for r in x])
    cy = np.stack([np.bincount(r.astype(int), minlength=7) for r in y])
    g2, l2 = pl._mwu_from_counts(cx, cy, 40, 40)
    assert np.allclose(g2, greater) and np.allclose(l2, less)


@pytest.mark.parametrize("discrete", [True, False])
def test_simulated_study_concludes_what_the_wmt_ranking_concludes(discrete: bool) -> None:
    """Each simulated study's wins are the head-to-head wins of wmt_ranking on that study's items."""
    pilot = _pilot(discrete=discrete, gap=0.25)
    pairs = pl._ordered_pairs(pilot)
    draws = pl._draws(7, 6, len(pilot.items), 40)
    outcome = pl._simulate(pilot.scores, draws, pairs, 0.05)
    for r in range(6):
        rows = [{"annotator": "a", "system": pilot.systems[s], "segment": f"{j}", "score": pilot.scores[s, i]}
                for s in range(len(pilot.systems)) for j, i in enumerate(draws[r])]
        wins = {(h["better"], h["worse"]) for h in wmt_ranking(pd.DataFrame(rows)).head_to_head if h["significant"]}
        for k, (a, b) in enumerate(pairs):
            expected = 1 if (pilot.systems[a], pilot.systems[b]) in wins else (
                -1 if (pilot.systems[b], pilot.systems[a]) in wins else 0)
            assert outcome[r, k] == expected


def test_power_grows_with_items_and_is_low_without_a_difference() -> None:
    pilot = _pilot(gap=0.3)
    small = pl.plan_study(pilot, items=20, replicates=200)
    large = pl.plan_study(pilot, items=400, replicates=200)
    assert large.power_of("s3", "s2") > small.power_of("s3", "s2")
    assert large.power_of("s3", "s0") > 0.95
    null = _pilot(gap=0.0, seed=3)
    same = pl.plan_study(pl.Pilot(null.systems, null.items, np.stack([null.scores[0]] * 4)), items=100,
                         replicates=200)
    assert max(p.power + p.reversed for p in same.pairs) == 0.0  # identical systems: no test is ever significant


def test_rank_ranges_cost_and_top_systems() -> None:
    pilot = _pilot(n_sys=5, gap=2.0)
    plan = pl.plan_study(pilot, items=200, raters=3, replicates=100)
    assert [s.system for s in plan.systems] == ["s4", "s3", "s2", "s1", "s0"]
    assert all(s.expected_rank_width == 1.0 and s.rank_low == s.rank_high == s.position for s in plan.systems)
    assert plan.cost.judgments == 200 * 5 * 3 and plan.cost.hours is None
    assert any("not known" in n for n in plan.notes)
    top = pl.plan_study(pl.Pilot(pilot.systems, pilot.items, pilot.scores, seconds_per_judgment=36.0), items=100,
                        systems=2, replicates=50)
    assert {s.system for s in top.systems} == {"s4", "s3"} and len(top.pairs) == 1
    assert top.cost.hours == pytest.approx(100 * 2 * 36 / 3600)
    with pytest.raises(pl.PlanningError, match="systems: the pilot has 5"):
        pl.plan_study(pilot, items=100, systems=6)
    with pytest.raises(pl.PlanningError, match="items: between"):
        pl.plan_study(pilot, items=5)


def test_items_for_power_is_the_smallest_size_reaching_the_target() -> None:
    pilot = _pilot(gap=0.3)
    found = pl.items_for_power(pilot, ("s1", "s2"), power=0.8, replicates=200, seed=4)
    assert found.pair == ("s2", "s1") and found.items is not None
    assert pl.plan_study(pilot, items=found.items, replicates=200, seed=4).power_of("s1", "s2") >= 0.8
    assert pl.plan_study(pilot, items=found.items - 1, replicates=200, seed=4).power_of("s1", "s2") < 0.8
    assert found.cost is not None and found.cost.judgments == found.items * 4
    with pytest.raises(pl.PlanningError, match="pair: no system 'x'"):
        pl.items_for_power(pilot, ("s1", "x"))
    null = pl.Pilot(pilot.systems[:2], pilot.items, np.stack([pilot.scores[0]] * 2))
    never = pl.items_for_power(null, ("s0", "s1"), replicates=20, max_items=200)
    assert never.items is None and "do not reach" in never.notes[-1]


def test_the_search_stops_at_twenty_pilots_and_names_a_system_the_rank_test_prefers() -> None:
    """A is a little better on the mean (B sometimes fails badly) but B is perfect more often: in the
    simulated studies where B's mean comes out ahead the rank test puts B first, and A never wins, so no
    number of items gives "A over B" and the note says who the test prefers."""
    n = 40
    b = np.where(np.arange(n) % 5 == 0, -2.6, 0.0)
    pilot = pl.Pilot(("A", "B"), tuple(str(i) for i in range(n)), np.stack([np.full(n, -0.5), b]))
    found = pl.items_for_power(pilot, ("A", "B"), replicates=50)
    assert found.pair == ("A", "B") and found.items is None
    assert any(f"{pl.SEARCH_PILOT_MULTIPLE * n} items (20 times the pilot's) do not reach" in note
               for note in found.notes)
    assert "puts B ahead" in found.notes[-1] and "mean favours A" in found.notes[-1]


def test_pilot_from_ratings_and_the_rater_model() -> None:
    rng = np.random.default_rng(5)
    rows = []
    for i in range(150):
        effect = rng.normal()
        for s, gap in (("a", 0.0), ("b", 0.6)):
            for r in ("r1", "r2"):
                rows.append({"system": s, "item": f"i{i}", "rater": r, "score": effect + gap + 2 * rng.normal()})
    rows.append({"system": "a", "item": "lonely", "rater": "r1", "score": 1.0})
    pilot = pl.pilot_from_ratings(pd.DataFrame(rows), seconds=[10, 30, 20, None])
    assert pilot.dropped_items == ("lonely",) and pilot.scores.shape == (2, 150)
    assert pilot.raters_per_cell == 2.0 and pilot.within_variance == pytest.approx(4.0, rel=0.25)
    assert pilot.seconds_per_judgment == 20.0
    one = pl.plan_study(pilot, items=60, raters=1, replicates=300)
    many = pl.plan_study(pilot, items=60, raters=8, replicates=300)
    assert many.power_of("a", "b") > one.power_of("a", "b") + 0.1
    assert any("rater noise modelled" in n for n in many.notes)
    single = pl.Pilot(pilot.systems, pilot.items, pilot.scores, raters_per_cell=1.0)
    assert any("cannot be separated" in n for n in pl.plan_study(single, items=50, raters=3, replicates=20).notes)


def test_pilot_from_the_mqm_fixture_has_replays_scores() -> None:
    text = Path("fixtures/wmt-mqm/mqm_ted_ende.subset.tsv").read_text(encoding="utf-8")
    data = parse_mqm_tsv(text, unclosed="close_at_end")
    pilot = pilot_from_mqm(data, seconds_per_judgment=45.0)
    complete, _ = from_mqm(data)
    assert pilot.items == complete.items and set(pilot.systems) == set(complete.systems)
    order = [pilot.systems.index(s) for s in complete.systems]
    assert np.allclose(pilot.scores[order], complete.human)
    assert pilot.raters_per_cell == 1.0 and pilot.within_variance is None and pilot.seconds_per_judgment == 45.0
