"""Automatic metrics vs human judgments.

Why one module of ~480 lines: every function here compares a metric with the humans and
shares the same bootstrap and pair helpers; a split would scatter one family of tests that
are documented, and tested, together (docs/statistics.md, section "Human vs evaluator").

* system-level Pearson / Spearman / Kendall correlation with confidence
  intervals: Fisher (1921) z-transform for Pearson, seeded percentile
  bootstrap over systems for the rank correlations;
* Williams (1959) test for the difference between two dependent
  correlations that share the human variable, as used for MT metrics by
  Graham & Baldwin (2014);
* WMT17 segment-level Kendall-like tau from relative-ranking pairs
  (Bojar, Graham & Kamran 2017): ``(Concordant - Discordant) /
  (Concordant + Discordant)``;
* paired t-test between two systems on per-document scores (Student 1908);
* bootstrap CI of system means (Efron & Tibshirani 1993);
* DiP Eq. 1: ``sum_items (score(reference) - score(system))`` (lower is better);
* ContraPro accuracy (Müller et al. 2018): an item is correct when the
  reference scores strictly better than every contrastive variant.

Missing values (NaN scores, unmatched items) are dropped pairwise and
counted; undefined statistics are ``None`` with a ``note``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from evaluators.stats.common import finite_or_none, percentile_levels

__all__ = [
    "correlation",
    "williams_test",
    "compare_correlations",
    "wmt_kendall_tau",
    "paired_t_test",
    "bootstrap_mean_ci",
    "system_means",
    "dip_scores",
    "contrapro_accuracy",
]

_METHODS = ("pearson", "spearman", "kendall")

# Scores as the functions accept them: aligned by index when every argument is a Series, else by position.
Scores = Sequence[float] | pd.Series | np.ndarray


def _align(x: Scores, y: Scores) -> tuple[np.ndarray, np.ndarray, int]:
    """Align (by index when both are Series) and drop pairs with a NaN."""
    if isinstance(x, pd.Series) and isinstance(y, pd.Series):
        joined = pd.concat([x.rename("x"), y.rename("y")], axis=1, join="inner")
        xa, ya = joined["x"].to_numpy(float), joined["y"].to_numpy(float)
    else:
        xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if xa.shape != ya.shape:
            raise ValueError("x and y must have the same length")
    ok = np.isfinite(xa) & np.isfinite(ya)
    return xa[ok], ya[ok], int((~ok).sum())


def _corr(x: np.ndarray, y: np.ndarray, method: str) -> tuple[float, float]:
    from scipy import stats  # here, not at import: scipy.stats is heavy (it loads scipy.spatial)

    if method == "pearson":
        r = stats.pearsonr(x, y)
    elif method == "spearman":
        r = stats.spearmanr(x, y)
    else:
        r = stats.kendalltau(x, y)  # tau-b
    return float(r[0]), float(r[1])


def _average_ranks(v: np.ndarray) -> np.ndarray:
    """Average ranks (1-based, ties share the mean rank) of every row of ``v``."""
    less = (v[:, None, :] < v[:, :, None]).sum(axis=2)
    equal = (v[:, None, :] == v[:, :, None]).sum(axis=2)
    return less + (equal + 1) / 2


def _bootstrap_rank_correlations(x: np.ndarray, y: np.ndarray, idx: np.ndarray, method: str) -> np.ndarray:
    """Spearman's rho or Kendall's tau-b of every resample ``x[idx[b]], y[idx[b]]`` at once.

    NaN where a resample is constant in either variable (undefined).  Same
    values as ``scipy.stats.spearmanr`` / ``kendalltau`` called per resample
    (``tests/stats/test_correlation.py`` compares them), without the
    per-call overhead:

    * Spearman = Pearson correlation of the average ranks, via centred dot
      products.  A rank is ``#{j: v_j < v_i} + (#{j: v_j = v_i} + 1) / 2``,
      exactly ``scipy.stats.rankdata(method="average")`` (integers and
      halves), counted over all pairs at once: scipy 1.12 ranks row by row;
    * Kendall tau-b = ``(C - D) / sqrt((n0 - n_x) (n0 - n_y))`` from the
      signs of all ``n0 = n(n-1)/2`` pairwise differences, ``n_x``/``n_y``
      the pairs tied in x/y (Kendall 1945; scipy's formula).

    Both materialise the pairs, O(B n^2) memory, in chunks of resamples:
    fine for system-level ``n`` (tens of systems).
    """
    bsz, n = idx.shape
    out = np.full(bsz, np.nan)
    iu, ju = np.triu_indices(n, 1)
    n0 = len(iu)
    chunk = max(1, 4_000_000 // (n * n))
    for start in range(0, bsz, chunk):
        rows = idx[start : start + chunk]
        xb, yb = x[rows], y[rows]
        ok = (np.ptp(xb, axis=1) > 0) & (np.ptp(yb, axis=1) > 0)
        xb, yb = xb[ok], yb[ok]
        if method == "spearman":
            rx, ry = _average_ranks(xb), _average_ranks(yb)
            rx -= rx.mean(axis=1, keepdims=True)
            ry -= ry.mean(axis=1, keepdims=True)
            r = (rx * ry).sum(axis=1) / np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
        else:
            sx = np.sign(xb[:, iu] - xb[:, ju])
            sy = np.sign(yb[:, iu] - yb[:, ju])
            con_minus_dis = (sx * sy).sum(axis=1)
            x_ties = (sx == 0).sum(axis=1)
            y_ties = (sy == 0).sum(axis=1)
            r = con_minus_dis / np.sqrt(n0 - x_ties) / np.sqrt(n0 - y_ties)
        out[start : start + chunk][ok] = np.clip(r, -1.0, 1.0)
    return out


def correlation(
    metric: Scores,
    human: Scores,
    *,
    method: str = "pearson",
    n_boot: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """System-level correlation between metric and human scores, with a CI.

    ``pearson``: r and its p-value (``scipy.stats.pearsonr``); CI by the
    Fisher (1921) z-transform ``tanh(atanh(r) -/+ z_{(1+c)/2} / sqrt(n-3))``
    (needs n >= 4).  ``spearman`` (rho) and ``kendall`` (tau-b): scipy
    estimate and p-value; CI = percentile bootstrap over systems
    (``numpy.random.default_rng(seed)``, ``n_boot`` resamples; resamples in
    which the correlation is undefined, e.g. all-equal values, are skipped
    and counted in ``n_boot_undefined``).  Series are aligned on their
    index; pairs with a missing value are dropped (``n_missing``).  Ties in
    the rank methods are handled by average ranks / tau-b.
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}")
    x, y, n_missing = _align(metric, human)
    n = len(x)
    out: dict[str, Any] = {
        "method": method, "n": n, "n_missing": n_missing, "r": None, "p_value": None,
        "ci_low": None, "ci_high": None, "ci_method": None, "confidence": confidence, "note": None,
    }
    if n < 3:
        out["note"] = "need at least 3 systems"
        return out
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        out["note"] = "a variable is constant: correlation undefined"
        return out
    r, p = _corr(x, y, method)
    out["r"], out["p_value"] = finite_or_none(r), finite_or_none(p)
    if method == "pearson":
        out["ci_method"] = "fisher_z"
        if n < 4:
            out["note"] = "Fisher-z CI needs at least 4 systems"
            return out
        from scipy import stats

        zq = stats.norm.ppf((1 + confidence) / 2)
        with np.errstate(divide="ignore"):
            z = np.arctanh(np.clip(r, -1.0, 1.0))
        half = zq / math.sqrt(n - 3)
        out["ci_low"], out["ci_high"] = float(np.tanh(z - half)), float(np.tanh(z + half))
        return out
    out["ci_method"] = "bootstrap_percentile"
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    boot = _bootstrap_rank_correlations(x, y, idx, method)
    vals = boot[np.isfinite(boot)]
    out["n_boot_undefined"] = int(n_boot - len(vals))
    if len(vals):
        lo, hi = np.percentile(vals, percentile_levels(confidence))
        out["ci_low"], out["ci_high"] = float(lo), float(hi)
    else:
        out["note"] = "no bootstrap resample had a defined correlation"
    return out


