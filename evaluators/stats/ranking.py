"""Human system rankings from pairwise outcomes.

Why one module of ~590 lines: wins, expected wins, Bradley-Terry and Davidson share the
same pairs-table validation and the same item bootstrap; about half the file is the
docstrings that give each method's formula and source.

Input: a *pairs table* with one row per pairwise comparison, as produced by
:func:`evaluators.stats.ratings.ranking_to_pairs` /
:func:`~evaluators.stats.ratings.choice_to_pairs`: columns ``source_item``
(the item: the bootstrap resampling unit), ``system_a``, ``system_b`` and
``label`` (the winning system's name or ``'tie'``).  Column names are
configurable.  Rows whose label is neither system nor 'tie' raise.

Methods
-------
* wins / ties / losses, win rate = wins / (wins + ties + losses);
* expected wins (Koehn 2012; WMT findings, e.g. Bojar et al. 2013 and the
  expected-wins reporting in Bojar et al. 2016):
  ``EW(i) = 1/|O_i| * sum_{j in O_i} wins(i,j) / (wins(i,j) + wins(j,i))``,
  ties excluded, ``O_i`` = opponents with at least one decisive comparison;
* Bradley-Terry (Bradley & Terry 1952) maximum likelihood, ties ignored, or
  Davidson (1970) tie model, by damped Newton on the concave log-likelihood
  (the BT fit equals the fixed point of Hunter's (2004) MM algorithm, which
  is kept as ``_bt_mm`` and checked in the tests); strengths on the
  log scale normalised to mean zero; a symmetric pseudo-count ``prior``
  (default 0.1 virtual win per ordered system pair) guarantees a finite MLE
  when a system never wins or the comparison graph is disconnected;
* bootstrap: resample ITEMS with replacement (seeded ``numpy`` Generator),
  95 % percentile intervals; ranks with bootstrap rank ranges (Koehn 2012);
* sign test (two-sided exact binomial, ties excluded; Läubli et al. 2018).

Everything is vectorised over per-item count matrices: a bootstrap
replicate is ``c_b @ M`` with ``c_b`` the multiplicity of each item in the
resample and ``M`` the items x (wins | ties) count matrix.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd
from scipy import sparse

from evaluators.stats.common import finite_or_none, percentile_levels

__all__ = [
    "TIE",
    "pairwise_table",
    "expected_wins",
    "bradley_terry",
    "bootstrap_ci",
    "sign_test",
    "system_ranking",
]

TIE = "tie"
_BT_TOL = 1e-10
_BT_MAX_ITER = 20_000
#: Reported BT/Davidson estimates are rounded to this many decimals of the
#: log-strength (and ``nu`` to this many significant digits); see _fit_bt.
_BT_DECIMALS = 12


# --------------------------------------------------------------------------
# preparation
# --------------------------------------------------------------------------
class _Pairs:
    """Systems, items and the items x (k*k wins | k*k ties) count matrix."""

    def __init__(self, systems: list[str], items: list, matrix: Any):
        self.systems = systems
        self.items = items
        self.matrix = matrix  # ndarray or csr, shape (n_items, 2*k*k)

    @property
    def k(self) -> int:
        return len(self.systems)

    def totals(self, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(W, T) summed over items, optionally with item weights (B x n)."""
        k = self.k
        if weights is None:
            flat = np.asarray(self.matrix.sum(axis=0)).reshape(1, -1)
        elif sparse.issparse(self.matrix):
            flat = np.asarray((self.matrix.T @ weights.T).T)
        else:
            flat = weights @ self.matrix
        w = flat[:, : k * k].reshape(-1, k, k)
        t = flat[:, k * k :].reshape(-1, k, k)
        return w, t


