"""Anytime-valid confidence sequences for the mean paired difference of every system pair.

Method: the **betting confidence sequence** for the mean of bounded observations of Ian
Waudby-Smith and Aaditya Ramdas (2024), "Estimating means of bounded random variables by betting",
*Journal of the Royal Statistical Society, Series B* 86(1), 1–27 — the hedged capital process
(their Theorem 3) with predictable plug-in bets (their eq. (26)–(27), "PrPl-EB" bets, truncated at
``c / m`` and ``c / (1 − m)``).

For a pair (A, B) the observations are the differences ``d = score_A − score_B`` on the items both
systems were judged on, mapped to ``x = (d + R) / (2R)`` in [0, 1], where ``R`` is the width of the
score range (so ``d`` lies in [−R, R]). For a candidate mean ``m`` of ``x``:

    K⁺_t(m) = Π_{i≤t} (1 + λ⁺_i (x_i − m)),   K⁻_t(m) = Π_{i≤t} (1 − λ⁻_i (x_i − m)),
    λ̇_i = sqrt(2 log(2/α) / (σ̂²_{i−1} · i · log(1 + i))),  λ⁺_i = min(λ̇_i, c/m),  λ⁻_i = min(λ̇_i, c/(1−m)),
    μ̂_t = (1/2 + Σ_{i≤t} x_i) / (t + 1),  σ̂²_t = (1/4 + Σ_{i≤t} (x_i − μ̂_i)²) / (t + 1),

and the hedged capital ``K_t(m) = max(½ K⁺_t(m), ½ K⁻_t(m))``. The confidence sequence is
``C_t = {m : K_t(m) < 1/α}``: when the ``x_i`` have conditional mean ``m*`` given the past, ``K_t(m*)``
is a nonnegative martingale with initial value 1, and Ville's inequality gives
``P(∃t : m* ∉ C_t) ≤ α`` — valid at every t at once, so the data may be looked at after every
judgment and a study stopped whenever it likes.

Assumptions, stated:

* **bounded**: every score lies in a known range [low, high] fixed before the study (ESA/DA 0–100;
  MQM as minus the segment score capped at 25, Freitag et al. 2021, so [−25, 0]);
* **items in random order**: the items are handed out in a seeded random order, each pair seeing
  them in that order. The inference is about the mean difference over the population the items
  are drawn from (items i.i.d.; a random order of such items is again i.i.d.), not about the
  finite test set alone: for the finite set, the without-replacement version (Waudby-Smith & Ramdas,
  §6) would reach every decision by enumeration as the set runs out, which says nothing about the
  systems. Under the null of a replay (system labels shuffled within each item) the differences have
  conditional mean 0 given the past, so the guarantee holds exactly there;
* **family-wise**: each of the P pairs of the target set runs at level α / P (Bonferroni), so the
  chance of any false decision over all pairs and all times is at most α.

Decisions (sticky: the running intersection of a confidence sequence is a confidence sequence):
"A better than B" once every mean ≤ 0 is excluded, "B better than A" once every mean ≥ 0 is
excluded, "indistinguishable" once every mean with |mean| ≥ δ is excluded (δ, the minimum effect,
given or not), else open. K⁺ falls and K⁻ rises with m (the truncations keep that), so each test
needs the capital at one point only: 0 and ±δ; a grid of other points gives the interval shown.

Pure numpy; no Django (the statistics core's import contract). The live study feeds the same
:class:`PairwiseSequences` one item's judgments at a time.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

#: Truncation of the bets (Waudby-Smith & Ramdas recommend 1/2 or 3/4; 3/4 lets the bets grow where the differences are small against their bound).
BET_TRUNCATION = 0.75
#: Points of the grid on which the interval shown is computed (the decisions use exact points).
GRID_POINTS = 201

OPEN, FIRST_BETTER, SECOND_BETTER, INDISTINGUISHABLE = "open", "first better", "second better", "indistinguishable"


@dataclass(frozen=True)
class SequentialConfig:
    """The level, the known score range and the minimum effect of a study's confidence sequences."""

    low: float
    high: float
    alpha: float = 0.05
    #: Minimum effect δ on the score scale: a pair whose interval lies inside (−δ, δ) is indistinguishable.
    min_effect: float | None = None
    #: Compare only the sign of each paired difference (a preference: +1, 0 or −1, observed as (1 + sign)/2 in
    #: [0, 1]); the scores may then lie anywhere, and the range must be (0, 1), so that a pair's mean difference
    #: and interval are P(A preferred) − P(B preferred), in [−1, 1].
    preference: bool = False

    def __post_init__(self) -> None:
        if not math.isfinite(self.low) or not math.isfinite(self.high) or self.high <= self.low:
            raise ValueError(f"score range: low {self.low} must be below high {self.high}")
        if self.preference and (self.low, self.high) != (0.0, 1.0):
            raise ValueError("a preference's range is (0, 1)")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha: {self.alpha} is not between 0 and 1")
        if self.min_effect is not None and not 0 < self.min_effect < self.high - self.low:
            raise ValueError(f"min_effect: {self.min_effect} must be above 0 and below the range width "
                             f"{self.high - self.low}")

    @property
    def width(self) -> float:
        return self.high - self.low