def williams_test(r12: float, r13: float, r23: float, n: int) -> dict[str, Any]:
    """Williams (1959) test of r12 > r13 for dependent correlations (shared variable 1).

    Variable 1 is the human score, 2 and 3 the two metrics (Graham &
    Baldwin 2014, Eq. 2)::

        K = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23
        t = (r12 - r13) sqrt((n - 1)(1 + r23))
            / sqrt(2 K (n - 1)/(n - 3) + ((r12 + r13)^2 / 4) (1 - r23)^3)

    with ``n - 3`` degrees of freedom; ``p_value`` is ONE-sided
    (H1: r12 > r13) as in Graham & Baldwin (2014); ``p_value_two_sided`` too.
    """
    out: dict[str, Any] = {"t": None, "df": n - 3, "p_value": None, "p_value_two_sided": None, "note": None}
    if n <= 3:
        out["note"] = "Williams test needs n > 3"
        return out
    for r in (r12, r13, r23):
        if not -1 <= r <= 1:
            raise ValueError("correlations must lie in [-1, 1]")
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    denom = 2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3
    if denom <= 0:
        out["note"] = "degenerate correlation matrix (denominator <= 0)"
        return out
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(denom)
    out["t"] = float(t)
    from scipy import stats

    out["p_value"] = float(stats.t.sf(t, n - 3))
    out["p_value_two_sided"] = float(min(1.0, 2 * stats.t.sf(abs(t), n - 3)))
    return out