def _prepare(pairs: pd.DataFrame, item: str, system_a: str, system_b: str, label: str) -> _Pairs:
    for col in (item, system_a, system_b, label):
        if col not in pairs.columns:
            raise KeyError(
                f"pairs table lacks column {col!r} (columns: {list(pairs.columns)}); "
                "the item column must hold the ORIGINAL item id (the bootstrap unit)"
            )
    a = pairs[system_a].astype(str).to_numpy()
    b = pairs[system_b].astype(str).to_numpy()
    lab = pairs[label].astype(str).to_numpy()
    if (a == b).any():
        raise ValueError("a pair compares a system with itself")
    is_tie = lab == TIE
    a_wins = lab == a
    b_wins = lab == b
    bad = ~(is_tie | a_wins | b_wins)
    if bad.any():
        raise ValueError(f"{int(bad.sum())} labels are neither one of the two systems nor 'tie', e.g. {lab[bad][:3].tolist()}")
    systems = sorted(set(a) | set(b))
    k = len(systems)
    ai = np.searchsorted(systems, a)
    bi = np.searchsorted(systems, b)
    item_idx, item_ids = pd.factorize(pairs[item])
    n = len(item_ids)
    winner = np.where(a_wins, ai, bi)
    loser = np.where(a_wins, bi, ai)
    dec = ~is_tie
    rows = np.concatenate([item_idx[dec], item_idx[is_tie], item_idx[is_tie]])
    cols = np.concatenate(
        [winner[dec] * k + loser[dec], k * k + ai[is_tie] * k + bi[is_tie], k * k + bi[is_tie] * k + ai[is_tie]]
    )
    data = np.ones(len(rows))
    mat = sparse.csr_matrix((data, (rows, cols)), shape=(n, 2 * k * k))
    mat.sum_duplicates()
    if n * 2 * k * k <= 20_000_000:
        mat = mat.toarray()
    return _Pairs(systems, list(item_ids), mat)


# --------------------------------------------------------------------------
# statistics on (B, k, k) count tensors
# --------------------------------------------------------------------------
def _win_rate(w: np.ndarray, t: np.ndarray) -> np.ndarray:
    wins, losses, ties = w.sum(axis=2), w.sum(axis=1), t.sum(axis=2)
    n = wins + losses + ties
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, wins / np.where(n > 0, n, 1), np.nan)


def _expected_wins(w: np.ndarray) -> np.ndarray:
    """EW_i = mean over opponents j with decisive games of w_ij / (w_ij + w_ji)."""
    d = w + np.swapaxes(w, 1, 2)
    has = d > 0
    ratio = np.where(has, w / np.where(has, d, 1), 0.0)
    cnt = has.sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, ratio.sum(axis=2) / np.where(cnt > 0, cnt, 1), np.nan)


def _fit_bt(w: np.ndarray, t: np.ndarray, ties: str, prior: float) -> tuple[np.ndarray, np.ndarray | None, bool]:
    """Batched BT / Davidson MLE. Returns (theta (B,k), nu (B,) or None, converged).

    Reproducibility: the estimates are rounded to 12 decimals on the
    log-strength scale (``nu``: 12 significant digits).  The inputs are
    integer counts (summed exactly, in a fixed order: systems sorted, items
    in input order), so every run sees the same likelihood; what can differ
    between processes is only the last bits of the floating-point iterates
    (numpy's vectorised reductions and LAPACK may sum in a different order
    depending on memory alignment or threads).  Newton stops once a step is
    below 1e-10, after which the iterate is within ~1e-15 of the maximum
    (quadratic convergence), so digits beyond the 12th decimal are numerical
    noise, not information: rounding them off makes the reported value a
    function of the counts alone and leaves rank ties between systems with
    identical records exact.  (More Newton steps cannot do this: they only
    move the iterate to within a few ulps of the optimum, and those ulps are
    the part that differs.)  Systems with identical records, whose
    unrounded strengths often differ in the last bit, tie exactly.  A value
    lying within a few ulps of a rounding boundary could still round either
    way: a few values in 10^4 remain exposed to ulp-level noise, against
    every value before.
    """
    theta, nu, converged = _fit_bt_unrounded(w, t, ties, prior)
    theta = np.round(theta, _BT_DECIMALS) + 0.0  # + 0.0: no negative zeros
    if nu is not None:
        nu = np.array([float(f"{v:.{_BT_DECIMALS}g}") for v in nu])
    return theta, nu, converged


