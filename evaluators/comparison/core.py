"""Human judgments vs automatic evaluators: a pure function over two DataFrames.

No Django here (the thin wrapper is :mod:`evaluators.comparison.selectors`), so
the comparison can be recomputed from an ``export_judgments`` file and a
score table alone.

Inputs
------
``judgments``: the export frame (``annotation.exporting.judgments.judgments_frame``), one row
per (judgment, candidate): ``judgment``, ``item``, ``annotator``, ``system``,
``is_reference``, ``is_spam`` (the item is a spam copy) or ``is_spam_item``,
``rank`` (ranking) or ``choice`` (choice), ``excluded``.

``scores``: one row per (evaluator, item, system): ``evaluator``, ``item``
(the study file's item id), ``system``, ``score``, optional ``document``
(document-level scores), ``is_reference`` (the system is the item's
reference), ``is_spam_item``.

Method (docs/evaluators.md has the long form)
---------------------------------------------
* **Human pairwise units**: :func:`~evaluators.stats.ratings.ranking_to_pairs`
  (ranking) or :func:`~evaluators.stats.ratings.choice_to_pairs` (choice; a
  'neither' counts as a tie, 'invalid' is dropped), ties kept, spam items and
  excluded annotators dropped.  Judgment-protocol studies have no pairwise
  preferences: only the evaluators' system scores are reported.
* **Orientation**: every evaluator score is turned into an *oriented* score
  (``score`` if higher is better, else ``-score``) before any comparison, so
  positive correlations and concordance always mean "agrees with humans".
* **Evaluator system score**: the evaluator's corpus-level score when it has
  one (registry evaluators: corpus BLEU/chrF/TER, pooled pronoun P/R/F,
  BlonDe, ...; ``system_score: "corpus"``), else the mean over real (non-spam)
  items; for document-level scores the per-document value is counted once per
  document (``"mean"``; the mean is reported either way).  For
  imported evaluators that scored the reference too, the primary score is
  DiP Eq. 1 (Jwalapuram et al. 2021): ``Σ_items oriented(ref) − oriented(sys)``
  over items scored for both, LOWER is better
  (:func:`~evaluators.stats.correlation.dip_scores`).  Rank 1 = best, equal
  scores share the smaller rank.  Reference systems are not ranked.
* **Human system score**: expected wins (Koehn 2012; Bojar et al. 2016) by
  default, from all human pairs — the reference counts as an opponent but is
  not ranked (:func:`~evaluators.stats.ranking.system_ranking`).
* **Item level**: for each human unit (item, system pair) that the evaluator
  scored on both sides, the evaluator's implied label is the system with the
  higher oriented score, ``tie`` when equal.  AC1 (Gwet 2008) between the
  evaluator and the human *majority* label of the unit (units without a
  unique majority are left out and counted), accuracy = share of those units
  where both labels agree, and the WMT17 Kendall-like tau (Bojar et al. 2017)
  over every individual human preference (human ties excluded, evaluator ties
  discordant).  ``ac1_with_humans`` adds the evaluator as one more rater next
  to every annotator (multi-rater AC1), beside ``human_ac1`` without it.
* **System level**: Pearson (Fisher-z CI), Spearman and Kendall (bootstrap
  CIs) between the human system scores and the oriented evaluator system
  scores (:func:`~evaluators.stats.correlation.correlation`).
* **Williams test** (Williams 1959; Graham & Baldwin 2014) for every ordered
  pair of evaluators on the systems both scored: is r(human, a) > r(human, b)?
  One-sided p; needs at least 4 systems (n − 3 degrees of freedom), else null
  with a note.
* **System means and paired t-tests** (BlonDe, Jiang et al. 2022, Fig. 4 and
  Table 4): per evaluator each scored system's mean with a seeded bootstrap
  95% CI, and a two-sided paired t-test for each pair of systems, on
  per-document scores (per-item when the study has no documents)
  (:mod:`evaluators.comparison.systems`).
* **Score/span studies** (``mqm``, ``esa``; :func:`span_human`): the human
  system score is the study report's (``ranking.systems[].score``: mean over
  items of the mean over raters, MQM points under the study's weights or the
  ESA score), the human segment score the per-(item, system) mean over raters;
  MQM is lower-is-better, so both are negated ("oriented") before every
  correlation and meta statistic.  The item-level block compares the evaluator
  with preferences DERIVED from those segment scores (per item and pair of
  systems rated on it: the better mean wins, equal = tie; one "rater").
* **Contrastive block** (ContraPro, Müller et al. 2018) when the study has
  contrastive variants: per evaluator the share of items where the reference
  scores strictly better than every variant, by pronoun and antecedent
  distance, next to the humans' share (:mod:`evaluators.comparison.contrastive`).
"""
from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from evaluators.comparison.contrastive import contrastive_block
from evaluators.comparison.systems import paired_t_tests_block, system_means_block, unit_scores
from evaluators.reports import span_report as sr
from evaluators.stats.agreement import agreement
from evaluators.stats.correlation import compare_correlations, correlation, dip_scores, wmt_kendall_tau
from evaluators.stats.meta import MetaSettings, meta_evaluate
from evaluators.stats.ranking import system_ranking
from evaluators.stats.ratings import TIE
from protocols.registry import protocol_named

