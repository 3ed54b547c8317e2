"""Adaptive allocation in a running study: the confidence sequences of its judgments, stored for the hand-out.

``allocation_refresh(study)`` feeds every counted judgment of the study's real items, in the order they
were stored, to one betting confidence sequence per system pair (:mod:`evaluators.stats.sequential`,
Waudby-Smith & Ramdas 2024, Bonferroni over the pairs) and writes the result to
``Study.allocation_state``: the pairs' decisions, the still-open target pairs, whether the study is
settled and the judgments it is expected to need still. The hand-out (``annotation.handout.allocation``)
reads that state and never imports this module: ``EvaluatorsConfig.ready`` registers
:func:`allocation_refresh` as the hook the hand-out calls after each judgment of an adaptive study
(the layers' direction stays research → evaluators → annotation → studies).

One observation per judgment: an annotator's scores of an item's candidates give each pair of systems
on the item one paired difference. The judgments of one item by several annotators are separate
observations (docs/efficient-evaluation.md, "For the live study", states the assumption). The state is
a deterministic function of the judgments in storage order, so any process can rebuild it.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from django.db.models import Q

from annotation.models import Judgment
from evaluators.stats.allocation import out_of_top, predicted_finish, target_open
from evaluators.stats.sequential import OPEN, PairwiseSequences, SequentialConfig
from evaluators.reports.span_report import weights_from
from studies.definition.allocation import MQM_CAP, is_adaptive, score_range
from studies.models import Candidate, Study


def _scorer(study: Study) -> tuple[tuple[float, float], Callable[[dict[str, Any]], float | None]] | None:
    """The study's score range and how one candidate's stored annotation becomes its score (None: no score).

    0–100 score protocols (ESA, DA, pairwise): the score as given. MQM: minus the candidate's weighted error
    count under the study's weights (``mqm_weights`` over WMT's), capped at ``MQM_CAP`` (Freitag et al. 2021).
    """
    spec = study.spec
    scale = score_range(uses_score=spec.uses_score(study),
                        per_candidate_spans=spec.per_candidate_annotations and spec.uses_spans(study))
    if scale is None:
        return None
    if spec.uses_score(study):
        def given(entry: dict[str, Any]) -> float | None:
            score = entry.get("score")
            return float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
        return scale, given
    weights = weights_from(study.mqm_weights)

    def mqm(entry: dict[str, Any]) -> float | None:
        spans = entry.get("spans")
        if not isinstance(spans, list):
            return None
        total = sum(weights.weight(span.get("category", ""), span.get("severity", "")) for span in spans)
        return -min(MQM_CAP, total)
    return scale, mqm


def _judgment_scores(study: Study, score_of: Callable[[dict[str, Any]], float | None],
                     ) -> tuple[list[str], list[np.ndarray], int]:
    """The study's systems (sorted); per counted judgment in storage order, the scores by system (NaN: absent);
    and the highest judgment id read (excluded annotators' too: the watermark of what this read saw)."""
    candidates = list(Candidate.objects.filter(item__study=study, item__is_spam=False)
                      .values_list("pk", "system"))
    systems = sorted({system for _, system in candidates})
    index = {system: k for k, system in enumerate(systems)}
    column = {str(pk): index[system] for pk, system in candidates}
    answers = (Judgment.objects.filter(assignment__item__study=study, assignment__item__is_spam=False, is_current=True)
               .order_by("pk").values_list("pk", "assignment__annotator__excluded", "answer"))
    rows = []
    watermark = 0
    for pk, excluded, answer in answers.iterator():
        watermark = max(watermark, pk)
        if excluded:
            continue
        scores = np.full(len(systems), math.nan)
        for key, entry in (answer or {}).get("annotations", {}).items():
            score = score_of(entry) if isinstance(entry, dict) else None
            if key in column and score is not None:
                scores[column[key]] = score
        rows.append(scores)
    return systems, rows, watermark


def allocation_state(study: Study) -> dict[str, Any]:
    """The adaptive allocation's state of ``study`` from its judgments (``{}`` for a uniform study)."""
    if not is_adaptive(study.allocation):
        return {}
    options = study.allocation
    scorer = _scorer(study)
    if scorer is None:
        return {}
    scale, score_of = scorer
    systems, rows, watermark = _judgment_scores(study, score_of)
    judgments = len(rows)
    state: dict[str, Any] = {"judgments": judgments, "watermark": watermark, "scale": list(scale), "warmup": int(options["warmup"]), "target": options["target"],
                             "alpha": options["alpha"], "min_effect": options["min_effect"], "systems": systems}
    if len(systems) < 2:
        return {**state, "settled": False, "warmed_up": False, "pairs": [], "open_pairs": [],
                "expected_left": None}
    config = SequentialConfig(*scale, alpha=float(options["alpha"]),
                              min_effect=None if options["min_effect"] is None else float(options["min_effect"]))
    seq = PairwiseSequences(len(systems), config)
    for scores in rows:
        seq.observe(scores)
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


def allocation_refresh(study: Study) -> dict[str, Any]:
    """Recompute and store ``study``'s allocation state; return it (``{}`` and nothing written when uniform).

    One conditional UPDATE of the study row's ``allocation_state`` column, nothing else: of two refreshes
    at once, one that read fewer judgments than the state stored meanwhile (a lower watermark, the highest
    judgment id it saw) writes nothing, so a stale state never replaces a newer one. An equal watermark
    writes: a refresh after an exclusion sees the same judgments and counts fewer of them.
    """
    state = allocation_state(study)
    if state:
        allocation_state_store(study, state)
    return state


#: After a judgment, the state is recomputed once the judgments stored since its last computation reach this
#: share of those it saw (at least one): each recomputation reads every judgment, so recomputing after every one
#: would cost a study of n judgments O(n²) in all; this keeps the cost per judgment bounded (about 1/share
#: readings of the whole study per reading's worth of judgments) and lets "settled" lag by at most this share.
REFRESH_SHARE = 0.02


def allocation_refresh_due(study: Study) -> dict[str, Any] | None:
    """The hand-out's hook after each judgment of an adaptive study: recompute when due (see REFRESH_SHARE).

    Due while the warm-up runs or when the judgments of the study's real items stored after the state's
    watermark (one index range over the newest judgments) reach ``REFRESH_SHARE`` of the judgments it saw.
    Returns the new state, or None when not due.
    """
    stored = study.allocation_state or {}
    seen, watermark = int(stored.get("judgments", 0)), int(stored.get("watermark", 0))
    if stored and seen >= int(stored.get("warmup", 0)):
        newer = Judgment.objects.filter(pk__gt=watermark, assignment__item__study=study,
                                        assignment__item__is_spam=False).count()
        if newer < max(1, math.ceil(REFRESH_SHARE * seen)):
            return None
    return allocation_refresh(study)


def allocation_state_store(study: Study, state: dict[str, Any]) -> bool:
    """Store ``state`` unless the stored one saw later judgments (a higher watermark); True when stored."""
    not_newer = Q(allocation_state__watermark__isnull=True) | Q(allocation_state__watermark__lte=state["watermark"])
    stored = bool(Study.objects.filter(not_newer, pk=study.pk).update(allocation_state=state))
    if stored:
        study.allocation_state = state
    return stored
