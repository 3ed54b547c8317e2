"""Reads for the human-vs-evaluator comparison: the score frame and the study's comparison.

Thin Django side of :mod:`evaluators.comparison.core` (which stays pure pandas).
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

import pandas as pd
from django.core.cache import cache
from django.db.models import Count, Max

from annotation.exporting.judgments import judgments_frame
from annotation.models import Judgment
from evaluators.comparison.contrastive import METADATA_KEYS
from evaluators.comparison.core import compare_frames
from evaluators.metrics.study_corpus import references_text, ReferenceChoiceError, study_references
from evaluators.models import Evaluator, EvaluatorKind, MetricScore
from studies.models import Candidate, Item, Study

SCORE_FRAME_COLUMNS = ["evaluator", "higher_is_better", "item", "system", "score", "document", "is_reference",
                       "is_spam_item"]


def evaluators_for_study(*, study: Study) -> list[Evaluator]:
    return list(Evaluator.objects.filter(study=study).order_by("name"))


def scores_frame(*, study: Study) -> pd.DataFrame:
    """Every stored metric score of the study, one row per (evaluator, item, system).

    ``item`` is the study file's item id; ``is_reference`` says whether the
    scored system is that item's reference; ``is_spam_item`` whether the item
    is a generated spam copy.  Three queries, no model instances.
    """
    references = set(Candidate.objects.filter(item__study=study, is_reference=True).values_list("item_id", "system"))
    rows = (MetricScore.objects.filter(evaluator__study=study)
            .order_by("evaluator__name", "item_id", "system")
            .values_list("evaluator__name", "evaluator__higher_is_better", "item_id", "item__external_id",
                         "system", "score", "document", "item__is_spam"))
    records = [(name, hib, ext, system, score, document, (item_id, system) in references, spam)
               for name, hib, item_id, ext, system, score, document, spam in rows.iterator(chunk_size=5000)]
    frame = pd.DataFrame.from_records(records, columns=SCORE_FRAME_COLUMNS)
    return frame.astype({"score": float, "is_reference": bool, "is_spam_item": bool, "higher_is_better": bool})


def items_frame(*, study: Study) -> pd.DataFrame:
    """The study's real (non-spam) items: ``item`` (study-file id), ``document``, ``phenomenon`` and the
    metadata keys the contrastive breakdown reads (``pronoun``, ``antecedent_distance``; None when absent)."""
    rows = (Item.objects.filter(study=study, is_spam=False).order_by("pk")
            .values_list("external_id", "document_id", "phenomenon", "metadata"))
    records = [(ext, doc or "", phen or "", *((meta or {}).get(k) if isinstance(meta, dict) else None
                                              for k in METADATA_KEYS))
               for ext, doc, phen, meta in rows.iterator(chunk_size=5000)]
    return pd.DataFrame.from_records(records, columns=["item", "document", "phenomenon", *METADATA_KEYS])


def candidate_systems(*, study: Study) -> list[str]:
    """Every system with a candidate in the study (to recognise contrastive variants before any score)."""
    return sorted(set(Candidate.objects.filter(item__study=study).values_list("system", flat=True).distinct()))


def _references_block(study_refs: list[str], reference: str | None,
                       evaluators: list[Evaluator]) -> tuple[dict[str, Any], list[Evaluator], list[str]]:
    """What the comparison takes for references, the evaluators it keeps, and notes saying so."""
    notes: list[str] = []
    kept = evaluators
    if reference is not None:
        kept = [e for e in evaluators if not e.references or e.references == [reference]]
        for e in evaluators:
            if e not in kept:
                notes.append(f"{e.name} left out: scored against {references_text(e.references)}, not "
                             f"{reference!r} alone (run `evaluate --evaluator {e.name} --reference {reference}`)")
        others = [r for r in study_refs if r != reference]
        notes.insert(0, f"reference {reference!r} (chosen)" + (
            f"; the study's other reference(s) {references_text(others)} are ranked and correlated like systems"
            if others else ""))
    elif len(study_refs) > 1:
        notes.append(f"the study has {len(study_refs)} references ({references_text(study_refs)}): none of them is "
                     "ranked or correlated; each evaluator names the reference(s) it scored against "
                     "(--reference NAME takes one and ranks the others like systems)")
    for e in kept:
        if not e.references and len(study_refs) > 1:
            notes.append(f"{e.name}: imported scores; the reference they were computed against is not recorded"
                         if e.kind == EvaluatorKind.IMPORTED else
                         f"{e.name}: scored before references were recorded (against each item's first reference); "
                         f"re-run `evaluate --evaluator {e.name}` to name them")
    block = {"study": study_refs, "chosen": reference,
             "human_side": [reference] if reference is not None else study_refs}
    return block, kept, notes


def study_comparison(*, study: Study, names: list[str] | None = None, human_score: str = "expected_wins",
                     n_boot: int = 1000, seed: int = 0, reference: str | None = None) -> dict[str, Any]:
    """The comparison JSON of ``compare SLUG --json`` for a stored study (optionally some evaluators only).

    ``reference``: one of the study's reference candidates; the others are then ranked like systems and
    only the evaluators scored against it (or imported ones) are compared.  ReferenceChoiceError (a
    ValueError listing the references) for a name that is not one.
    """
    study_refs = study_references(study)
    if reference is not None and reference not in study_refs:
        raise ReferenceChoiceError(f"reference {reference!r} is not a reference of study {study.slug!r}; "
                                   f"its references: {references_text(study_refs)}")
    evaluators = evaluators_for_study(study=study)
    if names:
        evaluators = [e for e in evaluators if e.name in names]
    references, evaluators, reference_notes = _references_block(study_refs, reference, evaluators)
    specs = [{"name": e.name, "higher_is_better": e.higher_is_better, "kind": e.kind, "description": e.description,
              "signature": e.signature, "backend": e.backend, "system_scores": e.system_scores, "notes": e.notes,
              "paired": e.paired, "references": e.references}
             for e in evaluators]
    scores = scores_frame(study=study)
    scores = scores[scores["evaluator"].isin([e.name for e in evaluators])]
    result = compare_frames(judgments_frame(study), scores, protocol=study.protocol, evaluators=specs,
                            study=study.slug, human_score=human_score, n_boot=n_boot, seed=seed,
                            items=items_frame(study=study), systems=candidate_systems(study=study),
                            mqm_weights=study.mqm_weights or None,
                            reference_systems=[reference] if reference is not None else None)
    result["references"] = references
    result["notes"][:0] = reference_notes
    if not evaluators:
        result["notes"].append("no evaluator has scores for this study yet: run `evaluate` or `import_scores`")
    return result


CACHE_SECONDS = 600


def _options(names: list[str] | None, human_score: str, n_boot: int, seed: int,
             reference: str | None) -> dict[str, Any]:
    """The options a cached comparison is keyed on (``reference`` only when chosen: older keys stay valid)."""
    options: dict[str, Any] = {"names": sorted(names) if names else None, "human_score": human_score,
                               "n_boot": n_boot, "seed": seed}
    if reference is not None:
        options["reference"] = reference
    return options


def _data_version(study: Study) -> str:
    """Digest of everything the comparison reads: current judgments, exclusions, items, evaluators' scores."""
    judgments = Judgment.objects.filter(assignment__annotator__study=study).aggregate(n=Count("pk"), last=Max("pk"))
    excluded = list(study.annotators.filter(excluded=True).order_by("pk").values_list("pk", flat=True))
    items = study.items.aggregate(n=Count("pk"), last=Max("pk"))
    evaluators = list(Evaluator.objects.filter(study=study).order_by("pk")
                      .values_list("pk", "name", "higher_is_better", "updated_at"))
    scores = MetricScore.objects.filter(evaluator__study=study).aggregate(n=Count("pk"), last=Max("pk"))
    parts = [study.pk, study.slug, study.created_at.isoformat(), study.protocol, judgments, excluded, items, evaluators, scores,
             getattr(study, "mqm_weights", None)]  # MQM weights change the human scores
    return hashlib.sha256(json.dumps(parts, default=str, sort_keys=True).encode()).hexdigest()[:24]


