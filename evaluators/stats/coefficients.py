"""Agreement coefficients computed here in numpy (not by irrCAC).

All functions work on the coded ratings of :mod:`evaluators.stats.coding`:
``agree`` is the ``n x q`` matrix of counts ``r_ik`` (raters who put item i in
category k), ``codes`` the ``items x raters`` matrix (-1 = missing) and ``w``
the ``q x q`` agreement-weight matrix.  Each returns plain floats or ``None``
when the value is undefined (0/0); turning them into the report's
``{value, se, ci_low, ci_high, p_value, note}`` is the adapter's job
(:mod:`evaluators.stats.agreement`).

Sources
-------
* percent agreement -- Gwet (2014), *Handbook of Inter-Rater Reliability*,
  4th ed., ch. 2 (``pa`` of the R function ``pa.coeff.raw``);
* Krippendorff's alpha -- Krippendorff (1970, 2011); standard error after
  Gwet (2014) as in the *current* R package ``irrCAC::krippen.alpha.raw``
  (irrCAC-python 0.4.4 centres the per-item agreement on ``pa`` instead of
  ``pa'``; the corrected formula is used here);
* Conger's kappa -- Conger (1980), Psychol. Bull. 88:322-328, in closed form,
  O(n r q) (irrCAC's version needs O(q^2) pandas operations and is slow for
  many categories; tested equal to irrCAC);
* Cohen's kappa -- Cohen (1960), Educ. Psychol. Meas. 20:37-46 (weighted:
  Cohen 1968), on the items both raters rated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from evaluators.stats.coding import Coded, clean_labels, code_long, encode_labels, weight_matrix

__all__ = [
    "cohen_kappa",
    "conger_kappa",
    "kappa_from_confusion",
    "krippendorff_alpha",
    "pairwise_cohen_kappa",
    "pairwise_kappas",
    "percent_agreement",
]


def percent_agreement(agree: np.ndarray, w: np.ndarray) -> tuple[float | None, float | None]:
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


def krippendorff_alpha(agree: np.ndarray, w: np.ndarray) -> tuple[float | None, float | None, float | None]:
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


def conger_kappa(codes: np.ndarray, agree: np.ndarray, w: np.ndarray) -> tuple[float | None, float | None, float | None]:
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


def kappa_from_confusion(conf: np.ndarray, w: np.ndarray) -> tuple[float | None, str | None]:
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
    a: Sequence[Any] | np.ndarray,
    b: Sequence[Any] | np.ndarray,
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
    sa, sb = clean_labels(pd.Series(list(a), dtype=object)), clean_labels(pd.Series(list(b), dtype=object))
    keep = sa.notna() & sb.notna()
    sa, sb = sa[keep].reset_index(drop=True), sb[keep].reset_index(drop=True)
    both = pd.concat([sa, sb], ignore_index=True)
    if len(both) == 0:
        return {"n": 0, "value": None, "note": "the two raters rated no item in common"}
    codes, cats, _ = encode_labels(both, categories)
    q = len(cats)
    ca, cb = codes[: len(sa)], codes[len(sa):]
    conf = np.bincount(ca * q + cb, minlength=q * q).reshape(q, q).astype(float)
    value, note = kappa_from_confusion(conf, weight_matrix(cats, weights))
    return {"n": int(len(sa)), "value": value, "note": note}


def pairwise_kappas(coded: Coded, w: np.ndarray) -> list[dict]:
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
            value, note = kappa_from_confusion(conf, w)
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
    coded = code_long(ratings, item=item, rater=rater, label=label, categories=categories, duplicates="error")
    return pairwise_kappas(coded, weight_matrix(coded.categories, weights))
