"""Adaptive allocation in a running study: the confidence sequences of its judgments, stored for the hand-out.

``allocation_refresh(study)`` feeds every counted judgment of the study's real items, in the order they
were stored, to one betting confidence sequence per system pair (:mod:`evaluators.stats.sequential`,
Waudby-Smith & Ramdas 2024, Bonferroni over the pairs) and writes the result to
``Study.allocation_state``: the pairs' decisions, the still-open target pairs, whether the study is
settled and the judgments it is expected to need still. The hand-out (``annotation.handout.allocation``)
reads that state and never imports this module: ``EvaluatorsConfig.ready`` registers
:func:`allocation_refresh_after_judgment` as the hook the hand-out calls after each judgment of an adaptive
study (the layers' direction stays research → evaluators → annotation → studies).

The hook looks at the judgments only every ``allocation.refresh_every`` (K) of them: when the new judgment's id
is K or more above the stored state's watermark (:func:`evaluators.stats.allocation.refresh_due`, the rule the
replay uses too); in between it runs no statement. A refresh reads every judgment stored since the tally's
watermark, so none is skipped, only seen up to K − 1 judgments later: the confidence sequences are
anytime-valid, so looking at them at some judgments only (a stopping time) keeps their guarantee, and their
decisions are the same as after each judgment, merely noticed later (a few judgments may still go to a system
already eliminated, and a settled study stops up to K − 1 judgments late). The study page recomputes fully.

After a judgment the state is not recomputed from every judgment: a :class:`Tally` (the sequences after the
judgments up to a watermark, the highest judgment id read) is kept in the process's memory and extended with the
judgments stored since, which gives the full recomputation's arrays exactly (the same observations in the
same order); whatever would break that (a revision, a change of the excluded annotators, other settings)
makes the refresh rebuild from all the judgments instead.

One observation per judgment: an annotator's scores of an item's candidates give each pair of systems
on the item one paired difference (for ranking and choice, the protocol's ``preference_values``, of which the
sequences take the sign: a preference). The judgments of one item by several annotators are separate
observations (docs/efficient-evaluation.md, "For the live study", states the assumption). The state is
a deterministic function of the judgments in storage order, so any process can rebuild it.
"""
from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db.models import Q
from django.utils import timezone

from annotation.handout import statements
from annotation.models import Judgment
from evaluators.stats.allocation import out_of_top, predicted_finish, refresh_due, target_open
from evaluators.stats.sequential import PairwiseSequences, SequentialConfig
from evaluators.reports.span_report import weights_from
from studies.definition.allocation import MQM_CAP, PREFERENCE_RANGE, is_adaptive, refresh_every, score_range
from studies.lifecycle.stages import study_close_when_settled
from studies.models import Candidate, Status, Study


#: One judgment's answer and its item's candidates (ids as text) → a value per candidate (absent: no value).
Values = Callable[[dict[str, Any], list[str]], dict[str, float]]


def _scorer(study: Study) -> tuple[tuple[float, float], Values] | None:
    """The study's score range and how one stored answer becomes a value per candidate (None: nothing to compare).

    0–100 score protocols (ESA, DA, pairwise): the score as given. MQM: minus the candidate's weighted error
    count under the study's weights (``mqm_weights`` over WMT's), capped at ``MQM_CAP`` (Freitag et al. 2021).
    Protocols whose answers order the candidates (ranking, choice): the protocol's ``preference_values``, of
    which the sequences compare the sign only (``PREFERENCE_RANGE``).
    """
    spec = study.spec
    scale = score_range(uses_score=spec.uses_score(study),
                        per_candidate_spans=spec.per_candidate_annotations and spec.uses_spans(study),
                        preference=spec.preference_observations)
    if scale is None:
        return None
    if scale == PREFERENCE_RANGE:
        return scale, spec.preference_values
    if spec.uses_score(study):
        def given(entry: dict[str, Any]) -> float | None:
            score = entry.get("score")
            return float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
        return scale, _per_annotation(given)
    weights = weights_from(study.mqm_weights)

    def mqm(entry: dict[str, Any]) -> float | None:
        spans = entry.get("spans")
        if not isinstance(spans, list):
            return None
        total = sum(weights.weight(span.get("category", ""), span.get("severity", "")) for span in spans)
        return -min(MQM_CAP, total)
    return scale, _per_annotation(mqm)