def _fit_bt_unrounded(w: np.ndarray, t: np.ndarray, ties: str, prior: float) -> tuple[np.ndarray, np.ndarray | None, bool]:
    """:func:`_fit_bt` before rounding."""
    bsz, k, _ = w.shape
    off = 1.0 - np.eye(k)
    w = w + prior * off  # pseudo-counts: `prior` virtual wins per ordered pair
    if k == 1:
        return np.zeros((bsz, 1)), (np.zeros(bsz) if ties == "davidson" else None), True
    if ties == "ignore":
        theta, _, conv = _newton_fit(w, None)
        return theta, None, conv
    # Davidson (1970): batches without any tie have nu_hat = 0 and the plain
    # BT estimate; the others get the three-outcome model.
    t = t * off
    has = t.sum(axis=(1, 2)) > 0
    theta = np.zeros((bsz, k))
    nu = np.zeros(bsz)
    converged = True
    if (~has).any():
        theta[~has], _, c0 = _newton_fit(w[~has], None)
        converged &= c0
    if has.any():
        theta[has], nu[has], c1 = _newton_fit(w[has], t[has])
        converged &= c1
    return theta, nu, converged


def _bt_mm(w: np.ndarray, max_iter: int = _BT_MAX_ITER) -> tuple[np.ndarray, bool]:
    """Hunter's (2004) MM iteration for BT (ties ignored), batched.

    ``pi_i <- W_i / sum_j n_ij / (pi_i + pi_j)``; monotone but only linearly
    convergent (slow for extreme strengths).  Kept as an independent check of
    :func:`_newton_fit`; ``w`` must already contain any pseudo-counts.
    """
    bsz, k, _ = w.shape
    p = np.ones((bsz, k))
    wins = w.sum(axis=2)
    n = w + np.swapaxes(w, 1, 2)
    for _ in range(max_iter):
        denom = (n / (p[:, :, None] + p[:, None, :])).sum(axis=2)
        new = wins / denom
        new /= np.exp(np.log(new).mean(axis=1, keepdims=True))
        delta = np.max(np.abs(np.log(new) - np.log(p)))
        p = new
        if delta < _BT_TOL:
            theta = np.log(p)
            return theta - theta.mean(axis=1, keepdims=True), True
    theta = np.log(p)
    return theta - theta.mean(axis=1, keepdims=True), False


