"""Agreement between raters who mark error spans (MQM, ESA) and score segments.

Pure NumPy/pandas/SciPy (no Django, no app import).  Definitions and sources
in ``docs/mqm.md`` ("Span agreement"); summary:

* :func:`span_agreement` -- for every rater pair, on the units (segments;
  target and source are separate units when a ``side`` column is given)
  both raters judged: character-level precision/recall/F1 (the marked
  character positions of rater A vs rater B), exact-span P/R/F1 (a span
  matches only a span with the same start and end) and overlap-span P/R/F1
  (a span counts when it overlaps at least one span of the other rater).
  A is the reference: precision = share of B's marks that A also made.
* :func:`category_pairs` -- overlapping spans of two raters matched one to
  one (largest overlap first), returned as a long (item, rater, label)
  table for :func:`evaluators.stats.agreement.agreement` (Gwet's AC1 etc.);
  :func:`category_agreement` runs it.
* :func:`score_agreement` -- segment scores: Kendall's tau-b and Pearson's r
  per rater pair; Krippendorff's alpha (interval metric) over all raters via
  the agreement adapter with quadratic weights (equal to the interval
  alpha; checked on Krippendorff's 2011 example, 0.849).
* :func:`unitized_alpha` -- Krippendorff's alpha for unitized data, uα
  (Krippendorff 1995; 2004, sec. 12.4), for TWO observers, checked on the
  worked examples of Krippendorff (1995: 57) and (2004: 254).

Input rows: one per marked span, columns ``unit``, ``rater``, ``start``,
``end`` (half-open character offsets) and, where needed, ``category``; a row
with an empty ``start``/``end`` records that the rater judged the unit and
marked nothing (like a ``No-error`` row).  A unit counts for a pair only if
both raters have at least one row for it.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from evaluators.stats.agreement import agreement

__all__ = [
    "span_agreement",
    "category_pairs",
    "category_agreement",
    "score_agreement",
    "unitized_alpha",
    "unitized_alpha_pairs",
]

Interval = tuple[int, int]


def _prf(tp_p: float, n_pred: float, tp_r: float, n_ref: float) -> dict[str, float | None]:
    p = tp_p / n_pred if n_pred else None
    r = tp_r / n_ref if n_ref else None
    f = None
    if p is not None and r is not None:
        f = 0.0 if p + r == 0 else 2 * p * r / (p + r)
    return {"precision": p, "recall": r, "f1": f}


def _merge(intervals: Sequence[Interval]) -> list[Interval]:
    """Union of half-open intervals, sorted, overlapping or touching ones joined."""
    out: list[list[int]] = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def _intersection(a: Sequence[Interval], b: Sequence[Interval]) -> int:
    """Length of the intersection of two merged interval lists."""
    i = j = total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def _overlaps(s: Interval, t: Interval) -> int:
    return max(0, min(s[1], t[1]) - max(s[0], t[0]))


def _prepare(spans: pd.DataFrame, unit: str, rater: str, start: str, end: str, side: str | None, extra: Sequence[str] = ()) -> pd.DataFrame:
    cols = [unit, rater, start, end, *extra] + ([side] if side else [])
    missing = [c for c in cols if c not in spans.columns]
    if missing:
        raise ValueError(f"missing column(s): {', '.join(missing)}")
    df = pd.DataFrame({"rater": spans[rater].to_numpy()})
    df["unit"] = list(zip(spans[unit], spans[side])) if side else spans[unit].to_numpy()
    st = pd.to_numeric(spans[start], errors="coerce")
    en = pd.to_numeric(spans[end], errors="coerce")
    has = st.notna() & en.notna()
    half = st.notna() ^ en.notna()
    bad = np.flatnonzero((half | (has & ((en <= st) | (st < 0)))).to_numpy())
    if len(bad):
        raise ValueError(f"span with a missing end, end <= start or a negative start at row(s) {', '.join(map(str, bad[:20]))}")
    df["start"] = st.to_numpy()
    df["end"] = en.to_numpy()
    df["has"] = has.to_numpy()
    for c in extra:
        df[c] = spans[c].to_numpy()
    return df


def _by_rater(df: pd.DataFrame) -> dict[Any, dict[Hashable, list[Interval]]]:
    out: dict[Any, dict[Hashable, list[Interval]]] = {}
    # lists: the same Python values a Series yields when iterated, without pandas' per-value call
    for r, u, s, e, h in zip(df["rater"].tolist(), df["unit"].tolist(), df["start"].tolist(), df["end"].tolist(),
                             df["has"].tolist()):
        units = out.setdefault(r, {})
        lst = units.setdefault(u, [])
        if h:
            lst.append((int(s), int(e)))
    return out


def span_agreement(
    spans: pd.DataFrame,
    *,
    unit: str = "unit",
    rater: str = "rater",
    start: str = "start",
    end: str = "end",
    side: str | None = None,
) -> list[dict[str, Any]]:
    """Character, exact-span and overlap-span P/R/F1 for every rater pair (micro-averaged over units).

    For a pair (A, B) on the units both judged, with ``chars_X`` the set of
    character positions rater X marked (union of X's spans) and ``S_X`` X's
    distinct spans:

    * characters: ``P = |chars_A & chars_B| / |chars_B|``,
      ``R = |chars_A & chars_B| / |chars_A|``, ``F1 = 2PR/(P+R)``;
    * exact: ``P = |S_A & S_B| / |S_B|``, ``R = |S_A & S_B| / |S_A|``;
    * overlap: ``P`` = share of B's spans overlapping at least one of A's,
      ``R`` = share of A's spans overlapping at least one of B's.

    Swapping A and B swaps P and R (F1 is symmetric).  A value is ``None``
    when its denominator is 0 (e.g. neither rater marked anything).
    """
    df = _prepare(spans, unit, rater, start, end, side)
    per = _by_rater(df)
    raters = sorted(per, key=str)
    out: list[dict[str, Any]] = []
    for a, b in itertools.combinations(raters, 2):
        units = [u for u in per[a] if u in per[b]]
        ca = cb = cab = 0
        ea = eb = eab = 0
        oa = ob = 0  # A spans overlapped by B, B spans overlapping A
        for u in units:
            sa, sb = sorted(set(per[a][u])), sorted(set(per[b][u]))
            ma, mb = _merge(sa), _merge(sb)
            ca += sum(e - s for s, e in ma)
            cb += sum(e - s for s, e in mb)
            cab += _intersection(ma, mb)
            ea += len(sa)
            eb += len(sb)
            eab += len(set(sa) & set(sb))
            oa += sum(1 for s in sa if any(_overlaps(s, t) for t in sb))
            ob += sum(1 for t in sb if any(_overlaps(s, t) for s in sa))
        out.append(
            {
                "rater_a": a,
                "rater_b": b,
                "n_units": len(units),
                "characters": {"a": ca, "b": cb, "both": cab, **_prf(cab, cb, cab, ca)},
                "exact": {"a": ea, "b": eb, "matched": eab, **_prf(eab, eb, eab, ea)},
                "overlap": {"a": ea, "b": eb, "a_matched": oa, "b_matched": ob, **_prf(ob, eb, oa, ea)},
            }
        )
    return out


def _cut(label: Any, depth: int | None) -> Any:
    if depth is None:
        return label
    return "/".join(str(label).split("/")[:depth])


def category_pairs(
    spans: pd.DataFrame,
    *,
    unit: str = "unit",
    rater: str = "rater",
    start: str = "start",
    end: str = "end",
    category: str = "category",
    side: str | None = None,
    depth: int | None = None,
) -> pd.DataFrame:
    """The categories of overlapping spans of every rater pair, as a long ratings table.

    For each pair (A, B) and unit, every (A span, B span) that overlaps is a
    candidate; candidates are taken by decreasing overlap length (ties: A's
    then B's start, end), each span used at most once (a one-to-one
    matching).  Each matched pair becomes one item rated by A and by B.
    ``depth`` keeps the first ``depth`` levels of a ``/``-separated category
    (``depth=1``: ``Accuracy/Omission`` -> ``Accuracy``).

    Returns columns ``item`` (``"A|B|unit|k"``), ``rater``, ``label``,
    ``rater_a``, ``rater_b`` -- feed ``item``/``rater``/``label`` to
    :func:`evaluators.stats.agreement.agreement`.
    """
    df = _prepare(spans, unit, rater, start, end, side, extra=(category,))
    df = df[df["has"]]
    groups: dict[Any, dict[Hashable, list[tuple[int, int, Any]]]] = {}
    for r, u, s, e, c in zip(df["rater"].tolist(), df["unit"].tolist(), df["start"].tolist(), df["end"].tolist(),
                             df[category].tolist()):
        groups.setdefault(r, {}).setdefault(u, []).append((int(s), int(e), _cut(c, depth)))
    judged = _by_rater(_prepare(spans, unit, rater, start, end, side))
    raters = sorted(judged, key=str)
    rows: list[tuple[str, Any, Any, Any, Any]] = []
    for a, b in itertools.combinations(raters, 2):
        for u in judged[a]:
            if u not in judged[b]:
                continue
            sa = groups.get(a, {}).get(u, [])
            sb = groups.get(b, {}).get(u, [])
            cands = [
                (-_overlaps((x[0], x[1]), (y[0], y[1])), x[0], x[1], y[0], y[1], i, j)
                for i, x in enumerate(sa)
                for j, y in enumerate(sb)
                if _overlaps((x[0], x[1]), (y[0], y[1])) > 0
            ]
            cands.sort()
            used_a: set[int] = set()
            used_b: set[int] = set()
            k = 0
            for *_, i, j in cands:
                if i in used_a or j in used_b:
                    continue
                used_a.add(i)
                used_b.add(j)
                item = f"{a}|{b}|{u}|{k}"
                rows.append((item, a, sa[i][2], a, b))
                rows.append((item, b, sb[j][2], a, b))
                k += 1
    return pd.DataFrame(rows, columns=["item", "rater", "label", "rater_a", "rater_b"])


def category_agreement(spans: pd.DataFrame, *, categories: list | None = None, **kwargs: Any) -> dict[str, Any]:
    """Agreement on the categories of matched overlapping spans (:func:`category_pairs`).

    ``pooled``: the adapter's full result over all matched pairs of all
    rater pairs (items rated by two raters each; Gwet's AC1 is
    ``pooled["coefficients"]["gwet_ac1"]``); ``pairs``: per rater pair, the
    number of matched spans and the adapter's AC1 and Cohen's kappa
    (``None`` with a note when undefined, e.g. no matched span).
    """
    pairs = category_pairs(spans, **kwargs)
    if pairs.empty:
        return {"n_matched": 0, "pooled": None, "pairs": [], "note": "no overlapping spans between any two raters"}
    pooled = agreement(pairs, item="item", rater="rater", label="label", categories=categories)
    per: list[dict[str, Any]] = []
    for (a, b), grp in pairs.groupby(["rater_a", "rater_b"], sort=True):
        res = agreement(grp, item="item", rater="rater", label="label", categories=categories)
        coefs = res["coefficients"]
        per.append(
            {
                "rater_a": a,
                "rater_b": b,
                "n_matched": int(grp["item"].nunique()),
                "percent_agreement": coefs["percent_agreement"],
                "gwet_ac1": coefs["gwet_ac1"],
                "cohen_kappa": coefs.get("cohen_kappa"),
            }
        )
    return {"n_matched": int(pairs["item"].nunique()), "pooled": pooled, "pairs": per, "note": None}


def score_agreement(
    scores: pd.DataFrame,
    *,
    unit: str = "unit",
    rater: str = "rater",
    score: str = "score",
) -> dict[str, Any]:
    """Segment-score agreement: Kendall tau-b and Pearson r per rater pair, Krippendorff alpha (interval) overall.

    ``scores``: one row per (unit, rater) with a numeric score (MQM or ESA).
    Pairs use the units both raters scored (at least 3 for a value; a
    constant score gives ``None``).  Alpha: the agreement adapter with
    ``weights="quadratic"`` on the numeric scores, which is Krippendorff's
    interval alpha (``1 - D_o/D_e`` with ``delta^2 = (c - k)^2``; Gwet 2014,
    ch. 3; Krippendorff 2011).
    """
    missing = [c for c in (unit, rater, score) if c not in scores.columns]
    if missing:
        raise ValueError(f"missing column(s): {', '.join(missing)}")
    df = pd.DataFrame({"unit": scores[unit].to_numpy(), "rater": scores[rater].to_numpy(), "score": pd.to_numeric(scores[score], errors="coerce").to_numpy()})
    df = df.dropna(subset=["score"])
    if df.duplicated(["unit", "rater"]).any():
        raise ValueError("more than one score for one (unit, rater)")
    wide = df.pivot(index="unit", columns="rater", values="score")
    raters = sorted(wide.columns, key=str)
    pairs: list[dict[str, Any]] = []
    # the units both scored, in the pivot's order, by a mask on one array (pandas' dropna on the pair's two
    # columns gave the same values, at ~2 ms a pair: 36 pairs for 9 raters)
    values = wide.to_numpy(dtype=float)
    scored = ~np.isnan(values)
    column = {c: k for k, c in enumerate(wide.columns)}
    for a, b in itertools.combinations(raters, 2):
        both = scored[:, column[a]] & scored[:, column[b]]
        n = int(both.sum())
        res: dict[str, Any] = {"rater_a": a, "rater_b": b, "n": n, "kendall_tau": None, "kendall_p": None, "pearson": None, "pearson_p": None, "note": None}
        x, y = values[both, column[a]], values[both, column[b]]
        if n < 3:
            res["note"] = "fewer than 3 units scored by both"
        elif np.ptp(x) == 0 or np.ptp(y) == 0:
            res["note"] = "a rater gave the same score to every shared unit: correlation undefined"
        else:
            from scipy import stats  # here, not at import: scipy.stats is heavy (it loads scipy.spatial)

            t = stats.kendalltau(x, y, variant="b")
            r = stats.pearsonr(x, y)
            res.update(kendall_tau=float(t.statistic), kendall_p=float(t.pvalue), pearson=float(r.statistic), pearson_p=float(r.pvalue))
        pairs.append(res)
    alpha: dict[str, Any]
    if df.empty:
        alpha = {"value": None, "note": "no scores"}
    else:
        full = agreement(df.rename(columns={"score": "label"}), item="unit", rater="rater", label="label", weights="quadratic")
        alpha = full["coefficients"]["krippendorff_alpha"]
    return {"n_units": int(wide.shape[0]), "n_raters": len(raters), "pairs": pairs, "krippendorff_alpha_interval": alpha}


# --------------------------------------------------------------------------
# Krippendorff's alpha for unitized data (two observers)
# --------------------------------------------------------------------------
def _sections(units: Sequence[Interval], length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Begin, length, is-unit of the alternating gaps and units covering [0, length)."""
    b: list[int] = []
    ln: list[int] = []
    w: list[int] = []
    pos = 0
    for s, e in sorted(units):
        if s > pos:
            b.append(pos)
            ln.append(s - pos)
            w.append(0)
        b.append(s)
        ln.append(e - s)
        w.append(1)
        pos = e
    if pos < length:
        b.append(pos)
        ln.append(length - pos)
        w.append(0)
    return np.array(b, dtype=float), np.array(ln, dtype=float), np.array(w, dtype=bool)


def _delta2(b1: np.ndarray, l1: np.ndarray, w1: np.ndarray, b2: np.ndarray, l2: np.ndarray, w2: np.ndarray) -> float:
    """Sum over all section pairs of Krippendorff's (2004: 12.4) squared distance.

    Every non-zero term needs the two sections to overlap, and each
    observer's sections tile the continuum in order, so one merge-like sweep
    over the overlapping pairs (O(S1 + S2)) visits every such term.
    """
    total = 0.0
    i = j = 0
    while i < len(b1) and j < len(b2):
        bg, lg, ug = float(b1[i]), float(l1[i]), bool(w1[i])
        bh, lh, uh = float(b2[j]), float(l2[j]), bool(w2[j])
        d = bg - bh
        if ug and uh:
            if -lg < d < lh:
                total += d * d + (d + lg - lh) ** 2
        elif ug and not uh:
            if 0 <= d <= lh - lg:
                total += lg * lg
        elif uh and not ug:
            if 0 <= -d <= lg - lh:
                total += lh * lh
        if bg + lg <= bh + lh:
            i += 1
        if bh + lh <= bg + lg:
            j += 1
    return total


def _check_units(units: Sequence[Interval], length: int, who: str) -> list[Interval]:
    for s, e in units:
        if not (0 <= s < e <= length):
            raise ValueError(f"{who}: unit [{s}, {e}) is not inside the continuum [0, {length})")
    return _merge_overlapping(units)


def _merge_overlapping(units: Sequence[Interval]) -> list[Interval]:
    """Join OVERLAPPING intervals (uα forbids them within one observer); touching ones stay apart."""
    out: list[list[int]] = []
    for s, e in sorted(units):
        if out and s < out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def unitized_alpha(
    observer_a: Mapping[Any, Sequence[Interval]],
    observer_b: Mapping[Any, Sequence[Interval]],
    length: int,
) -> dict[str, Any]:
    """Krippendorff's uα for two observers who unitized one continuum ``[0, length)``.

    ``observer_x`` maps each category to that observer's units (half-open
    ``(start, end)`` integer intervals); overlapping units of one category
    by one observer are joined first (uα assumes they do not overlap).
    Per category c (Krippendorff 2004, sec. 12.4; m = 2 observers, L = length):

    * ``D_o,c = sum_{i != j} sum_{g,h} delta^2_{c,ig,jh} / (m (m-1) L^2)``
      over the sections (units and gaps) g of observer i and h of j, with
      ``delta^2 = (b_g - b_h)^2 + (b_g + l_g - b_h - l_h)^2`` for two
      overlapping units, ``l_g^2`` for a unit g lying inside a gap h,
      ``l_h^2`` for a unit h inside a gap g, and 0 otherwise;
    * ``D_e,c = (2/L) sum_g [ (N_c - 1)/3 (2 l_g^3 - 3 l_g^2 + l_g)
      + l_g^2 sum_{gaps h, l_h >= l_g} (l_h - l_g + 1) ]
      / [ m L (m L - 1) - sum_g l_g (l_g - 1) ]`` over the N_c units g of c
      of both observers and the gaps h of both;
    * ``alpha_c = 1 - D_o,c / D_e,c``; overall
      ``u_alpha = 1 - sum_c D_o,c / sum_c D_e,c``.

    Returns ``{"alpha", "categories": {c: {"d_o", "d_e", "alpha"}}, "note"}``;
    a value is ``None`` when ``D_e`` is 0 (nothing to compare).
    """
    if length <= 0:
        raise ValueError("the continuum length must be positive")
    m = 2
    L = float(length)
    cats = sorted(set(observer_a) | set(observer_b), key=str)
    per: dict[Any, dict[str, float | None]] = {}
    sum_do = sum_de = 0.0
    for c in cats:
        ua = _check_units(list(observer_a.get(c, ())), length, "observer A")
        ub = _check_units(list(observer_b.get(c, ())), length, "observer B")
        sa, sb = _sections(ua, length), _sections(ub, length)
        d_o = 2.0 * _delta2(*sa, *sb) / (m * (m - 1) * L * L)
        unit_len = np.array([e - s for s, e in ua + ub], dtype=float)
        gaps = np.concatenate([sa[1][~sa[2]], sb[1][~sb[2]]])
        n_c = len(unit_len)
        num = 0.0
        for lg in unit_len:
            longer = gaps[gaps >= lg]
            num += (n_c - 1) / 3.0 * (2 * lg**3 - 3 * lg**2 + lg) + lg**2 * float((longer - lg + 1).sum())
        den = m * L * (m * L - 1) - float((unit_len * (unit_len - 1)).sum())
        d_e = (2.0 / L) * num / den if den > 0 else 0.0
        alpha_c = None if d_e <= 0 else 1.0 - d_o / d_e
        per[c] = {"d_o": d_o, "d_e": d_e, "alpha": alpha_c}
        sum_do += d_o
        sum_de += d_e
    alpha = None if sum_de <= 0 else 1.0 - sum_do / sum_de
    note = None if alpha is not None else "no units to compare (expected disagreement is 0)"
    return {"alpha": alpha, "categories": per, "note": note}


def unitized_alpha_pairs(
    spans: pd.DataFrame,
    unit_lengths: Mapping[Hashable, int],
    *,
    unit: str = "unit",
    rater: str = "rater",
    start: str = "start",
    end: str = "end",
    category: str = "category",
) -> list[dict[str, Any]]:
    """:func:`unitized_alpha` for every rater pair over the units both judged, laid end to end.

    The units both raters judged (in ``unit_lengths`` order) are concatenated
    into one continuum (offsets shifted by the lengths of the units before),
    so a span never crosses a unit boundary.  Returns per pair ``rater_a``,
    ``rater_b``, ``n_units``, ``length`` and the :func:`unitized_alpha` result.
    """
    df = _prepare(spans, unit, rater, start, end, None, extra=(category,))
    judged = _by_rater(df)
    place = {u: k for k, u in enumerate(unit_lengths)}  # the units' order
    raters = sorted(judged, key=str)
    out: list[dict[str, Any]] = []
    for a, b in itertools.combinations(raters, 2):
        # the units both judged, in unit_lengths order (a walk over every unit per pair cost ~6 ms on a release)
        units = sorted((u for u in judged[a] if u in judged[b] and u in place), key=place.__getitem__)
        offset: dict[Hashable, int] = {}
        pos = 0
        for u in units:
            offset[u] = pos
            pos += int(unit_lengths[u])
        obs: dict[Any, dict[Any, list[Interval]]] = {a: {}, b: {}}
        sub = df[df["has"] & df["rater"].isin([a, b]) & df["unit"].isin(units)]
        for r, u, s, e, c in zip(sub["rater"].tolist(), sub["unit"].tolist(), sub["start"].tolist(),
                                 sub["end"].tolist(), sub[category].tolist()):
            if e > unit_lengths[u]:
                raise ValueError(f"rater {r!r}, unit {u!r}: span end {int(e)} beyond the unit's length {unit_lengths[u]}")
            obs[r].setdefault(c, []).append((offset[u] + int(s), offset[u] + int(e)))
        res: dict[str, Any] = {"rater_a": a, "rater_b": b, "n_units": len(units), "length": pos}
        if pos == 0:
            res.update(alpha=None, categories={}, note="no shared unit with text")
        else:
            res.update(unitized_alpha(obs[a], obs[b], pos))
        out.append(res)
    return out
