"""The WMT human system ranking from segment scores (DA, ESA, MQM-style), as Appraise's ``ComputeWMT23Results`` computes it.

For score protocols (a number per annotator, system and segment; higher is better):

* **z-scores per annotator**: ``(x − mean) / sd`` over that annotator's scores, ``sd`` the
  sample standard deviation (n − 1); an ``sd`` of 0 (or a single score) counts as 1;
* **system scores**: each segment's scores are averaged first (repeated judgments of a
  segment count once), then the segment means are averaged: the mean raw score and the
  mean z-score of the system;
* **order**: by mean raw score (WMT23), or by mean z-score (``order="z"``, WMT21/22);
* **head-to-head**: for every ordered pair (A above B), the one-sided Mann–Whitney U test
  (``scipy.stats.mannwhitneyu``, ``alternative="greater"``) of A's per-segment means against
  B's, on the segments both were scored on; p < 0.05 is a win of A over B;
* **clusters and rank ranges**: walking down the order, a cluster ends after system k when
  the fewest wins among the first k systems equals the number of systems below k (every
  one of them beats every system below); a system's rank range is ``losses + 1`` to
  ``n − wins``.

Checked against Appraise (``Campaign/management/commands/ComputeWMT23Results.py``,
commit 612e4b0, not vendored) on generated data by ``bench/wmt_ranking_upstream.py``:
same order, mean raw and z scores, p-values, win counts, rank ranges and cluster
boundaries. One difference on purpose: Appraise keys its table by the mean raw score, so
two systems with exactly the same mean overwrite each other; here both are kept (ties
broken by system name). Pure pandas/SciPy (import contract ``pure-stats``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import ndtr

P_LEVEL = 0.05


@dataclass
class WmtRanking:
    systems: list[dict[str, Any]]
    head_to_head: list[dict[str, Any]]
    settings: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"method": "wmt23" if self.settings["order"] == "raw" else "wmt22-z", "systems": self.systems,
                "head_to_head": self.head_to_head, "settings": self.settings}


def z_scores(frame: pd.DataFrame) -> pd.Series:
    """Per-annotator standardised scores (sample sd; sd 0 counts as 1)."""
    grouped = frame.groupby("annotator")["score"]
    mean = grouped.transform("mean")
    sd = grouped.transform(lambda s: s.std(ddof=1) if len(s) > 1 else 0.0).fillna(0.0)
    return (frame["score"] - mean) / sd.where(sd != 0, 1.0)


def _greater_asymptotic(xa: np.ndarray, xb: np.ndarray) -> float:
    """``scipy.stats.mannwhitneyu(xa, xb, alternative="greater").pvalue`` where SciPy takes its asymptotic test.

    That is both samples longer than 8 (SciPy's ``method="auto"`` then never takes the exact test) and every
    value finite (SciPy's p-value is NaN with an infinite value).
    SciPy's steps (``scipy/stats/_mannwhitneyu.py``, 1.12) in the same order: average ranks of the pooled
    sample, ``U1 = R1 - n1 (n1 + 1) / 2``, the tie term ``sum(t^3 - t)`` over groups of equal values,
    ``s = sqrt(n1 n2 / 12 ((n + 1) - ties / (n (n - 1))))``, ``z = (U1 - n1 n2 / 2 - 0.5) / s`` (continuity
    correction) and ``p = norm.sf(z) = ndtr(-z)``, clipped to [0, 1].  Ranks are halves of integers and the tie
    term an integer, both exact however they are computed, so p is SciPy's to the bit
    (tests/evaluators/stats/test_wmt_ranking.py checks it on random samples with and without ties).  Here
    because ``scipy.stats`` is the largest import of a report (0.2-0.3 s, ``scipy.spatial`` included) and this
    is the only test of the MQM/ESA/DA report that needs it.
    """
    n1, n2 = len(xa), len(xb)
    xy = np.concatenate([xa, xb])
    sorter = np.argsort(xy, kind="mergesort")
    inv = np.empty(sorter.size, dtype=np.intp)
    inv[sorter] = np.arange(sorter.size, dtype=np.intp)
    ordered = xy[sorter]
    first = np.concatenate([[True], ordered[1:] != ordered[:-1]])  # the first of each group of equal values
    dense = first.cumsum()[inv]
    count = np.concatenate([np.nonzero(first)[0], [len(first)]])
    ranks = 0.5 * (count[dense] + count[dense - 1] + 1)
    t = np.diff(count)  # the size of each group of equal values
    tie_term = (t**3 - t).sum()
    u1 = ranks[:n1].sum() - n1 * (n1 + 1) / 2
    n = n1 + n2
    s = np.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    numerator = u1 - n1 * n2 / 2
    numerator -= 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        z = numerator / s
    return float(np.clip(ndtr(-z), 0, 1))


def _p_values(samples: list[tuple[np.ndarray, np.ndarray]]) -> list[float]:
    """``mannwhitneyu(xa, xb, alternative="greater").pvalue`` of every pair (1.0 for a pair with no shared segment).

    Pairs longer than 8 with finite values (SciPy's asymptotic test) are computed here
    (:func:`_greater_asymptotic`, equal to SciPy's), the others (short, or with a NaN or an infinity) by SciPy.
    """
    out = [1.0] * len(samples)  # a pair with no shared segment keeps 1.0
    for k, (xa, xb) in enumerate(samples):
        if len(xa) == 0:
            continue
        if len(xa) > 8 and np.isfinite(xa).all() and np.isfinite(xb).all():
            out[k] = _greater_asymptotic(xa, xb)
        else:
            from scipy.stats import mannwhitneyu  # here, not at import: see _greater_asymptotic

            out[k] = float(mannwhitneyu(xa, xb, alternative="greater").pvalue)
    return out


def wmt_ranking(frame: pd.DataFrame, *, order: str = "raw", p_level: float = P_LEVEL) -> WmtRanking:
    """The ranking of ``frame`` (columns ``annotator``, ``system``, ``segment``, ``score``)."""
    if order not in ("raw", "z"):
        raise ValueError(f"order {order!r}: raw or z")
    missing = [c for c in ("annotator", "system", "segment", "score") if c not in frame.columns]
    if missing:
        raise ValueError(f"missing column(s) {', '.join(missing)}")
    data = frame[["annotator", "system", "segment", "score"]].copy()
    data["score"] = pd.to_numeric(data["score"], errors="raise").astype(float)
    data = data.dropna(subset=["score"])
    data[["annotator", "system", "segment"]] = data[["annotator", "system", "segment"]].astype(str)
    data["z"] = z_scores(data)
    per_segment = data.groupby(["system", "segment"], sort=True)[["score", "z"]].mean()
    counts = data.groupby("system").size()
    means = per_segment.groupby(level="system").mean()
    key = "score" if order == "raw" else "z"
    raw_mean = {str(s): float(v) for s, v in means["score"].items()}
    z_mean = {str(s): float(v) for s, v in means["z"].items()}
    n_scores = {str(s): int(v) for s, v in counts.items()}
    order_values = raw_mean if key == "score" else z_mean
    ordered = sorted(order_values, key=lambda s: (-order_values[s], s))
    segments = {s: per_segment.loc[s]["score"] for s in ordered}
    # each system's segments (unique, sorted: the groupby sorts) and their mean scores, as arrays: the shared
    # segments of a pair, in segment order, by one intersection of sorted arrays (pandas' per-pair
    # intersection, .loc and sort_index gave the same values at several times the cost)
    keys = {s: segments[s].index.to_numpy() for s in ordered}
    values = {s: segments[s].to_numpy() for s in ordered}
    wins: dict[str, list[tuple[str, float]]] = {s: [] for s in ordered}
    losses: dict[str, list[tuple[str, float]]] = {s: [] for s in ordered}
    pairs = [(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1:]]
    shared_ab: list[tuple[np.ndarray, np.ndarray]] = []
    for a, b in pairs:
        _, at_a, at_b = np.intersect1d(keys[a], keys[b], assume_unique=True, return_indices=True)
        shared_ab.append((values[a][at_a], values[b][at_b]))
    p_values = _p_values(shared_ab)
    h2h: list[dict[str, Any]] = []
    for (a, b), (xa, _), p in zip(pairs, shared_ab, p_values):
        if p < p_level:
            wins[a].append((b, p))
            losses[b].append((a, p))
        h2h.append({"better": a, "worse": b, "p_value": p, "n_segments": int(len(xa)),
                    "delta": raw_mean[a] - raw_mean[b], "significant": p < p_level})
    n = len(ordered)
    systems: list[dict[str, Any]] = []
    cluster, min_wins = 1, n
    for k, s in enumerate(ordered, start=1):
        w, l_ = len(wins[s]), len(losses[s])
        min_wins = min(min_wins, w)
        systems.append({"system": s, "n": n_scores[s], "n_segments": int(len(segments[s])),
                        "score": raw_mean[s], "z": z_mean[s],
                        "wins": w, "losses": l_, "rank_range": [l_ + 1, n - w], "cluster": cluster,
                        "beats": [b for b, _ in wins[s]]})
        if min_wins == n - k:  # every system so far beats every system below: a cluster boundary
            cluster += 1
    for position, row in enumerate(systems, start=1):
        row["position"] = row["rank"] = position  # 1..n in the order above; rank_range holds the range
    return WmtRanking(systems=systems, head_to_head=h2h,
                      settings={"order": order, "p_level": p_level,
                                "test": "one-sided Mann-Whitney U on per-segment means over shared segments",
                                "z": "per annotator, sample sd (sd 0 counts as 1)",
                                "n_annotators": int(data["annotator"].nunique()),
                                "n_scores": int(len(data))})