def _per_annotation(score_of: Callable[[dict[str, Any]], float | None]) -> Values:
    """Values from an answer's per-candidate annotations, one candidate's entry at a time."""
    def values(answer: dict[str, Any], keys: list[str]) -> dict[str, float]:
        out = {}
        for key, entry in (answer.get("annotations") or {}).items():
            score = score_of(entry) if isinstance(entry, dict) else None
            if score is not None:
                out[key] = score
        return out
    return values


def _rows(answers: Any, column: dict[str, int], n_systems: int, values_of: Values,
          ) -> tuple[list[np.ndarray], int]:
    """Per counted judgment of ``answers`` ((id, excluded, answer, the item's candidate ids as text) in id order),
    its values by system (NaN: absent); and the highest judgment id read (excluded annotators' too: the
    watermark of what was read)."""
    rows = []
    watermark = 0
    for pk, excluded, answer, keys in answers:
        watermark = max(watermark, pk)
        if excluded:
            continue
        scores = np.full(n_systems, math.nan)
        for key, score in values_of(answer or {}, keys).items():
            if key in column:
                scores[column[key]] = score
        rows.append(scores)
    return rows, watermark


def _judgment_scores(study: Study, values_of: Values,
                     ) -> tuple[list[str], bool, list[np.ndarray], int, dict[str, int], dict[int, list[str]]]:
    """The study's systems (sorted) and whether every real item holds all of them; per counted judgment in
    storage order, the scores by system (NaN: absent); the highest judgment id read (excluded annotators'
    too: the watermark of what this read saw); each candidate's system (its column) and each real item's
    candidates (ids as text), which the extensions reuse."""
    candidates = list(Candidate.objects.filter(item__study=study, item__is_spam=False)
                      .values_list("pk", "item_id", "system"))
    systems = sorted({system for _, _, system in candidates})
    held: dict[int, set[str]] = {}
    for _, item, system in candidates:
        held.setdefault(item, set()).add(system)
    complete = all(len(present) == len(systems) for present in held.values())
    index = {system: k for k, system in enumerate(systems)}
    column = {str(pk): index[system] for pk, _, system in candidates}
    keys: dict[int, list[str]] = {}
    for pk, item, _ in candidates:
        keys.setdefault(item, []).append(str(pk))
    answers = (Judgment.objects.filter(assignment__item__study=study, assignment__item__is_spam=False, is_current=True)
               .order_by("pk").values_list("pk", "assignment__annotator__excluded", "answer", "assignment__item_id"))
    rows, watermark = _rows(((pk, excluded, answer, keys.get(item, [])) for pk, excluded, answer, item in answers.iterator()),
                            column, len(systems), values_of)
    return systems, complete, rows, watermark, column, keys


@dataclass
class Tally:
    """A study's confidence sequences after its counted judgments up to ``watermark``: what a refresh extends.

    ``key`` is everything else the sequences depend on (the study's creation time, protocol, score range, α,
    minimum effect, MQM weights);
    ``excluded`` the annotators left out when the judgments were read; ``complete``: every real item holds
    every system. The sequences are those of the full recomputation after the same judgments in the same
    order, so extending a tally with the judgments stored after its watermark gives the full recomputation's
    arrays bit for bit (``sequences`` is None with fewer than two systems). ``column`` (a candidate's id as text →
    its system's index) and ``keys`` (a real item's id → its candidates' ids as text) are the rebuild's, read
    once: an item's candidates are made with it and never change, and a judgment of an item the tally does
    not know (added since) makes the refresh rebuild.
    """

    key: tuple[Any, ...]
    excluded: tuple[int, ...]
    systems: list[str]
    complete: bool
    watermark: int
    judgments: int
    sequences: PairwiseSequences | None
    column: dict[str, int]
    keys: dict[int, list[str]]


def _tally_key(study: Study, scale: tuple[float, float]) -> tuple[Any, ...]:
    options = study.allocation
    # The study's creation time with its id: a study made anew with an id used before (after a rollback) is
    # another study.
    return (study.created_at, study.protocol, tuple(scale), float(options["alpha"]),
            None if options["min_effect"] is None else float(options["min_effect"]),
            json.dumps(study.mqm_weights, sort_keys=True))


