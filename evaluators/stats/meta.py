"""Meta-evaluation of automatic metrics against human scores, as the WMT Metrics task computes it.

The statistics of Google's ``mt-metrics-eval`` (the WMT Metrics task's
reference code; checked against commit 68a481a, see ``bench/meta_upstream.py``),
reimplemented here with NumPy and vectorised over resamples:

* **system level** — pairwise accuracy (Kocmi et al. 2021): the share of
  system pairs the metric orders as the humans do, ``sign(Δhuman) ==
  sign(Δmetric)`` (a tie on both sides agrees, a tie on one side does not);
  Pearson, Kendall's tau-b and Spearman over the system scores; **soft
  pairwise accuracy** (SPA, Thompson et al. 2024): one minus the mean absolute
  difference between the humans' and the metric's one-sided paired-permutation
  p-values for "system i is better than system j", over all pairs i < j;
* **segment level** — ``acc_eq`` with tie calibration (Deutsch et al. 2023,
  "Ties Matter"; the WMT23/24 setting): per item (segment), the share of system
  pairs where the metric and the humans agree, counting a metric tie when the
  metric's scores differ by at most ε and a human tie when they are equal; the
  per-item accuracies are averaged and ε is chosen to maximise that average
  (reported as ``acc_eq_threshold``); Pearson and Kendall's tau-b over all
  (system, segment) scores ("no grouping");
* **PERM-BOTH** (Deutsch et al. 2021): whether metric A's statistic is
  significantly above metric B's — each resample swaps A's and B's (z-scored)
  scores on each element with probability ½ and recomputes both statistics;
  the p-value is the share of resamples whose difference is at least the
  observed one. Metrics are then ranked as mt-metrics-eval's ``AssignRanks``
  does: sorted by the statistic, a new cluster starts at the first metric that
  some metric of the current cluster beats with p ≤ 0.05.

Every metric is oriented higher-is-better before anything is computed (a
lower-is-better metric such as TER is negated), because mt-metrics-eval assumes
it. Scores are ``(n_systems, n_segments)`` arrays with NaN for a missing score.

Missing scores, as mt-metrics-eval treats them: segment-level statistics use
the (system, segment) cells where both the human and the metric score exist
(its ``filter_gold_nones``; its metric files are complete, so a missing metric
cell is dropped too); a system's score is the mean of its non-missing segment
scores, unless system scores are given (``*.sys.score`` files); SPA needs the
same segments for every system, so it uses the segments that every system's
human and metric scores cover.

This module imports no Django (import contract ``pure-stats``).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats as sps

#: The statistics PERM-BOTH can rank metrics by, by level.
CLUSTER_STATISTICS = ("system:pairwise_accuracy", "system:pearson", "system:kendall", "system:spearman",
                      "segment:pearson")
#: Flattened (system, segment) cells above which the no-grouping acc_eq (all cell pairs) is not computed.
MAX_FLAT_ACC_EQ_CELLS = 4000


@dataclass
class MetaSettings:
    seed: int = 4  # mt-metrics-eval's default seed for the SPA permutations
    resamples: int = 1000  # SPA permutations and PERM-BOTH resamples (mt-metrics-eval's default k)
    cluster_statistic: str = "system:pairwise_accuracy"  # WMT23/24's primary statistic
    p_threshold: float = 0.05
    grouping: str = "item"  # acc_eq averaged per item (segment), as WMT23/24

    def as_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "resamples": self.resamples, "cluster_statistic": self.cluster_statistic,
                "p_threshold": self.p_threshold, "grouping": self.grouping,
                "perm_test": "PERM-BOTH, element-wise swaps of z-scored scores (Deutsch et al. 2021)",
                "orientation": "lower-is-better metrics negated first (mt-metrics-eval assumes higher is better)"}


@dataclass
class MetaResult:
    system: dict[str, dict[str, float | None]]
    segment: dict[str, dict[str, float | None]]
    clusters: list[dict[str, Any]]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    sig_matrix: dict[str, dict[str, float]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"system": self.system, "segment": self.segment, "clusters": self.clusters,
                "significance": self.sig_matrix, "settings": self.settings, "notes": self.notes}


def _none(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


# --- system level --------------------------------------------------------------------------------

def system_scores(seg: np.ndarray) -> np.ndarray:
    """Mean of each system's non-missing segment scores (NaN when it has none)."""
    with np.errstate(invalid="ignore"):
        counts = np.sum(~np.isnan(seg), axis=1)
        sums = np.nansum(seg, axis=1)
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def pairwise_accuracy(gold: np.ndarray, metric: np.ndarray) -> tuple[float, int]:
    """(share of pairs ordered alike, number of pairs) over entries whose gold score exists."""
    ok = ~np.isnan(gold) & ~np.isnan(metric)
    g, m = gold[ok], metric[ok]
    n = len(g)
    if n < 2:
        return math.nan, 0
    iu = np.triu_indices(n, 1)
    agree = np.sign(g[:, None] - g[None, :])[iu] == np.sign(m[:, None] - m[None, :])[iu]
    return float(agree.mean()), int(agree.size)


