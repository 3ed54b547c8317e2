"""Which items to evaluate first: item utilities as subset2evaluate defines them.

Source: Zouhar, Cui & Sachan (2025), "How to Select Datapoints for Efficient Human Evaluation
of NLG Models?", TACL; the definitions below follow the code of subset2evaluate 1.0.27
(``subset2evaluate/methods.py`` and ``select_subset.basic``), re-written here, and are checked
against that package's numbers in tests/evaluators/stats/test_selection.py.

Scores come as an ``(n_systems, n_segments)`` array ``S`` (one metric, every cell present);
a higher utility means "evaluate this item sooner":

* ``metric_avg``:  ``u_j = -mean_i S[i, j]`` (items the metric finds hard first);
* ``metric_var``:  ``u_j = var_i S[i, j]`` (population variance, ddof 0: items on which the
  systems differ most first);
* ``metric_cons``: ``u_j = tau_c(S[:, j], m)`` with ``m_i = mean_j S[i, j]`` the systems'
  corpus means: Kendall's tau-c (Stuart 1953, as ``scipy.stats.kendalltau(variant="c")``)
  between the item's system scores and the corpus ranking; 0 when undefined (one system or
  all of an item's scores tied);
* ``diversity``: ``u_j = -mean similarity`` of the item's candidate texts:
  ``unigram`` over unordered pairs of distinct candidates, ``2 |A ∩ B| / (|A| + |B|)`` on
  whitespace-token multisets (1 when either is empty; 0 with fewer than two candidates);
  ``bleu`` (sacrebleu sentence BLEU, effective order) and ``chrf`` (sacrebleu chrF) over
  every ordered pair, each candidate with itself included, as subset2evaluate averages them
  (``bleu`` is 0 with fewer than two candidates);
* ``random``: ``u_j`` the j-th draw of Python's ``random.Random(seed).random()``.

Items are ranked by decreasing utility with a stable sort, so ties keep the input order
(``list.sort(reverse=True)`` in subset2evaluate does the same).
"""
from __future__ import annotations

import itertools
import math
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from sacrebleu.metrics import BLEU, CHRF

__all__ = [
    "METHODS",
    "SIMILARITIES",
    "SelectionInputError",
    "budget_count",
    "diversity",
    "item_utilities",
    "kendall_tau_c",
    "metric_avg",
    "metric_cons",
    "metric_var",
    "random_utilities",
    "rank_items",
]

METHODS = ("metric_avg", "metric_var", "metric_cons", "diversity", "random")
SCORE_METHODS = ("metric_avg", "metric_var", "metric_cons")
SIMILARITIES = ("unigram", "bleu", "chrf")


class SelectionInputError(ValueError):
    """The scores or texts cannot be used (the message names what is missing)."""


def _check(scores: np.ndarray) -> np.ndarray:
    matrix = np.asarray(scores, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] < 1 or matrix.shape[1] < 1:
        raise SelectionInputError("scores: need at least one system and one segment")
    if not np.isfinite(matrix).all():
        raise SelectionInputError("scores: every system needs a finite score on every segment")
    return matrix


def metric_avg(scores: np.ndarray) -> np.ndarray:
    """Minus each segment's mean score over systems (``scores`` is systems × segments)."""
    return -_check(scores).mean(axis=0)


def metric_var(scores: np.ndarray) -> np.ndarray:
    """Each segment's population variance (ddof 0) over systems."""
    return _check(scores).var(axis=0)


def kendall_tau_c(x: np.ndarray, y: np.ndarray) -> float:
    """Stuart's tau-c, ``2 (C - D) / (n² (m - 1) / m)`` with ``m`` the fewer distinct values of x and y.

    ``C - D`` is summed exactly over all pairs (ties count neither way); NaN when x or y is constant
    (or n < 2), as in scipy; the value is clipped to [-1, 1] as scipy does.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = x.size
    if n < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return math.nan
    i, j = np.triu_indices(n, 1)
    c_minus_d = int((np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])).sum())
    m = min(np.unique(x).size, np.unique(y).size)
    tau = 2 * c_minus_d / (n ** 2 * (m - 1) / m)
    return float(min(1.0, max(-1.0, tau)))


def metric_cons(scores: np.ndarray) -> np.ndarray:
    """Per segment, tau-c between its system scores and the systems' means over all segments (NaN → 0)."""
    matrix = _check(scores)
    target = matrix.mean(axis=1)
    out = np.empty(matrix.shape[1])
    for j in range(matrix.shape[1]):
        tau = kendall_tau_c(matrix[:, j], target)
        out[j] = 0.0 if math.isnan(tau) else tau
    return out