HUMAN_SCORES = ("expected_wins", "win_rate", "bt")
DERIVED_RATER = "humans (mean segment score)"
_REF = "\x00reference"  # one name for every item's reference inside dip_scores


def _num(value: Any) -> float | None:
    """A JSON-safe float: NaN/inf/None become None."""
    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _ranks(scores: Mapping[str, float | None], higher_is_better: bool) -> dict[str, int | None]:
    """Rank 1 = best; equal scores share the smaller rank; None scores are unranked."""
    known = {s: v for s, v in scores.items() if v is not None}
    ordered = sorted(known.values(), reverse=higher_is_better)
    return {s: (ordered.index(v) + 1 if v is not None else None) for s, v in scores.items()}


def _coefficient(block: Mapping[str, Any] | None) -> dict[str, Any]:
    block = block or {}
    return {k: _num(block.get(k)) for k in ("value", "se", "ci_low", "ci_high", "p_value")} | (
        {"note": block["note"]} if block.get("note") else {})


def _corr_block(result: Mapping[str, Any]) -> dict[str, Any]:
    out = {"value": _num(result.get("r")), "ci_low": _num(result.get("ci_low")),
           "ci_high": _num(result.get("ci_high")), "p_value": _num(result.get("p_value")), "n": result.get("n")}
    if result.get("note"):
        out["note"] = result["note"]
    return out


# ----------------------------------------------------------------------------- humans
def human_pairs(judgments: pd.DataFrame, protocol: str) -> tuple[pd.DataFrame | None, dict | None]:
    """The humans' pairwise units (ties kept, spam, excluded and pilot judgments dropped), or (None, None)."""
    frame = judgments
    if "pilot" in frame.columns:  # a pilot tries the study out; its answers are not the study's
        frame = frame[~frame["pilot"].astype(bool)]
    if "is_spam_item" not in frame.columns and "is_spam" in frame.columns:
        frame = frame.rename(columns={"is_spam": "is_spam_item"})
    return protocol_named(protocol).human_pairs(frame)


def _preference_human(judgments: pd.DataFrame, protocol: str, references: set[str], notes: list[str], *,
                      human_score: str, n_boot: int,
                      seed: int) -> tuple[dict[str, Any], pd.DataFrame | None, dict | None]:
    """The human side of a ranking/choice study: ``(human block, pairs or None, policies)``; notes appended."""
    pairs, policies = human_pairs(judgments, protocol) if len(judgments) else (None, None)
    if pairs is None and not protocol_named(protocol).gives_preferences:
        notes.append(f"protocol {protocol!r} gives no pairwise preferences: no item- or system-level comparison")
    elif pairs is None or pairs.empty:
        notes.append("no usable human judgments yet")
        pairs = None
    if pairs is None:
        return {"score": human_score, "systems": {}, "n_pairs": 0, "n_items": 0}, None, policies
    pairs = pairs.astype({"source_item": str, "system_a": str, "system_b": str, "label": str})
    human, human_notes = _human_systems(pairs, references, score=human_score, n_boot=n_boot, seed=seed)
    notes += human_notes
    return human, pairs, policies


