"""Planning a human evaluation from a pilot: power per system pair, rank-range widths, judgments and hours.

The question a plan answers: *if the full study judges ``M`` items, each by ``R`` raters per system, will
the product's report separate systems A and B?* "Separate" means what the report's ranking
(:mod:`evaluators.stats.wmt_ranking`) does: systems ordered by their mean score, and the one-sided
Mann–Whitney U test of the higher system's per-item scores against the lower's, p < 0.05 (``P_LEVEL``),
counts as a win. The **power** of a pair is the share of simulated studies in which the system that is
better in the pilot wins over the other (a win in the other direction is counted apart, ``reversed``).

**The model** (a nonparametric bootstrap of the pilot, Efron & Tibshirani 1993, ch. 6; used for power by
e.g. Walters & Campbell 2005): a simulated study of ``M`` items draws ``M`` of the pilot's items with
replacement and keeps every system's score on each (so the systems' scores stay paired by item, as in a
real study where every system translates the same items). Each simulated study then runs the ranking's
test on every pair; ``replicates`` studies give the power, and the product's rank range of every system
(``losses + 1`` to ``n − wins``) whose mean width over the studies is the **expected rank-range width**
(1 = the report places the system at one rank). The 2.5 and 97.5 percentiles of a system's position in
the simulated orders are its **bootstrap rank interval**.

**Raters per item.** A pilot cell (system, item) is the mean of its ``R0`` raters' scores. When the plan
asks for ``R`` ≠ ``R0`` raters and some pilot cells have two ratings or more, the rater noise is
modelled (a parametric adjustment of the bootstrap): with ``σ²_w`` the pooled within-cell variance of the
ratings and ``σ²_e`` the variance of the cells' residuals from an additive system + item fit,
``σ²_int = max(0, σ²_e − σ²_w / R0)`` is the system × item interaction, and every residual is scaled by
``sqrt((σ²_int + σ²_w / R) / (σ²_int + σ²_w / R0))`` before the resampling: more raters shrink the cells
towards the additive fit, fewer spread them. Without replicated cells (one rating per cell, as in Google's
MQM releases) the noise cannot be separated: the plan keeps the pilot's design and says so in ``notes``.

**Cost.** judgments = ``M × systems × R`` (one judgment = one rater's score of one system's output of one
item); annotator-hours = judgments × the pilot's median seconds per judgment / 3600 (unknown when the
pilot has no times).

**The inverse**: the smallest ``M`` whose power for a pair reaches a target (0.8), by doubling ``M`` from
10 until the target is reached (or ``MAX_ITEMS``) and then bisecting, with the same random draws at every
``M`` (common random numbers, so the power is monotone in practice and the search is stable).

The test is computed here in closed form, vectorised over pairs and replicates: the U statistic from
average ranks, its normal approximation with the tie correction and the continuity correction —
``scipy.stats.mannwhitneyu(..., method="asymptotic")``, which is what the ranking's default ``"auto"``
uses whenever a sample has more than 8 values or ties; plans therefore start at ``MIN_ITEMS`` = 10 items.

Pure numpy/scipy (the statistics core's import contract).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import ndtr
from scipy.stats import rankdata

from evaluators.stats.replay import CompleteData
from evaluators.stats.wmt_ranking import P_LEVEL

MIN_ITEMS = 10
MAX_ITEMS = 20_000  # replicates × items draws are int32: 80 MB at 1,000 replicates
DEFAULT_REPLICATES = 1000
#: The item search of :func:`items_for_power` stops at this multiple of the pilot's items: a plan many times
#: the pilot's size extrapolates its differences too far to be worth the memory (replicates × items draws).
SEARCH_PILOT_MULTIPLE = 20
DEFAULT_POWER = 0.8
#: Cells (pairs × replicates × 2M values) ranked at once: bounds the memory of a plan to ~100 MB.
_CHUNK_VALUES = 4_000_000


class PlanningError(ValueError):
    """The pilot or the plan cannot be used (the message names what is wrong)."""


@dataclass(frozen=True)
class Pilot:
    """A pilot's scores: ``scores[s, i]`` the mean over raters of system ``s`` on item ``i`` (higher is better)."""

    systems: tuple[str, ...]
    items: tuple[str, ...]
    scores: np.ndarray
    #: Mean number of ratings per cell, when the pilot has per-rater data.
    raters_per_cell: float | None = None
    #: Pooled within-cell variance of the ratings (cells with two ratings or more), when there are any.
    within_variance: float | None = None
    #: Median seconds per judgment (one rater's score of one system on one item), when the pilot has times.
    seconds_per_judgment: float | None = None
    dropped_items: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.scores.shape != (len(self.systems), len(self.items)):
            raise PlanningError(f"scores have shape {self.scores.shape}, expected "
                                f"{(len(self.systems), len(self.items))} (systems × items)")
        if len(self.systems) < 2:
            raise PlanningError("a pilot needs at least 2 systems")
        if len(self.items) < 2:
            raise PlanningError("a pilot needs at least 2 items scored for every system")
        if not np.isfinite(self.scores).all():
            raise PlanningError("a pilot's scores must all be numbers")

    @classmethod
    def from_complete(cls, data: CompleteData, *, seconds_per_judgment: float | None = None) -> Pilot:
        """A complete data set (no per-rater data: the rater noise is not modelled)."""
        return cls(data.systems, data.items, np.asarray(data.human, dtype=float),
                   seconds_per_judgment=seconds_per_judgment, dropped_items=data.dropped_items)

    def subset(self, items: Sequence[int]) -> Pilot:
        """The pilot on some of its items (the rater figures kept)."""
        idx = list(items)
        return Pilot(self.systems, tuple(self.items[i] for i in idx), self.scores[:, idx], self.raters_per_cell,
                     self.within_variance, self.seconds_per_judgment)

    def means(self) -> np.ndarray:
        return self.scores.mean(axis=1)