def _newton_fit(w: np.ndarray, t: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None, bool]:
    """BT (``t is None``) or Davidson MLE by damped Newton, batched over B.

    Per unordered pair i<j the outcomes (i wins, j wins[, tie]) have log-odds
    ``(theta_i, theta_j[, u + (theta_i + theta_j)/2])`` with ``u = log nu``
    (Bradley & Terry 1952; Davidson 1970): a multinomial logit linear in the
    parameters, hence a concave log-likelihood.  The gauge is fixed by the
    penalty ``-(sum theta)^2 / 2`` (leaves the likelihood maximum unchanged,
    sets mean(theta) = 0).  Step halving guarantees monotone ascent.  ``w``
    holds the pseudo-counts already; ``t`` is symmetric with zero diagonal.
    """
    bsz, k, _ = w.shape
    iu, ju = np.triu_indices(k, 1)
    npairs = len(iu)
    n_out = 2 if t is None else 3
    n_par = k if t is None else k + 1
    parts = [w[:, iu, ju], w[:, ju, iu]] + ([] if t is None else [t[:, iu, ju]])
    cnt = np.stack(parts, axis=2)  # (B, P, outcomes)
    nn = cnt.sum(axis=2)
    x = np.zeros((npairs, n_out, n_par))
    rows = np.arange(npairs)
    x[rows, 0, iu] = 1.0
    x[rows, 1, ju] = 1.0
    if t is not None:
        x[rows, 2, iu] = 0.5
        x[rows, 2, ju] = 0.5
        x[:, 2, k] = 1.0

    def loglik(phi: np.ndarray) -> np.ndarray:
        eta = np.einsum("pof,bf->bpo", x, phi)
        m = eta.max(axis=2, keepdims=True)
        lse = (m + np.log(np.exp(eta - m).sum(axis=2, keepdims=True)))[..., 0]
        return (cnt * eta).sum(axis=(1, 2)) - (nn * lse).sum(axis=1) - 0.5 * phi[:, :k].sum(axis=1) ** 2

    phi = np.zeros((bsz, n_par))
    ll = loglik(phi)
    eye = np.eye(n_par)
    eye_o = np.eye(n_out)
    converged = False
    for _ in range(200):
        eta = np.einsum("pof,bf->bpo", x, phi)
        eta -= eta.max(axis=2, keepdims=True)
        prob = np.exp(eta)
        prob /= prob.sum(axis=2, keepdims=True)
        grad = np.einsum("bpo,pof->bf", cnt - nn[..., None] * prob, x)
        grad[:, :k] -= phi[:, :k].sum(axis=1, keepdims=True)
        cov = nn[..., None, None] * (prob[..., :, None] * eye_o - prob[..., :, None] * prob[..., None, :])
        hess = -np.einsum("pof,bpoq,pqg->bfg", x, cov, x)
        hess[:, :k, :k] -= 1.0
        hess -= 1e-12 * eye
        step = np.linalg.solve(hess, grad[..., None])[..., 0]  # Newton: phi - H^-1 g
        scale = np.ones(bsz)
        new = phi - step
        new_ll = loglik(new)
        for _ in range(40):
            worse = new_ll < ll - 1e-12 * (1 + np.abs(ll))
            if not worse.any():
                break
            scale = np.where(worse, scale / 2, scale)
            new = phi - scale[:, None] * step
            new_ll = loglik(new)
        delta = float(np.max(np.abs(new - phi)))
        phi, ll = new, new_ll
        if delta < _BT_TOL:
            converged = True
            break
    theta = phi[:, :k] - phi[:, :k].mean(axis=1, keepdims=True)
    return theta, (None if t is None else np.exp(phi[:, k])), converged


def _ranks(score: np.ndarray) -> np.ndarray:
    """Rank 1 = best (highest score); ties get the minimum rank; NaN last."""
    s = np.where(np.isnan(score), -np.inf, score)
    return 1 + (s[:, None, :] > s[:, :, None]).sum(axis=2)


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------
def pairwise_table(
    pairs: pd.DataFrame,
    *,
    item: str = "source_item",
    system_a: str = "system_a",
    system_b: str = "system_b",
    label: str = "label",
) -> pd.DataFrame:
    """Wins/ties/losses for every ORDERED system pair (both directions).

    Columns: ``system``, ``opponent``, ``wins``, ``ties``, ``losses``, ``n``;
    only pairs compared at least once.  Ties are counted, never split.
    Missing/invalid answers must be removed upstream (see
    :mod:`evaluators.stats.ratings`); an unknown label raises.  Used by the
    WMT relative-ranking analyses (Bojar et al. 2016).
    """
    prep = _prepare(pairs, item, system_a, system_b, label)
    w, t = prep.totals()
    w, t = w[0], t[0]
    rows = []
    for i, si in enumerate(prep.systems):
        for j, sj in enumerate(prep.systems):
            if i == j:
                continue
            n = w[i, j] + w[j, i] + t[i, j]
            if n > 0:
                rows.append({"system": si, "opponent": sj, "wins": int(w[i, j]), "ties": int(t[i, j]), "losses": int(w[j, i]), "n": int(n)})
    return pd.DataFrame(rows, columns=["system", "opponent", "wins", "ties", "losses", "n"])