def _human_systems(pairs: pd.DataFrame, references: set[str], *, score: str, n_boot: int,
                   seed: int) -> tuple[dict[str, Any], list[str]]:
    """Human system scores from ALL pairs (the reference is an opponent like any other), reported and
    ranked for the non-reference systems only.

    Keeping the reference as an opponent makes studies where every system is only ever compared with
    the reference (DiP's connective study, reference-vs-system preferences) still yield a system score:
    how often each system beats the reference.
    """
    notes: list[str] = []
    ranking = system_ranking(pairs, seed=seed, n_boot=max(n_boot, 1), rank_by=score)
    if references:
        notes.append(f"human system scores count the reference {sorted(references)} as an opponent; "
                     "it is not itself ranked")
    systems = {}
    for row in ranking["systems"]:
        if row["system"] in references:
            continue
        systems[row["system"]] = {
            "score": _num(row[score]), "expected_wins": _num(row["expected_wins"]),
            "win_rate": _num(row["win_rate"]), "bt": _num(row["bt"]), "n": row["n"], "wins": row["wins"],
            "ties": row["ties"], "losses": row["losses"],
            "score_ci": [_num(v) for v in row[f"{score}_ci" if score != "bt" else "bt_ci"]],
        }
    ranks = _ranks({s: v["score"] for s, v in systems.items()}, True)
    for system, entry in systems.items():
        entry["rank"] = ranks[system]
    if not systems:
        notes.append("no non-reference system was compared: no human system ranking")
    return {"score": score, "systems": systems, "n_pairs": ranking["n_pairs"], "n_items": ranking["n_items"]}, notes


# ----------------------------------------------------------------------------- humans: score/span studies
def _span_frame(judgments: pd.DataFrame) -> pd.DataFrame:
    """The judgments a span/score comparison uses: no pilot, no excluded annotator, no spam item."""
    frame = judgments
    if "is_spam_item" not in frame.columns and "is_spam" in frame.columns:
        frame = frame.rename(columns={"is_spam": "is_spam_item"})
    for column in ("pilot", "excluded", "is_spam_item"):
        if column in frame.columns:
            frame = frame[~frame[column].fillna(False).astype(bool)]
    return frame


def span_human(judgments: pd.DataFrame, protocol: str, *, mqm_weights: Mapping[str, Any] | None = None,
               references: set[str], n_boot: int,
               seed: int) -> tuple[dict[str, Any], pd.DataFrame | None, pd.DataFrame | None, list[str]]:
    """The human side of an MQM/ESA study: ``(human block, segment scores, derived pairs, notes)``.

    The system scores, CIs, clusters and rank ranges are the study report's
    (:func:`evaluators.reports.span_report.ranking_block` on the same
    :func:`~evaluators.reports.span_report.segment_scores`), so the report page
    and the compare page cannot disagree. ``segment scores``: one row per
    (item, system), ``score`` = the mean over raters ORIENTED (−MQM, ESA as
    given) so that higher is better, as :mod:`evaluators.stats.meta` expects.
    ``derived pairs``: per item every pair of systems rated on it, labelled by
    the better oriented mean (equal = tie), in :func:`human_pairs`' columns.
    """
    higher = protocol_named(protocol).higher_is_better
    empty = {"score": protocol, "higher_is_better": higher, "systems": {}, "n_pairs": 0, "n_items": 0,
             "n_ratings": 0}
    frame = _span_frame(judgments)
    ratings = sr.span_ratings(frame) if len(frame) else frame
    if not len(ratings):
        return empty, None, None, ["no usable human judgments yet"]
    weights = sr.weights_from(dict(mqm_weights) if mqm_weights else None)
    scores = sr.segment_scores(ratings, protocol, weights)
    scores = scores.astype({"item": str, "system": str, "annotator": str})
    ranking = sr.ranking_block(scores, protocol, weights, references=references, seed=seed, n_boot=max(n_boot, 1))
    sign = 1.0 if higher else -1.0
    systems: dict[str, dict[str, Any]] = {}
    for row in (ranking or {}).get("systems", []):
        if row["system"] in references:
            continue
        systems[row["system"]] = {
            "score": _num(row["score"]), "oriented": _num(sign * row["score"]),
            "score_ci": [_num(v) for v in row["score_ci"]] if row["score_ci"] else [None, None],
            "z": _num(row["z"]), "cluster": row["cluster"], "rank_range": row["rank_range"],
            "n_items": row["n_items"], "n_ratings": row["n_ratings"],
        }
    ranks = _ranks({s: v["score"] for s, v in systems.items()}, higher)
    for system, entry in systems.items():
        entry["rank"] = ranks[system]
    segment = (scores.groupby(["item", "system"], sort=True)["score"].mean() * sign).reset_index()
    pairs = derived_pairs(segment)
    notes = [f"human side from {protocol.upper()} scores: system score = the study report's "
             f"(ranking.systems[].score, {'lower' if not higher else 'higher'} is better; negated for the "
             "correlations and the meta-evaluation)" if not higher else
             f"human side from {protocol.upper()} scores: system score = the study report's "
             "(ranking.systems[].score, higher is better)",
             "item level: human preferences DERIVED from the segment scores (per item and pair of systems, the "
             "better mean over raters wins, equal = tie; one rater, so no human-human AC1)"]
    if references:
        notes.append(f"the reference {sorted(references)} is scored by the humans but not ranked or correlated")
    block = {"score": protocol, "higher_is_better": higher, "systems": systems,
             "n_pairs": int(len(pairs)), "n_items": int(segment["item"].nunique()), "n_ratings": int(len(scores)),
             "ranking_method": (ranking or {}).get("method"), "scheme": (ranking or {}).get("score")}
    return block, segment, pairs if len(pairs) else None, notes