def pilot_from_ratings(ratings: pd.DataFrame, *, seconds: Sequence[float] | None = None) -> Pilot:
    """A pilot from one row per rating: columns ``system``, ``item``, ``rater``, ``score`` (higher is better).

    Items some system lacks a rating on are dropped (``dropped_items``). ``seconds``: the pilot's seconds
    per judgment, one value per judgment (their median is kept).
    """
    missing = [c for c in ("system", "item", "rater", "score") if c not in ratings.columns]
    if missing:
        raise PlanningError(f"ratings lack column(s) {', '.join(missing)}")
    frame = ratings[["system", "item", "rater", "score"]].copy()
    frame["score"] = pd.to_numeric(frame["score"], errors="coerce")
    frame = frame.dropna(subset=["score"])
    frame[["system", "item"]] = frame[["system", "item"]].astype(str)
    if frame.empty:
        raise PlanningError("the pilot has no scores")
    cells = frame.groupby(["system", "item"], sort=False)["score"]
    table = cells.mean().unstack("item")
    counts = cells.size().unstack("item")
    keep = table.notna().all(axis=0)
    dropped = tuple(str(i) for i in table.columns[~keep])
    table, counts = table.loc[:, keep], counts.loc[:, keep]
    variances = cells.var(ddof=1)
    sizes = cells.size()
    replicated = sizes >= 2
    within = None
    if replicated.any():
        df = (sizes[replicated] - 1).to_numpy(dtype=float)
        within = float(np.sum(variances[replicated].to_numpy() * df) / df.sum())
    median_seconds = None
    if seconds is not None:
        values = np.asarray([s for s in seconds if s is not None and np.isfinite(s) and s > 0], dtype=float)
        median_seconds = float(np.median(values)) if len(values) else None
    return Pilot(tuple(str(s) for s in table.index), tuple(str(i) for i in table.columns),
                 table.to_numpy(dtype=float), float(counts.to_numpy().mean()) if counts.size else None,
                 within, median_seconds, dropped)