def _config(study: Study, scale: tuple[float, float]) -> SequentialConfig:
    options = study.allocation
    return SequentialConfig(*scale, alpha=float(options["alpha"]),
                            min_effect=None if options["min_effect"] is None else float(options["min_effect"]),
                            preference=scale == PREFERENCE_RANGE)  # the scale _scorer chose: one decision


def _tally_rebuild(study: Study, scale: tuple[float, float],
                   values_of: Values) -> Tally:
    """The full recomputation: every counted judgment of the study, in id order.

    The excluded annotators are read *before* the judgments: an exclusion committed in between shows in the
    judgments read and not in ``excluded``, so the next extension sees a different set and rebuilds.
    """
    excluded = statements.study_excluded_annotators(study_id=study.pk)
    systems, complete, rows, watermark, column, keys = _judgment_scores(study, values_of)
    sequences = PairwiseSequences(len(systems), _config(study, scale)) if len(systems) >= 2 else None
    if sequences is not None:
        for scores in rows:
            sequences.observe(scores)
    return Tally(_tally_key(study, scale), excluded, systems, complete, watermark, len(rows), sequences,
                 column, keys)


def _tally_extend(study: Study, tally: Tally, values_of: Values) -> bool:
    """Feed ``tally`` the counted judgments stored after its watermark; False (and ``tally`` untouched) when
    that would not equal the full recomputation, and the caller rebuilds.

    Not equal when a judgment read is a revision (it replaces an answer the tally may have counted), when the
    excluded annotators changed (read in the same statement as the judgments, so an exclusion committed before
    the read shows in both, and one committed after in neither), or when a judgment is of an item the tally
    does not know (an item added since: its candidates may hold a system the tally does not have). Judgments
    of a study commit in id order (the submit's lock, ``annotation.handout.statements.study_judgments_ordered``),
    so none can appear later below the watermark. One prepared statement, whatever the study's size.
    """
    new, excluded = statements.judgments_after(study_id=study.pk, after=tally.watermark)
    if any(revision != 1 for _, revision, _, _, _ in new):
        return False
    if excluded != tally.excluded:
        return False
    if not new:
        return True
    keys = tally.keys
    if any(item not in keys for _, _, _, _, item in new):
        return False
    rows, watermark = _rows(((pk, left_out, answer, keys[item]) for pk, _, left_out, answer, item in new),
                            tally.column, len(tally.systems), values_of)
    if tally.sequences is not None:
        for scores in rows:
            tally.sequences.observe(scores)
    tally.watermark = max(tally.watermark, watermark)
    tally.judgments += len(rows)
    return True