def random_utilities(n_segments: int, seed: int) -> np.ndarray:
    """One ``random.Random(seed).random()`` draw per segment, in input order."""
    rng = random.Random(seed)
    return np.array([rng.random() for _ in range(n_segments)], dtype=float)


def _unigram_similarity(a: str, b: str) -> float:
    bag_a, bag_b = Counter(a.split()), Counter(b.split())
    total_a, total_b = sum(bag_a.values()), sum(bag_b.values())
    if total_a == 0 or total_b == 0:
        return 1.0
    return 2 * sum((bag_a & bag_b).values()) / (total_a + total_b)


def _mean_unigram(texts: Sequence[str]) -> float:
    values = [_unigram_similarity(a, b) for a, b in itertools.combinations(texts, 2)]
    return float(np.mean(values)) if values else 0.0


def _mean_sacrebleu(texts: Sequence[str], score: Callable[[str, str], float], *, guard: bool) -> float:
    if guard and len(texts) < 2:
        return 0.0
    if not texts:
        raise SelectionInputError("diversity: a segment has no candidate text")
    return float(np.mean([score(a, b) for a, b in itertools.product(texts, texts)]))


def diversity(texts: Sequence[Sequence[str]], similarity: str = "unigram") -> np.ndarray:
    """Minus the mean pairwise similarity of each segment's candidate texts (module docstring)."""
    if similarity == "unigram":
        return -np.array([_mean_unigram(t) for t in texts], dtype=float)
    if similarity == "bleu":
        bleu = BLEU(effective_order=True)
        return -np.array([_mean_sacrebleu(t, lambda a, b: bleu.sentence_score(a, [b]).score, guard=True)
                          for t in texts], dtype=float)
    if similarity == "chrf":
        chrf = CHRF()
        return -np.array([_mean_sacrebleu(t, lambda a, b: chrf.sentence_score(a, [b]).score, guard=False)
                          for t in texts], dtype=float)
    raise SelectionInputError(f"similarity: {similarity!r} is not one of {', '.join(SIMILARITIES)}")


def item_utilities(method: str, *, scores: np.ndarray, texts: Sequence[Sequence[str]] | None = None,
                   seed: int = 0, similarity: str = "unigram") -> np.ndarray:
    """The utility of every segment (columns of ``scores``, in order) under ``method``."""
    if method == "metric_avg":
        return metric_avg(scores)
    if method == "metric_var":
        return metric_var(scores)
    if method == "metric_cons":
        return metric_cons(scores)
    if method == "random":
        return random_utilities(_check(scores).shape[1], seed)
    if method == "diversity":
        if texts is None:
            raise SelectionInputError("diversity: needs the candidates' texts")
        if len(texts) != _check(scores).shape[1]:
            raise SelectionInputError(f"diversity: {len(texts)} text lists for {np.shape(scores)[1]} segments")
        return diversity(texts, similarity)
    raise SelectionInputError(f"method: {method!r} is not one of {', '.join(METHODS)}")


@dataclass(frozen=True)
class RankedItem:
    segment: str
    utility: float


def rank_items(segments: Sequence[str], utilities: np.ndarray) -> list[RankedItem]:
    """Segments by decreasing utility; ties keep the input order (a stable sort)."""
    values = [float(u) for u in utilities]
    if len(values) != len(segments):
        raise SelectionInputError(f"{len(values)} utilities for {len(segments)} segments")
    order = sorted(range(len(values)), key=lambda k: values[k], reverse=True)
    return [RankedItem(segments[k], values[k]) for k in order]


_BUDGET = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$")


def budget_count(budget: str, n_items: int) -> int:
    """How many items a budget keeps: ``N`` items (at most all) or ``P%`` of them, rounded down.

    Rounding down is how subset2evaluate turns a proportion into a count (``int(len(data) * prop)``).
    ValueError with the reason for anything else (0, a negative or non-number, over 100%, a share
    that rounds to no item).
    """
    match = _BUDGET.match(budget)
    if not match:
        raise ValueError(f"{budget!r} is neither a number of items (20) nor a percentage (10%)")
    number, percent = match.groups()
    if percent:
        share = float(number)
        if not 0 < share <= 100:
            raise ValueError(f"{budget!r}: a percentage must be above 0 and at most 100")
        count = int(n_items * share / 100)
        if count < 1:
            raise ValueError(f"{budget!r} of {n_items} item(s) is less than one item")
        return count
    if "." in number or int(number) < 1:
        raise ValueError(f"{budget!r}: a number of items must be a whole number of at least 1")
    return min(int(number), n_items)
