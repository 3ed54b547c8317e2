"""The report's block on suggested error spans (ESA^AI / MQM^AI), from the export frame, and its methods sentence.

Every number comes from the export's ``assisted``, ``suggestions``, ``spans``, ``score`` and ``duration_ms``
columns (evaluators/stats/prefill.py has the definitions), so ``agreement --judgments EXPORT`` gives the same
block; the sentence is written only from the study's recorded facts (``facts["prefill"]``) and these figures.
"""
from __future__ import annotations

import json
from typing import Any

import pandas as pd

from evaluators.stats import prefill as pf
from evaluators.stats.mqm import WMT_WEIGHTS


def _list(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, list):
        return value
    if isinstance(value, str) and value.strip():
        parsed = json.loads(value)
        return parsed if isinstance(parsed, list) else []
    return []


def _assisted(value: Any) -> bool | None:
    if value is None or (isinstance(value, float) and value != value) or value is pd.NA:
        return None
    if isinstance(value, str):
        return {"true": True, "false": False}.get(value.strip().lower())
    return bool(value)


def prefill_block(frame: pd.DataFrame) -> dict[str, Any] | None:
    """The ``prefill`` block of a span study's report; None when the frame holds no suggestions."""
    if "suggestions" not in frame.columns or not frame["suggestions"].notna().any():
        return None
    rows = frame[~frame["is_spam_item"].astype(bool) & ~frame["excluded"].astype(bool)]
    rows = rows[rows["suggestions"].notna()]
    weights = WMT_WEIGHTS.severity_weights()
    shown: list[dict[str, Any]] = []
    ratings: list[dict[str, Any]] = []
    judgments: dict[Any, dict[str, Any]] = {}
    for rec in rows.itertuples(index=False):
        assisted = _assisted(getattr(rec, "assisted", None))
        if assisted is None:
            continue
        suggestions = _list(rec.suggestions)
        spans = [s for s in _list(getattr(rec, "spans", None)) if s.get("side", "target") == "target"]
        if assisted:
            shown += [{"annotator": rec.annotator, "decoy": bool(s.get("decoy")), "fate": s.get("fate")}
                      for s in suggestions if s.get("fate")]
        score = getattr(rec, "score", None)
        if score is None or score != score:
            score = -sum(weights.get(str(s.get("severity", "")).lower(), 0.0) for s in spans)
        ratings.append({"segment": (rec.item, rec.system), "assisted": assisted, "score": float(score),
                        "spans": [(s["start"], s["end"]) for s in spans],
                        "ai_spans": [(s["start"], s["end"]) for s in suggestions
                                     if not s.get("decoy") and s.get("side", "target") == "target"]})
        entry = judgments.setdefault(rec.judgment, {"assisted": assisted, "duration_ms": getattr(rec, "duration_ms", None),
                                                    "n_spans": 0})
        entry["n_spans"] += len(spans)
    if not ratings:
        return None
    timed = pd.DataFrame(list(judgments.values()))
    timed = timed[pd.to_numeric(timed["duration_ms"], errors="coerce").notna()]
    timed["duration_ms"] = pd.to_numeric(timed["duration_ms"])
    table = pd.DataFrame(ratings)
    return {
        "acceptance": pf.acceptance(pd.DataFrame(shown, columns=["annotator", "decoy", "fate"])),
        "timing": pf.timing(timed) if len(timed) else None,
        "scores": pf.score_difference(table[["segment", "assisted", "score"]]),
        "ai_agreement": pf.ai_agreement(table),
        "score_is": "the 0–100 score given" if "score" in frame.columns and frame["score"].notna().any()
        else "minus the WMT MQM weights of the spans (minor 1, major 5, critical 25)",
    }


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def skip_clean_sentence(facts: dict[str, Any] | None) -> str:
    """The methods sentence on the items left out as clean (``prefill_skip_clean``), from the recorded facts alone
    ("" when the study skipped none)."""
    if not facts or not facts.get("n_skipped_clean"):
        return ""
    n, clean, share = facts["n_skipped_clean"], facts.get("n_clean_items"), facts.get("skip_clean_share")
    drawn = "all of them" if share is not None and share >= 1 else \
        f"a share of {_pct(share)} of them, drawn per item from the study's seed"
    items = "item was" if n == 1 else "items were"
    return (f"Items on which {facts['source']} marked every candidate clean ({clean} items) were left out of the "
            f"annotation ({drawn}): {n} {items} never shown to annotators. System scores are computed on the judged "
            f"items only; no score was imputed for the skipped items.")


def prefill_sentence(facts: dict[str, Any] | None, block: dict[str, Any] | None) -> str:
    """The methods sentence on suggestions, from the recorded facts and the block's figures ("" without both),
    followed by the sentence on skipped clean items when there are any."""
    skipped = skip_clean_sentence(facts)
    if not facts or not block:
        return skipped
    share = facts.get("share")
    ai, decoy = block["acceptance"]["ai"], block["acceptance"]["decoy"]
    parts = [f"On {_pct(share)} of the items, drawn per annotator and item from the study's seed, annotators saw "
             f"{facts['n_suggestions']} error spans suggested by {facts['source']} "
             f"(imported from {facts['file'] or 'a file'}, {facts['format']}) and could keep, edit or delete each"]
    if facts.get("n_decoys"):
        parts.append(f"; {facts['n_decoys']} decoy spans were placed on text the system marked clean "
                     f"({_pct(facts.get('decoy_share'))} of all suggestions)")
    sentence = "".join(parts) + "."
    if ai["n"]:
        sentence += (f" Annotators kept {_pct(ai['rate'])} of the suggestions shown (95% Wilson CI "
                     f"{_pct(ai['ci_low'])}–{_pct(ai['ci_high'])}, n = {ai['n']})")
        if decoy["n"]:
            sentence += (f" and {_pct(decoy['rate'])} of the decoys ({_pct(decoy['ci_low'])}–{_pct(decoy['ci_high'])}, "
                         f"n = {decoy['n']})")
        sentence += "."
    scores = block["scores"]
    if scores.get("p_value") is not None:
        paired = f"paired by segment over {scores['n_segments']} segments" if scores["paired"] else "unpaired"
        sentence += (f" Assisted minus unassisted scores: {scores['mean_difference']:+.2f} ({paired}; "
                     f"{scores['test']} test, p = {scores['p_value']:.3g}).")
    return f"{sentence} {skipped}" if skipped else sentence
