"""Inter-rater agreement: the one thin adapter over ``irrCAC.raw.CAC``.

Input is a LONG ratings table (one row per rating: unit/item, rater, label).
A blank label (``NaN``, ``None``, ``""`` or whitespace) is a *missing* rating:
it is dropped before anything is computed, exactly like an empty cell in
Gwet's raw-ratings layout.  Internally the table is pivoted to the wide
``items x raters`` layout that irrCAC expects, and the categories are always
passed to irrCAC explicitly.

This module runs irrCAC and assembles the report (R's p-value/CI
conventions, notes for undefined values).  Coding the labels lives in
:mod:`evaluators.stats.coding`; the coefficients computed in numpy
(percent agreement, Krippendorff, Conger, Cohen) in
:mod:`evaluators.stats.coefficients`; import those names from there.

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

import warnings
from typing import Any

import numpy as np
import pandas as pd

from evaluators.stats.coding import WEIGHT_SCHEMES, Coded, code_long, weight_matrix
from evaluators.stats.coefficients import (
    conger_kappa,
    kappa_from_confusion,
    krippendorff_alpha,
    pairwise_kappas,
    percent_agreement,
)
from evaluators.stats.common import finite_or_none

__all__ = [
    "COEFFICIENT_KEYS",
    "agreement",
    "agreement_from_wide",
]

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
# inference helpers
# --------------------------------------------------------------------------
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
    value = finite_or_none(value)
    if value is None:
        out["note"] = note or "coefficient undefined for these ratings"
        return out
    out["value"] = value
    se = finite_or_none(se)
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
    from scipy import stats  # here, not at import: a report with no coefficient to infer on does without SciPy's stats

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
# the adapter
# --------------------------------------------------------------------------
def _run_irrcac(frame: pd.DataFrame, categories: list, weights: str, method: str) -> tuple[float | None, float | None, float | None, str | None]:
    """One irrCAC coefficient, unrounded: (value, se, pe, error note)."""
    from irrCAC.raw import CAC  # here, not at import: irrCAC.raw loads scipy.stats (and scipy.spatial)

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
    return finite_or_none(est["coefficient_value"]), finite_or_none(est["se"]), finite_or_none(est["pe"]), None


def _agreement_from_coded(coded: Coded, weights: str) -> dict:
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
    result["pairwise_cohen_kappa"] = pairwise_kappas(coded, w)
    if n2 == 0:
        for k in keys:
            coefs[k] = _undefined("no item was rated by two or more raters")
        return result

    pa, pa_se = percent_agreement(agree, w)
    coefs["percent_agreement"] = _coef(pa, pa_se, n, lower=0.0)

    if q < 2:
        reason = (
            "only one category: chance agreement is 1 and every chance-corrected "
            "coefficient is 0/0 (undefined); pass the full category list via `categories`"
        )
        for k in keys:
            if k != "percent_agreement":
                coefs[k] = _undefined(reason)
        return result

    frame = coded.to_irrcac_frame()
    for key, method in _IRRCAC_METHODS:
        if key == "krippendorff_alpha":
            value, se, pe = krippendorff_alpha(agree, w)
            err = None
        elif key == "conger_kappa":
            value, se, pe = conger_kappa(codes, agree, w)
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


def _cohen_two_raters(coded: Coded, weights: str, w: np.ndarray) -> dict:
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
    value, note = kappa_from_confusion(conf, w)
    if value is None:
        return _undefined(note or "undefined")
    se = None
    if m >= 2:
        sub_agree = np.zeros((m, q))
        np.add.at(sub_agree, (np.repeat(np.arange(m), 2), sub.ravel()), 1.0)
        v2, se, _ = conger_kappa(sub, sub_agree, w)
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
    coded = code_long(ratings, item=item, rater=rater, label=label, categories=categories, duplicates=duplicates)
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