def derived_pairs(segment: pd.DataFrame) -> pd.DataFrame:
    """Per item every pair of its scored systems (``system_a < system_b``), labelled by the higher ``score``."""
    left = segment.rename(columns={"system": "system_a", "score": "score_a"})
    right = segment.rename(columns={"system": "system_b", "score": "score_b"})
    m = left.merge(right, on="item")
    m = m[m["system_a"] < m["system_b"]]
    a, b = m["score_a"].to_numpy(float), m["score_b"].to_numpy(float)
    label = np.where(a > b, m["system_a"].to_numpy(), np.where(b > a, m["system_b"].to_numpy(), TIE))
    return pd.DataFrame({"item": (m["item"] + "|" + m["system_a"] + "|" + m["system_b"]).to_numpy(),
                         "rater": DERIVED_RATER, "label": label, "judgment": "",
                         "source_item": m["item"].to_numpy(), "system_a": m["system_a"].to_numpy(),
                         "system_b": m["system_b"].to_numpy()})


# ----------------------------------------------------------------------------- evaluators
def _oriented(rows: pd.DataFrame, higher_is_better: bool) -> pd.DataFrame:
    rows = rows.copy()
    rows["oriented"] = rows["score"].astype(float) * (1.0 if higher_is_better else -1.0)
    return rows


def _evaluator_systems(rows: pd.DataFrame, higher_is_better: bool, kind: str,
                       corpus_scores: Mapping[str, float | None] | None = None) -> tuple[dict[str, Any], str, bool]:
    """Per non-reference system: mean (documents once), DiP Eq. 1 where a reference was scored, and the
    evaluator's corpus-level score where it has one (then the system score: ``corpus``)."""
    real = rows[~rows["is_spam_item"]]
    systems_rows = real[~real["is_reference"]]
    means: dict[str, dict[str, Any]] = {}
    for system, grp in systems_rows.groupby("system", sort=True):
        docs = grp[grp["document"] != ""]
        parts = [docs.groupby("document")["score"].mean(), grp[grp["document"] == ""]["score"]]
        per_unit = pd.concat([p for p in parts if len(p)]) if any(len(p) for p in parts) else pd.Series(dtype=float)
        means[str(system)] = {"mean": _num(per_unit.mean()), "n": int(len(per_unit))}
    has_reference = bool(real["is_reference"].any())
    use_eq1 = kind == "imported" and has_reference
    if corpus_scores and not use_eq1:
        for system, value in corpus_scores.items():
            means.setdefault(str(system), {"mean": None, "n": 0})
        for system, entry in means.items():
            entry["corpus"] = _num(corpus_scores.get(system))
            entry["score"] = entry["corpus"]
        ranks = _ranks({s: e["score"] for s, e in means.items()}, higher_is_better)
        for system, entry in means.items():
            entry["rank"] = ranks[system]
            entry["oriented"] = None if entry["score"] is None else (
                entry["score"] if higher_is_better else -entry["score"])
        return means, "corpus", higher_is_better
    if use_eq1:
        frame = real.assign(system=np.where(real["is_reference"], _REF, real["system"]))
        eq1 = dip_scores(frame, reference_system=_REF, item="item", system="system", score="oriented")
        for system, entry in means.items():
            found = eq1.get(system)
            entry["dip_eq1"] = _num(found["dip"]) if found else None
            entry["dip_n_items"] = found["n_items"] if found else 0
            entry["score"] = entry["dip_eq1"]
        score_hib = False
    else:
        for entry in means.values():
            entry["score"] = entry["mean"]
        score_hib = higher_is_better
    ranks = _ranks({s: e["score"] for s, e in means.items()}, score_hib)
    for system, entry in means.items():
        entry["rank"] = ranks[system]
        # oriented system score: higher = better, whatever the metric's direction
        entry["oriented"] = None if entry["score"] is None else (entry["score"] if score_hib else -entry["score"])
    return means, ("dip_eq1" if use_eq1 else "mean"), score_hib


