"""Replaying a complete human evaluation: what would a study on fewer items have concluded?

A *complete* data set has a human score for every (system, item) pair. A replay takes the items in
the order a selection method gives (most useful first), keeps the first ``k`` of them for each
budget, and compares the human system ranking of that subset with the ranking of all the data.

The comparisons are those of Zouhar, Cui & Sachan (TACL 2025), *How to Select Datapoints for
Efficient Human Evaluation of NLG Models?*, as their package ``subset2evaluate`` (1.0.27) computes
them (``evaluate.py``):

- **soft pairwise accuracy** (SPA; Thompson et al., WMT 2024): for every system pair, the p-value of
  "system i is better than system j" from a paired permutation test on the subset and on all the
  data; SPA = 1 − the mean absolute difference of the two p-values over the pairs
  (``eval_subset_spa``);
- **top accuracy**: the percentile rank, in the full data's ranking, of the subset's best system
  (1 = it is the full data's best; ``eval_subset_top``);
- **parity**: for each budget, the smallest number of items (from 5 up) at which a method's SPA
  reaches a target (random selection's SPA at that budget), as a share of the budget, averaged over
  the budgets (``eval_spa_par``); below 1 the method needs fewer items than random.

Also reported: pairwise accuracy (the share of system pairs ordered as in the full data), Kendall's
τ-b between the two orders of system means, and the judgments used (items × systems).

Pure numpy; no Django (the statistics core's import contract).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

from evaluators.stats.meta import permutation_p_values

#: The budgets of a replay: 10%, 20%, …, 90% of the items (subset2evaluate's own ``utils.PROPS`` are 5%, …, 50%).
DEFAULT_BUDGETS: tuple[float, ...] = tuple(round(0.1 * k, 1) for k in range(1, 10))
#: The permutations and the seed of the paired permutation test behind SPA (subset2evaluate's defaults).
PERMUTATIONS = 1000
PERMUTATION_SEED = 0
#: Parity starts at 5 items, as subset2evaluate's ``eval_spa_par`` does.
PARITY_START = 5


@dataclass(frozen=True)
class CompleteData:
    """Human scores for every (system, item): ``human[s, i]``, higher is better."""

    systems: tuple[str, ...]
    items: tuple[str, ...]
    human: np.ndarray
    #: Automatic metrics' scores, same shape, higher is better (the selection methods read them).
    metrics: dict[str, np.ndarray] = field(default_factory=dict)
    #: Items left out because some system had no human score for them.
    dropped_items: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        shape = (len(self.systems), len(self.items))
        if self.human.shape != shape:
            raise ValueError(f"human scores have shape {self.human.shape}, expected {shape} (systems × items)")
        for name, values in self.metrics.items():
            if values.shape != shape:
                raise ValueError(f"metric {name!r} has shape {values.shape}, expected {shape}")
        if len(self.systems) < 2:
            raise ValueError("a replay needs at least 2 systems")
        if len(self.items) < PARITY_START:
            raise ValueError(f"a replay needs at least {PARITY_START} items with a human score for every system")

    def shuffled_systems(self, rng: np.random.Generator) -> CompleteData:
        """The null data: system labels permuted independently within each item (no true differences)."""
        human = self.human.copy()
        for i in range(human.shape[1]):
            human[:, i] = human[rng.permutation(human.shape[0]), i]
        return CompleteData(self.systems, self.items, human, self.metrics, self.dropped_items)


def pairwise_p_values(scores: np.ndarray, *, permutations: int = PERMUTATIONS,
                      seed: int = PERMUTATION_SEED) -> np.ndarray:
    """p-values of "system i is better than system j" (upper triangle, NaN elsewhere), paired permutation test.

    ``scores``: (systems, items). Thompson's test, the one SPA uses in meta-evaluation
    (:func:`evaluators.stats.meta.permutation_p_values`), with subset2evaluate's permutations and seed.
    """
    return permutation_p_values(scores, resamples=permutations, seed=seed)


def soft_pairwise_accuracy(subset_p: np.ndarray, full_p: np.ndarray) -> float:
    """1 − mean |p_subset − p_full| over the system pairs (the upper triangles)."""
    upper = np.triu_indices(subset_p.shape[0], 1)
    return float(1.0 - np.mean(np.abs(subset_p - full_p)[upper]))


def top_accuracy(subset_means: np.ndarray, full_means: np.ndarray) -> float:
    """1 − (rank of the subset's best system in the full ranking) / (systems − 1); ties go to the first system."""
    top = int(np.argmax(subset_means))
    order = sorted(range(len(full_means)), key=lambda s: -full_means[s])
    return 1.0 - order.index(top) / (len(full_means) - 1)


def pairwise_accuracy(subset_means: np.ndarray, full_means: np.ndarray) -> float:
    """The share of system pairs whose order (``<``) is the same in the subset and in all the data."""
    n = len(full_means)
    same = [(full_means[a] < full_means[b]) == (subset_means[a] < subset_means[b])
            for a in range(n) for b in range(a + 1, n)]
    return float(np.mean(same))


def kendall_tau(subset_means: np.ndarray, full_means: np.ndarray) -> float:
    """Kendall's τ-b between the two orders of system means (NaN when one side is constant)."""
    tau = sps.kendalltau(subset_means, full_means).statistic
    return float(tau) if tau is not None else math.nan


@dataclass(frozen=True)
class Point:
    """What a subset of ``items`` items concluded, against all the data."""

    budget: float
    items: int
    judgments: int
    spa: float
    top: float
    pairwise_accuracy: float
    kendall_tau: float


class Replayer:
    """Evaluates subsets of one complete data set; the full data's p-values are computed once."""

    def __init__(self, data: CompleteData, *, permutations: int = PERMUTATIONS) -> None:
        self.data = data
        self.permutations = permutations
        self.full_means = data.human.mean(axis=1)
        self.full_p = pairwise_p_values(data.human, permutations=permutations)

    def budget_items(self, budget: float) -> int:
        """Items in a budget: ``int(n × budget)``, as subset2evaluate takes ``data[:k]``."""
        return int(len(self.data.items) * budget)

    def spa(self, order: Sequence[int], k: int) -> float:
        subset = self.data.human[:, list(order[:k])]
        return soft_pairwise_accuracy(pairwise_p_values(subset, permutations=self.permutations), self.full_p)

    def point(self, order: Sequence[int], budget: float) -> Point:
        k = self.budget_items(budget)
        subset = self.data.human[:, list(order[:k])]
        means = subset.mean(axis=1) if k else np.zeros(len(self.data.systems))
        return Point(budget=budget, items=k, judgments=k * len(self.data.systems),
                     spa=self.spa(order, k), top=top_accuracy(means, self.full_means),
                     pairwise_accuracy=pairwise_accuracy(means, self.full_means),
                     kendall_tau=kendall_tau(means, self.full_means))

    def curve(self, order: Sequence[int], budgets: Sequence[float] = DEFAULT_BUDGETS) -> list[Point]:
        return [self.point(order, b) for b in budgets]

    def parity(self, order: Sequence[int], targets: Sequence[float],
               budgets: Sequence[float] = DEFAULT_BUDGETS) -> float:
        """The mean over budgets of (items this order needs to reach the budget's target SPA) / (budget's items).

        The search runs k = 5, 6, … and stops at the first k whose SPA reaches the target; an order that
        never reaches it counts all the items (subset2evaluate's ``eval_spa_par``).
        """
        n = len(self.data.items)
        shares = []
        for budget, target in zip(budgets, targets, strict=True):
            k = PARITY_START
            for k in range(PARITY_START, n + 1):
                if self.spa(order, k) >= target:
                    break
            shares.append(k / (n * budget))
        return float(np.mean(shares))


Ordering = Callable[[CompleteData, int], Sequence[int]]


@dataclass(frozen=True)
class MethodReplay:
    """One method's curve (means over seeds for a random method, with 95% CIs) and its parity with random."""

    method: str
    seeds: int
    points: list[dict[str, float]]
    parity: float | None


#: The range of each figure, to which its interval is clipped.
RANGES = {"spa": (0.0, 1.0), "top": (0.0, 1.0), "pairwise_accuracy": (0.0, 1.0), "kendall_tau": (-1.0, 1.0)}


def _mean_ci(values: Sequence[float], low: float, high: float) -> tuple[float, float, float]:
    """Mean and Student-t 95% interval of the mean over seeds, clipped to [low, high] (the figure's range)."""
    arr = np.asarray(values, dtype=float)
    mean = float(arr.mean())
    if len(arr) < 2 or float(arr.std(ddof=1)) == 0.0:
        return mean, mean, mean
    half = float(sps.t.ppf(0.975, len(arr) - 1) * arr.std(ddof=1) / math.sqrt(len(arr)))
    return mean, max(low, mean - half), min(high, mean + half)


def replay_method(replayer: Replayer, ordering: Ordering, *, method: str, seeds: int,
                  budgets: Sequence[float] = DEFAULT_BUDGETS,
                  targets: Sequence[float] | None = None) -> MethodReplay:
    """The curve of ``ordering`` (called once per seed; a deterministic method gets ``seeds=1``)."""
    runs = [replayer.curve(ordering(replayer.data, seed), budgets) for seed in range(seeds)]
    points = []
    for b, budget in enumerate(budgets):
        row: dict[str, float] = {"budget": budget, "items": runs[0][b].items, "judgments": runs[0][b].judgments}
        for key, (lowest, highest) in RANGES.items():
            mean, low, high = _mean_ci([getattr(run[b], key) for run in runs], lowest, highest)
            row[key] = mean
            if seeds > 1:
                row[f"{key}_low"], row[f"{key}_high"] = low, high
        points.append(row)
    parity = None
    if targets is not None:
        parity = float(np.mean([replayer.parity(ordering(replayer.data, seed), targets, budgets)
                                for seed in range(seeds)]))
    return MethodReplay(method=method, seeds=seeds, points=points, parity=parity)