def _is_constant(v: np.ndarray) -> bool:
    return bool(len(v) == 0 or np.all(v == v[0]))


def _corr(kind: str, x: np.ndarray, y: np.ndarray) -> float:
    """Pearson / Kendall tau-b / Spearman of the pairs where both exist; NaN for constant input (as upstream)."""
    ok = ~np.isnan(x) & ~np.isnan(y)
    x, y = x[ok], y[ok]
    if len(x) < 2:
        return math.nan
    if kind in ("pearson", "spearman") and (_is_constant(x) or _is_constant(y)):
        return math.nan
    if kind == "pearson":
        return float(sps.pearsonr(x, y)[0])
    if kind == "spearman":
        return float(sps.spearmanr(x, y)[0])
    if kind == "kendall":
        return float(sps.kendalltau(x, y, variant="b")[0])
    raise ValueError(f"unknown correlation {kind!r}")


def permutation_p_values(seg: np.ndarray, *, resamples: int, seed: int) -> np.ndarray:
    """One-sided paired-permutation p-values for "system i > system j" (upper triangle), SPA's building block.

    Thompson et al. (2024): one random sign vector per resample, shared by all
    system pairs; the null difference of pair (i, j) is ``s·(x_i − x_j)`` and
    the p-value the share of resamples where it is at least the observed sum
    difference. Computed in float32 with NumPy's PCG64 generator seeded by
    ``seed``, as mt-metrics-eval's ``pce.compute_pairwise_p_values`` does, so
    the same seed and resample count give the same p-values.
    """
    n_sys, n_seg = seg.shape
    rng = np.random.default_rng(seed)
    signs = rng.random(size=(resamples, n_seg), dtype=np.float32)
    np.rint(signs, out=signs, casting="same_kind")
    signs *= 2.0
    signs -= 1.0
    scores = seg.astype(np.float32)
    totals = scores.sum(axis=1)
    partial = signs @ scores.T  # (resamples, n_sys)
    p = np.full((n_sys, n_sys), np.nan)
    for i in range(n_sys):
        for j in range(i + 1, n_sys):
            p[i, j] = np.sum(partial[:, i] - partial[:, j] >= totals[i] - totals[j]) / resamples
    return p


def soft_pairwise_accuracy(human_seg: np.ndarray, metric_seg: np.ndarray, *, resamples: int,
                           seed: int) -> tuple[float, int]:
    """(SPA, segments used): 1 − mean |p_human − p_metric| over system pairs, on fully covered segments."""
    full = np.all(~np.isnan(human_seg), axis=0) & np.all(~np.isnan(metric_seg), axis=0)
    if human_seg.shape[0] < 2 or not full.any():
        return math.nan, 0
    ph = permutation_p_values(human_seg[:, full], resamples=resamples, seed=seed)
    pm = permutation_p_values(metric_seg[:, full], resamples=resamples, seed=seed)
    iu = np.triu_indices(human_seg.shape[0], 1)
    return float(1.0 - np.mean(np.abs(ph - pm)[iu])), int(full.sum())


# --- segment level: acc_eq with tie calibration -----------------------------------------------------

@dataclass
class TieCalibration:
    accuracy: float
    threshold: float
    n_groups: int
    n_pairs: int


