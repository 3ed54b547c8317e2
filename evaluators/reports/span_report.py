"""The report blocks of the span and score protocols (MQM, ESA, DA): scores, WMT ranking, errors, agreement.

Pandas on the export frame: every number is a function of the export frame, as for the
other protocols (``study_stats``). One rating = one (judgment, candidate) row whose
``spans`` or ``score`` is set; a candidate the rater did not rate (imported studies,
where a rater sees a subset of the systems) has neither and is not a rating.

What differs between the protocols is the protocol's (``protocols.parts.reports``:
``segment_scores``, ``higher_is_better``, ``spans_have_categories``, ``score_scheme``,
``score_methods``).

* **Segment score of one rating**: MQM, the sum of the weights of its spans under the
  study's scheme (``evaluators.stats.mqm.MqmWeights``; 0 = no error; lower is better);
  ESA/DA, the 0–100 score as given (higher is better).
* **System score**: mean over the system's items of the item's mean over raters, with a
  paired percentile bootstrap CI over items (``mqm.system_scores``,
  ``mqm.bootstrap_system_ci``).
* **Ranking**: WMT's procedure (``evaluators.stats.wmt_ranking``: per-annotator z-scores,
  order by mean raw score, one-sided Mann–Whitney U on shared items, clusters and rank
  ranges as Appraise's ComputeWMT23Results); MQM enters it as −MQM so that higher is
  better there, and ``score`` is reported in MQM points.
* **Agreement (top level)**: units are (item, system) ratings; the category of a rating
  is its worst severity ("no-error" when nothing is marked) for MQM and ESA, and the
  WMT24 score band (0–33, 34–66, 67–100) for DA — so the agreement JSON of every
  protocol has the same shape. ``span_agreement`` holds the span-specific statistics.
"""
from __future__ import annotations

import json
import math
from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd

from evaluators.stats import mqm as mq
from evaluators.stats import spans as sp
from evaluators.stats.wmt_ranking import wmt_ranking
from protocols.registry import protocol_named

SEVERITY_ORDER = ("no-error", "neutral", "minor", "major", "critical")
DA_BANDS = ((0.0, 33.0, "0-33"), (33.0, 66.0, "34-66"), (66.0, 100.0, "67-100"))

def category_order(labels: Any) -> list[str]:
    """The categories seen, in their natural order (severities mild to severe, DA bands low to high), for weights."""
    order = list(SEVERITY_ORDER) + [name for _, _, name in DA_BANDS]
    seen = {str(v) for v in labels}
    return [c for c in order if c in seen] + sorted(seen - set(order))


METHODS: dict[str, str] = {
    "unit": "Span protocols: one unit per item and candidate (a segment); its category for the agreement "
            "coefficients is the worst severity marked ('no-error' when none), or for DA the WMT24 score band "
            "(0–33, 34–66, 67–100).",
    "score": "A system's score is the mean over items of the mean over raters, with a paired percentile bootstrap "
             "95% CI resampling items.",
    "ranking": "WMT human ranking (Kocmi et al. 2023; Appraise ComputeWMT23Results): per-annotator z-scores, "
               "systems ordered by mean score, one-sided Mann–Whitney U on the items both systems were scored on, "
               "p < 0.05 a win; clusters and rank ranges from the wins.",
    "control": "Control items are copies of real items with one generated error (a content word replaced, a "
               "negation dropped or added, a pronoun's gender swapped, a connective replaced by its opposite); a check "
               "passes when a major or critical span overlaps the error; ESA also tests that scores drop (one-sided "
               "Mann–Whitney U, originals vs copies). From the stored study only (docs/protocols/mqm-esa.md).",
    "span_agreement": "Segment scores: Kendall tau-b and Pearson r per rater pair, Krippendorff's interval alpha; "
                      "spans: character, exact and overlap precision/recall/F1 per rater pair; categories of "
                      "overlapping spans: Gwet's AC1 (docs/statistics.md).",
}


def weights_from(setting: dict[str, Any] | None) -> mq.MqmWeights:
    """The study's ``mqm_weights`` over the WMT/Google defaults."""
    if not setting:
        return mq.WMT_WEIGHTS
    base = mq.WMT_WEIGHTS

    def pick(key: str, default: float) -> float:
        return float(setting[key]) if key in setting else default

    return mq.MqmWeights(minor=pick("minor", base.minor), major=pick("major", base.major),
                         critical=pick("critical", base.critical), neutral=pick("neutral", base.neutral),
                         minor_punctuation=pick("minor_punctuation", base.minor_punctuation),
                         non_translation=pick("non_translation", base.non_translation), name="custom")