def expected_wins(
    pairs: pd.DataFrame,
    *,
    item: str = "source_item",
    system_a: str = "system_a",
    system_b: str = "system_b",
    label: str = "label",
) -> dict[str, float | None]:
    """Expected wins per system (Koehn 2012; Bojar et al. 2013, 2016).

    ``EW(i) = (1 / |O_i|) * sum_{j in O_i} wins(i, j) / (wins(i, j) + wins(j, i))``
    where ``O_i`` are the opponents against which ``i`` has at least one
    decisive (non-tie) comparison.  Ties are excluded from numerator and
    denominator.  ``None`` for a system without any decisive comparison.
    """
    prep = _prepare(pairs, item, system_a, system_b, label)
    w, _ = prep.totals()
    ew = _expected_wins(w)[0]
    return {s: finite_or_none(v) for s, v in zip(prep.systems, ew)}


def bradley_terry(
    pairs: pd.DataFrame,
    *,
    ties: str = "ignore",
    prior: float = 0.1,
    item: str = "source_item",
    system_a: str = "system_a",
    system_b: str = "system_b",
    label: str = "label",
) -> dict[str, Any]:
    """Bradley-Terry strengths (Bradley & Terry 1952), MLE (= Hunter 2004 MM fixed point).

    Model ``P(i beats j) = pi_i / (pi_i + pi_j)``; returns
    ``theta_i = log pi_i - mean_j log pi_j`` (mean zero).  ``ties="ignore"``
    drops ties; ``ties="davidson"`` fits Davidson's (1970) model
    ``P(i ~ j) = nu sqrt(pi_i pi_j) / (pi_i + pi_j + nu sqrt(pi_i pi_j))``
    and also returns ``nu``.  Both are fitted by damped Newton on the concave
    log-likelihood in ``(theta, log nu)``.  ``prior`` adds that many virtual wins to every
    ordered pair of systems (so a system that never wins, or a disconnected
    comparison graph, still gets a finite estimate; shrinks towards 0).

    Returns ``{"strength": {system: float}, "nu": float | None,
    "ties": ..., "prior": ..., "converged": bool}``.
    """
    if ties not in ("ignore", "davidson"):
        raise ValueError("ties must be 'ignore' or 'davidson'")
    if prior < 0:
        raise ValueError("prior must be >= 0")
    prep = _prepare(pairs, item, system_a, system_b, label)
    w, t = prep.totals()
    theta, nu, conv = _fit_bt(w, t, ties, prior)
    return {
        "strength": {s: float(v) for s, v in zip(prep.systems, theta[0])},
        "nu": None if nu is None else float(nu[0]),
        "ties": ties,
        "prior": float(prior),
        "converged": bool(conv),
    }


