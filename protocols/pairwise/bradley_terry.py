"""Bradley–Terry strengths of systems from pairwise preferences (Bradley & Terry 1952).

P(i preferred to j) = exp(θ_i) / (exp(θ_i) + exp(θ_j)), with Σθ = 0. A tie counts half a
preference to each side (the usual reading when a protocol offers "tie"; Rao & Kupper 1967
and Davidson 1970 model ties separately, which changes θ only through the tie rate).
θ is the maximum-likelihood estimate by Newton's method on the sum-zero subspace; its
standard errors come from the observed Fisher information (the negative Hessian there).

The estimate exists only when every system both wins and loses against the others
through some chain of comparisons (Zermelo 1929; Ford 1957): the comparison graph must
be strongly connected. When it is not, :func:`bradley_terry` adds a Gaussian prior
θ ~ N(0, 1/α) (a ridge penalty α/2·Σθ²) and says so in ``prior`` and ``why_prior``.
Pure Python + NumPy: no Django.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

#: The ridge penalty used when the maximum-likelihood estimate does not exist.
FALLBACK_PRIOR = 0.1


@dataclass(frozen=True)
class Strengths:
    systems: list[str]
    theta: list[float]
    se: list[float]
    low: list[float]
    high: list[float]
    comparisons: int
    prior: float = 0.0
    why_prior: str = ""
    iterations: int = 0
    wins: dict[str, float] = field(default_factory=dict)

    def ranked(self) -> list[tuple[str, float, float, float]]:
        """(system, θ, low, high), strongest first."""
        rows = zip(self.systems, self.theta, self.low, self.high)
        return sorted(rows, key=lambda r: (-r[1], r[0]))


def _strongly_connected(wins: np.ndarray) -> bool:
    n = len(wins)
    beats = wins > 0

    def reach(adjacency: np.ndarray) -> set[int]:
        seen, todo = {0}, [0]
        while todo:
            k = todo.pop()
            for j in np.flatnonzero(adjacency[k]):
                if int(j) not in seen:
                    seen.add(int(j))
                    todo.append(int(j))
        return seen

    return len(reach(beats)) == n and len(reach(beats.T)) == n


def bradley_terry(preferences: Iterable[tuple[str, str, float]], *, systems: Sequence[str] | None = None,
                  prior: float | None = None, level: float = 0.95, max_iter: int = 100,
                  tol: float = 1e-10) -> Strengths:
    """Strengths from (system a, system b, outcome) with outcome 1 (a preferred), 0 (b) or 0.5 (tie).

    ``prior`` None: maximum likelihood when it exists, else the ridge :data:`FALLBACK_PRIOR`.
    """
    rows = list(preferences)
    names = sorted(set(systems or []) | {a for a, _, _ in rows} | {b for _, b, _ in rows})
    if len(names) < 2:
        raise ValueError("Bradley–Terry needs preferences between at least two systems.")
    index = {name: k for k, name in enumerate(names)}
    n = len(names)
    wins = np.zeros((n, n))
    for a, b, outcome in rows:
        if a == b:
            raise ValueError(f"A preference compares {a!r} with itself.")
        if outcome not in (0, 0.5, 1):
            raise ValueError(f"A preference's outcome is 1, 0 or 0.5, not {outcome!r}.")
        wins[index[a], index[b]] += outcome
        wins[index[b], index[a]] += 1 - outcome
    why = ""
    if prior is None:
        if _strongly_connected(wins):
            prior = 0.0
        else:
            prior = FALLBACK_PRIOR
            never_lost = [names[k] for k in range(n) if wins[:, k].sum() == 0]
            never_won = [names[k] for k in range(n) if wins[k, :].sum() == 0]
            parts = []
            if never_lost:
                parts.append(f"never less preferred: {', '.join(never_lost)}")
            if never_won:
                parts.append(f"never preferred: {', '.join(never_won)}")
            why = ("the maximum-likelihood estimate does not exist (the systems do not all win and lose "
                   "through chains of comparisons" + (f"; {'; '.join(parts)}" if parts else "") + ")")
    totals = wins + wins.T
    theta = np.zeros(n)
    basis = np.eye(n)[:, :-1] - 1.0 / n  # columns span the sum-zero subspace
    basis, _ = np.linalg.qr(basis)
    iterations = 0
    for iterations in range(1, max_iter + 1):
        diff = theta[:, None] - theta[None, :]
        p = 1.0 / (1.0 + np.exp(-diff))
        gradient = wins.sum(axis=1) - (totals * p).sum(axis=1) - prior * theta
        w = totals * p * (1 - p)
        hessian = w - np.diag(w.sum(axis=1)) - prior * np.eye(n)
        reduced = basis.T @ hessian @ basis
        step = basis @ np.linalg.solve(reduced, -(basis.T @ gradient))
        theta = theta + step
        theta -= theta.mean()
        if np.max(np.abs(step)) < tol:
            break
    diff = theta[:, None] - theta[None, :]
    p = 1.0 / (1.0 + np.exp(-diff))
    w = totals * p * (1 - p)
    information = basis.T @ (np.diag(w.sum(axis=1)) - w + prior * np.eye(n)) @ basis
    covariance = basis @ np.linalg.inv(information) @ basis.T
    se = np.sqrt(np.clip(np.diag(covariance), 0, None))
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return Strengths(systems=names, theta=[float(t) for t in theta], se=[float(s) for s in se],
                     low=[float(t - z * s) for t, s in zip(theta, se)], high=[float(t + z * s) for t, s in zip(theta, se)],
                     comparisons=len(rows), prior=float(prior), why_prior=why, iterations=iterations,
                     wins={name: float(wins[k].sum()) for k, name in enumerate(names)})