def _spans(value: Any) -> list[dict[str, Any]] | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, list):
        return value
    if value == "[]":  # no error marked (most rows of a release): what json.loads gives, a new empty list
        return []
    text = str(value).strip()
    if not text:
        return None
    parsed = json.loads(text)
    if not isinstance(parsed, list):
        raise ValueError(f"spans {text[:40]!r} is not a JSON list")
    return parsed


def span_ratings(frame: pd.DataFrame) -> pd.DataFrame:
    """The rated (judgment, candidate) rows with their spans as lists; unrated candidates dropped."""
    spans = [_spans(v) for v in frame["spans"].tolist()] if "spans" in frame.columns else [None] * len(frame)
    scores = pd.to_numeric(frame["score"], errors="coerce") if "score" in frame.columns else pd.Series(np.nan, index=frame.index)
    out = frame.copy()
    out["span_list"] = pd.Series(spans, index=frame.index, dtype=object)
    out["score_given"] = scores.to_numpy()
    rated = np.array([s is not None for s in spans], dtype=bool) | out["score_given"].notna().to_numpy()
    return out[rated].reset_index(drop=True)


def _worst(spans: list[dict[str, Any]]) -> str:
    worst = 0
    for span in spans:
        sev = str(span.get("severity", "")).lower()
        worst = max(worst, SEVERITY_ORDER.index(sev) if sev in SEVERITY_ORDER else 2)
    return SEVERITY_ORDER[worst]


def _band(score: float) -> str:
    for low, high, name in DA_BANDS:
        if score <= high:
            return name
    return DA_BANDS[-1][2]


def error_rows(ratings: pd.DataFrame) -> pd.DataFrame:
    """One row per marked error (a ``No-error`` row per clean rating), in ``evaluators.stats.mqm``'s long form."""
    rows: list[tuple[Any, ...]] = []
    for system, item, rater, spans in zip(ratings["system"].tolist(), ratings["item"].tolist(),
                                          ratings["annotator"].tolist(), ratings["span_list"].tolist()):
        if not spans:
            rows.append((system, item, rater, mq.NO_ERROR, mq.NO_ERROR, None, None, None))
            continue
        for span in spans:
            rows.append((system, item, rater, span.get("category") or "(ESA span)", str(span.get("severity", "")),
                         span.get("side", "target"), span.get("start"), span.get("end")))
    return pd.DataFrame(rows, columns=["system", "segment", "rater", "category", "severity", "side", "start", "end"])


def segment_scores(ratings: pd.DataFrame, protocol: str, weights: mq.MqmWeights) -> pd.DataFrame:
    """One score per (system, item, annotator): MQM points or the ESA/DA score (the protocol's ``segment_scores``)."""
    return protocol_named(protocol).segment_scores(ratings, weights)


def given_scores(ratings: pd.DataFrame) -> pd.DataFrame:
    """The scores the raters gave, one per rating that has one (ESA, DA)."""
    given = ratings.dropna(subset=["score_given"])
    return pd.DataFrame({"system": given["system"].to_numpy(), "item": given["item"].to_numpy(),
                         "annotator": given["annotator"].to_numpy(), "score": given["score_given"].astype(float).to_numpy()})


def ranking_block(scores: pd.DataFrame, protocol: str, weights: mq.MqmWeights, *, references: set[str],
                  seed: int, n_boot: int, order: str = "raw") -> dict[str, Any] | None:
    """``ranking`` of the report: WMT ranking with MQM/ESA scores and bootstrap CIs."""
    if scores.empty:
        return None
    spec = protocol_named(protocol)
    higher = spec.higher_is_better
    long = pd.DataFrame({"system": scores["system"], "segment": scores["item"], "rater": scores["annotator"],
                         "score": scores["score"]})
    ci_table = mq.bootstrap_system_ci(long, n_boot=n_boot, seed=seed)
    ci: dict[str, Any] = {str(r["system"]): (r["ci_low"], r["ci_high"]) for r in ci_table.to_dict("records")}
    table: dict[str, Any] = {str(r["system"]): (float(r["score"]), int(r["n_segments"]), int(r["n_ratings"]))
                             for r in mq.system_scores(long, higher_is_better=higher).to_dict("records")}
    oriented = pd.DataFrame({"annotator": scores["annotator"], "system": scores["system"], "segment": scores["item"],
                             "score": scores["score"] if higher else -scores["score"]})
    wmt = wmt_ranking(oriented, order=order)
    systems = []
    for position, row in enumerate(wmt.systems, start=1):  # wmt_ranking's order: by score (or z), then by name
        name = row["system"]
        low, high = ci[name]
        score, n_items, n_ratings = table[name]
        systems.append({
            "system": name, "position": position, "rank": position, "score": score,
            "score_ci": None if low is None or pd.isna(low) else [float(low), float(high)],
            "z": row["z"], "cluster": row["cluster"], "rank_range": row["rank_range"],
            "wins": row["wins"], "losses": row["losses"], "beats": row["beats"],
            "n_items": n_items, "n_ratings": n_ratings,
            "is_reference": name in references,
        })
    scheme: dict[str, Any] = {"protocol": protocol, "higher_is_better": higher,
                              "aggregate": "mean over items of the mean over raters",
                              "ci": {"method": "paired percentile bootstrap over items", "n_boot": n_boot,
                                     "seed": seed, "confidence": 0.95}}
    scheme.update(spec.score_scheme(weights))
    return {"method": wmt.as_dict()["method"], "systems": systems, "head_to_head": wmt.head_to_head,
            "settings": wmt.settings, "score": scheme}


