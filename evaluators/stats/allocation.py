"""Which item, for which systems, to judge next: uniform and adaptive allocation as incremental state.

A policy holds the study's state — the judgments seen so far and the confidence sequences of
:mod:`evaluators.stats.sequential` — and answers two calls, the same in a replay and in a live study:

* ``next_request()`` → a :class:`Request` (an item and the systems to judge on it), or ``None`` when
  there is nothing left to ask (settled, or no data left for an open pair);
* ``observe(request, scores)`` → feeds the judgments of that request (one score per requested system).

**One random item order for every system.** Each policy draws a seeded random order of the items;
every system is judged on a *prefix* of that order (its ``progress``). So a pair (A, B) sees its
items in the order's sequence whatever the policy does — the policy only decides *when* a pair gets
its next item, never *which* — and every pair's observations are a random-order sample, as the
confidence sequences assume. The sequences are valid at every time, so a policy may choose the
next request from everything seen so far without inflating false decisions.

* **uniform**: the items in the random order, every system on each.
* **adaptive** (elimination): a warm-up of the first ``warmup`` items with every system; then each
  next item of the order for the systems that still have an open pair of the target set, and for no
  other. A system all of whose target pairs are decided (or, with target ``top``, that is out of the top
  cluster) is judged no more. An open pair's two systems are judged on every item, so each pair reaches
  each decision at the same item of the order as under uniform, never later, with fewer judgments (those
  of the systems already eliminated): the adaptive policy never needs more judgments than uniform to
  reach any set of decisions (tested). Successive elimination: Even-Dar, Mannor & Mansour (JMLR 2006).

  **Refreshed every K judgments** (``refresh_every``, the live study's setting): a live study's hand-out
  reads a stored state that its hook refreshes only when the new judgment's id is K or more above the
  stored state's watermark (:func:`refresh_due`), so the policy here decides from the view of its last
  refresh too (the judgments are numbered 1, 2, … in the order made, one per request: the ids of a study
  alone on its server). Between refreshes a system already eliminated may still be judged, and the policy
  stops (settled) at the first refresh that sees it settled, up to K − 1 requests late. The sequences still
  see every judgment, decisions are sticky and the stale set of active systems holds the current one, so
  each open pair is still judged on every item and the guarantee above holds for any K (tested).

A judgment is one (item, system) cell. Pure numpy; no Django.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as sps

from evaluators.stats.sequential import (
    FIRST_BETTER, INDISTINGUISHABLE, OPEN, SECOND_BETTER, PairwiseSequences, SequentialConfig,
)

#: The target sets: every pair, or the pairs that can still change the top cluster.
TARGETS = ("all", "top")
#: Items judged by every system before the adaptive policy starts choosing.
DEFAULT_WARMUP = 20
#: Judgments between two refreshes of the hand-out's view (the live setting's default,
#: ``studies.definition.allocation.DEFAULTS["refresh_every"]``, the same number: tested).
DEFAULT_REFRESH_EVERY = 10


def refresh_due(judgment_id: int, watermark: int | None, every: int) -> bool:
    """Whether the judgment ``judgment_id`` refreshes the view: no state yet (``watermark`` None), or the new
    judgment's id is ``every`` or more above the watermark (the highest judgment id the state has read).

    The one rule of the live hook (evaluators/live_allocation.py) and of the replay's adaptive policy. Live, ids
    are drawn for every study on the server, so a study's refreshes come after at most ``every`` of its
    judgments (sooner when other studies' judgments take ids in between); in the replay, ids are 1, 2, … and
    they come after exactly ``every``. Every judgment is read at a refresh: none is skipped, only looked at later.
    """
    return watermark is None or judgment_id - watermark >= every


@dataclass(frozen=True)
class Request:
    """Judge ``item`` (an index into the study's items) for each of ``systems``."""

    item: int
    systems: tuple[int, ...]


def out_of_top(seq: PairwiseSequences) -> np.ndarray:
    """Booleans by system: decided worse than some other system (so not in the top cluster)."""
    out = np.zeros(seq.n_systems, dtype=bool)
    out[seq.pairs[seq.decision == FIRST_BETTER, 1]] = True
    out[seq.pairs[seq.decision == SECOND_BETTER, 0]] = True
    return out


def target_open(seq: PairwiseSequences, target: str) -> np.ndarray:
    """The open pairs of the target set: all open pairs, or (``top``) those of two systems not yet out."""
    rows = seq.open_pairs()
    if target == "top":
        out = out_of_top(seq)
        pairs = seq.pairs[rows]
        rows = rows[~out[pairs[:, 0]] & ~out[pairs[:, 1]]]
    return rows


def pair_capital(seq: PairwiseSequences, rows: np.ndarray) -> np.ndarray:
    """Each pair's hedged log-capital against its nearest decision.

    The sign decisions read the capital at 0; with a minimum effect, "indistinguishable" reads the
    smaller of the capitals at −δ (K⁺) and +δ (K⁻), both of which it needs.
    """
    best = np.maximum(seq.log_k_plus[rows, 0], seq.log_k_minus[rows, 0])
    if seq.config.min_effect is not None:
        best = np.maximum(best, np.minimum(seq.log_k_plus[rows, 1], seq.log_k_minus[rows, 2]))
    return best - math.log(2)


def predicted_finish(seq: PairwiseSequences, rows: np.ndarray) -> np.ndarray:
    """The observations at which each pair would reach its decision if its capital kept its mean growth.

    ``n + (log(1/α_pair) − L) / (L / n)`` for a pair with log-capital ``L > 0`` after ``n``
    observations; infinite when the capital has not grown. The live study's "judgments still expected"
    comes from it.
    """
    n = np.maximum(seq.count[rows], 1)
    log_k = pair_capital(seq, rows)
    rate = np.maximum(log_k, 0.0) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        remaining = np.where(rate > 0, (seq.log_threshold - log_k) / rate, np.inf)
    return n + np.maximum(remaining, 0.0)


class Policy:
    """Shared state: the item order, each system's progress in it, the scores seen, the sequences."""

    name = "policy"

    def __init__(self, n_systems: int, n_items: int, config: SequentialConfig, *, seed: int,
                 pairs: Sequence[tuple[int, int]] | None = None, target: str = "all") -> None:
        if n_items < 1:
            raise ValueError("no items to allocate")
        if target not in TARGETS:
            raise ValueError(f"target {target!r}: {' or '.join(TARGETS)}")
        self.target = target
        self.n_systems = n_systems
        self.n_items = n_items
        self.seed = seed
        self.order = np.random.default_rng(seed).permutation(n_items)
        self.position = np.empty(n_items, dtype=int)
        self.position[self.order] = np.arange(n_items)
        #: Items judged per system: the first ``progress[s]`` items of ``order``.
        self.progress = np.zeros(n_systems, dtype=int)
        #: Scores seen, by system and by position in the order.
        self.scores = np.full((n_systems, n_items), math.nan)
        self.sequences = PairwiseSequences(n_systems, config, pairs)
        self.judgments = 0

    def out_of_top(self) -> np.ndarray:
        """Booleans by system: decided worse than some other system (so not in the top cluster)."""
        return out_of_top(self.sequences)

    def target_open(self) -> np.ndarray:
        """The open pairs of the target set: all open pairs, or (``top``) those of two systems not yet out."""
        return target_open(self.sequences, self.target)

    @property
    def settled(self) -> bool:
        """No pair of the target set is open."""
        return len(self.target_open()) == 0

    def reached(self, reference: np.ndarray) -> bool:
        """Whether the reference's decisions (another run's, by pair) are reached: every decided pair
        decided (``all``), or every system out of the top cluster there out here too (``top``)."""
        if self.target == "top":
            ref_out = np.zeros(self.n_systems, dtype=bool)
            pairs = self.sequences.pairs
            ref_out[pairs[reference == FIRST_BETTER, 1]] = True
            ref_out[pairs[reference == SECOND_BETTER, 0]] = True
            return bool(np.all(self.out_of_top()[ref_out]))
        return bool(np.all(self.sequences.decision[reference != OPEN] != OPEN))

    @property
    def stopped(self) -> bool:
        """The policy stops here: settled as far as its view goes (its current state, unless it refreshes
        the view only now and then)."""
        return self.settled

    def next_request(self) -> Request | None:
        raise NotImplementedError

    def observe(self, request: Request, scores: Sequence[float]) -> np.ndarray:
        """Record one score per requested system; returns the pairs decided by them."""
        if len(scores) != len(request.systems):
            raise ValueError(f"{len(scores)} score(s) for {len(request.systems)} system(s)")
        pos = int(self.position[request.item])
        new = np.zeros(self.n_systems, dtype=bool)
        for system, score in zip(request.systems, scores, strict=True):
            if self.progress[system] != pos:
                raise ValueError(f"system {system} is at item {self.progress[system]} of the order, "
                                 f"not {pos}: judgments must follow the order")
            if not math.isfinite(score):
                raise ValueError(f"system {system}: the score is not a number")
            self.scores[system, pos] = score
            self.progress[system] += 1
            new[system] = True
        self.judgments += len(request.systems)
        return self.sequences.observe(self.scores[:, pos], new)


class UniformPolicy(Policy):
    """Every system on each item, the items in the random order."""

    name = "uniform"

    def next_request(self) -> Request | None:
        pos = int(self.progress.min())
        if pos >= self.n_items:
            return None
        return Request(int(self.order[pos]), tuple(int(s) for s in np.flatnonzero(self.progress == pos)))


class AdaptivePolicy(Policy):
    """Warm-up with every system, then each next item for the systems that still have an open target pair,
    as seen at the view's last refresh (every ``refresh_every`` requests: :func:`refresh_due`)."""

    name = "adaptive"

    def __init__(self, n_systems: int, n_items: int, config: SequentialConfig, *, seed: int,
                 pairs: Sequence[tuple[int, int]] | None = None, target: str = "all",
                 warmup: int = DEFAULT_WARMUP, refresh_every: int = DEFAULT_REFRESH_EVERY) -> None:
        super().__init__(n_systems, n_items, config, seed=seed, pairs=pairs, target=target)
        if warmup < 0:
            raise ValueError("warmup: at least 0 items")
        if refresh_every < 1:
            raise ValueError("refresh_every: at least 1 judgment")
        self.warmup = min(warmup, n_items)
        self.refresh_every = refresh_every
        #: Requests observed (the ids of the replay's judgments: 1, 2, …), and the last refresh's.
        self.requests = 0
        self.watermark: int | None = None
        #: The systems the view lets through (no view yet: every system, as a live study without a state),
        #: and whether the view is settled.
        self.view = np.ones(n_systems, dtype=bool)
        self.view_settled = False
        #: The requests at which the view was refreshed (what the tests check).
        self.refreshes: list[int] = []

    def observe(self, request: Request, scores: Sequence[float]) -> np.ndarray:
        decided = super().observe(request, scores)
        self.requests += 1
        if refresh_due(self.requests, self.watermark, self.refresh_every):
            self.refresh()
        return decided

    def refresh(self) -> None:
        """Look at the sequences now: the view the next requests follow until the next refresh."""
        self.watermark = self.requests
        self.refreshes.append(self.requests)
        # during the warm-up every system is active (the lowest progress is then below the items there are)
        self.view = np.ones(self.n_systems, dtype=bool) if self.progress.min() < self.warmup else self.active()
        self.view_settled = self.settled

    @property
    def stopped(self) -> bool:
        return self.view_settled

    def active(self) -> np.ndarray:
        """Booleans by system: in some open pair of the target set (those still to be judged)."""
        pairs = self.sequences.pairs[self.target_open()]
        active = np.zeros(self.n_systems, dtype=bool)
        active[pairs[:, 0]] = True
        active[pairs[:, 1]] = True
        return active

    def next_request(self) -> Request | None:
        active = self.view
        if not active.any():
            return None
        pos = int(self.progress[active].min())
        if pos >= self.n_items:
            return None
        return Request(int(self.order[pos]), tuple(int(s) for s in np.flatnonzero(active & (self.progress == pos))))


POLICIES = {"uniform": UniformPolicy, "adaptive": AdaptivePolicy}


def make_policy(name: str, n_systems: int, n_items: int, config: SequentialConfig, *, seed: int,
                pairs: Sequence[tuple[int, int]] | None = None, target: str = "all",
                warmup: int = DEFAULT_WARMUP, refresh_every: int = DEFAULT_REFRESH_EVERY) -> Policy:
    if name == "uniform":
        return UniformPolicy(n_systems, n_items, config, seed=seed, pairs=pairs, target=target)
    if name == "adaptive":
        return AdaptivePolicy(n_systems, n_items, config, seed=seed, pairs=pairs, target=target, warmup=warmup,
                              refresh_every=refresh_every)
    raise ValueError(f"allocation {name!r}: uniform or adaptive")


@dataclass(frozen=True)
class AllocationRun:
    """One replay of a policy on complete data."""

    policy: str
    seed: int
    #: Judgments when every reference decision had been reached (None: never reached).
    judgments_to_reference: int | None
    #: Judgments when the policy stopped (settled or out of data) and whether it was settled.
    judgments_total: int
    settled: bool
    #: Per system, the judgments made up to the reference point (or to the end when never reached).
    per_system: np.ndarray
    #: Per pair (of the target set), its observations up to that point.
    per_pair: np.ndarray
    #: The decisions at the end, and whether any of them names a better system (false on null data).
    decisions: np.ndarray
    any_better: bool
    #: Reference pairs decided otherwise than the reference (a wrong direction or a different verdict).
    contradictions: int


def run_policy(policy: Policy, human: np.ndarray, reference: np.ndarray | None = None) -> AllocationRun:
    """Run ``policy`` on complete data ``human`` (systems × items) until it has nothing to ask.

    ``reference``: the decisions to reach, by pair of the target set (``open`` ones are not targets);
    the run records the judgments at the moment every non-open reference decision had been reached.
    """
    seq = policy.sequences
    targets = np.flatnonzero(reference != OPEN) if reference is not None else np.array([], dtype=int)
    reached_at: int | None = 0 if reference is not None and policy.reached(reference) else None
    per_system = per_pair = None
    if reached_at == 0:
        per_system, per_pair = policy.progress.copy(), seq.count.copy()
    while (request := policy.next_request()) is not None:
        policy.observe(request, [float(human[s, request.item]) for s in request.systems])
        if reached_at is None and reference is not None and policy.reached(reference):
            reached_at = policy.judgments
            per_system, per_pair = policy.progress.copy(), seq.count.copy()
        if policy.stopped:
            break
    if per_system is None or per_pair is None:
        per_system, per_pair = policy.progress.copy(), seq.count.copy()
    contradictions = 0
    if reference is not None:
        decided = seq.decision[targets]
        contradictions = int(np.sum((decided != OPEN) & (decided != reference[targets])))
    return AllocationRun(policy=policy.name, seed=policy.seed, judgments_to_reference=reached_at,
                         judgments_total=policy.judgments, settled=policy.settled, per_system=per_system,
                         per_pair=per_pair, decisions=seq.decision.copy(),
                         any_better=bool(np.isin(seq.decision, [FIRST_BETTER, SECOND_BETTER]).any()),
                         contradictions=contradictions)


@dataclass(frozen=True)
class AllocationReplay:
    """Uniform and adaptive allocation replayed over seeds (one random item order per seed)."""

    seeds: int
    null: bool
    #: Per policy, the runs in seed order.
    runs: dict[str, list[AllocationRun]]
    #: Per seed, the number of reference decisions (the full uniform pass's; none on null data).
    reference_decisions: list[int]
    pairs: list[tuple[int, int]]
    #: Per seed, the judgments of an oracle that knows the reference in advance (:func:`oracle_judgments`).
    oracle: list[int]


def replay_allocation(human: np.ndarray, config: SequentialConfig, *, policies: Sequence[str], seeds: int,
                      warmup: int = DEFAULT_WARMUP, null: bool = False, target: str = "all",
                      refresh_every: int = DEFAULT_REFRESH_EVERY) -> AllocationReplay:
    """Each seed: the reference decisions of a full uniform pass in that seed's item order, then each policy.

    With ``null``, each seed first shuffles the system labels within every item (``numpy`` generator
    seeded with the seed + 1,000,000), so no system is truly better and any "better" decision is false;
    the policies then run until they have nothing left to ask, and no reference is used.
    """
    n_systems, n_items = human.shape
    runs: dict[str, list[AllocationRun]] = {name: [] for name in policies}
    references = []
    oracle = []
    pairs: list[tuple[int, int]] = []
    for seed in range(seeds):
        data = human
        if null:
            rng = np.random.default_rng(1_000_000 + seed)
            data = np.stack([human[rng.permutation(n_systems), i] for i in range(n_items)], axis=1)
        reference = None
        if not null:
            full = make_policy("uniform", n_systems, n_items, config, seed=seed, target=target)
            reference = run_policy(full, data).decisions
            references.append(int(full.out_of_top().sum()) if target == "top" else int(np.sum(reference != OPEN)))
            oracle.append(oracle_judgments(full))
        for name in policies:
            policy = make_policy(name, n_systems, n_items, config, seed=seed, target=target, warmup=warmup,
                                 refresh_every=refresh_every)
            pairs = [(int(p[0]), int(p[1])) for p in policy.sequences.pairs]
            runs[name].append(run_policy(policy, data, reference))
    return AllocationReplay(seeds=seeds, null=null, runs=runs, reference_decisions=references, pairs=pairs,
                            oracle=oracle)


def oracle_judgments(full: Policy) -> int:
    """A lower bound for any policy on this item order: the judgments of one that knows the reference.

    In a policy's item order a pair reaches a decision after the same number of its observations
    whatever the policy, so a policy that knew in advance which pairs the full pass decides (``all``;
    for ``top``, the earliest decision that put each system out) would judge each system up to the
    largest such count among its pairs, and the others not at all.
    """
    seq = full.sequences
    need = np.zeros(full.n_systems, dtype=int)
    decided = np.flatnonzero(seq.decision != OPEN)
    if full.target == "top":
        chosen = []
        for system in np.flatnonzero(full.out_of_top()):
            loser = np.where(seq.decision[decided] == FIRST_BETTER, seq.pairs[decided, 1], seq.pairs[decided, 0])
            excluding = decided[(loser == system) & (seq.decision[decided] != INDISTINGUISHABLE)]
            chosen.append(excluding[np.argmin(seq.decided_at[excluding])])
        decided = np.array(chosen, dtype=int)
    for row in decided:
        for system in seq.pairs[row]:
            need[system] = max(need[system], seq.decided_at[row])
    return int(need.sum())


def _mean_ci(values: Sequence[float]) -> dict[str, float]:
    """Mean and Student-t 95% interval of the mean over seeds."""
    arr = np.asarray(values, dtype=float)
    mean = float(arr.mean())
    if len(arr) < 2 or float(arr.std(ddof=1)) == 0.0:
        return {"mean": mean, "low": mean, "high": mean}
    half = float(sps.t.ppf(0.975, len(arr) - 1) * arr.std(ddof=1) / math.sqrt(len(arr)))
    return {"mean": mean, "low": mean - half, "high": mean + half}


def summarise(replay: AllocationReplay, systems: Sequence[str]) -> dict[str, Any]:
    """The figures of a replay: judgments to the reference decisions (mean, 95% CI), where they went,
    the saving of adaptive over uniform, and the share of runs with any false decision on null data."""
    out: dict[str, Any] = {"seeds": replay.seeds, "null": replay.null}
    if not replay.null:
        out["reference_decisions"] = _mean_ci(replay.reference_decisions)
        out["oracle_judgments"] = _mean_ci(replay.oracle)
    policies: dict[str, Any] = {}
    for name, runs in replay.runs.items():
        entry: dict[str, Any] = {
            "judgments_total": _mean_ci([r.judgments_total for r in runs]),
            "settled_share": float(np.mean([r.settled for r in runs])),
            "any_better_share": float(np.mean([r.any_better for r in runs])),
        }
        if replay.null:
            entry["false_decision_share"] = entry["any_better_share"]
            entry["false_decision_runs"] = int(sum(r.any_better for r in runs))
        else:
            reached = [r.judgments_to_reference for r in runs if r.judgments_to_reference is not None]
            entry["reached_share"] = len(reached) / len(runs)
            entry["judgments_to_reference"] = _mean_ci(reached) if reached else None
            entry["contradictions"] = int(sum(r.contradictions for r in runs))
        entry["per_system"] = {s: float(np.mean([r.per_system[k] for r in runs])) for k, s in enumerate(systems)}
        entry["per_pair"] = {f"{systems[a]} vs {systems[b]}": float(np.mean([r.per_pair[k] for r in runs]))
                             for k, (a, b) in enumerate(replay.pairs)}
        policies[name] = entry
    out["policies"] = policies
    if not replay.null and {"uniform", "adaptive"} <= set(replay.runs):
        u = policies["uniform"]["judgments_to_reference"]
        a = policies["adaptive"]["judgments_to_reference"]
        if u and a and u["mean"] > 0:
            out["saving"] = 1.0 - a["mean"] / u["mean"]
            out["oracle_saving"] = 1.0 - out["oracle_judgments"]["mean"] / u["mean"]
    return out