def _majority(labels: pd.DataFrame) -> pd.DataFrame:
    """Per unit the unique most frequent human label; units with a tie for first place are left out."""
    counts = labels.groupby(["item", "label"]).size().rename("n").reset_index()
    top = counts.groupby("item")["n"].transform("max")
    best = counts[counts["n"] == top]
    unique = best.groupby("item")["label"].transform("size") == 1
    return best[unique][["item", "label"]]


def _item_level(pairs: pd.DataFrame, rows: pd.DataFrame, *, derived: bool = False,
                human_ac1s: dict[tuple[Any, ...], dict[str, Any]] | None = None) -> dict[str, Any]:
    """Item-level agreement with the human pairwise labels.

    ``derived``: the labels come from segment scores (one pseudo-rater, the
    mean over raters), so the multi-rater AC1s are not computed.  ``human_ac1s``: the humans' own AC1 by
    the exact ratings it was computed on, shared by the evaluators of one comparison (evaluators that scored
    the same pairs see the same human ratings: computed once, not once per evaluator).
    """
    lookup = rows.set_index(["item", "system"])["oriented"]
    lookup = lookup[~lookup.index.duplicated()]
    idx_a = pd.MultiIndex.from_arrays([pairs["source_item"].astype(str), pairs["system_a"].astype(str)])
    idx_b = pd.MultiIndex.from_arrays([pairs["source_item"].astype(str), pairs["system_b"].astype(str)])
    sa = lookup.reindex(idx_a).to_numpy(float)
    sb = lookup.reindex(idx_b).to_numpy(float)
    scored = np.isfinite(sa) & np.isfinite(sb)
    usable = pairs[scored].copy()
    usable["evaluator_label"] = np.where(sa[scored] > sb[scored], usable["system_a"],
                                         np.where(sb[scored] > sa[scored], usable["system_b"], TIE))
    out: dict[str, Any] = {"n": 0, "n_judgments": int(len(usable)), "n_unscored": int((~scored).sum()),
                           "n_no_majority": 0, "ac1": _coefficient(None), "accuracy": None,
                           "kendall_tau": None, "kendall": None, "ac1_with_humans": _coefficient(None),
                           "human_ac1": _coefficient(None)}
    if usable.empty:
        out["note"] = ("the evaluator scored no pair of candidates the humans compared (reference-based metrics "
                       "never score the reference, so comparisons with the reference need imported reference scores)")
        return out
    majority = _majority(usable[["item", "label"]])
    out["n_no_majority"] = int(usable["item"].nunique() - len(majority))
    machine = usable.drop_duplicates("item")[["item", "evaluator_label"]]
    both = majority.merge(machine, on="item")
    out["n"] = int(len(both))
    if len(both):
        out["accuracy"] = float((both["label"] == both["evaluator_label"]).mean())
        ratings = pd.concat([
            pd.DataFrame({"item": both["item"], "rater": "humans (majority)", "label": both["label"]}),
            pd.DataFrame({"item": both["item"], "rater": "evaluator", "label": both["evaluator_label"]}),
        ])
        out["ac1"] = _coefficient(agreement(ratings)["coefficients"]["gwet_ac1"])
    if derived:
        out["human_preferences"] = "derived from the mean segment scores (better mean wins, equal = tie)"
    else:
        humans = usable[["item", "rater", "label"]].astype({"rater": str})
        with_machine = pd.concat([humans, pd.DataFrame({"item": machine["item"], "rater": "evaluator (machine)",
                                                        "label": machine["evaluator_label"]})])
        out["ac1_with_humans"] = _coefficient(agreement(with_machine)["coefficients"]["gwet_ac1"])
        key = tuple(humans.itertuples(index=False, name=None))
        if human_ac1s is None or key not in human_ac1s:
            value = _coefficient(agreement(humans)["coefficients"]["gwet_ac1"])
            if human_ac1s is None:
                out["human_ac1"] = value
            else:
                human_ac1s[key] = value
        if human_ac1s is not None:
            out["human_ac1"] = copy.deepcopy(human_ac1s[key])
    scores = rows[["item", "system", "oriented"]].drop_duplicates(["item", "system"]).astype({"item": str, "system": str})
    tau = wmt_kendall_tau(usable.astype({"source_item": str}), scores, score="oriented")
    out["kendall_tau"] = _num(tau["tau"])
    out["kendall"] = {k: tau[k] for k in ("concordant", "discordant", "metric_ties", "human_ties_excluded", "note")}
    return out