def errors_block(ratings: pd.DataFrame, weights: mq.MqmWeights, protocol: str) -> dict[str, Any]:
    """Errors per system, category and severity (count, penalty, per rating)."""
    rows = error_rows(ratings)
    if not protocol_named(protocol).spans_have_categories:
        rows = rows.assign(category=np.where(rows["category"] == mq.NO_ERROR, mq.NO_ERROR, "(ESA span)"))
        w = mq.MqmWeights(name="esa-count", non_translation_categories=())
    else:
        w = weights
    counts = mq.mqm_error_counts(rows.drop(columns=["side", "start", "end"]), w) if len(rows) else pd.DataFrame()
    table = [] if counts.empty else [
        {k: (v.item() if hasattr(v, "item") else v) for k, v in rec.items()} for rec in counts.to_dict("records")]
    discourse = sorted({r["category"] for r in table if str(r["category"]).lower().startswith("discourse/")})
    return {"rows": table, "discourse_categories": discourse,
            "n_ratings": int(len(ratings)), "n_errors": int(sum(r["count"] for r in table))}


def agreement_ratings(ratings: pd.DataFrame, protocol: str, uses_spans: bool) -> pd.DataFrame:
    """Units (item|system) with one category per rating, for the agreement adapter."""
    if uses_spans:
        labels = [_worst(s) if s is not None else None for s in ratings["span_list"]]
    else:
        labels = [None if pd.isna(s) else _band(float(s)) for s in ratings["score_given"]]
    return pd.DataFrame({"item": (ratings["item"].astype(str) + "|" + ratings["system"].astype(str)).to_numpy(),
                         "rater": ratings["annotator"].to_numpy(), "label": labels,
                         "phenomenon": ratings["phenomenon"].to_numpy()}).dropna(subset=["label"])


def span_agreement_block(ratings: pd.DataFrame, scores: pd.DataFrame, *, uses_spans: bool, protocol: str,
                         unit_lengths: dict[str, int] | None = None) -> dict[str, Any]:
    """Score, span, category (and, with text lengths, unitized alpha) agreement between raters."""
    unit_scores = pd.DataFrame({"unit": scores["item"].astype(str) + "|" + scores["system"].astype(str),
                                "rater": scores["annotator"], "score": scores["score"]})
    block: dict[str, Any] = {"scores": sp.score_agreement(unit_scores) if len(unit_scores) else None}
    if not uses_spans:
        block.update(spans=None, categories=None, unitized_alpha=None,
                     note="DA: no spans, score agreement only")
        return block
    rows = []
    for item, system, rater, spans in zip(ratings["item"].tolist(), ratings["system"].tolist(),
                                          ratings["annotator"].tolist(), ratings["span_list"].tolist()):
        unit = f"{item}|{system}"
        if not spans:
            rows.append((unit, rater, None, None, "target", None))
        for span in spans or []:
            rows.append((unit, rater, span["start"], span["end"], span.get("side", "target"), span.get("category")))
    long = pd.DataFrame(rows, columns=["unit", "rater", "start", "end", "side", "category"])
    target = long[long["side"] == "target"]
    block["spans"] = sp.span_agreement(target)
    categories = protocol_named(protocol).spans_have_categories
    if categories:
        block["categories"] = sp.category_agreement(target)
        block["categories_top_level"] = sp.category_agreement(target, depth=1)
    else:
        block["categories"] = None
    if unit_lengths:
        seen = set(target["unit"])
        known: dict[Hashable, int] = {u: n for u, n in unit_lengths.items() if u in seen}
        cats = target.assign(category=target["category"].fillna("error") if categories else "error")
        block["unitized_alpha"] = sp.unitized_alpha_pairs(cats, known) if known else []
    else:
        block["unitized_alpha"] = None
        block["note"] = "unitized alpha needs the candidates' text lengths (a stored study's report has them)"
    return block


def methods_for(protocol: str, uses_spans: bool) -> dict[str, str]:
    """METHODS with the score and ranking lines worded for this protocol (its ``score_methods``)."""
    return {**METHODS, **protocol_named(protocol).score_methods(uses_spans)}