class _Tallies:
    """This process's tallies, one per study (at most ``size``, the least recently used dropped), each behind
    its own lock so that two threads never extend one tally at once.

    Kept in the process's memory rather than in ``CACHES``: a tally holds two arrays of pairs × 201 floats,
    and pickling it in and out of a cache after every judgment cost about as much as the rest of the refresh
    (bench/adaptive_cost.py). Every process keeps its own and extends it from the database, so processes never
    disagree and a restart only costs one rebuild.
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._tallies: OrderedDict[int, Tally] = OrderedDict()
        self._locks: dict[int, threading.Lock] = {}
        self._lock = threading.Lock()

    def lock(self, study_id: int) -> threading.Lock:
        with self._lock:
            return self._locks.setdefault(study_id, threading.Lock())

    def get(self, study_id: int) -> Tally | None:
        with self._lock:
            tally = self._tallies.get(study_id)
            if tally is not None:
                self._tallies.move_to_end(study_id)
            return tally

    def put(self, study_id: int, tally: Tally | None) -> None:
        with self._lock:
            if tally is None:
                self._tallies.pop(study_id, None)
                return
            self._tallies[study_id] = tally
            self._tallies.move_to_end(study_id)
            while len(self._tallies) > self.size:
                dropped, _ = self._tallies.popitem(last=False)
                self._locks.pop(dropped, None)

    def clear(self) -> None:
        with self._lock:
            self._tallies.clear()


#: The tallies of this process (tests clear it to play a restart).
TALLIES = _Tallies()


def allocation_tally(study: Study, *, rebuild: bool = False) -> tuple[Tally, bool] | None:
    """The study's tally and whether it was rebuilt: this process's tally extended with the judgments stored
    since (or rebuilt from all of them when ``rebuild``, when there is none, or when extending would not give
    the full recomputation). None for a study without adaptive allocation or without a per-candidate score.
    """
    if not is_adaptive(study.allocation):
        return None
    scorer = _scorer(study)
    if scorer is None:
        return None
    scale, values_of = scorer
    with TALLIES.lock(study.pk):
        tally = None if rebuild else TALLIES.get(study.pk)
        try:
            if tally is not None and tally.key == _tally_key(study, scale) and _tally_extend(study, tally, values_of):
                return tally, False
        except BaseException:
            TALLIES.put(study.pk, None)  # half extended: never reused
            raise
        tally = _tally_rebuild(study, scale, values_of)
        TALLIES.put(study.pk, tally)
        return tally, True


def allocation_state(study: Study, *, incremental: bool = False) -> dict[str, Any]:
    """The adaptive allocation's state of ``study`` from its judgments (``{}`` for a uniform study).

    By default recomputed from every judgment; with ``incremental``, this process's tally extended with the
    judgments stored since (the same state, at a cost that grows with the new judgments only).
    """
    found = allocation_tally(study, rebuild=not incremental)
    if found is None:
        return {}
    return _summary(study, found[0])


def _handout_view(study: Study, tally: Tally) -> tuple[bool, bool, list[list[str]]]:
    """What the hand-out reads of a state: (warmed up, settled, the open target pairs)."""
    seq = tally.sequences
    if seq is None:
        return False, False, []
    open_rows = target_open(seq, study.allocation["target"])
    warmed_up = tally.judgments >= int(study.allocation["warmup"])
    return (warmed_up, warmed_up and len(open_rows) == 0,
            [[tally.systems[seq.pairs[r, 0]], tally.systems[seq.pairs[r, 1]]] for r in open_rows])


def _summary(study: Study, tally: Tally) -> dict[str, Any]:
    """The stored state: the pairs' decisions and intervals, the open target pairs, warmed up, settled, and the
    judgments still expected."""
    options = study.allocation
    scale = tally.key[2]
    systems, judgments, seq = tally.systems, tally.judgments, tally.sequences
    state: dict[str, Any] = {"judgments": judgments, "watermark": tally.watermark, "scale": list(scale),
                             "warmup": int(options["warmup"]), "target": options["target"],
                             "alpha": options["alpha"], "min_effect": options["min_effect"], "systems": systems,
                             "every_item_holds_every_system": tally.complete,
                             "preference": bool(seq is not None and seq.config.preference)}
    if seq is None:
        return {**state, "settled": False, "warmed_up": False, "pairs": [], "open_pairs": [],
                "expected_left": None}
    config = seq.config
    open_rows = target_open(seq, options["target"])
    warmed_up = judgments >= state["warmup"]
    out = out_of_top(seq)
    pairs = []
    for row, (a, b) in enumerate(seq.pairs):
        low, high = seq.interval(row) if seq.count[row] else (-config.width, config.width)
        mean = seq.mean_difference(row)
        pairs.append({"a": systems[a], "b": systems[b], "decision": str(seq.decision[row]),
                      "observations": int(seq.count[row]), "decided_at": int(seq.decided_at[row]),
                      "mean": None if math.isnan(mean) else round(mean, 3),
                      "low": round(low, 3), "high": round(high, 3),
                      "target": options["target"] == "all" or not (out[a] or out[b])})
    # Judgments still expected: each open target pair's predicted observations to its decision, over the
    # share of judgments that observe it so far; the largest of them (None while some pair's capital is not
    # growing: no prediction).
    expected: float | None = 0.0
    if len(open_rows):
        finish = predicted_finish(seq, open_rows)
        share = seq.count[open_rows] / max(judgments, 1)
        if not np.all(np.isfinite(finish)) or np.any(share <= 0):
            expected = None
        else:
            expected = float(np.max((finish - seq.count[open_rows]) / share))
    settled = warmed_up and len(open_rows) == 0
    return {**state, "settled": settled, "warmed_up": warmed_up, "pairs": pairs,
            "open_pairs": [[systems[seq.pairs[r, 0]], systems[seq.pairs[r, 1]]] for r in open_rows],
            "out_of_top": [systems[k] for k in np.flatnonzero(out)],
            "expected_left": None if expected is None else int(math.ceil(expected))}


def settled_record(state: dict[str, Any]) -> dict[str, Any]:
    """What is recorded when a settled study closes: the time and the figures that decided it — the judgments
    counted, the level and the target, and each decided or target pair's decision with its observations, mean
    difference and anytime-valid interval (the systems put out of the top cluster for ``top``)."""
    return {"at": timezone.now().isoformat(), "judgments": state["judgments"], "target": state["target"],
            "alpha": state["alpha"], "min_effect": state["min_effect"], "n_pairs": len(state["pairs"]),
            "method": "betting confidence sequences (Waudby-Smith & Ramdas 2024), Bonferroni over the pairs",
            "pairs": [{key: pair[key] for key in ("a", "b", "decision", "observations", "mean", "low", "high")}
                      for pair in state["pairs"] if pair["target"] or pair["decision"] != "open"],
            "out_of_top": list(state.get("out_of_top", []))}


def _close_if_settled(study: Study, state: dict[str, Any]) -> None:
    """Close ``study`` when its state is settled and its setting says so (studies.lifecycle.stages)."""
    if state.get("settled") and study.allocation.get("close_when_settled") and study.status == Status.OPEN:
        study_close_when_settled(study=study, record=settled_record(state))


def allocation_refresh(study: Study) -> dict[str, Any]:
    """Recompute ``study``'s allocation state from every judgment and store it; return it (``{}`` and nothing
    written when uniform). The study page's refresh: an exclusion shows at once, and the tally is rebuilt.

    One conditional UPDATE of the study row's ``allocation_state`` column, nothing else: of two refreshes
    at once, one that read fewer judgments than the state stored meanwhile (a lower watermark, the highest
    judgment id it saw) writes nothing, so a stale state never replaces a newer one. An equal watermark
    writes: a refresh after an exclusion sees the same judgments and counts fewer of them.
    """
    state = allocation_state(study)
    if state:
        allocation_state_store(study, state)
        _close_if_settled(study, state)
    return state


def allocation_refresh_after_judgment(study: Study, judgment_id: int | None = None) -> dict[str, Any] | None:
    """The hand-out's hook after each judgment of an adaptive study (``judgment_id``, the new judgment's): when a
    refresh is due (:func:`refresh_due`: no stored state, or the id ``refresh_every`` or more above the stored
    state's watermark; always without an id), the tally extended with every judgment stored since its watermark
    and the state written. Returns the state written, or None when nothing was.

    So of ``refresh_every`` judgments, one costs two statements (the read, the conditional UPDATE) and the
    sequences' update with the judgments since; the others none. With ``refresh_every`` above 1 the state is
    written at every refresh, whether or not what the hand-out reads of it changed: its watermark is what the
    next judgments count from. With 1 (a refresh after each judgment), only when that changed (warmed up,
    settled, the open pairs) or the tally was rebuilt, so that an ordinary judgment costs one statement; the
    stored state's other figures are then those of its last write, and the study page recomputes them.
    """
    every = refresh_every(study.allocation)
    stored = study.allocation_state or {}
    if judgment_id is not None and not refresh_due(judgment_id, stored.get("watermark"), every):
        return None
    found = allocation_tally(study)
    if found is None:
        return None
    tally, rebuilt = found
    if every == 1 and not rebuilt and stored and (bool(stored.get("warmed_up")), bool(stored.get("settled")),
                                                  stored.get("open_pairs", [])) == _handout_view(study, tally):
        return None
    state = _summary(study, tally)
    allocation_state_store(study, state)
    _close_if_settled(study, state)
    return state


def allocation_state_store(study: Study, state: dict[str, Any]) -> bool:
    """Store ``state`` unless the stored one saw later judgments (a higher watermark); True when stored."""
    not_newer = Q(allocation_state__watermark__isnull=True) | Q(allocation_state__watermark__lte=state["watermark"])
    stored = bool(Study.objects.filter(not_newer, pk=study.pk).update(allocation_state=state))
    if stored:
        study.allocation_state = state
    return stored