def compare_correlations(
    human: Scores,
    metric_a: Scores,
    metric_b: Scores,
    *,
    method: str = "pearson",
) -> dict[str, Any]:
    """Is metric A's correlation with humans higher than metric B's? (Williams 1959).

    Computes r(human, A), r(human, B), r(A, B) on the systems all three have
    (``method`` correlation; Graham & Baldwin 2014 use Pearson) and applies
    :func:`williams_test`.
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}")
    frame = pd.DataFrame({"h": _series(human), "a": _series(metric_a), "b": _series(metric_b)}).dropna()
    n = len(frame)
    res: dict[str, Any] = {"method": method, "n": n, "r_human_a": None, "r_human_b": None, "r_a_b": None}
    if n <= 3:
        res.update(williams_test(0.0, 0.0, 0.0, n))  # returns the "needs n > 3" note
        return res
    if float(frame.std().min()) == 0.0:
        res.update({"t": None, "df": n - 3, "p_value": None, "p_value_two_sided": None,
                    "note": "a variable is constant: correlation undefined"})
        return res
    r12 = _corr(frame["h"].to_numpy(), frame["a"].to_numpy(), method)[0]
    r13 = _corr(frame["h"].to_numpy(), frame["b"].to_numpy(), method)[0]
    r23 = _corr(frame["a"].to_numpy(), frame["b"].to_numpy(), method)[0]
    res.update({"r_human_a": r12, "r_human_b": r13, "r_a_b": r23})
    res.update(williams_test(r12, r13, r23, n))
    return res


def _series(x: Scores) -> pd.Series:
    return x if isinstance(x, pd.Series) else pd.Series(np.asarray(x, dtype=float))


def wmt_kendall_tau(
    human_pairs: pd.DataFrame,
    metric_scores: pd.DataFrame,
    *,
    item: str = "source_item",
    system_a: str = "system_a",
    system_b: str = "system_b",
    label: str = "label",
    score_item: str = "item",
    score_system: str = "system",
    score: str = "score",
    metric_ties: str = "discordant",
) -> dict[str, Any]:
    """WMT17 Kendall-like tau (Bojar, Graham & Kamran 2017) at item level.

    For each human pairwise preference (rows of a pairs table, label = the
    better system) the metric's scores of the two systems on that item are
    compared (higher score = better): Concordant if the metric prefers the
    same system, Discordant if it prefers the other.
    ``tau = (Concordant - Discordant) / (Concordant + Discordant)``.

    Human ties are EXCLUDED (WMT17 only keeps pairs with a clear human
    preference); counted in ``human_ties_excluded``.  Metric ties
    (``metric_ties``): ``"discordant"`` (WMT17 default: penalised),
    ``"concordant"`` or ``"drop"``.  Pairs lacking a metric score are
    dropped (``missing_scores``).
    """
    if metric_ties not in ("discordant", "concordant", "drop"):
        raise ValueError("metric_ties must be 'discordant', 'concordant' or 'drop'")
    sc = metric_scores[[score_item, score_system, score]].copy()
    sc[score_system] = sc[score_system].astype(str)
    if sc.duplicated([score_item, score_system]).any():
        raise ValueError("metric_scores has more than one score per (item, system)")
    lookup = sc.set_index([score_item, score_system])[score]
    hp = human_pairs[[item, system_a, system_b, label]].astype({system_a: str, system_b: str, label: str})
    is_tie = hp[label] == "tie"
    dec = hp[~is_tie]
    winner = dec[label].to_numpy()
    loser = np.where(winner == dec[system_a].to_numpy(), dec[system_b].to_numpy(), dec[system_a].to_numpy())
    if not ((winner == dec[system_a].to_numpy()) | (winner == dec[system_b].to_numpy())).all():
        raise ValueError("human pair labels must be one of the two systems or 'tie'")
    s_win = lookup.reindex(pd.MultiIndex.from_arrays([dec[item].to_numpy(), winner])).to_numpy(float)
    s_los = lookup.reindex(pd.MultiIndex.from_arrays([dec[item].to_numpy(), loser])).to_numpy(float)
    ok = np.isfinite(s_win) & np.isfinite(s_los)
    diff = s_win[ok] - s_los[ok]
    conc = int((diff > 0).sum())
    disc = int((diff < 0).sum())
    ties = int((diff == 0).sum())
    if metric_ties == "discordant":
        disc += ties
    elif metric_ties == "concordant":
        conc += ties
    out: dict[str, Any] = {
        "tau": None, "concordant": conc, "discordant": disc, "metric_ties": ties, "metric_ties_policy": metric_ties,
        "human_ties_excluded": int(is_tie.sum()), "missing_scores": int((~ok).sum()), "note": None,
    }
    if conc + disc == 0:
        out["note"] = "no usable pair"
    else:
        out["tau"] = (conc - disc) / (conc + disc)
    return out


def paired_t_test(
    scores_a: Scores,
    scores_b: Scores,
    *,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Paired t-test of two systems on per-document scores (Student 1908).

    ``d_i = a_i - b_i`` over documents scored for both systems (aligned on
    the index for Series; NaN pairs dropped); ``t = mean(d) / (sd(d)/sqrt(n))``
    with ``n - 1`` df, two-sided p (``scipy.stats.ttest_rel``) and a t CI
    for the mean difference.
    """
    a, b, n_missing = _align(scores_a, scores_b)
    d = a - b
    n = len(d)
    out: dict[str, Any] = {"n": n, "n_missing": n_missing, "mean_diff": None, "t": None, "df": n - 1,
                           "p_value": None, "ci_low": None, "ci_high": None, "note": None}
    if n == 0:
        out["note"] = "no paired scores"
        return out
    out["mean_diff"] = float(d.mean())
    if n < 2:
        out["note"] = "need at least two paired documents"
        return out
    sd = float(d.std(ddof=1))
    if sd == 0:
        out["note"] = "all differences are equal: t undefined"
        out["ci_low"] = out["ci_high"] = out["mean_diff"]
        return out
    from scipy import stats

    res = stats.ttest_rel(a, b)
    half = stats.t.ppf((1 + confidence) / 2, n - 1) * sd / math.sqrt(n)
    out.update({"t": finite_or_none(res.statistic), "p_value": finite_or_none(res.pvalue),
                "ci_low": out["mean_diff"] - float(half), "ci_high": out["mean_diff"] + float(half)})
    return out