def _bootstrap_arrays(prep: _Pairs, n_boot: int, seed: int | None, ties: str, prior: float, rank_by: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = len(prep.items)
    out: dict[str, list[np.ndarray]] = {"win_rate": [], "expected_wins": [], "bt": [], "rank": []}
    chunk = max(1, min(n_boot, 5_000_000 // max(n, 1)))
    done = 0
    while done < n_boot:
        b = min(chunk, n_boot - done)
        idx = rng.integers(0, n, size=(b, n))
        counts = np.bincount((idx + (np.arange(b) * n)[:, None]).ravel(), minlength=b * n).reshape(b, n).astype(float)
        w, t = prep.totals(counts)
        wr = _win_rate(w, t)
        ew = _expected_wins(w)
        theta, _, _ = _fit_bt(w, t, ties, prior)
        score = {"bt": theta, "expected_wins": ew, "win_rate": wr}[rank_by]
        out["win_rate"].append(wr)
        out["expected_wins"].append(ew)
        out["bt"].append(theta)
        out["rank"].append(_ranks(score))
        done += b
    return {key: np.concatenate(v, axis=0) for key, v in out.items()}


def _percentile_ci(x: np.ndarray, confidence: float) -> list[list[float | None]]:
    lo_q, hi_q = percentile_levels(confidence)
    res: list[list[float | None]] = []
    for col in x.T:
        col = col[~np.isnan(col)]
        if len(col) == 0:
            res.append([None, None])
        else:
            res.append([float(np.percentile(col, lo_q)), float(np.percentile(col, hi_q))])
    return res


def bootstrap_ci(
    pairs: pd.DataFrame,
    *,
    n_boot: int = 1000,
    seed: int | None = 0,
    ties: str = "ignore",
    prior: float = 0.1,
    rank_by: str = "bt",
    confidence: float = 0.95,
    item: str = "source_item",
    system_a: str = "system_a",
    system_b: str = "system_b",
    label: str = "label",
) -> dict[str, dict[str, list]]:
    """Item-bootstrap percentile CIs (Efron & Tibshirani 1993; Koehn 2012).

    Each replicate resamples the ITEMS (``item`` column) with replacement
    using ``numpy.random.default_rng(seed)`` and recomputes win rate,
    expected wins (Bojar et al. 2016) and Bradley-Terry strength (Bradley &
    Terry 1952; Hunter 2004; ``ties``/``prior`` as in :func:`bradley_terry`)
    and the rank by ``rank_by`` (``"bt"``, ``"expected_wins"`` or
    ``"win_rate"``).  Returns per system ``{"win_rate": [lo, hi],
    "expected_wins": [lo, hi], "bt": [lo, hi], "rank": [best, worst]}``
    (percentiles; ranks rounded outwards to integers).  Replicates in which a
    statistic is undefined (no decisive comparison) are left out of that
    statistic's interval.
    """
    _check_args(ties, rank_by, n_boot, confidence)
    prep = _prepare(pairs, item, system_a, system_b, label)
    return _bootstrap_cis(prep, n_boot, seed, ties, prior, rank_by, confidence)


def _bootstrap_cis(
    prep: _Pairs, n_boot: int, seed: int | None, ties: str, prior: float, rank_by: str, confidence: float
) -> dict[str, dict[str, list]]:
    """Per system the percentile CIs of :func:`bootstrap_ci` (shared with :func:`system_ranking`)."""
    arr = _bootstrap_arrays(prep, n_boot, seed, ties, prior, rank_by)
    cis = {key: _percentile_ci(arr[key], confidence) for key in ("win_rate", "expected_wins", "bt")}
    lo_q, hi_q = percentile_levels(confidence)
    rank_lo = np.percentile(arr["rank"], lo_q, axis=0, method="lower")
    rank_hi = np.percentile(arr["rank"], hi_q, axis=0, method="higher")
    out = {}
    for i, s in enumerate(prep.systems):
        out[s] = {key: cis[key][i] for key in cis}
        out[s]["rank"] = [int(rank_lo[i]), int(rank_hi[i])]
    return out


def _check_args(ties: str, rank_by: str, n_boot: int, confidence: float, *, min_boot: int = 1) -> None:
    if ties not in ("ignore", "davidson"):
        raise ValueError("ties must be 'ignore' or 'davidson'")
    if rank_by not in ("bt", "expected_wins", "win_rate"):
        raise ValueError("rank_by must be 'bt', 'expected_wins' or 'win_rate'")
    if n_boot < min_boot:
        raise ValueError(f"n_boot must be >= {min_boot}" + (" (0 = no bootstrap)" if min_boot == 0 else ""))
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")


def sign_test(wins_a: int, wins_b: int) -> dict[str, Any]:
    """Two-sided exact binomial sign test of ``wins_a`` vs ``wins_b``.

    Ties are excluded (pass only decisive comparisons), as in Läubli et al.
    (2018): ``p = P(|X - n/2| >= |wins_a - n/2|)``, ``X ~ Bin(n, 1/2)``,
    ``n = wins_a + wins_b`` (``scipy.stats.binomtest``).  With ``n = 0`` the
    p-value is ``None`` with a note.
    """
    wins_a, wins_b = int(wins_a), int(wins_b)
    if wins_a < 0 or wins_b < 0:
        raise ValueError("win counts must be non-negative")
    n = wins_a + wins_b
    if n == 0:
        return {"wins_a": wins_a, "wins_b": wins_b, "n": 0, "p_value": None, "note": "no decisive comparison"}
    from scipy import stats  # here, not at import: scipy.stats is heavy (it loads scipy.spatial)

    p = float(stats.binomtest(wins_a, n, 0.5, alternative="two-sided").pvalue)
    return {"wins_a": wins_a, "wins_b": wins_b, "n": n, "p_value": min(1.0, p), "note": None}


def system_ranking(
    pairs_df: pd.DataFrame,
    seed: int | None = 0,
    n_boot: int = 1000,
    *,
    ties: str = "ignore",
    prior: float = 0.1,
    rank_by: str = "bt",
    confidence: float = 0.95,
    item: str = "source_item",
    system_a: str = "system_a",
    system_b: str = "system_b",
    label: str = "label",
) -> dict[str, Any]:
    """Complete JSON-able human system ranking.

    Per system (sorted by rank): ``n`` comparisons, ``wins``, ``ties``,
    ``losses``, ``win_rate`` (= wins / n, ties in the denominator) and CI,
    ``expected_wins`` (Bojar et al. 2016; ties excluded) and CI, ``bt``
    (Bradley & Terry 1952 MLE, = Hunter 2004 MM fixed point; Davidson 1970 with
    ``ties="davidson"``) and CI, ``rank`` (1 = best, by ``rank_by``) and
    ``rank_range`` (item-bootstrap percentile range).  With exactly two
    systems, ``sign_test`` holds the exact two-sided sign test (ties
    excluded; Läubli et al. 2018), otherwise ``None``.  Values that are
    undefined (e.g. expected wins with no decisive comparison) are ``None``.
    ``n_boot=0`` skips the bootstrap: every ``*_ci`` and ``rank_range`` is
    ``None`` and ``note`` says so (``note`` is ``None`` otherwise).
    """
    _check_args(ties, rank_by, n_boot, confidence, min_boot=0)
    prep = _prepare(pairs_df, item, system_a, system_b, label)
    w, t = prep.totals()
    wr = _win_rate(w, t)[0]
    ew = _expected_wins(w)[0]
    theta, nu, conv = _fit_bt(w, t, ties, prior)
    score = {"bt": theta[0], "expected_wins": ew, "win_rate": wr}[rank_by]
    ranks = _ranks(score[None, :])[0]
    if n_boot == 0:
        cis: Mapping[str, Mapping[str, list[Any] | None]] = {
            s: dict.fromkeys(("win_rate", "expected_wins", "bt", "rank")) for s in prep.systems}
    else:
        cis = _bootstrap_cis(prep, n_boot, seed, ties, prior, rank_by, confidence)
    w0, t0 = w[0], t[0]
    systems = []
    for i, s in enumerate(prep.systems):
        wins, losses, n_ties = int(w0[i].sum()), int(w0[:, i].sum()), int(t0[i].sum())
        systems.append(
            {
                "system": s,
                "n": wins + losses + n_ties,
                "wins": wins,
                "ties": n_ties,
                "losses": losses,
                "win_rate": finite_or_none(wr[i]),
                "win_rate_ci": cis[s]["win_rate"],
                "expected_wins": finite_or_none(ew[i]),
                "expected_wins_ci": cis[s]["expected_wins"],
                "bt": float(theta[0][i]),
                "bt_ci": cis[s]["bt"],
                "rank": int(ranks[i]),
                "rank_range": cis[s]["rank"],
            }
        )
    systems.sort(key=lambda r: (r["rank"], r["system"]))
    result: dict[str, Any] = {
        "systems": systems,
        "n_items": len(prep.items),
        "n_pairs": int(len(pairs_df)),
        "n_boot": int(n_boot),
        "seed": seed,
        "confidence": confidence,
        "ties": ties,
        "prior": float(prior),
        "rank_by": rank_by,
        "davidson_nu": None if nu is None else float(nu[0]),
        "bt_converged": bool(conv),
        "sign_test": None,
        "note": "n_boot=0: no bootstrap, so no confidence intervals or rank ranges" if n_boot == 0 else None,
    }
    if prep.k == 2:
        st = sign_test(int(w0[0, 1]), int(w0[1, 0]))
        st.update({"system_a": prep.systems[0], "system_b": prep.systems[1], "ties": int(t0[0, 1])})
        result["sign_test"] = st
    return result