# ---------------------------------------------------------------- the test, vectorised
def _mwu_both(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One-sided asymptotic Mann–Whitney p-values along the last axis: (x greater than y, y greater than x).

    As ``scipy.stats.mannwhitneyu(x, y, alternative=..., method="asymptotic")``: average ranks, the tie
    correction of the variance and a continuity correction of 0.5.
    """
    n1, n2 = x.shape[-1], y.shape[-1]
    both = np.concatenate([x, y], axis=-1)
    low = rankdata(both, method="min", axis=-1)
    high = rankdata(both, method="max", axis=-1)
    ranks = (low + high) / 2.0
    u1 = ranks[..., :n1].sum(axis=-1) - n1 * (n1 + 1) / 2.0
    u2 = n1 * n2 - u1
    n = n1 + n2
    tie_size = high - low + 1.0  # every value's tie group size; Σ over values of (t² − 1) = Σ over groups (t³ − t)
    ties = (tie_size * tie_size - 1.0).sum(axis=-1)
    sd = np.sqrt(n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1))))
    mu = n1 * n2 / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        z1 = np.where(sd > 0, (u1 - mu - 0.5) / sd, -np.inf)
        z2 = np.where(sd > 0, (u2 - mu - 0.5) / sd, -np.inf)
    return 1.0 - ndtr(z1), 1.0 - ndtr(z2)


def _adjusted_scores(pilot: Pilot, raters: int | None) -> tuple[np.ndarray, list[str]]:
    """The pilot's cells with the residuals scaled for ``raters`` raters per cell (the module's model)."""
    notes: list[str] = []
    if raters is None or pilot.raters_per_cell is None or math.isclose(raters, pilot.raters_per_cell):
        if raters is not None and raters != 1 and pilot.raters_per_cell is None:
            notes.append(f"the pilot has no per-rater data: the power is for the pilot's own raters per item, "
                         f"not modelled for {raters}")
        return pilot.scores, notes
    if pilot.within_variance is None:
        notes.append(f"the pilot has {pilot.raters_per_cell:g} rating(s) per cell and no cell rated twice: rater "
                     f"noise cannot be separated, so the power is for the pilot's raters per item, not for {raters}")
        return pilot.scores, notes
    s = pilot.scores
    fit = s.mean(axis=1, keepdims=True) + s.mean(axis=0, keepdims=True) - s.mean()
    residual = s - fit
    dof = max(1, (s.shape[0] - 1) * (s.shape[1] - 1))
    var_e = float((residual ** 2).sum() / dof)
    r0 = pilot.raters_per_cell
    var_int = max(0.0, var_e - pilot.within_variance / r0)
    before = var_int + pilot.within_variance / r0
    after = var_int + pilot.within_variance / raters
    factor = math.sqrt(after / before) if before > 0 else 1.0
    notes.append(f"rater noise modelled: within-cell variance {pilot.within_variance:.4g}, interaction "
                 f"{var_int:.4g}; residuals scaled by {factor:.3f} for {raters} rater(s) instead of {r0:g}")
    return fit + factor * residual, notes


def _draws(seed: int, replicates: int, n_items: int, items: int) -> np.ndarray:
    """The pilot items of each simulated study (replicates × items).

    One generator per replicate, seeded ``(seed, replicate)``: the draws of ``m`` items are the first ``m``
    of the draws of more, so studies of different sizes share their items (common random numbers).
    """
    out = np.empty((replicates, items), dtype=np.int32)
    for r in range(replicates):
        out[r] = np.random.default_rng([seed, r]).integers(0, n_items, size=items)
    return out


def _outcome(p_x: np.ndarray, p_y: np.ndarray, mean_x: np.ndarray, mean_y: np.ndarray, a_first: np.ndarray,
             p_level: float) -> np.ndarray:
    """+1 the first system wins, −1 the second wins, 0 neither: the ranking tests the higher mean against the
    lower (equal means: the first by name, here by the pair's order)."""
    x_first = (mean_x > mean_y) | ((mean_x == mean_y) & a_first)
    return np.where(x_first, np.where(p_x < p_level, 1, 0), np.where(p_y < p_level, -1, 0)).astype(np.int8)


def _mwu_from_counts(cx: np.ndarray, cy: np.ndarray, n1: int, n2: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_mwu_both` from the counts of each distinct value (last axis, in increasing order of value)."""
    below = np.cumsum(cy, axis=-1) - cy
    u1 = (cx * (below + 0.5 * cy)).sum(axis=-1)
    u2 = n1 * n2 - u1
    t = (cx + cy).astype(float)
    ties = (t * t * t - t).sum(axis=-1)
    n = n1 + n2
    sd = np.sqrt(n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1))))
    mu = n1 * n2 / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        z1 = np.where(sd > 0, (u1 - mu - 0.5) / sd, -np.inf)
        z2 = np.where(sd > 0, (u2 - mu - 0.5) / sd, -np.inf)
    return 1.0 - ndtr(z1), 1.0 - ndtr(z2)


def _simulate(scores: np.ndarray, draws: np.ndarray, pairs: Sequence[tuple[int, int]],
              p_level: float) -> np.ndarray:
    """Per replicate and pair: +1 the first system wins, −1 the second wins, 0 neither (replicates × pairs).

    The test only needs the order of the values, so each pilot cell is replaced by the rank of its value
    among the pilot's distinct values; with few distinct values (MQM points) the U statistic and the tie
    term come from per-system counts of each value, otherwise from ranking every pair's samples.
    """
    replicates, items = draws.shape
    n_sys = scores.shape[0]
    values, codes = np.unique(scores, return_inverse=True)
    codes = codes.reshape(scores.shape)
    k = len(values)
    out = np.zeros((replicates, len(pairs)), dtype=np.int8)
    a_idx = np.array([a for a, _ in pairs])
    b_idx = np.array([b for _, b in pairs])
    a_first = (a_idx < b_idx)[:, None]
    counting = k <= 2 * items
    width = n_sys * k if counting else len(pairs) * 2 * items
    per_chunk = max(1, _CHUNK_VALUES // max(1, width))
    for start in range(0, replicates, per_chunk):
        chunk = draws[start:start + per_chunk]
        reps = chunk.shape[0]
        means = scores[:, chunk].mean(axis=-1)  # systems × reps
        sample = codes[:, chunk]  # systems × reps × items
        if counting:
            flat = (np.arange(n_sys * reps).reshape(n_sys, reps, 1) * k + sample).ravel()
            counts = np.bincount(flat, minlength=n_sys * reps * k).reshape(n_sys, reps, k)
            p_x, p_y = _mwu_from_counts(counts[a_idx], counts[b_idx], items, items)
        else:
            p_x, p_y = _mwu_both(sample[a_idx].astype(float), sample[b_idx].astype(float))
        result = _outcome(p_x, p_y, means[a_idx], means[b_idx], a_first, p_level)
        out[start:start + reps] = result.T
    return out


@dataclass(frozen=True)
class PairPower:
    better: str
    worse: str
    #: The pilot's difference of mean scores (better − worse).
    delta: float
    #: Share of simulated studies whose report has ``better`` win over ``worse``.
    power: float
    #: Share in which ``worse`` wins over ``better`` (a reversed conclusion).
    reversed: float


@dataclass(frozen=True)
class SystemPlan:
    system: str
    score: float
    #: The pilot's position (1 = best mean score).
    position: int
    expected_rank_width: float
    rank_low: int
    rank_high: int


@dataclass(frozen=True)
class Cost:
    judgments: int
    seconds_per_judgment: float | None
    hours: float | None


def cost(items: int, systems: int, raters: int, seconds_per_judgment: float | None) -> Cost:
    judgments = items * systems * raters
    hours = None if seconds_per_judgment is None else judgments * seconds_per_judgment / 3600.0
    return Cost(judgments, seconds_per_judgment, hours)


@dataclass(frozen=True)
class Plan:
    items: int
    raters: int
    systems: list[SystemPlan]
    pairs: list[PairPower]
    cost: Cost
    replicates: int
    seed: int
    p_level: float
    notes: list[str] = field(default_factory=list)

    def power_of(self, a: str, b: str) -> float:
        for p in self.pairs:
            if {p.better, p.worse} == {a, b}:
                return p.power
        raise KeyError(f"no pair {a}, {b}")

    def as_dict(self) -> dict[str, Any]:
        return {
            "items": self.items, "raters_per_item": self.raters, "replicates": self.replicates, "seed": self.seed,
            "p_level": self.p_level,
            "test": "one-sided Mann-Whitney U of the higher mean's per-item scores against the lower's "
                    "(the WMT ranking's head-to-head)",
            "judgments": self.cost.judgments, "seconds_per_judgment": self.cost.seconds_per_judgment,
            "annotator_hours": self.cost.hours,
            "systems": [vars(s) for s in self.systems], "pairs": [vars(p) for p in self.pairs], "notes": self.notes,
        }


def select_systems(pilot: Pilot, systems: int | None) -> Pilot:
    """The pilot's top ``systems`` systems by mean score (all when None)."""
    n = len(pilot.systems)
    if systems is None or systems == n:
        return pilot
    if systems < 2:
        raise PlanningError("systems: at least 2")
    if systems > n:
        raise PlanningError(f"systems: the pilot has {n} systems; a plan cannot predict systems it has not seen")
    means = pilot.means()
    order = sorted(range(n), key=lambda s: (-means[s], pilot.systems[s]))[:systems]
    keep = sorted(order)
    return Pilot(tuple(pilot.systems[s] for s in keep), pilot.items, pilot.scores[keep], pilot.raters_per_cell,
                 pilot.within_variance, pilot.seconds_per_judgment, pilot.dropped_items)


def _check(items: int, raters: int, replicates: int) -> None:
    if not MIN_ITEMS <= items <= MAX_ITEMS:
        raise PlanningError(f"items: between {MIN_ITEMS} and {MAX_ITEMS}")
    if not 1 <= raters <= 100:
        raise PlanningError("raters per item: between 1 and 100")
    if not 10 <= replicates <= 100_000:
        raise PlanningError("replicates: between 10 and 100000")


def _ordered_pairs(pilot: Pilot) -> list[tuple[int, int]]:
    """Every pair, the pilot's better system first (ties: by name, as the ranking)."""
    means = pilot.means()
    order = sorted(range(len(pilot.systems)), key=lambda s: (-means[s], pilot.systems[s]))
    return [(order[i], order[j]) for i in range(len(order)) for j in range(i + 1, len(order))]


def plan_study(pilot: Pilot, *, items: int, raters: int = 1, systems: int | None = None,
               replicates: int = DEFAULT_REPLICATES, seed: int = 0, p_level: float = P_LEVEL) -> Plan:
    """Power of every pair, expected rank-range widths and cost of a study of ``items`` items (module docstring)."""
    _check(items, raters, replicates)
    pilot = select_systems(pilot, systems)
    scores, notes = _adjusted_scores(pilot, raters)
    pairs = _ordered_pairs(pilot)
    draws = _draws(seed, replicates, len(pilot.items), items)
    outcome = _simulate(scores, draws, pairs, p_level)
    n = len(pilot.systems)
    means = pilot.means()
    wins = np.zeros((replicates, n))
    losses = np.zeros((replicates, n))
    for k, (a, b) in enumerate(pairs):
        wins[:, a] += outcome[:, k] == 1
        losses[:, b] += outcome[:, k] == 1
        wins[:, b] += outcome[:, k] == -1
        losses[:, a] += outcome[:, k] == -1
    width = n - wins - losses  # rank range losses + 1 … n − wins
    sample_means = np.stack([scores[:, d].mean(axis=1) for d in draws])  # replicates × systems
    positions = np.argsort(np.argsort(-sample_means, axis=1, kind="stable"), axis=1) + 1
    pilot_position = {s: k + 1 for k, s in enumerate(sorted(range(n), key=lambda s: (-means[s], pilot.systems[s])))}
    system_rows = [SystemPlan(system=pilot.systems[s], score=float(means[s]), position=pilot_position[s],
                              expected_rank_width=float(width[:, s].mean()),
                              rank_low=int(np.floor(np.percentile(positions[:, s], 2.5))),
                              rank_high=int(np.ceil(np.percentile(positions[:, s], 97.5))))
                   for s in range(n)]
    system_rows.sort(key=lambda r: r.position)
    pair_rows = [PairPower(better=pilot.systems[a], worse=pilot.systems[b], delta=float(means[a] - means[b]),
                           power=float(np.mean(outcome[:, k] == 1)), reversed=float(np.mean(outcome[:, k] == -1)))
                 for k, (a, b) in enumerate(pairs)]
    if pilot.seconds_per_judgment is None:
        notes.append("the pilot has no times: annotator-hours are not known")
    return Plan(items=items, raters=raters, systems=system_rows, pairs=pair_rows,
                cost=cost(items, n, raters, pilot.seconds_per_judgment), replicates=replicates, seed=seed,
                p_level=p_level, notes=notes)


@dataclass(frozen=True)
class ItemsForPower:
    pair: tuple[str, str]
    target: float
    #: The smallest number of items found to reach the target; None when ``MAX_ITEMS`` does not.
    items: int | None
    power: float
    cost: Cost | None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"pair": list(self.pair), "target_power": self.target, "items": self.items, "power": self.power,
                "judgments": self.cost.judgments if self.cost else None,
                "annotator_hours": self.cost.hours if self.cost else None, "notes": self.notes}


def items_for_power(pilot: Pilot, pair: tuple[str, str], *, power: float = DEFAULT_POWER, raters: int = 1,
                    systems: int | None = None, replicates: int = DEFAULT_REPLICATES, seed: int = 0,
                    p_level: float = P_LEVEL, max_items: int | None = None) -> ItemsForPower:
    """The smallest number of items whose power for ``pair`` (in the pilot's direction) reaches ``power``.

    The search stops at ``max_items`` (default: ``SEARCH_PILOT_MULTIPLE`` times the pilot's items, at most
    ``MAX_ITEMS``); the note then says so, and names the other system when the report's test tends to put it
    ahead (a rank test can disagree with the means when one system has more perfect scores).
    """
    if not 0 < power < 1:
        raise PlanningError("power: between 0 and 1 (e.g. 0.8)")
    _check(MIN_ITEMS, raters, replicates)
    pilot = select_systems(pilot, systems)
    unknown = [name for name in pair if name not in pilot.systems]
    if unknown:
        raise PlanningError(f"pair: no system {', '.join(map(repr, unknown))} in the plan; systems: "
                            f"{', '.join(pilot.systems)}")
    if pair[0] == pair[1]:
        raise PlanningError("pair: two different systems")
    scores, notes = _adjusted_scores(pilot, raters)
    a, b = pilot.systems.index(pair[0]), pilot.systems.index(pair[1])
    means = pilot.means()
    if (means[b], pilot.systems[a]) > (means[a], pilot.systems[b]):
        a, b = b, a
    names = (pilot.systems[a], pilot.systems[b])
    two = scores[[a, b]]

    if max_items is None:
        max_items = min(MAX_ITEMS, SEARCH_PILOT_MULTIPLE * len(pilot.items))
    reversed_share = 0.0

    def power_at(m: int) -> float:
        nonlocal reversed_share
        draws = _draws(seed, replicates, len(pilot.items), m)
        outcome = _simulate(two, draws, [(0, 1)], p_level)[:, 0]
        reversed_share = float(np.mean(outcome == -1))
        return float(np.mean(outcome == 1))

    n_sys = len(pilot.systems)
    low, high = MIN_ITEMS, MIN_ITEMS
    achieved = power_at(high)
    if achieved >= power:
        return ItemsForPower(names, power, high, achieved, cost(high, n_sys, raters, pilot.seconds_per_judgment), notes)
    while achieved < power:
        if high >= max_items:
            notes.append(f"{max_items} items ({max_items // max(1, len(pilot.items))} times the pilot's) do not "
                         f"reach the power (power {achieved:.2f})")
            if reversed_share > achieved:
                notes.append(f"the report's test puts {names[1]} ahead in {reversed_share:.0%} of the simulated "
                             f"studies although the pilot's mean favours {names[0]}")
            return ItemsForPower(names, power, None, achieved, None, notes)
        low, high = high, min(max_items, high * 2)
        achieved = power_at(high)
    while high - low > 1:
        middle = (low + high) // 2
        value = power_at(middle)
        if value >= power:
            high, achieved = middle, value
        else:
            low = middle
    return ItemsForPower(names, power, high, achieved, cost(high, n_sys, raters, pilot.seconds_per_judgment), notes)


def planning_report(pilot: Pilot, *, items: int | None, raters: int = 1, systems: int | None = None,
                    pair: tuple[str, str] | None = None, power: float = DEFAULT_POWER,
                    replicates: int = DEFAULT_REPLICATES, seed: int = 0) -> dict[str, Any]:
    """What ``plan_study`` and the planning page show: the pilot, the plan of ``items`` items (when given) and
    the items a pair needs for ``power`` (when ``pair`` is given)."""
    if items is None and pair is None:
        raise PlanningError("items: give the planned number of items, or a pair to size the study for")
    chosen = select_systems(pilot, systems)
    out: dict[str, Any] = {
        "pilot": {"systems": len(pilot.systems), "items": len(pilot.items), "dropped_items": len(pilot.dropped_items),
                  "raters_per_cell": pilot.raters_per_cell, "within_variance": pilot.within_variance,
                  "seconds_per_judgment": pilot.seconds_per_judgment},
        "systems_planned": list(chosen.systems), "plan": None, "for_power": None,
    }
    if items is not None:
        out["plan"] = plan_study(pilot, items=items, raters=raters, systems=systems, replicates=replicates,
                                 seed=seed).as_dict()
    if pair is not None:
        out["for_power"] = items_for_power(pilot, pair, power=power, raters=raters, systems=systems,
                                           replicates=replicates, seed=seed).as_dict()
    return out