def bootstrap_mean_ci(
    scores: Scores,
    *,
    n_boot: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Mean with a percentile-bootstrap CI (Efron & Tibshirani 1993); NaN dropped."""
    x = np.asarray(scores, dtype=float)
    x = x[np.isfinite(x)]
    n = len(x)
    out: dict[str, Any] = {"n": n, "mean": None, "ci_low": None, "ci_high": None, "note": None}
    if n == 0:
        out["note"] = "no scores"
        return out
    out["mean"] = float(x.mean())
    rng = np.random.default_rng(seed)
    means = np.empty(n_boot)
    chunk = max(1, 2_000_000 // n)
    for start in range(0, n_boot, chunk):
        stop = min(n_boot, start + chunk)
        means[start:stop] = x[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    lo, hi = np.percentile(means, percentile_levels(confidence))
    out["ci_low"], out["ci_high"] = float(lo), float(hi)
    return out


def system_means(
    df: pd.DataFrame,
    *,
    system: str = "system",
    score: str = "score",
    n_boot: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> list[dict[str, Any]]:
    """Per-system mean score with bootstrap CI (Efron & Tibshirani 1993), sorted by mean.

    Uses :func:`bootstrap_mean_ci` per system (seed + i for the i-th system in
    sorted order); NaN scores are dropped.  No ties/invalid handling needed.
    """
    res = []
    for i, (name, grp) in enumerate(df.groupby(system, sort=True)):
        r = bootstrap_mean_ci(grp[score].to_numpy(float), n_boot=n_boot,
                              seed=None if seed is None else seed + i, confidence=confidence)
        res.append({"system": str(name), **r})
    return sorted(res, key=lambda r: (r["mean"] is None, -(r["mean"] or 0.0), r["system"]))


def dip_scores(
    df: pd.DataFrame,
    *,
    reference_system: str,
    item: str = "item",
    system: str = "system",
    score: str = "score",
) -> dict[str, dict[str, Any]]:
    """DiP Eq. 1 per system: ``sum_items (score(reference) - score(system))``; lower is better.

    Summed over the items scored for both the reference and the system
    (others counted in ``n_missing``).  Returns ``{system: {"dip", "n_items",
    "n_missing"}}`` for every non-reference system.
    """
    d = df[[item, system, score]].copy()
    d[system] = d[system].astype(str)
    if d.duplicated([item, system]).any():
        raise ValueError("more than one score per (item, system)")
    wide = d.pivot(index=item, columns=system, values=score)
    if reference_system not in wide.columns:
        raise ValueError(f"reference system {reference_system!r} has no scores")
    ref = wide[reference_system]
    out = {}
    for s in wide.columns:
        if s == reference_system:
            continue
        diff = ref - wide[s]
        ok = diff.notna()
        out[str(s)] = {"dip": float(diff[ok].sum()), "n_items": int(ok.sum()),
                       "n_missing": int(wide[s].notna().sum() - ok.sum())}
    return out


def contrapro_accuracy(
    df: pd.DataFrame,
    *,
    item: str = "item",
    score: str = "score",
    is_reference: str = "is_reference",
    higher_is_better: bool = True,
    by: str | None = None,
) -> dict[str, Any]:
    """ContraPro accuracy (Müller et al. 2018).

    An item is correct iff its reference's score is STRICTLY better than the
    score of every contrastive variant of that item (a tie counts as an
    error).  Items without exactly one scored reference or without any
    scored contrastive variant are skipped (``n_skipped``); NaN scores are
    ignored.  ``by`` (e.g. ``"phenomenon"``) adds a per-group breakdown.
    """
    d = df[[item, score, is_reference] + ([by] if by else [])].copy()
    d = d[np.isfinite(d[score].astype(float))]
    d[is_reference] = d[is_reference].astype(bool)
    sign = 1.0 if higher_is_better else -1.0
    d["_s"] = sign * d[score].astype(float)
    refs = d[d[is_reference]].groupby(item)["_s"].agg(["max", "size"])
    cons = d[~d[is_reference]].groupby(item)["_s"].max()
    joined = refs.join(cons.rename("cmax"), how="outer")
    valid = (joined["size"] == 1) & joined["cmax"].notna()
    correct = (joined["max"] > joined["cmax"]) & valid

    def summary(mask_items: pd.Index) -> dict[str, Any]:
        v = valid.reindex(mask_items, fill_value=False)
        c = correct.reindex(mask_items, fill_value=False)
        n = int(v.sum())
        return {"accuracy": (float(c.sum()) / n) if n else None, "n_correct": int(c.sum()), "n_items": n,
                "n_skipped": int(len(mask_items) - n)}

    out = summary(joined.index)
    if by:
        groups = d.groupby(item)[by].first()
        out["by"] = {str(g): summary(pd.Index(idx)) for g, idx in groups.groupby(groups).groups.items()}
    return out
