"""MQM and ESA scores: segment scores, system scores with a bootstrap CI, error tables.

Pure NumPy/pandas (no Django, no app import; see ``.importlinter``).
Definitions, sources and every approximation: ``docs/mqm.md``.

MQM (Freitag et al. 2021, "Experts, Errors, and Context", TACL 9; and the
README of Google's ``wmt-mqm-human-evaluation`` release):

* a rater's score for a segment is the SUM of the weights of the errors he
  or she marked (lower is better; 0 = no error);
* default weights (:data:`WMT_WEIGHTS`): Major 5, Minor 1, Minor
  Fluency/Punctuation 0.1, Non-translation 25 (whatever its severity),
  Neutral 0 -- the README's "Major weight of 5", "weight of 0.1 to Minor
  Fluency/Punctuation errors" and "Non-translation category, with a weight
  of 25, equivalent to five Major errors".  Critical is not part of that
  scheme (its severities are Major, Minor, Neutral); it is configurable here
  and defaults to 25, the weight the scheme gives to its one
  whole-segment-destroying error (Non-translation).  Google's Marot viewer
  uses 5 for Critical by default: pass ``critical=5`` to match it;
* a segment's score is the MEAN over the raters who rated it, and a
  system's score the MEAN of its segment scores (Marot README, "Score
  computations": "MQM scores are computed for every segment by averaging
  over each rater's score for that segment").  ``aggregate="rating"``
  averages over all (segment, rater) ratings instead; both agree when
  every segment has the same number of raters.

ESA (Kocmi et al. 2024): the 0-100 segment score is used as given (higher is
better); system scores aggregate it exactly like MQM.

Input is a LONG table with one row per marked error -- columns ``system``,
``segment``, ``rater``, ``category``, ``severity`` -- where a row whose
category or severity is ``No-error`` (any case) records a rating without
errors, exactly as in the WMT MQM TSV files.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

__all__ = [
    "NO_ERROR",
    "MqmWeights",
    "WMT_WEIGHTS",
    "is_no_error",
    "mqm_error_weights",
    "mqm_segment_scores",
    "esa_segment_scores",
    "system_scores",
    "bootstrap_system_ci",
    "mqm_error_counts",
]

NO_ERROR = "No-error"
Aggregate = Literal["segment", "rating"]

_SPACES = re.compile(r"[\s_]+")


def _norm(text: Any) -> str:
    """Lower case, trimmed, runs of spaces/underscores as one space."""
    return _SPACES.sub(" ", str(text).strip().lower())


_NO_ERROR_SEEN: dict[str, bool] = {}


def is_no_error(value: Any) -> bool:
    """True for the ``No-error`` marker of the WMT files (any case, ``no error``/``no_error`` too)."""
    if type(value) is str:  # a file's few category and severity names, normalised once each
        seen = _NO_ERROR_SEEN.get(value)
        if seen is None:
            seen = _norm(value).replace("-", " ") == "no error"
            if len(_NO_ERROR_SEEN) < 10_000:
                _NO_ERROR_SEEN[value] = seen
        return seen
    return _norm(value).replace("-", " ") == "no error"


@dataclass(frozen=True)
class MqmWeights:
    """An MQM weighting scheme; :meth:`weight` says which rule applies (in this order).

    1. ``No-error`` rows weigh 0 and are not errors;
    2. a Non-translation category (``non_translation_categories``, compared
       after :func:`_norm`, a trailing ``!`` ignored as in the 2020 files)
       weighs ``non_translation`` whatever its severity;
    3. a *minor* error in a ``punctuation_categories`` category weighs
       ``minor_punctuation``;
    4. otherwise the severity's weight (``minor``, ``major``, ``critical``,
       ``neutral``); an unknown severity raises ``ValueError``.
    """

    minor: float = 1.0
    major: float = 5.0
    critical: float = 25.0
    neutral: float = 0.0
    minor_punctuation: float = 0.1
    non_translation: float = 25.0
    punctuation_categories: tuple[str, ...] = ("fluency/punctuation",)
    non_translation_categories: tuple[str, ...] = ("non-translation", "non translation")
    name: str = "wmt-mqm"
    extra_severities: Mapping[str, float] = field(default_factory=dict)

    def severity_weights(self) -> dict[str, float]:
        out = {"minor": self.minor, "major": self.major, "critical": self.critical, "neutral": self.neutral}
        out.update({_norm(k): float(v) for k, v in self.extra_severities.items()})
        return out

    def rule(self, category: Any, severity: Any) -> str:
        """The name of the rule that weighs this (category, severity)."""
        if is_no_error(category) or is_no_error(severity):
            return "no-error"
        cat = _norm(category).rstrip("!").strip()
        if cat in {_norm(c) for c in self.non_translation_categories}:
            return "non-translation"
        sev = _norm(severity)
        if sev == "minor" and cat in {_norm(c) for c in self.punctuation_categories}:
            return "minor-punctuation"
        if sev not in self.severity_weights():
            raise ValueError(
                f"unknown MQM severity {severity!r} (known: {', '.join(sorted(self.severity_weights()))}, No-error)"
            )
        return sev

    def weight(self, category: Any, severity: Any) -> float:
        """The weight of one marked error (0 for a ``No-error`` row)."""
        r = self.rule(category, severity)
        if r == "no-error":
            return 0.0
        if r == "non-translation":
            return float(self.non_translation)
        if r == "minor-punctuation":
            return float(self.minor_punctuation)
        return float(self.severity_weights()[r])

    def describe(self) -> dict[str, Any]:
        """JSON-able description (name and every weight) for reports."""
        return {
            "name": self.name,
            "weights": {
                **self.severity_weights(),
                "minor_punctuation": self.minor_punctuation,
                "non_translation": self.non_translation,
            },
            "punctuation_categories": list(self.punctuation_categories),
            "non_translation_categories": list(self.non_translation_categories),
        }


#: Freitag et al. (2021) / WMT MQM release weights; Critical (not in that scheme) = 25.
WMT_WEIGHTS = MqmWeights()

_REQUIRED = ("system", "segment", "rater", "category", "severity")


def _check_columns(df: pd.DataFrame, required: tuple[str, ...]) -> None:
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ValueError(f"missing column(s): {', '.join(missing)}")


def mqm_error_weights(rows: pd.DataFrame, weights: MqmWeights = WMT_WEIGHTS) -> pd.Series:
    """The weight of every row (0 for ``No-error`` rows), aligned with ``rows``.

    Computed once per distinct (category, severity) pair, so a 100,000-row
    table costs a few dozen rule look-ups.  An unknown severity raises
    ``ValueError`` naming the row's position.
    """
    _check_columns(rows, ("category", "severity"))
    pairs = rows[["category", "severity"]].astype(str)
    keys = pairs["category"] + "\x1f" + pairs["severity"]
    table: dict[str, float] = {}
    for key in pd.unique(keys):
        cat, sev = key.split("\x1f", 1)
        try:
            table[key] = weights.weight(cat, sev)
        except ValueError as exc:
            pos = int(np.flatnonzero((keys == key).to_numpy())[0])
            raise ValueError(f"row {pos}: {exc}") from None
    return keys.map(table).astype(float)


def mqm_segment_scores(rows: pd.DataFrame, weights: MqmWeights = WMT_WEIGHTS) -> pd.DataFrame:
    """One MQM score per (system, segment, rater): the sum of the error weights.

    ``rows``: one row per marked error, ``No-error`` rows for clean ratings
    (columns ``system``, ``segment``, ``rater``, ``category``, ``severity``).
    Returns columns ``system``, ``segment``, ``rater``, ``score`` (lower is
    better) and ``n_errors`` (rows that are not ``No-error``).
    """
    _check_columns(rows, _REQUIRED)
    w = mqm_error_weights(rows, weights)
    err = ~(rows["category"].map(is_no_error) | rows["severity"].map(is_no_error))
    frame = pd.DataFrame(
        {
            "system": rows["system"].to_numpy(),
            "segment": rows["segment"].to_numpy(),
            "rater": rows["rater"].to_numpy(),
            "score": w.to_numpy(),
            "n_errors": err.to_numpy().astype(int),
        }
    )
    out = frame.groupby(["system", "segment", "rater"], sort=False, dropna=False).agg(
        score=("score", "sum"), n_errors=("n_errors", "sum")
    )
    return out.reset_index()


def esa_segment_scores(rows: pd.DataFrame, *, low: float = 0.0, high: float = 100.0) -> pd.DataFrame:
    """ESA segment scores as given (one per system, segment, rater), validated.

    ``rows`` has ``system``, ``segment``, ``rater``, ``score``.  A missing,
    non-numeric or out-of-range score, or two scores for one (system,
    segment, rater), raises ``ValueError`` naming the row positions.
    """
    _check_columns(rows, ("system", "segment", "rater", "score"))
    score = pd.to_numeric(rows["score"], errors="coerce")
    bad = np.flatnonzero((score.isna() | (score < low) | (score > high)).to_numpy())
    if len(bad):
        shown = ", ".join(str(int(i)) for i in bad[:20])
        raise ValueError(f"ESA score missing, not a number or outside [{low:g}, {high:g}] at row(s) {shown}")
    keys = rows[["system", "segment", "rater"]]
    dup = np.flatnonzero(keys.duplicated(keep=False).to_numpy())
    if len(dup):
        shown = ", ".join(str(int(i)) for i in dup[:20])
        raise ValueError(f"more than one ESA score for one (system, segment, rater) at row(s) {shown}")
    out = keys.copy()
    out["score"] = score.astype(float).to_numpy()
    return out.reset_index(drop=True)


def _segment_table(scores: pd.DataFrame, aggregate: Aggregate) -> pd.DataFrame:
    """(system, segment) -> mean over raters, with the rating count."""
    _check_columns(scores, ("system", "segment", "rater", "score"))
    if aggregate not in ("segment", "rating"):
        raise ValueError(f"aggregate must be 'segment' or 'rating', got {aggregate!r}")
    return (
        scores.groupby(["system", "segment"], sort=False, dropna=False)
        .agg(score=("score", "mean"), n_ratings=("score", "size"), total=("score", "sum"))
        .reset_index()
    )


def system_scores(
    scores: pd.DataFrame,
    *,
    higher_is_better: bool = False,
    aggregate: Aggregate = "segment",
) -> pd.DataFrame:
    """System scores from segment scores (MQM or ESA), ranked.

    ``aggregate="segment"`` (default, Marot): mean over segments of the
    per-segment mean over raters; ``"rating"``: mean over every (segment,
    rater) rating.  Columns: ``system``, ``score``, ``n_segments``,
    ``n_ratings``, ``rank`` (1 = best; ties share the lowest rank), sorted
    best first (lower MQM is better; pass ``higher_is_better=True`` for ESA).
    """
    seg = _segment_table(scores, aggregate)
    grouped = seg.groupby("system", sort=False)
    out = grouped.agg(n_segments=("segment", "size"), n_ratings=("n_ratings", "sum"), total=("total", "sum"), mean=("score", "mean"))
    value = out["mean"] if aggregate == "segment" else out["total"] / out["n_ratings"]
    res = pd.DataFrame(
        {
            "system": out.index.to_numpy(),
            "score": value.to_numpy(dtype=float),
            "n_segments": out["n_segments"].to_numpy(dtype=int),
            "n_ratings": out["n_ratings"].to_numpy(dtype=int),
        }
    )
    res = res.sort_values(["score", "system"], ascending=[not higher_is_better, True], kind="mergesort")
    res["rank"] = res["score"].rank(method="min", ascending=not higher_is_better).astype(int)
    return res.reset_index(drop=True)


def bootstrap_system_ci(
    scores: pd.DataFrame,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    aggregate: Aggregate = "segment",
) -> pd.DataFrame:
    """Percentile bootstrap CI of every system score (Efron & Tibshirani 1993), seeded.

    Segments are resampled with replacement -- the SAME resample for every
    system (paired: a segment is one source sentence/document position,
    shared by the systems), and a system's score in a replicate is the mean
    of its segment scores among the drawn segments (a system without a
    rating for a drawn segment just has fewer).  With
    ``aggregate="rating"`` each drawn segment weighs by its rating count.
    Returns ``system``, ``score``, ``ci_low``, ``ci_high``, ``n_boot``,
    ``confidence``, ``seed`` (``ci_*`` are ``None`` with a single segment).
    """
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    if n_boot < 1:
        raise ValueError("n_boot must be >= 1")
    seg = _segment_table(scores, aggregate)
    segments = pd.Index(pd.unique(seg["segment"]))
    systems = list(pd.unique(seg["system"]))
    s_idx = segments.get_indexer(pd.Index(seg["segment"]))
    y_idx = pd.Index(systems).get_indexer(pd.Index(seg["system"]))
    n_seg, n_sys = len(segments), len(systems)
    sums = np.zeros((n_seg, n_sys))
    counts = np.zeros((n_seg, n_sys))
    if aggregate == "segment":
        np.add.at(sums, (s_idx, y_idx), seg["score"].to_numpy(float))
        np.add.at(counts, (s_idx, y_idx), 1.0)
    else:
        np.add.at(sums, (s_idx, y_idx), seg["total"].to_numpy(float))
        np.add.at(counts, (s_idx, y_idx), seg["n_ratings"].to_numpy(float))
    point = sums.sum(axis=0) / counts.sum(axis=0)
    rng = np.random.default_rng(seed)
    reps = np.empty((n_boot, n_sys))
    chunk = max(1, 2_000_000 // max(1, n_seg))
    for start in range(0, n_boot, chunk):
        stop = min(n_boot, start + chunk)
        draws = rng.integers(0, n_seg, size=(stop - start, n_seg))
        freq = np.stack([np.bincount(d, minlength=n_seg) for d in draws]).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            reps[start:stop] = (freq @ sums) / (freq @ counts)
    alpha = (1 - confidence) / 2
    rows = []
    for j, name in enumerate(systems):
        col = reps[:, j]
        col = col[np.isfinite(col)]
        lo = hi = None
        if n_seg >= 2 and len(col):
            lo, hi = (float(v) for v in np.percentile(col, [100 * alpha, 100 * (1 - alpha)]))
        rows.append(
            {
                "system": name,
                "score": float(point[j]),
                "ci_low": lo,
                "ci_high": hi,
                "n_boot": n_boot,
                "confidence": confidence,
                "seed": seed,
            }
        )
    return pd.DataFrame(rows)


def mqm_error_counts(rows: pd.DataFrame, weights: MqmWeights = WMT_WEIGHTS) -> pd.DataFrame:
    """Errors per system, category and severity (``No-error`` rows excluded).

    Columns ``system``, ``category``, ``severity``, ``count``, ``penalty``
    (the summed weights of those errors) and ``per_segment`` (count divided
    by the system's number of rated (segment, rater) pairs, i.e. errors per
    rating), sorted by system then count (descending).
    """
    _check_columns(rows, _REQUIRED)
    w = mqm_error_weights(rows, weights)
    err = ~(rows["category"].map(is_no_error) | rows["severity"].map(is_no_error))
    ratings = rows[["system", "segment", "rater"]].drop_duplicates().groupby("system", sort=False).size()
    sub = rows.loc[err.to_numpy(), ["system", "category", "severity"]].copy()
    sub["penalty"] = w[err.to_numpy()].to_numpy()
    if sub.empty:
        return pd.DataFrame(columns=["system", "category", "severity", "count", "penalty", "per_segment"])
    out = sub.groupby(["system", "category", "severity"], sort=False).agg(count=("penalty", "size"), penalty=("penalty", "sum")).reset_index()
    out["per_segment"] = out["count"] / out["system"].map(ratings).astype(float)
    out = out.sort_values(["system", "count", "category", "severity"], ascending=[True, False, True, True], kind="mergesort")
    return out.reset_index(drop=True)