def study_comparison_cached(*, study: Study, names: list[str] | None = None, human_score: str = "expected_wins",
                            n_boot: int = 1000, seed: int = 0, reference: str | None = None) -> dict[str, Any]:
    """:func:`study_comparison`, cached until the judgments, exclusions or scores change.

    The bootstraps (human ranking, rank-correlation CIs) take seconds on a
    large study; the page, its JSON link and the API share one computation.
    """
    options = _options(names, human_score, n_boot, seed, reference)
    key = "study-compare:" + hashlib.sha256(
        json.dumps([_data_version(study), options], sort_keys=True).encode()).hexdigest()
    result = cache.get(key)
    if result is None:
        result = study_comparison(study=study, names=names, human_score=human_score, n_boot=n_boot, seed=seed,
                                  reference=reference)
        cache.set(key, result, CACHE_SECONDS)
    return result


def comparison_data_version(study: Study) -> str:
    """The digest a comparison result is valid for (judgments, exclusions, items, scores)."""
    return _data_version(study)


def comparison_cache_put(*, study: Study, result: dict[str, Any], version: str, names: list[str] | None = None,
                         human_score: str = "expected_wins", n_boot: int = 1000, seed: int = 0,
                         reference: str | None = None) -> None:
    """Store a result computed elsewhere (a background job) where :func:`study_comparison_cached` finds it."""
    options = _options(names, human_score, n_boot, seed, reference)
    key = "study-compare:" + hashlib.sha256(json.dumps([version, options], sort_keys=True).encode()).hexdigest()
    cache.set(key, result, CACHE_SECONDS)
