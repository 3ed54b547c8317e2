"""The alternative annotator test: may an LLM judge replace one of the human annotators?

Calderon, Reichart & Dror (ACL 2025), *The Alternative Annotator Test for LLM-as-a-Judge: How to
Statistically Justify Replacing Human Annotators with LLMs*; the procedure as the authors' notebook
(github.com/nitaytech/AltTest, ``alt_test_example.ipynb``, function ``alt_test``) computes it:

1. Instances rated by fewer than ``min_humans_per_instance`` annotators, or not labelled by the judge,
   are dropped.
2. Leave one annotator out: for annotator ``j`` with at least ``min_instances_per_human`` kept
   instances, and each of those instances ``i``, the alignment of ``j``'s label and of the judge's
   label with the *other* annotators' labels of ``i`` (``accuracy``: the share equal; ``neg_rmse``:
   minus the root mean squared difference). Indicators: ``W_ij = 1`` when the judge's alignment is at
   least the annotator's, ``H_ij = 1`` when the annotator's is at least the judge's (a tie sets both).
3. ``p_j`` of the one-sided one-sample t-test of ``H_ij − W_ij`` against the mean ``ε`` (alternative
   "less": the judge is not worse than the annotator by more than ε).
4. Benjamini–Yekutieli over the annotators' p-values at level ``q``; the **winning rate** ω is the share
   of annotators whose hypothesis is rejected, and the judge **passes** when ω ≥ 0.5.
5. The **advantage probability** ρ is the mean over annotators of the mean of ``W_ij``.

Pure numpy/scipy; no Django (the statistics core's import contract).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import ttest_1samp

#: The authors' defaults (the notebook's ``alt_test`` signature).
EPSILON = 0.2
Q = 0.05
MIN_HUMANS_PER_INSTANCE = 2
MIN_INSTANCES_PER_HUMAN = 30
#: ω at which the judge passes (the paper: it may replace an annotator when it wins against half of them).
PASS_WINNING_RATE = 0.5
SCORINGS = ("accuracy", "neg_rmse")

#: A label: a category (any hashable value) or a number.
Label = Any
#: annotator → instance → label.
Ratings = Mapping[Any, Mapping[Any, Label]]


def accuracy(label: Label, others: Sequence[Label]) -> float:
    """The share of ``others`` equal to ``label``.

    The count over the length, as ``np.mean`` of the booleans computes it (an exact integer sum divided once),
    so the same float, without numpy's cost per call: the test calls this twice per annotator and instance.
    """
    if not others:
        return math.nan
    return sum(1 for other in others if label == other) / len(others)


def neg_rmse(label: float, others: Sequence[float]) -> float:
    """Minus the root mean squared difference between ``label`` and ``others``."""
    return -float(np.sqrt(np.mean([(float(label) - float(other)) ** 2 for other in others])))


SCORING_FUNCTIONS: dict[str, Callable[..., float]] = {"accuracy": accuracy, "neg_rmse": neg_rmse}


def benjamini_yekutieli(p_values: Sequence[float] | np.ndarray, q: float) -> list[int]:
    """Indices of the hypotheses Benjamini–Yekutieli rejects at FDR ``q`` (any dependence).

    The largest ``k`` with ``p_(k) ≤ (k / m) · q / H_m``, ``H_m = Σ_{i ≤ m} 1/i``; the ``k`` smallest p-values
    are rejected. A NaN p-value (a t-test on constant differences equal to ε) is never below a threshold.
    """
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    if m == 0:
        return []
    order = np.argsort(p, kind="quicksort")
    harmonic = float(np.sum(1.0 / np.arange(1, m + 1)))
    thresholds = np.arange(1, m + 1) / m * (q / harmonic)
    below = np.flatnonzero(p[order] <= thresholds)
    if below.size == 0:
        return []
    return [int(k) for k in order[: int(below.max()) + 1]]


@dataclass(frozen=True)
class AnnotatorResult:
    annotator: Hashable
    instances: int
    p_value: float
    advantage_probability: float
    rejected: bool = False


@dataclass
class AltTestResult:
    winning_rate: float
    advantage_probability: float
    passed: bool
    per_annotator: list[AnnotatorResult]
    #: Instances left out: rated by too few annotators, or without the judge's label.
    dropped_instances: list[Hashable] = field(default_factory=list)
    #: Annotators left out with their number of kept instances (fewer than the minimum).
    dropped_annotators: list[tuple[Hashable, int]] = field(default_factory=list)


class AltTestError(ValueError):
    """The test cannot be run (the message says why)."""


def alt_test(judge: Mapping[Any, Label], humans: Ratings, *, scoring: str = "accuracy",
             epsilon: float = EPSILON, q: float = Q, min_humans_per_instance: int = MIN_HUMANS_PER_INSTANCE,
             min_instances_per_human: int = MIN_INSTANCES_PER_HUMAN) -> AltTestResult:
    """The alt-test of one judge (instance → label) against the annotators (annotator → instance → label)."""
    if scoring not in SCORING_FUNCTIONS:
        raise AltTestError(f"scoring: {scoring!r} is not one of {', '.join(SCORINGS)}")
    score = SCORING_FUNCTIONS[scoring]
    raters_of: dict[Hashable, list[Hashable]] = {}
    for annotator, labels in humans.items():
        for instance in labels:
            raters_of.setdefault(instance, []).append(annotator)
    kept = {i for i, raters in raters_of.items() if len(raters) >= min_humans_per_instance and i in judge}
    dropped = [i for i in raters_of if i not in kept]
    per_annotator: list[AnnotatorResult] = []
    skipped: list[tuple[Hashable, int]] = []
    for annotator, labels in humans.items():
        instances = [i for i in labels if i in kept]
        if len(instances) < min_instances_per_human:
            skipped.append((annotator, len(instances)))
            continue
        wins, differences = [], []
        for i in instances:
            others = [humans[h][i] for h in raters_of[i] if h != annotator]
            own, judged = score(labels[i], others), score(judge[i], others)
            w, h_ind = int(judged >= own), int(own >= judged)
            wins.append(w)
            differences.append(h_ind - w)
        p_value = float(ttest_1samp(differences, epsilon, alternative="less").pvalue)
        per_annotator.append(AnnotatorResult(annotator, len(instances), p_value, float(np.mean(wins))))
    if not per_annotator:
        raise AltTestError(f"no annotator has {min_instances_per_human} or more instances rated by at least "
                           f"{min_humans_per_instance} annotators and by the judge "
                           f"({len(skipped)} annotator(s) below the minimum)")
    rejected = set(benjamini_yekutieli([r.p_value for r in per_annotator], q))
    per_annotator = [AnnotatorResult(r.annotator, r.instances, r.p_value, r.advantage_probability, k in rejected)
                     for k, r in enumerate(per_annotator)]
    winning_rate = len(rejected) / len(per_annotator)
    advantage = float(np.mean([r.advantage_probability for r in per_annotator]))
    return AltTestResult(winning_rate=winning_rate, advantage_probability=advantage,
                         passed=bool(winning_rate >= PASS_WINNING_RATE), per_annotator=per_annotator,
                         dropped_instances=dropped, dropped_annotators=skipped)


def finite_or_none(value: float) -> float | None:
    """A JSON-safe number (NaN and infinities become None)."""
    return value if math.isfinite(value) else None
