"""Inter-rater agreement: the one thin adapter over ``irrCAC.raw.CAC``.

Input is a LONG ratings table (one row per rating: unit/item, rater, label).
A blank label (``NaN``, ``None``, ``""`` or whitespace) is a *missing* rating:
it is dropped before anything is computed, exactly like an empty cell in
Gwet's raw-ratings layout.  Internally the table is pivoted to the wide
``items x raters`` layout that irrCAC expects, and the categories are always
passed to irrCAC explicitly.

Coefficients (sources)
----------------------
* percent agreement -- Gwet (2014), *Handbook of Inter-Rater Reliability*,
  4th ed., ch. 2 (``pa`` of the R function ``pa.coeff.raw``);
* Gwet's AC1 / AC2 -- Gwet (2008), Br. J. Math. Stat. Psychol. 61:29-48;
  Gwet (2014);
* Fleiss' kappa -- Fleiss (1971), Psychol. Bull. 76:378-382;
* Conger's kappa -- Conger (1980), Psychol. Bull. 88:322-328 (computed here
  in closed form, O(n r q); irrCAC's version needs O(q^2) pandas operations
  and is slow for many categories; tested equal to irrCAC);
* Krippendorff's alpha -- Krippendorff (1970, 2011); standard error after
  Gwet (2014) as in the *current* R package ``irrCAC::krippen.alpha.raw``
  (irrCAC-python 0.4.4 centres the per-item agreement on ``pa`` instead of
  ``pa'``; this adapter recomputes the variance with the corrected formula);
* Brennan-Prediger -- Brennan & Prediger (1981), Educ. Psychol. Meas.
  41:687-699;
* Cohen's kappa -- Cohen (1960), Educ. Psychol. Meas. 20:37-46 (weighted:
  Cohen 1968), computed here on the items both raters rated.

Inference conventions (Gwet's R package ``irrCAC``)
---------------------------------------------------
* standard errors: Gwet's linearisation (jack-knife-like) variance with an
  infinite population (finite-population correction ``f = 0``);
* p-value: ONE-sided, ``1 - T_{n-1}(coef / se)`` with ``n`` the number of
  items that received at least one rating (irrCAC-python reports a two-sided
  value; it is recomputed here);
* confidence interval: two-sided 95 %, ``coef -/+ t_{0.975, n-1} * se``,
  clipped to ``[-1, 1]`` (``[0, 1]`` for percent agreement).  R only caps the
  upper bound at 1; the lower clip never binds for a sane estimate.

Every value that is mathematically undefined (0/0 chance agreement, a
single item, no overlap, ...) is returned as ``None`` together with a
human-readable ``"note"``; ``NaN``/``inf`` never leave this module.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from irrCAC.raw import CAC
from irrCAC.weights import Weights
from scipy import sparse
from scipy import stats

__all__ = [
    "WEIGHT_SCHEMES",
    "COEFFICIENT_KEYS",
    "agreement",
    "agreement_from_wide",
    "long_to_wide",
    "derive_categories",
    "weight_matrix",
    "cohen_kappa",
    "pairwise_cohen_kappa",
    "is_missing_label",
]

#: Weight schemes accepted (irrCAC names).  ``identity`` = unweighted.
WEIGHT_SCHEMES: tuple[str, ...] = ("identity", "quadratic", "linear", "ordinal")

#: Keys of ``result["coefficients"]`` in output order.
COEFFICIENT_KEYS: tuple[str, ...] = (
    "percent_agreement",
    "gwet_ac1",
    "fleiss_kappa",
    "conger_kappa",
    "krippendorff_alpha",
    "brennan_prediger",
    "cohen_kappa",
)

# our key -> irrCAC.raw.CAC method
_IRRCAC_METHODS: tuple[tuple[str, str], ...] = (
    ("gwet_ac1", "gwet"),
    ("fleiss_kappa", "fleiss"),
    ("conger_kappa", "conger"),
    ("krippendorff_alpha", "krippendorff"),
    ("brennan_prediger", "bp"),
)

_CONFIDENCE = 0.95
_SE_ZERO = 1e-14  # irrCAC replaces a zero standard error by 1e-15


# --------------------------------------------------------------------------
# label handling
# --------------------------------------------------------------------------
def is_missing_label(value: Any) -> bool:
    """True for a missing rating: ``None``, ``NaN``/``NaT``, or a blank string.

    Lists/tuples/sets (multi-label answers) are never "missing" here; turn
    them into one category first (see :mod:`evaluators.stats.ratings`).
    """
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip() == ""
    if isinstance(value, (list, tuple, set, frozenset, dict, np.ndarray)):
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def _as_number(value: Any) -> float | None:
    """A float if ``value`` is a number or a numeric string, else ``None``."""
    if _is_number(value):
        out = float(value)
        return out if math.isfinite(out) else None
    if isinstance(value, str):
        try:
            out = float(value.strip())
        except ValueError:
            return None
        return out if math.isfinite(out) else None
    return None


def _python_numbers(values: Iterable[float]) -> list[int | float]:
    """Numbers as plain Python ints when all are integral, else floats."""
    vals = [float(v) for v in values]
    if all(v.is_integer() for v in vals):
        return [int(v) for v in vals]
    return vals


def _clean_one(v: Any) -> Any:
    if isinstance(v, str):
        v = v.strip()
    return np.nan if is_missing_label(v) else v


def _map_unique(values: pd.Series, func: Any) -> pd.Series:
    """``values.map(func)`` evaluated once per distinct value (fast path)."""
    s = values.astype(object)
    try:
        idx, uniq = pd.factorize(s, use_na_sentinel=True)
    except TypeError:  # unhashable values (lists): slow path
        return s.map(func)
    table = np.empty(len(uniq) + 1, dtype=object)
    for j, u in enumerate(uniq):
        table[j] = func(u)
    table[-1] = func(np.nan)
    return pd.Series(table[idx], index=values.index, dtype=object)


def _clean(values: pd.Series) -> pd.Series:
    """Strip strings; blanks/None/NaN -> NaN (object dtype)."""
    return _map_unique(values, _clean_one)


def derive_categories(labels: Iterable[Any]) -> list:
    """Sorted unique non-missing labels, as JSON-able Python values.

    The default category set of Gwet's (2014) R package (``categ.labels``
    unset): only observed categories; missing labels are ignored.

    If every non-missing label is a number or a numeric string the labels
    are treated as numbers and sorted numerically (``2 < 10``) and returned
    as ints (all integral) or floats; otherwise labels are compared as
    strings and sorted lexicographically.
    """
    s = labels if isinstance(labels, pd.Series) else pd.Series(list(labels), dtype=object)
    s = _clean(s).dropna()
    try:
        uniq = pd.unique(s)
    except TypeError:
        uniq = list({str(v): v for v in s}.values())
    if len(uniq) == 0:
        return []
    nums = [_as_number(v) for v in uniq]
    if all(n is not None for n in nums):
        return _python_numbers(sorted(set(nums)))  # type: ignore[arg-type]
    return sorted({str(v) for v in uniq})


def _normalise_categories(categories: Sequence[Any]) -> tuple[list, bool]:
    """Return (categories, numeric?) with JSON-able Python values, no dups."""
    cats = list(categories)
    if any(is_missing_label(c) for c in cats):
        raise ValueError("categories must not contain missing/blank values")
    nums = [_as_number(c) for c in cats]
    if cats and all(n is not None for n in nums):
        out = _python_numbers(nums)  # type: ignore[arg-type]
        numeric = True
    else:
        out = [str(c).strip() for c in cats]
        numeric = False
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate categories: {categories!r}")
    return out, numeric


def _encode(labels: pd.Series, categories: Sequence[Any] | None) -> tuple[np.ndarray, list, bool]:
    """Encode a (cleaned, non-missing) label series to codes 0..q-1."""
    if categories is None:
        cats = derive_categories(labels)
    else:
        cats = list(categories)
    cats, numeric = _normalise_categories(cats) if cats else ([], False)
    if numeric:
        lookup_num = {float(c): i for i, c in enumerate(cats)}

        def code(v: Any) -> int:
            x = _as_number(v)
            return lookup_num.get(x, -1) if x is not None else -1

    else:
        lookup_str = {c: i for i, c in enumerate(cats)}

        def code(v: Any) -> int:
            return lookup_str.get(str(v).strip(), -1)

    codes_arr = _map_unique(labels, code).to_numpy(dtype=np.int64)
    bad = codes_arr < 0
    if bad.any():
        unknown = sorted({str(v) for v in labels[bad].tolist()})[:10]
        raise ValueError(
            f"{int(bad.sum())} rating(s) have labels not among categories {cats!r}: {unknown}"
        )
    return codes_arr, cats, numeric


def weight_matrix(categories: Sequence[Any], weights: str = "identity") -> np.ndarray:
    """Agreement-weight matrix ``w_kl`` (1 on the diagonal) from irrCAC.

    Gwet (2014), ch. 3: identity ``w_kl = [k = l]``; quadratic
    ``1 - (x_k - x_l)^2 / (x_max - x_min)^2``; linear
    ``1 - |x_k - x_l| / (x_max - x_min)``; ordinal (rank-based).  Numeric
    categories use their values ``x``; other categories use their positions
    1..q in the given order.  With fewer than two categories the only
    sensible matrix is ``[[1]]``.
    """
    if weights not in WEIGHT_SCHEMES:
        raise ValueError(f"weights must be one of {WEIGHT_SCHEMES}, got {weights!r}")
    cats, _ = _normalise_categories(categories) if len(categories) else ([], False)
    q = len(cats)
    if q < 2:
        return np.ones((q, q))
    return np.asarray(Weights(list(cats))[weights], dtype=float)


# --------------------------------------------------------------------------
# long -> wide
# --------------------------------------------------------------------------
class _Coded:
    """Codes matrix (items x raters, -1 = missing) plus metadata."""

    def __init__(self, codes: np.ndarray, items: list, raters: list, categories: list, numeric: bool):
        self.codes = codes
        self.items = items
        self.raters = raters
        self.categories = categories
        self.numeric = numeric

    @property
    def q(self) -> int:
        return len(self.categories)

    def agree_matrix(self) -> np.ndarray:
        """n x q counts ``r_ik`` of raters who put item i in category k."""
        n, _ = self.codes.shape
        q = self.q
        rows = np.broadcast_to(np.arange(n)[:, None], self.codes.shape)
        ok = self.codes >= 0
        flat = rows[ok] * q + self.codes[ok]
        return np.bincount(flat, minlength=n * q).reshape(n, q).astype(float)

    def to_irrcac_frame(self) -> pd.DataFrame:
        """Wide frame of category values (NaN = missing) for irrCAC."""
        if self.numeric:
            values = np.asarray([float(c) for c in self.categories] + [np.nan])
        else:
            values = np.asarray(list(self.categories) + [np.nan], dtype=object)
        # code -1 indexes the trailing NaN
        data = values[self.codes]
        return pd.DataFrame(data, columns=[f"r{j}" for j in range(self.codes.shape[1])])


def _factorize(values: pd.Series) -> tuple[np.ndarray, list]:
    """Codes + sorted unique ids (insertion order if ids are not sortable)."""
    try:
        idx, uniq = pd.factorize(values, sort=True)
    except TypeError:
        idx, uniq = pd.factorize(values.astype(str), sort=True)
    return idx, list(uniq)


def _code_long(
    ratings: pd.DataFrame,
    *,
    item: str,
    rater: str,
    label: str,
    categories: Sequence[Any] | None,
    duplicates: str,
) -> _Coded:
    for col in (item, rater, label):
        if col not in ratings.columns:
            raise KeyError(f"column {col!r} not in ratings table (columns: {list(ratings.columns)})")
    if duplicates not in ("error", "first", "last"):
        raise ValueError("duplicates must be 'error', 'first' or 'last'")
    df = pd.DataFrame(
        {"item": ratings[item].to_numpy(), "rater": ratings[rater].to_numpy(), "label": _clean(ratings[label]).to_numpy()}
    )
    df = df[df["label"].notna()]
    if df["item"].isna().any() or df["rater"].isna().any():
        raise ValueError("item and rater ids must not be missing")
    dup = df.duplicated(["item", "rater"], keep=False)
    if dup.any():
        if duplicates == "error":
            ex = df.loc[dup, ["item", "rater"]].head(3).to_dict("records")
            raise ValueError(
                f"{int(dup.sum())} rows rate the same (item, rater) more than once, e.g. {ex}; "
                "pass duplicates='first' or 'last' to keep one"
            )
        df = df.drop_duplicates(["item", "rater"], keep=duplicates)
    codes, cats, numeric = _encode(df["label"], categories)
    item_idx, item_ids = _factorize(df["item"])
    rater_idx, rater_ids = _factorize(df["rater"])
    mat = np.full((len(item_ids), len(rater_ids)), -1, dtype=np.int64)
    mat[item_idx, rater_idx] = codes
    return _Coded(mat, list(item_ids), list(rater_ids), cats, numeric)


def long_to_wide(
    ratings: pd.DataFrame,
    *,
    item: str = "item",
    rater: str = "rater",
    label: str = "label",
    categories: Sequence[Any] | None = None,
    duplicates: str = "error",
) -> pd.DataFrame:
    """Pivot a long ratings table to the wide ``items x raters`` layout.

    The wide layout is Gwet's (2014) "raw ratings" format used by irrCAC.
    There are no ties or invalid answers at this level: every non-missing
    label is a category (resolve them with :mod:`evaluators.stats.ratings`).

    Missing labels are dropped first; items/raters left with no rating do not
    appear.  Labels are normalised as in :func:`derive_categories` (numeric
    strings become numbers).  Duplicate (item, rater) rows raise unless
    ``duplicates`` is ``"first"``/``"last"``.
    """
    coded = _code_long(ratings, item=item, rater=rater, label=label, categories=categories, duplicates=duplicates)
    values = np.asarray(list(coded.categories) + [np.nan], dtype=object)
    out = pd.DataFrame(values[coded.codes], index=pd.Index(coded.items, name=item), columns=pd.Index(coded.raters, name=rater))
    return out


# --------------------------------------------------------------------------
# inference helpers
# --------------------------------------------------------------------------
def _finite(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _coef(
    value: float | None,
    se: float | None,
    n: int,
    *,
    lower: float = -1.0,
    note: str | None = None,
) -> dict:
    """Build {value, se, ci_low, ci_high, p_value, note} (R irrCAC conventions)."""
    out: dict[str, Any] = {"value": None, "se": None, "ci_low": None, "ci_high": None, "p_value": None, "note": note}
    value = _finite(value)
    if value is None:
        out["note"] = note or "coefficient undefined for these ratings"
        return out
    out["value"] = value
    se = _finite(se)
    notes = [note] if note else []
    if n < 2:
        notes.append("standard error, CI and p-value need at least two items")
        se = None
    if se is None:
        if n >= 2:
            notes.append("standard error undefined for these ratings")
        out["note"] = "; ".join(notes)
        return out
    if se <= _SE_ZERO:
        se = 0.0
    out["se"] = se
    tq = float(stats.t.ppf(1 - (1 - _CONFIDENCE) / 2, n - 1))
    # clip to [lower, 1] as R caps at 1; a (small-sample) estimate below the
    # lower bound, e.g. Fleiss' kappa < -1, keeps an interval that contains it
    floor = min(lower, value)
    out["ci_low"] = float(min(1.0, max(floor, value - tq * se)))
    out["ci_high"] = float(min(1.0, max(floor, value + tq * se)))
    if se == 0.0:
        notes.append("standard error is 0 (no between-item variability); p-value is degenerate")
        out["p_value"] = 0.0 if value > 0 else 1.0
    else:
        out["p_value"] = float(stats.t.sf(value / se, n - 1))  # == 1 - cdf, but accurate in the tail
    out["note"] = "; ".join(notes) if notes else None
    return out


def _undefined(note: str) -> dict:
    return {"value": None, "se": None, "ci_low": None, "ci_high": None, "p_value": None, "note": note}


# --------------------------------------------------------------------------
# coefficients computed here
# --------------------------------------------------------------------------
def _percent_agreement(agree: np.ndarray, w: np.ndarray) -> tuple[float | None, float | None]:
    """Weighted percent agreement and its SE (Gwet 2014; R ``pa.coeff.raw``).

    ``pa = mean_{i: r_i>=2} sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1))`` with
    ``r*_ik = sum_l w_kl r_il``; variance ``1/(n(n-1)) sum_i (pa_i - pa)^2``
    where ``pa_i = (n / n2) * pa_i^raw`` (0 for items with <2 ratings).
    """
    n = agree.shape[0]
    ri = agree.sum(axis=1)
    multi = ri >= 2
    n2 = int(multi.sum())
    if n2 == 0:
        return None, None
    agree_w = agree @ w.T
    sum_q = (agree * (agree_w - 1)).sum(axis=1)
    pa_i = np.zeros(n)
    pa_i[multi] = sum_q[multi] / (ri[multi] * (ri[multi] - 1))
    pa = float(pa_i[multi].mean())
    if n < 2:
        return pa, None
    pa_ix = (n / n2) * pa_i
    var = float(np.sum((pa_ix - pa) ** 2) / (n * (n - 1)))
    return pa, math.sqrt(max(var, 0.0))


def _krippendorff(agree: np.ndarray, w: np.ndarray) -> tuple[float | None, float | None, float | None]:
    """Krippendorff's alpha, its SE, and pe -- Gwet (2014) / current R irrCAC.

    Items with fewer than 2 ratings are dropped; ``rbar`` = mean ratings per
    remaining item, ``eps = 1 / sum r_i``;
    ``pa' = mean_i sum_k r_ik (r*_ik - 1) / (rbar (r_i - 1))``,
    ``pa = (1 - eps) pa' + eps``, ``pi_k = mean_i r_ik / rbar``,
    ``pe = sum_kl w_kl pi_k pi_l``, ``alpha = (pa - pe) / (1 - pe)``.
    Variance: ``1/(n(n-1)) sum_i (a*_i - alpha')^2`` with ``alpha' = (pa'-pe)/(1-pe)``,
    ``a_i = (pa_i - pe)/(1-pe)``, ``pa_i = sum_k r_ik(r*_ik-1)/(rbar(r_i-1)) - pa' (r_i - rbar)/rbar``
    (**pa'** here: the R fix; irrCAC-python 0.4.4 uses pa),
    ``pe_i = sum_k r_ik pibar_k / rbar - pe (r_i - rbar)/rbar`` with
    ``pibar = (W pi + W' pi)/2`` and ``a*_i = a_i - 2 (1 - alpha') (pe_i - pe)/(1 - pe)``.
    """
    ri_all = agree.sum(axis=1)
    a = agree[ri_all >= 2]
    ri = ri_all[ri_all >= 2]
    n = a.shape[0]
    if n == 0:
        return None, None, None
    rbar = ri.mean()
    a_w = a @ w.T
    eps = 1.0 / ri.sum()
    sum_q = (a * (a_w - 1)).sum(axis=1)
    pa_prime = float(np.sum(sum_q / (rbar * (ri - 1))) / n)
    pa = (1 - eps) * pa_prime + eps
    pi = (a / rbar).mean(axis=0)
    pe = float(np.sum(w * np.outer(pi, pi)))
    if not (1 - pe) > 1e-12:
        return None, None, pe
    alpha = (pa - pe) / (1 - pe)
    alpha_prime = (pa_prime - pe) / (1 - pe)
    if n < 2:
        return alpha, None, pe
    pa_i = sum_q / (rbar * (ri - 1)) - pa_prime * (ri - rbar) / rbar
    a_i = (pa_i - pe) / (1 - pe)
    pi_w = (w @ pi + w.T @ pi) / 2
    pe_i = (a @ pi_w) / rbar - pe * (ri - rbar) / rbar
    a_ix = a_i - 2 * (1 - alpha_prime) * (pe_i - pe) / (1 - pe)
    var = float(np.sum((a_ix - alpha_prime) ** 2) / (n * (n - 1)))
    return alpha, math.sqrt(max(var, 0.0)), pe


def _conger(codes: np.ndarray, agree: np.ndarray, w: np.ndarray) -> tuple[float | None, float | None, float | None]:
    """Conger's (1980) kappa and Gwet's (2014) SE, vectorised (as R ``conger.kappa.raw``).

    ``p_gk`` = share of rater g's ratings in category k, ``pbar_k`` its mean
    over the r raters, ``s2_kl`` = covariance over raters;
    ``pe = sum_kl w_kl (pbar_k pbar_l - s2_kl / r)``.  Item terms:
    ``lambda_ig = (n/n_g) [eps_ig A_g[x_ig] - (eps_ig - n_g/n) p_g . A_g]`` with
    ``A_g = W' (r pbar - p_g)`` (this is irrCAC's double loop over k, l in
    closed form), ``pe_i = sum_g lambda_ig / (r (r-1))``; then the usual
    linearised variance.  irrCAC's pandas implementation is O(q^2) frame
    operations; this one is O(n r q).  Tested equal to irrCAC.
    """
    n, r = codes.shape
    q = w.shape[0]
    rated = codes >= 0
    classif = np.zeros((r, q))
    g_idx = np.broadcast_to(np.arange(r)[None, :], codes.shape)
    np.add.at(classif, (g_idx[rated], codes[rated]), 1.0)
    ng = classif.sum(axis=1)
    if (ng == 0).any() or r < 2:
        return None, None, None
    ri = agree.sum(axis=1)
    multi = ri >= 2
    n2 = int(multi.sum())
    if n2 == 0:
        return None, None, None
    agree_w = agree @ w.T
    sum_q = (agree * (agree_w - 1)).sum(axis=1)
    pa = float(np.sum(sum_q[multi] / (ri[multi] * (ri[multi] - 1))) / n2)
    pgk = classif / ng[:, None]
    pbar = pgk.mean(axis=0)
    s2 = (pgk.T @ pgk - r * np.outer(pbar, pbar)) / (r - 1)
    pe = float(np.sum(w * (np.outer(pbar, pbar) - s2 / r)))
    if not (1 - pe) > 1e-12:
        return None, None, pe
    kappa = (pa - pe) / (1 - pe)
    if n < 2:
        return kappa, None, pe
    c = r * pbar[None, :] - pgk  # (r, q)
    a_g = c @ w  # A_g[l] = sum_k w_kl c_gk
    s_g = (pgk * a_g).sum(axis=1)  # p_g . A_g
    eps = rated.astype(float)
    picked = np.where(rated, a_g[g_idx, np.where(rated, codes, 0)], 0.0)
    lam = (n / ng)[None, :] * (picked - (eps - (ng / n)[None, :]) * s_g[None, :])
    pe_i = lam.sum(axis=1) / (r * (r - 1))
    den = ri * (ri - 1)
    den = den - (den == 0)
    pa_i = sum_q / den
    k_i = (n / n2) * (pa_i - pe * multi) / (1 - pe)
    k_ix = k_i - 2 * (1 - kappa) * (pe_i - pe) / (1 - pe)
    var = float(np.sum((k_ix - kappa) ** 2) / (n * (n - 1)))
    return kappa, math.sqrt(max(var, 0.0)), pe


def _kappa_from_confusion(conf: np.ndarray, w: np.ndarray) -> tuple[float | None, str | None]:
    """(Weighted) Cohen's kappa from a q x q confusion matrix (Cohen 1960/1968)."""
    n = float(conf.sum())
    if n == 0:
        return None, "the two raters rated no item in common"
    po = float(np.sum(w * conf)) / n
    row = conf.sum(axis=1) / n
    col = conf.sum(axis=0) / n
    pe = float(np.sum(w * np.outer(row, col)))
    if 1 - pe <= 1e-12:
        return None, (
            "chance agreement is 1 (both raters used one and the same category on every "
            "shared item): kappa is 0/0, undefined"
        )
    return (po - pe) / (1 - pe), None


def cohen_kappa(
    a: Sequence[Any],
    b: Sequence[Any],
    *,
    categories: Sequence[Any] | None = None,
    weights: str = "identity",
) -> dict:
    """Cohen's kappa (Cohen 1960; weighted: Cohen 1968) of two aligned label vectors.

    Pairs where either label is missing are dropped (complete-case).
    ``kappa = (p_o - p_e) / (1 - p_e)`` with
    ``p_o = sum_kl w_kl p_kl`` and ``p_e = sum_kl w_kl p_k. p_.l``.
    With ``linear``/``quadratic`` weights on equally spaced categories this
    equals ``sklearn.metrics.cohen_kappa_score(weights=...)``.

    Returns ``{"n": int, "value": float | None, "note": str | None}``;
    ``value`` is ``None`` (with a note) when there is no overlap or the
    chance agreement is 1.
    """
    if len(a) != len(b):
        raise ValueError("a and b must have the same length")
    sa, sb = _clean(pd.Series(list(a), dtype=object)), _clean(pd.Series(list(b), dtype=object))
    keep = sa.notna() & sb.notna()
    sa, sb = sa[keep].reset_index(drop=True), sb[keep].reset_index(drop=True)
    both = pd.concat([sa, sb], ignore_index=True)
    if len(both) == 0:
        return {"n": 0, "value": None, "note": "the two raters rated no item in common"}
    codes, cats, _ = _encode(both, categories)
    q = len(cats)
    ca, cb = codes[: len(sa)], codes[len(sa):]
    conf = np.bincount(ca * q + cb, minlength=q * q).reshape(q, q).astype(float)
    value, note = _kappa_from_confusion(conf, weight_matrix(cats, weights))
    return {"n": int(len(sa)), "value": value, "note": note}


def _pairwise(coded: _Coded, w: np.ndarray) -> list[dict]:
    """All rater pairs' Cohen kappas via one sparse product X'X of one-hots."""
    codes = coded.codes
    n, r = codes.shape
    q = coded.q
    out: list[dict] = []
    if r < 2:
        return out
    if q == 0:
        for i in range(r):
            for j in range(i + 1, r):
                out.append(
                    {"rater_a": str(coded.raters[i]), "rater_b": str(coded.raters[j]), "n": 0, "value": None, "note": "no ratings"}
                )
        return out
    rows, cols = np.nonzero(codes >= 0)
    x = sparse.csr_matrix(
        (np.ones(len(rows)), (rows, cols * q + codes[rows, cols])), shape=(n, r * q)
    )
    cross = (x.T @ x).tocsr()
    dense = cross.toarray() if r * q <= 1500 else None
    for i in range(r):
        for j in range(i + 1, r):
            if dense is not None:
                conf = dense[i * q : (i + 1) * q, j * q : (j + 1) * q]
            else:
                conf = cross[i * q : (i + 1) * q, j * q : (j + 1) * q].toarray()
            value, note = _kappa_from_confusion(conf, w)
            out.append(
                {
                    "rater_a": str(coded.raters[i]),
                    "rater_b": str(coded.raters[j]),
                    "n": int(conf.sum()),
                    "value": value,
                    "note": note,
                }
            )
    return out


def pairwise_cohen_kappa(
    ratings: pd.DataFrame,
    *,
    item: str = "item",
    rater: str = "rater",
    label: str = "label",
    categories: Sequence[Any] | None = None,
    weights: str = "identity",
) -> list[dict]:
    """Cohen's kappa (Cohen 1960) for every pair of raters of a LONG table.

    Each pair uses only the items both raters rated (missing labels dropped).
    Entries: ``{"rater_a", "rater_b", "n", "value", "note"}`` with raters in
    sorted order; ``value`` is ``None`` (and ``note`` says why) for pairs
    without overlap or with chance agreement 1.
    """
    coded = _code_long(ratings, item=item, rater=rater, label=label, categories=categories, duplicates="error")
    return _pairwise(coded, weight_matrix(coded.categories, weights))


# --------------------------------------------------------------------------
# the adapter
# --------------------------------------------------------------------------
def _run_irrcac(frame: pd.DataFrame, categories: list, weights: str, method: str) -> tuple[float | None, float | None, float | None, str | None]:
    """One irrCAC coefficient, unrounded: (value, se, pe, error note)."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            cac = CAC(frame, weights=weights, categories=list(categories), digits=30)
            est = getattr(cac, method)()["est"]
    except ZeroDivisionError:
        # irrCAC divides python floats by (1 - pe): pe == 1 exactly
        return None, None, 1.0, None
    except (FloatingPointError, ValueError, IndexError) as exc:
        return None, None, None, f"irrCAC could not compute it ({type(exc).__name__}: {exc})"
    return _finite(est["coefficient_value"]), _finite(est["se"]), _finite(est["pe"]), None


def _agreement_from_coded(coded: _Coded, weights: str) -> dict:
    if weights not in WEIGHT_SCHEMES:
        raise ValueError(f"weights must be one of {WEIGHT_SCHEMES}, got {weights!r}")
    codes = coded.codes
    n, r = codes.shape
    q = coded.q
    n_ratings = int((codes >= 0).sum())
    result: dict[str, Any] = {
        "n_items": int(n),
        "n_raters": int(r),
        "n_ratings": n_ratings,
        "categories": list(coded.categories),
        "weights": weights,
        "coefficients": {},
        "pairwise_cohen_kappa": [],
    }
    coefs: dict[str, dict] = result["coefficients"]
    keys = [k for k in COEFFICIENT_KEYS if k != "cohen_kappa" or r == 2]

    if n_ratings == 0:
        for k in keys:
            coefs[k] = _undefined("no ratings")
        return result
    w = weight_matrix(coded.categories, weights)
    agree = coded.agree_matrix()
    ri = agree.sum(axis=1)
    n2 = int((ri >= 2).sum())
    result["pairwise_cohen_kappa"] = _pairwise(coded, w)
    if n2 == 0:
        for k in keys:
            coefs[k] = _undefined("no item was rated by two or more raters")
        return result

    pa, pa_se = _percent_agreement(agree, w)
    coefs["percent_agreement"] = _coef(pa, pa_se, n, lower=0.0)

    if q < 2:
        note = (
            "only one category: chance agreement is 1 and every chance-corrected "
            "coefficient is 0/0 (undefined); pass the full category list via `categories`"
        )
        for k in keys:
            if k != "percent_agreement":
                coefs[k] = _undefined(note)
        return result

    frame = coded.to_irrcac_frame()
    for key, method in _IRRCAC_METHODS:
        if key == "krippendorff_alpha":
            value, se, pe = _krippendorff(agree, w)
            err = None
        elif key == "conger_kappa":
            value, se, pe = _conger(codes, agree, w)
            err = None
        else:
            value, se, pe, err = _run_irrcac(frame, coded.categories, weights, method)
        note = err
        if value is None and err is None:
            if pe is not None and abs(1 - pe) <= 1e-9:
                note = (
                    "chance agreement p_e = 1 (all ratings in one category): the coefficient is 0/0, "
                    "undefined (kappa paradox); percent agreement is still reported"
                )
            else:
                note = "coefficient undefined for these ratings (irrCAC returned NaN/inf)"
        if key == "krippendorff_alpha" and se is None and value is not None:
            note = "Krippendorff's alpha SE needs at least two items with two or more ratings"
        coefs[key] = _coef(value, se, n, note=note)

    if r == 2:
        coefs["cohen_kappa"] = _cohen_two_raters(coded, weights, w)
    return {**result, "coefficients": {k: coefs[k] for k in keys}}


def _cohen_two_raters(coded: _Coded, weights: str, w: np.ndarray) -> dict:
    """Cohen's kappa of exactly two raters on the items both rated.

    The value is computed here from the confusion matrix; the standard error
    is Gwet's (2014) linearisation variance of Conger's kappa on the same
    complete pairs (Conger's kappa equals Cohen's kappa for two raters
    without missing ratings).
    """
    both = (coded.codes >= 0).all(axis=1)
    sub = coded.codes[both]
    m = int(both.sum())
    if m == 0:
        return _undefined("the two raters rated no item in common")
    q = coded.q
    conf = np.bincount(sub[:, 0] * q + sub[:, 1], minlength=q * q).reshape(q, q).astype(float)
    value, note = _kappa_from_confusion(conf, w)
    if value is None:
        return _undefined(note or "undefined")
    se = None
    if m >= 2:
        sub_agree = np.zeros((m, q))
        np.add.at(sub_agree, (np.repeat(np.arange(m), 2), sub.ravel()), 1.0)
        v2, se, _ = _conger(sub, sub_agree, w)
        if v2 is None or abs(v2 - value) > 1e-9:
            se = None
    return _coef(value, se, m, note=note)


def agreement(
    ratings: pd.DataFrame,
    *,
    item: str = "item",
    rater: str = "rater",
    label: str = "label",
    categories: list | None = None,
    weights: str = "identity",
    duplicates: str = "error",
) -> dict:
    """All agreement coefficients for a LONG ratings table (one row per rating).

    Sources: percent agreement and AC1/AC2 -- Gwet (2008; 2014 *Handbook of
    Inter-Rater Reliability*); Fleiss (1971); Conger (1980); Krippendorff
    (1970/2011) with Gwet's (2014) standard error as in current R irrCAC;
    Brennan & Prediger (1981); Cohen (1960).  Values come from
    ``irrCAC.raw.CAC`` (unrounded) except percent agreement, Krippendorff's
    alpha (SE fix), Conger's kappa (vectorised; equal to irrCAC) and Cohen's
    kappa, which are computed here.

    Missing answers: a blank/NaN ``label`` is a missing rating and is dropped;
    items or raters left with no rating do not count.  Invalid answers and
    ties must be handled before (see :mod:`evaluators.stats.ratings`): every
    non-missing label is a category.  Labels not in an explicit
    ``categories`` list raise ``ValueError``.

    ``categories`` default: sorted unique non-missing labels (numbers sorted
    numerically).  ``weights``: identity/quadratic/linear/ordinal; with non-
    identity weights ``gwet_ac1`` holds Gwet's AC2 and every coefficient
    (incl. percent agreement and Cohen's kappa) is weighted.

    Returns the JSON-able dict documented in ``docs/statistics.md``:
    ``n_items``, ``n_raters``, ``n_ratings``, ``categories``, ``weights``,
    ``coefficients`` (each ``{"value","se","ci_low","ci_high","p_value","note"}``;
    ``cohen_kappa`` only with exactly two raters) and
    ``pairwise_cohen_kappa``.  P-values are one-sided
    ``1 - T_{n-1}(coef/se)``, CIs two-sided 95 % with ``t_{n-1}``, clipped to
    [-1, 1] ([0, 1] for percent agreement), ``n`` = items with a rating.
    """
    coded = _code_long(ratings, item=item, rater=rater, label=label, categories=categories, duplicates=duplicates)
    return _agreement_from_coded(coded, weights)


def agreement_from_wide(
    wide: pd.DataFrame,
    *,
    categories: list | None = None,
    weights: str = "identity",
) -> dict:
    """:func:`agreement` for a WIDE table (rows = items, columns = raters).

    Empty cells (NaN/None/blank) are missing ratings.  Same sources,
    conventions and output as :func:`agreement`.
    """
    long = wide.copy()
    long.index = pd.RangeIndex(len(long)) if not long.index.is_unique else long.index
    long.index.name = "__item__"
    long.columns = [str(c) for c in long.columns]
    stacked = long.reset_index().melt(id_vars="__item__", var_name="__rater__", value_name="__label__")
    return agreement(stacked, item="__item__", rater="__rater__", label="__label__", categories=categories, weights=weights)