def acc_eq(human: np.ndarray, metric: np.ndarray) -> TieCalibration:
    """Tie-calibrated pairwise accuracy averaged over rows (Deutsch et al. 2023, ``acc23``).

    ``human`` and ``metric`` are (groups, members) with NaN for missing cells;
    pairs are formed within a row among cells where both exist. For a pair
    with metric difference d, the metric "ties" it when d ≤ ε; the pair is
    right when (tie, human tie) or (no tie, same strict order). Each row's
    accuracy is its share of right pairs; the result is the mean over rows
    with at least one pair, maximised over ε ∈ {0} ∪ {observed d} (the first,
    smallest ε reaching the maximum).
    """
    human = np.asarray(human, dtype=float)
    metric = np.asarray(metric, dtype=float)
    n = human.shape[1] if human.ndim == 2 else 0
    if n < 2:
        return TieCalibration(math.nan, 0.0, 0, 0)
    i, j = np.triu_indices(n, 1)  # every pair of members, all rows at once
    dh = human[:, i] - human[:, j]
    dm = metric[:, i] - metric[:, j]
    valid = ~np.isnan(dh) & ~np.isnan(dm)
    per_row = valid.sum(axis=1)
    n_rows = int(np.count_nonzero(per_row))
    if not n_rows:
        return TieCalibration(math.nan, 0.0, 0, 0)
    w = np.broadcast_to((1.0 / np.maximum(per_row, 1))[:, None], dh.shape)[valid]
    dh, dm = dh[valid], dm[valid]
    human_tie = dh == 0
    right_untied = np.where(dm == 0, human_tie, np.sign(dh) == np.sign(dm))  # the metric's own order
    right_tied = human_tie  # the pair forced to a metric tie
    base = [right_untied * w]
    gain = [(right_tied.astype(float) - right_untied) * w]
    diffs = [np.abs(dm)]
    d = np.concatenate(diffs)
    g = np.concatenate(gain)
    total = float(np.sum(np.concatenate(base)))
    order = np.argsort(d, kind="stable")
    d, g = d[order], g[order]
    cum = np.cumsum(g)
    # The value at threshold t counts every pair with d <= t: the last index of each distinct d.
    last = np.r_[np.nonzero(np.diff(d))[0], len(d) - 1]
    thresholds = d[last]
    values = (total + cum[last]) / n_rows
    if thresholds[0] != 0.0:  # ε = 0 ties only exactly equal scores (already ties): the untouched value
        thresholds = np.r_[0.0, thresholds]
        values = np.r_[total / n_rows, values]
    best = int(np.nanargmax(np.round(values, 12)))
    return TieCalibration(float(values[best]), float(thresholds[best]), n_rows, len(d))


# --- PERM-BOTH ------------------------------------------------------------------------------------

def _zscore(v: np.ndarray) -> np.ndarray:
    sd = v.std()
    return (v - v.mean()) / sd if sd > 0 else v - v.mean()


def _rows_pearson(gold: np.ndarray, rows: np.ndarray) -> np.ndarray:
    g = gold - gold.mean()
    r = rows - rows.mean(axis=1, keepdims=True)
    num = r @ g
    den = np.sqrt((r * r).sum(axis=1) * (g @ g))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / den
    out[(den == 0) | ~np.isfinite(out)] = np.nan
    return out


def _rows_rank(rows: np.ndarray) -> np.ndarray:
    return np.asarray(sps.rankdata(rows, axis=1), dtype=float)


