"""Coding ratings for agreement: label cleaning, categories, long -> wide, weights.

Everything here turns a LONG ratings table (one row per rating: unit/item,
rater, label) into the integer codes matrix the coefficients work on.  A
blank label (``NaN``, ``None``, ``""`` or whitespace) is a *missing* rating
and is dropped first, exactly like an empty cell in Gwet's (2014) raw-ratings
layout (*Handbook of Inter-Rater Reliability*, 4th ed.).  Category defaults
and weight matrices follow Gwet's R package ``irrCAC`` (weights come from
``irrCAC.weights.Weights``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray
from irrCAC.weights import Weights

__all__ = [
    "WEIGHT_SCHEMES",
    "Coded",
    "clean_labels",
    "code_long",
    "derive_categories",
    "encode_labels",
    "is_missing_label",
    "long_to_wide",
    "weight_matrix",
]

#: Weight schemes accepted (irrCAC names).  ``identity`` = unweighted.
WEIGHT_SCHEMES: tuple[str, ...] = ("identity", "quadratic", "linear", "ordinal")



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


def clean_labels(values: pd.Series) -> pd.Series:
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
    s = clean_labels(s).dropna()
    uniq: np.ndarray | ExtensionArray | list[Any]
    try:
        uniq = pd.unique(s)
    except TypeError:
        uniq = list({str(v): v for v in s}.values())
    if len(uniq) == 0:
        return []
    nums = [n for n in (_as_number(v) for v in uniq) if n is not None]
    if len(nums) == len(uniq):
        return _python_numbers(sorted(set(nums)))
    return sorted({str(v) for v in uniq})


def _normalise_categories(categories: Sequence[Any]) -> tuple[list, bool]:
    """Return (categories, numeric?) with JSON-able Python values, no dups."""
    cats = list(categories)
    if any(is_missing_label(c) for c in cats):
        raise ValueError("categories must not contain missing/blank values")
    nums = [n for n in (_as_number(c) for c in cats) if n is not None]
    out: list[int | float] | list[str]
    if cats and len(nums) == len(cats):
        out = _python_numbers(nums)
        numeric = True
    else:
        out = [str(c).strip() for c in cats]
        numeric = False
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate categories: {categories!r}")
    return out, numeric


def encode_labels(labels: pd.Series, categories: Sequence[Any] | None) -> tuple[np.ndarray, list, bool]:
    """Encode a (cleaned, non-missing) label series to codes 0..q-1.

    Returns ``(codes, categories, numeric)``; ``categories`` defaults to
    :func:`derive_categories`.  A label outside ``categories`` raises
    ``ValueError`` naming a few of them.
    """
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
class Coded:
    """Codes matrix (items x raters, -1 = missing) plus metadata.

    ``items``/``raters`` label the rows/columns, ``categories`` the codes
    0..q-1; ``numeric`` says whether the categories are numbers.
    """

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


def code_long(
    ratings: pd.DataFrame,
    *,
    item: str,
    rater: str,
    label: str,
    categories: Sequence[Any] | None,
    duplicates: str,
) -> Coded:
    """Code a LONG ratings table: missing labels dropped, ids sorted, labels -> 0..q-1.

    The one entry point shared by :func:`long_to_wide`, the coefficients and
    the agreement adapter, so that all of them see the same items, raters and
    categories.
    """
    for col in (item, rater, label):
        if col not in ratings.columns:
            raise KeyError(f"column {col!r} not in ratings table (columns: {list(ratings.columns)})")
    if duplicates not in ("error", "first", "last"):
        raise ValueError("duplicates must be 'error', 'first' or 'last'")
    df = pd.DataFrame(
        {"item": ratings[item].to_numpy(), "rater": ratings[rater].to_numpy(), "label": clean_labels(ratings[label]).to_numpy()}
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
        keep: Literal["first", "last"] = "first" if duplicates == "first" else "last"  # validated above
        df = df.drop_duplicates(["item", "rater"], keep=keep)
    codes, cats, numeric = encode_labels(df["label"], categories)
    item_idx, item_ids = _factorize(df["item"])
    rater_idx, rater_ids = _factorize(df["rater"])
    mat = np.full((len(item_ids), len(rater_ids)), -1, dtype=np.int64)
    mat[item_idx, rater_idx] = codes
    return Coded(mat, list(item_ids), list(rater_ids), cats, numeric)


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
    coded = code_long(ratings, item=item, rater=rater, label=label, categories=categories, duplicates=duplicates)
    values = np.asarray(list(coded.categories) + [np.nan], dtype=object)
    out = pd.DataFrame(values[coded.codes], index=pd.Index(coded.items, name=item), columns=pd.Index(coded.raters, name=rater))
    return out