def all_pairs(n_systems: int) -> list[tuple[int, int]]:
    return list(combinations(range(n_systems), 2))


class PairwiseSequences:
    """One betting confidence sequence per system pair, updated one item's judgments at a time.

    The state is a deterministic function of the judgments in the order they were fed, so a server can
    rebuild it from its stored judgments. ``pairs`` is the target set (default: all pairs); its size is
    the Bonferroni divisor.
    """

    def __init__(self, n_systems: int, config: SequentialConfig,
                 pairs: Sequence[tuple[int, int]] | None = None) -> None:
        self.n_systems = n_systems
        self.config = config
        self.pairs = np.array(pairs if pairs is not None else all_pairs(n_systems), dtype=int).reshape(-1, 2)
        if len(self.pairs) == 0:
            raise ValueError("no pairs to compare")
        if (self.pairs < 0).any() or (self.pairs >= n_systems).any() or (self.pairs[:, 0] == self.pairs[:, 1]).any():
            raise ValueError("pairs must name two different systems among the study's")
        n = len(self.pairs)
        self.pair_alpha = config.alpha / n
        self.log_threshold = math.log(1.0 / self.pair_alpha)
        self._log_bet_scale = 2.0 * math.log(2.0 / self.pair_alpha)
        # Exact test points (x scale): 0 difference, then −δ and +δ when a minimum effect is given.
        points = [0.5]
        if config.min_effect is not None:
            half = config.min_effect / (2 * config.width)
            points += [0.5 - half, 0.5 + half]
        inner = np.linspace(0.0, 1.0, GRID_POINTS)[1:-1]
        self.m = np.concatenate([np.array(points), inner])
        # The bets' truncations at each point (fixed: computed once, the same values every observation uses).
        self._cap_plus = (BET_TRUNCATION / self.m)[None, :]
        self._cap_minus = (BET_TRUNCATION / (1.0 - self.m))[None, :]
        self.count = np.zeros(n, dtype=int)
        self.sum_x = np.zeros(n)
        self.sum_sq = np.zeros(n)
        self.log_k_plus = np.zeros((n, len(self.m)))
        self.log_k_minus = np.zeros((n, len(self.m)))
        self.decision = np.array([OPEN] * n, dtype=object)
        #: Observations of each pair when its decision was reached (−1 while open).
        self.decided_at = np.full(n, -1, dtype=int)

    def observe(self, scores: np.ndarray, new: np.ndarray | None = None) -> np.ndarray:
        """Feed one item's scores (length n_systems, NaN where a system was not judged on the item).

        Every pair with both scores gets one observation; with ``new`` (booleans by system), only the
        pairs with at least one newly judged system do (the others had this item already). Returns
        the indices of the pairs decided now.
        """
        scores = np.asarray(scores, dtype=float)
        if scores.shape != (self.n_systems,):
            raise ValueError(f"scores have shape {scores.shape}, expected ({self.n_systems},)")
        finite = np.isfinite(scores)
        if not self.config.preference and ((scores[finite] < self.config.low).any()
                                           or (scores[finite] > self.config.high).any()):
            raise ValueError(f"a score lies outside the stated range [{self.config.low}, {self.config.high}]")
        a, b = self.pairs[:, 0], self.pairs[:, 1]
        complete = finite[a] & finite[b]
        if new is not None:
            complete &= np.asarray(new, dtype=bool)[a] | np.asarray(new, dtype=bool)[b]
        rows = np.flatnonzero(complete)
        if len(rows) == 0:
            return rows
        # Every pair observed (an item holding every system): whole arrays instead of gathered rows, the same
        # values at less cost.
        at: slice | np.ndarray = slice(None) if len(rows) == len(self.pairs) else rows
        if self.config.preference:
            x = (1.0 + np.sign(scores[a[at]] - scores[b[at]])) / 2
        else:
            x = (scores[a[at]] - scores[b[at]] + self.config.width) / (2 * self.config.width)
        t = self.count[at] + 1
        # The bet uses the variance estimate before this observation (predictable).
        prev_var = (0.25 + self.sum_sq[at]) / t
        bet = np.sqrt(self._log_bet_scale / (prev_var * t * np.log1p(t)))
        bet_plus = np.minimum(bet[:, None], self._cap_plus)
        bet_minus = np.minimum(bet[:, None], self._cap_minus)
        diff = x[:, None] - self.m[None, :]
        self.log_k_plus[at] += np.log1p(bet_plus * diff)
        self.log_k_minus[at] += np.log1p(-bet_minus * diff)
        self.count[at] = t
        self.sum_x[at] += x
        mean_now = (0.5 + self.sum_x[at]) / (t + 1)
        self.sum_sq[at] += (x - mean_now) ** 2
        return self._decide(rows)

    def _excluded_low(self, rows: np.ndarray, col: int) -> np.ndarray:
        """Every mean at or below point ``col`` is excluded (½K⁺ ≥ 1/α there, and K⁺ falls with m)."""
        return self.log_k_plus[rows, col] - math.log(2) >= self.log_threshold

    def _excluded_high(self, rows: np.ndarray, col: int) -> np.ndarray:
        return self.log_k_minus[rows, col] - math.log(2) >= self.log_threshold

    def _decide(self, rows: np.ndarray) -> np.ndarray:
        rows = rows[self.decision[rows] == OPEN]
        if len(rows) == 0:
            return rows
        first = self._excluded_low(rows, 0)
        second = self._excluded_high(rows, 0) & ~first
        same = np.zeros(len(rows), dtype=bool)
        if self.config.min_effect is not None:
            same = self._excluded_low(rows, 1) & self._excluded_high(rows, 2) & ~first & ~second
        self.decision[rows[first]] = FIRST_BETTER
        self.decision[rows[second]] = SECOND_BETTER
        self.decision[rows[same]] = INDISTINGUISHABLE
        new = rows[first | second | same]
        self.decided_at[new] = self.count[new]
        return new

    def open_pairs(self) -> np.ndarray:
        return np.flatnonzero(self.decision == OPEN)

    def interval(self, pair: int) -> tuple[float, float]:
        """The current confidence interval of the pair's mean difference (score scale), to the grid's step.

        Outward-rounded: the lowest and highest grid points not excluded, widened by one step.
        """
        log_k = np.maximum(self.log_k_plus[pair], self.log_k_minus[pair]) - math.log(2)
        inside = log_k < self.log_threshold
        grid = self.m
        step = 1.0 / (GRID_POINTS - 1)
        if not inside.any():
            lo = hi = float(grid[np.argmin(log_k)])
        else:
            lo, hi = float(grid[inside].min()), float(grid[inside].max())
        width = self.config.width
        return (max(-width, (lo - step) * 2 * width - width), min(width, (hi + step) * 2 * width - width))

    def mean_difference(self, pair: int) -> float:
        if self.count[pair] == 0:
            return math.nan
        return float(self.sum_x[pair] / self.count[pair] * 2 * self.config.width - self.config.width)