def _rows_pairwise(gold: np.ndarray, rows: np.ndarray, *, tau_b: bool) -> np.ndarray:
    iu = np.triu_indices(len(gold), 1)
    sg = np.sign(gold[:, None] - gold[None, :])[iu]  # (pairs,)
    sm = np.sign(rows[:, :, None] - rows[:, None, :])[:, iu[0], iu[1]]  # (k, pairs)
    if not tau_b:
        return np.mean(sm == sg[None, :], axis=1)
    concord = (sm * sg[None, :]).sum(axis=1)
    n_g = np.count_nonzero(sg)
    n_m = np.count_nonzero(sm, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = concord / np.sqrt(n_g * n_m)
    out[~np.isfinite(out)] = np.nan
    return out


def _rows_statistic(kind: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The statistic of ``gold`` against each row of a (k, n) matrix, vectorised."""
    if kind == "pearson":
        return _rows_pearson
    if kind == "spearman":
        return lambda gold, rows: _rows_pearson(np.asarray(sps.rankdata(gold), dtype=float), _rows_rank(rows))
    if kind == "kendall":
        return lambda gold, rows: _rows_pairwise(gold, rows, tau_b=True)
    if kind == "pairwise_accuracy":
        return lambda gold, rows: _rows_pairwise(gold, rows, tau_b=False)
    raise ValueError(f"unknown statistic {kind!r}")


def perm_both(gold: np.ndarray, better: np.ndarray, worse: np.ndarray, *, statistic: str,
              rng: np.random.Generator, resamples: int, chunk: int = 250) -> float:
    """PERM-BOTH p-value that ``better``'s statistic exceeds ``worse``'s (Deutsch et al. 2021).

    Cells with a missing gold, or a missing score of either metric, are
    dropped; both metrics are z-scored; each resample swaps the two metrics'
    scores on each cell with probability ½; p = share of resamples whose
    difference (better − worse) is at least the observed one.
    """
    ok = ~np.isnan(gold) & ~np.isnan(better) & ~np.isnan(worse)
    g, a, b = gold[ok], _zscore(better[ok]), _zscore(worse[ok])
    fn = _rows_statistic(statistic)
    observed = fn(g, np.stack([a, b]))
    delta = np.nan_to_num(observed[0]) - np.nan_to_num(observed[1])
    hits, done = 0, 0
    while done < resamples:
        k = min(chunk, resamples - done)
        w = rng.binomial(1, 0.5, size=(k, len(g))).astype(bool)
        m1 = np.where(w, a, b)  # "better"'s resampled scores
        m2 = np.where(w, b, a)
        c1 = np.nan_to_num(fn(g, m1))
        c2 = np.nan_to_num(fn(g, m2))
        hits += int(np.sum(c1 - c2 >= delta))
        done += k
    return hits / resamples


def assign_ranks(sig: np.ndarray, p_threshold: float) -> list[int]:
    """Cluster ranks from an upper-triangular p-value matrix of metrics sorted best first (``AssignRanks``)."""
    n = sig.shape[0]
    ranks, rank, start = [0] * n, 1, 0
    for i in range(n):
        if np.any(sig[start:i, i] <= p_threshold):
            rank += 1
            start = i
        ranks[i] = rank
    return ranks


def split_ties(ordered: Sequence[str], values: Mapping[str, float | None], ranks: Sequence[int]) -> list[str]:
    """Notes for metrics with equal statistics that ``AssignRanks`` put in different clusters.

    ``AssignRanks`` walks the metrics in order and compares each only with the current cluster, so which of
    two equal metrics opens the next cluster depends on their order (here, as in mt-metrics-eval's
    ``CompareMetrics``, equal values are sorted by name: the names decide).
    """
    notes = []
    for i, a in enumerate(ordered):
        for j in range(i + 1, len(ordered)):
            b = ordered[j]
            if values[a] is not None and values[a] == values[b] and ranks[i] != ranks[j]:
                notes.append(f"{a} and {b} have the same {values[a]:.4g} but land in clusters {ranks[i]} and "
                             f"{ranks[j]}: AssignRanks depends on the order of equal metrics (here by name)")
    return notes


# --- everything together --------------------------------------------------------------------------

def meta_evaluate(*, human_seg: np.ndarray, metrics_seg: Mapping[str, np.ndarray],
                  lower_is_better: Sequence[str] = (), human_sys: np.ndarray | None = None,
                  metrics_sys: Mapping[str, np.ndarray] | None = None,
                  settings: MetaSettings | None = None) -> MetaResult:
    """Every statistic for every metric, and the PERM-BOTH clusters of the chosen statistic.

    ``human_seg`` and each ``metrics_seg[name]`` are (n_systems, n_segments)
    with NaN for missing; ``*_sys`` optionally give system scores directly.
    """
    settings = settings or MetaSettings()
    if settings.cluster_statistic not in CLUSTER_STATISTICS:
        raise ValueError(f"cluster statistic {settings.cluster_statistic!r}; one of {', '.join(CLUSTER_STATISTICS)}")
    if settings.resamples < 1:
        raise ValueError("resamples must be at least 1")
    notes: list[str] = []
    flip = set(lower_is_better)
    oriented = {name: (-np.asarray(v, dtype=float) if name in flip else np.asarray(v, dtype=float))
                for name, v in metrics_seg.items()}
    oriented_sys = {name: (-np.asarray(v, dtype=float) if name in flip else np.asarray(v, dtype=float))
                    for name, v in (metrics_sys or {}).items()}
    h_seg = np.asarray(human_seg, dtype=float)
    h_sys = np.asarray(human_sys, dtype=float) if human_sys is not None else system_scores(h_seg)
    n_sys, n_seg = h_seg.shape
    if n_sys < 2:
        notes.append("fewer than two systems: no system-level statistic")
    flat_ok = n_sys * n_seg <= MAX_FLAT_ACC_EQ_CELLS
    if not flat_ok:
        notes.append(f"acc_eq without grouping needs all pairs of the {n_sys * n_seg} cells "
                     f"(over {MAX_FLAT_ACC_EQ_CELLS}): left out")
    system: dict[str, dict[str, float | None]] = {}
    segment: dict[str, dict[str, float | None]] = {}
    for name, m_seg in oriented.items():
        if m_seg.shape != h_seg.shape:
            raise ValueError(f"{name}: {m_seg.shape} scores, the human scores are {h_seg.shape}")
    # Each metric's system scores once: given (``*.sys.score``), else the mean of its segment scores.
    metric_sys = {name: oriented_sys[name] if name in oriented_sys else system_scores(m_seg)
                  for name, m_seg in oriented.items()}
    for name, m_seg in oriented.items():
        m_sys = metric_sys[name]
        pa, n_pairs = pairwise_accuracy(h_sys, m_sys)
        spa, spa_segments = soft_pairwise_accuracy(h_seg, m_seg, resamples=settings.resamples, seed=settings.seed)
        system[name] = {"pairwise_accuracy": _none(pa), "pearson": _none(_corr("pearson", h_sys, m_sys)),
                        "kendall": _none(_corr("kendall", h_sys, m_sys)),
                        "spearman": _none(_corr("spearman", h_sys, m_sys)), "spa": _none(spa),
                        "n_systems": int(np.sum(~np.isnan(h_sys) & ~np.isnan(m_sys))), "n_pairs": n_pairs,
                        "spa_segments": spa_segments}
        by_item = acc_eq(h_seg.T, m_seg.T)
        flat = acc_eq(h_seg.reshape(1, -1), m_seg.reshape(1, -1)) if flat_ok else None
        hv, mv = h_seg.ravel(), m_seg.ravel()
        segment[name] = {"acc_eq": _none(by_item.accuracy), "acc_eq_threshold": by_item.threshold,
                         "acc_eq_items": by_item.n_groups, "acc_eq_pairs": by_item.n_pairs,
                         "acc_eq_no_grouping": _none(flat.accuracy) if flat else None,
                         "acc_eq_no_grouping_threshold": flat.threshold if flat else None,
                         "pearson": _none(_corr("pearson", hv, mv)), "kendall": _none(_corr("kendall", hv, mv)),
                         "n_cells": int(np.sum(~np.isnan(hv) & ~np.isnan(mv)))}
    level, stat = settings.cluster_statistic.split(":")
    table = system if level == "system" else segment
    values = {name: table[name][stat] for name in oriented}
    def order_key(name: str) -> tuple[float, str]:
        value = values[name]
        return (-value if value is not None else math.inf, name)

    ordered = sorted(values, key=order_key)
    n = len(ordered)
    sig = np.zeros((n, n))
    rng = np.random.default_rng(settings.seed)
    matrix: dict[str, dict[str, float]] = {}
    for i in range(n):
        for j in range(i + 1, n):
            a, b = ordered[i], ordered[j]
            if level == "system":
                gold, va, vb = h_sys, metric_sys[a], metric_sys[b]
            else:
                gold, va, vb = h_seg.ravel(), oriented[a].ravel(), oriented[b].ravel()
            sig[i, j] = perm_both(gold, va, vb, statistic=stat, rng=rng, resamples=settings.resamples)
            matrix.setdefault(a, {})[b] = float(sig[i, j])
    ranks = assign_ranks(sig, settings.p_threshold)
    notes += split_ties(ordered, values, ranks)
    clusters = [{"metric": name, "rank": ranks[i], "statistic": settings.cluster_statistic,
                 "value": values[name],
                 "lower_is_better": name in flip} for i, name in enumerate(ordered)]
    return MetaResult(system=system, segment=segment, clusters=clusters, settings=settings.as_dict(), notes=notes,
                      sig_matrix=matrix)