def _items_from_frames(judgments: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """The real items known from the two frames (``item, document, phenomenon``), when no item table is given."""
    parts = []
    if len(judgments) and "item" in judgments.columns:
        frame = judgments
        spam = "is_spam_item" if "is_spam_item" in frame.columns else "is_spam"
        if spam in frame.columns:
            frame = frame[~frame[spam].astype(bool)]
        cols = [c for c in ("item", "document", "phenomenon") if c in frame.columns]
        parts.append(frame[cols].astype(str).drop_duplicates("item"))
    parts.append(pd.DataFrame({"item": scores.loc[~scores["is_spam_item"], "item"].astype(str).unique()}))
    items = pd.concat(parts, ignore_index=True).drop_duplicates("item")
    for column in ("document", "phenomenon"):
        items[column] = items[column].fillna("") if column in items.columns else ""
    return items


def compare_frames(
    judgments: pd.DataFrame,
    scores: pd.DataFrame,
    *,
    protocol: str,
    evaluators: Sequence[Mapping[str, Any]] | None = None,
    study: str = "",
    human_score: str = "expected_wins",
    n_boot: int = 1000,
    seed: int = 0,
    items: pd.DataFrame | None = None,
    systems: Sequence[str] | None = None,
    mqm_weights: Mapping[str, Any] | None = None,
    reference_systems: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The human-vs-evaluator comparison (JSON-able dict; see the module docstring and docs/evaluators.md).

    ``evaluators``: dicts with ``name``, ``higher_is_better`` and optional
    ``kind`` (builtin/imported) and ``description``; default: the names in
    ``scores`` with ``higher_is_better`` from its column (True if absent).
    ``items``: the study's real items, columns ``item`` (study-file id),
    ``document`` ("" for none), ``phenomenon``, optional ``pronoun`` and
    ``antecedent_distance`` (from the item metadata); default: the items seen
    in the two frames (documents and phenomena from the judgments frame).
    ``systems``: every candidate system of the study (finds contrastive
    variants); default: the systems in the two frames.
    ``mqm_weights``: an MQM study's weights (``Study.mqm_weights``; default WMT's).
    For ``mqm``/``esa`` studies ``human_score`` is ignored: the human score is
    the MQM or ESA score (:func:`span_human`).
    ``reference_systems``: the reference system(s) chosen for this comparison; every other system, a human
    translation flagged as a reference included, is then ranked and correlated like a system.  None: the
    ``is_reference`` flags of the two frames decide.
    """
    if human_score not in HUMAN_SCORES:
        raise ValueError(f"human_score must be one of {HUMAN_SCORES}")
    notes: list[str] = []
    scores = scores.copy()
    for column, default in (("document", ""), ("is_reference", False), ("is_spam_item", False)):
        if column not in scores.columns:
            scores[column] = default
    scores["document"] = scores["document"].fillna("").astype(str)
    scores[["item", "system"]] = scores[["item", "system"]].astype(str)
    scores["is_reference"] = scores["is_reference"].fillna(False).astype(bool)
    scores["is_spam_item"] = scores["is_spam_item"].fillna(False).astype(bool)
    if reference_systems is not None:  # the chosen reference(s) alone: the other human translations are systems
        chosen = {str(r) for r in reference_systems}
        scores["is_reference"] = scores["system"].isin(chosen)
        if len(judgments):
            judgments = judgments.assign(is_reference=judgments["system"].astype(str).isin(chosen))
    if evaluators is None:
        column_hib: pd.Series | dict[str, bool] = (
            scores.groupby("evaluator")["higher_is_better"].first() if "higher_is_better" in scores else {})
        evaluators = [{"name": n, "higher_is_better": bool(column_hib.get(n, True)) if len(column_hib) else True}
                      for n in sorted(scores["evaluator"].unique())]

    references = set(judgments.loc[judgments["is_reference"].astype(bool), "system"].astype(str)) if len(judgments) else set()
    references |= set(scores.loc[scores["is_reference"], "system"])
    if items is None:
        items = _items_from_frames(judgments, scores)
    items = items.astype({"item": str})
    item_documents = (dict(zip(items["item"], items["document"].fillna("").astype(str)))
                      if "document" in items.columns else {})
    span_segments: pd.DataFrame | None = None
    derived = protocol_named(protocol).per_candidate_annotations
    if derived:  # scores, not preferences: human side from the MQM/ESA segment scores
        policies = None
        human, span_segments, pairs, span_notes = span_human(
            judgments, protocol, mqm_weights=mqm_weights, references=references, n_boot=n_boot, seed=seed)
        notes += span_notes
    else:
        human, pairs, policies = _preference_human(judgments, protocol, references, notes,
                                                   human_score=human_score, n_boot=n_boot, seed=seed)
    # oriented: higher = better (MQM negated), what every correlation and meta statistic expects
    human_series = pd.Series({s: v.get("oriented", v["score"]) for s, v in human["systems"].items()},
                             dtype=float).dropna()

    out_evaluators: list[dict[str, Any]] = []
    oriented_by_name: dict[str, pd.Series] = {}
    human_ac1s: dict[tuple[Any, ...], dict[str, Any]] = {}
    for spec in evaluators:
        name, hib = str(spec["name"]), bool(spec["higher_is_better"])
        kind = str(spec.get("kind") or "imported")
        rows = _oriented(scores[scores["evaluator"] == name], hib)
        # Not ``systems``: that parameter (every candidate system) is read again below.
        corpus_scores = {str(s): (v or {}).get("score") for s, v in (spec.get("system_scores") or {}).items()}
        by_system, system_score, score_hib = _evaluator_systems(rows, hib, kind, corpus_scores)
        entry: dict[str, Any] = {
            "name": name, "higher_is_better": hib, "kind": kind, "description": spec.get("description", ""),
            "system_score": system_score, "system_score_higher_is_better": score_hib,
            "n_scores": int(len(rows)),
            "systems": {s: {k: v for k, v in e.items() if k != "oriented"} for s, e in by_system.items()},
            "signature": spec.get("signature") or "", "backend": spec.get("backend") or "",
            "evaluator_notes": list(spec.get("notes") or []),
            "references": list(spec.get("references") or []),
            "corpus": ({s: {k: v for k, v in (entry or {}).items() if k != "notes"}
                        for s, entry in (spec.get("system_scores") or {}).items()} or None),
            "paired": spec.get("paired"),
        }
        real_rows = rows[~rows["is_spam_item"]]
        units, unit_kind = unit_scores(real_rows, item_documents)
        entry["system_means"] = system_means_block(units, unit_kind, n_boot=n_boot, seed=seed)
        entry["paired_t_tests"] = paired_t_tests_block(units, unit_kind, higher_is_better=hib)
        if pairs is not None:
            entry["item_level"] = _item_level(pairs, real_rows, derived=derived, human_ac1s=human_ac1s)
        else:
            entry["item_level"] = None
        oriented = pd.Series({s: e["oriented"] for s, e in by_system.items()}, dtype=float).dropna()
        oriented_by_name[name] = oriented
        if len(human_series):
            entry["system_level"] = {m: _corr_block(correlation(oriented, human_series, method=m, n_boot=n_boot, seed=seed))
                                     for m in ("pearson", "spearman", "kendall")}
        else:
            entry["system_level"] = None
        out_evaluators.append(entry)

    williams: list[dict[str, Any]] = []
    names = [e["name"] for e in out_evaluators]
    if len(human_series) and len(names) > 1:
        for a in names:
            for b in names:
                if a == b:
                    continue
                res = compare_correlations(human_series, oriented_by_name[a], oriented_by_name[b], method="pearson")
                row = {"a": a, "b": b, "n": res["n"], "r_a": _num(res["r_human_a"]), "r_b": _num(res["r_human_b"]),
                       "r_ab": _num(res["r_a_b"]), "t": _num(res.get("t")), "p_value": _num(res.get("p_value")),
                       "p_value_two_sided": _num(res.get("p_value_two_sided"))}
                if res.get("note"):
                    row["note"] = res["note"]
                williams.append(row)
        if williams and all(w["n"] <= 3 for w in williams):
            notes.append("Williams tests need at least 4 systems scored by both evaluators and the humans "
                          "(n − 3 degrees of freedom): reported as null")
    all_systems = set(human["systems"]) | {s for e in out_evaluators for s in e["systems"]}
    known_systems = set(systems) if systems is not None else (
        set(scores["system"]) | (set(judgments["system"].astype(str)) if len(judgments) else set()))
    contrastive = contrastive_block(judgments=judgments, protocol=protocol, scores=scores, items=items,
                                    systems=known_systems, references=references,
                                    evaluators=[(e["name"], e["higher_is_better"]) for e in out_evaluators])
    if derived:
        human_seg = span_segments
        seg_note, sys_note = protocol_named(protocol).comparison_score_notes()
        seg_description = f"per (item, system), the mean {protocol.upper()} score over raters" + seg_note
        sys_description = f"the study report's {protocol.upper()} system score (ranking.systems[].score)" + sys_note
    else:
        human_seg = human_segment_scores(pairs).rename(columns={"credit": "score"}) if pairs is not None else None
        seg_description = ("per item, the share of the system's pairwise comparisons it won (tie = 1/2), "
                           "over annotators")
        sys_description = "the comparison's human score (human.score)"
    meta, meta_notes = _meta_block(human_seg, scores, out_evaluators, oriented_by_name, human_series,
                                   n_boot=n_boot, seed=seed, seg_description=seg_description,
                                   sys_description=sys_description)
    notes += meta_notes
    return {
        "study": study,
        "protocol": protocol,
        "n_systems": len(all_systems),
        "human": human,
        "human_policies": policies,
        "evaluators": out_evaluators,
        "williams": williams,
        "contrastive": contrastive,
        "meta": meta,
        "notes": notes,
    }


def human_segment_scores(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per (item, system): the share of its pairwise comparisons on that item it won (a tie counts ½).

    The segment-level human score of the meta-evaluation: with rankings, a
    system's pairs on an item come from every annotator's ranking of it, so
    this is its mean "expected win" on the item.
    """
    a = pd.DataFrame({"item": pairs["source_item"], "system": pairs["system_a"],
                      "credit": np.where(pairs["label"] == pairs["system_a"], 1.0,
                                         np.where(pairs["label"] == TIE, 0.5, 0.0))})
    b = pd.DataFrame({"item": pairs["source_item"], "system": pairs["system_b"],
                      "credit": np.where(pairs["label"] == pairs["system_b"], 1.0,
                                         np.where(pairs["label"] == TIE, 0.5, 0.0))})
    both = pd.concat([a, b], ignore_index=True)
    return both.groupby(["item", "system"], sort=True)["credit"].mean().reset_index()


def _meta_block(human_seg: pd.DataFrame | None, scores: pd.DataFrame, evaluators: list[dict[str, Any]],
                oriented: Mapping[str, pd.Series], human_series: pd.Series, *, n_boot: int,
                seed: int, seg_description: str, sys_description: str) -> tuple[dict[str, Any] | None, list[str]]:
    """WMT meta-evaluation (evaluators/stats/meta.py) of the study's evaluators against the humans.

    ``human_seg``: one row per (item, system) with the human segment ``score``,
    higher = better; ``human_series``: the oriented human system scores.
    """
    if human_seg is None or human_seg.empty or not evaluators:
        return None, []
    names = [e["name"] for e in evaluators]
    systems = sorted(s for s in human_series.index if all(s in oriented[n].index for n in names))
    if len(systems) < 2:
        return None, ["meta-evaluation needs at least two systems scored by the humans and by every evaluator"]
    items = sorted(human_seg["item"].unique())
    s_index = {s: k for k, s in enumerate(systems)}
    i_index = {i: k for k, i in enumerate(items)}

    def matrix(frame: pd.DataFrame, column: str) -> np.ndarray:
        out = np.full((len(systems), len(items)), np.nan)
        frame = frame[frame["system"].isin(s_index) & frame["item"].isin(i_index)]
        out[frame["system"].map(s_index).to_numpy(), frame["item"].map(i_index).to_numpy()] = frame[column].to_numpy()
        return out

    metrics_seg = {}
    for e in evaluators:
        rows = scores[(scores["evaluator"] == e["name"]) & ~scores["is_spam_item"]][["item", "system", "score"]]
        rows = rows.assign(score=rows["score"].astype(float) * (1.0 if e["higher_is_better"] else -1.0))
        metrics_seg[e["name"]] = matrix(rows.drop_duplicates(["item", "system"]), "score")
    result = meta_evaluate(
        human_seg=matrix(human_seg, "score"), metrics_seg=metrics_seg,
        human_sys=np.array([human_series[s] for s in systems], dtype=float),
        metrics_sys={n: np.array([oriented[n][s] for s in systems], dtype=float) for n in names},
        settings=MetaSettings(seed=seed, resamples=min(max(n_boot, 1), 1000)))
    block = result.as_dict()
    block["settings"] = {**block["settings"], "systems": systems, "n_segments": len(items),
                         "human_segment_score": seg_description,
                         "human_system_score": sys_description,
                         "metric_orientation": "scores of lower-is-better evaluators negated before the statistics"}
    return block, []
