"""ContraPro-style accuracy of evaluators (and of the humans) on a contrastive study.

Part of the human-vs-evaluator comparison (:mod:`evaluators.comparison.core`).
Pure pandas, no Django.

A *contrastive study* (``make_contrastive_study``, docs/protocols/generators.md)
puts each item's reference next to contrastive variants — the same
translation with the pronoun swapped — as systems whose name starts with
``contrastive`` (the generator names them ``contrastive-1``,
``contrastive-2`` …).  Following ContraPro (Müller et al. 2018), a scoring
model is *correct* on an item when it scores the reference **strictly
better** than every variant (a tie is an error); accuracy is the share of
correct items (:func:`evaluators.stats.correlation.contrapro_accuracy`).
This needs the model's score of the reference, so only an evaluator that
scored the reference (an imported one) gets an accuracy.

Breakdowns (ContraPro reports both):

* **pronoun**: the item's ``metadata.pronoun`` when present, else the
  item's ``phenomenon``, else ``(none)``;
* **antecedent distance**: the item's ``metadata.antecedent_distance`` (in
  sentences; 0 = the antecedent is in the same sentence) bucketed as
  ``0``, ``1``, ``2``, ``3``, ``>3`` like ContraPro; a non-numeric value is
  kept as given; ``(none)`` when absent.  The breakdown is null when no item
  has the key.

The humans' accuracy on the same items is the share of their judgments that
pick the reference (choice) or rank it strictly above every variant
(ranking); ``invalid`` answers, spam items and excluded annotators are
dropped, ``neither``/``tie`` count as not picking the reference.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from protocols.registry import protocol_named

from evaluators.stats.correlation import contrapro_accuracy

PREFIX = "contrastive"
NONE = "(none)"
METADATA_KEYS = ("pronoun", "antecedent_distance")
_DISTANCE_ORDER = ["0", "1", "2", "3", ">3"]


def contrastive_variants(systems: Iterable[str], references: set[str]) -> list[str]:
    """The study's contrastive systems: names starting with ``contrastive`` that are never a reference."""
    return sorted({str(s) for s in systems if str(s).startswith(PREFIX)} - references)


def distance_bucket(value: Any) -> str:
    """ContraPro's antecedent-distance buckets: ``0``…``3`` and ``>3``; other values as given."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return NONE
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(number) or number != int(number) or number < 0:
        return str(value)
    return str(int(number)) if number <= 3 else ">3"


def item_groups(items: pd.DataFrame) -> tuple[pd.DataFrame, bool]:
    """Per item its ``pronoun`` and ``antecedent_distance`` group; and whether any item had a distance."""
    frame = items.copy()
    for column in ("phenomenon", "pronoun", "antecedent_distance"):
        if column not in frame.columns:
            frame[column] = None
    # pandas accepts None as ``other`` (a missing value); pandas-stubs leave None out of its type.
    phenomenon = frame["phenomenon"].where(  # type: ignore[call-overload]
        frame["phenomenon"].notna() & (frame["phenomenon"] != ""), None)
    pronoun = frame["pronoun"].where(frame["pronoun"].notna() & (frame["pronoun"] != ""), phenomenon)
    has_distance = bool(frame["antecedent_distance"].map(lambda v: distance_bucket(v) != NONE).any())
    out = pd.DataFrame({"item": frame["item"].astype(str),
                        "pronoun": pronoun.map(lambda v: NONE if v is None or v != v else str(v)),
                        "antecedent_distance": frame["antecedent_distance"].map(distance_bucket)})
    return out.drop_duplicates("item"), has_distance


def _order(groups: dict[str, Any], distance: bool) -> dict[str, Any]:
    if distance:
        rank = {g: k for k, g in enumerate(_DISTANCE_ORDER)}
        keys = sorted(groups, key=lambda g: (g == NONE, rank.get(g, len(rank)), g))
    else:
        keys = sorted(groups, key=lambda g: (g == NONE, g))
    return {k: groups[k] for k in keys}


def evaluator_accuracy(rows: pd.DataFrame, variants: list[str], groups: pd.DataFrame, *,
                       higher_is_better: bool, has_distance: bool) -> dict[str, Any]:
    """ContraPro accuracy of one evaluator from its scores on real items (``item, system, score, is_reference``)."""
    used = rows[rows["is_reference"] | rows["system"].isin(variants)][["item", "system", "score", "is_reference"]]
    empty: dict[str, Any] = {"accuracy": None, "n_correct": 0, "n_items": 0, "n_skipped": 0, "by_pronoun": {},
             "by_antecedent_distance": {} if has_distance else None}
    if not used["is_reference"].any():
        return empty | {"note": "the evaluator did not score the reference: ContraPro accuracy needs the reference's "
                                "score next to the variants' (import it with import_scores)"}
    if not (~used["is_reference"]).any():
        return empty | {"note": "the evaluator scored no contrastive variant"}
    frame = used.merge(groups, on="item", how="left").fillna({"pronoun": NONE, "antecedent_distance": NONE})
    by_pronoun = contrapro_accuracy(frame, higher_is_better=higher_is_better, by="pronoun")
    out = {k: by_pronoun[k] for k in ("accuracy", "n_correct", "n_items", "n_skipped")}
    out["by_pronoun"] = _order(by_pronoun["by"], distance=False)
    out["by_antecedent_distance"] = (
        _order(contrapro_accuracy(frame, higher_is_better=higher_is_better, by="antecedent_distance")["by"],
               distance=True) if has_distance else None)
    return out


def _share(correct: pd.Series) -> dict[str, Any]:
    n = int(len(correct))
    return {"accuracy": float(correct.mean()) if n else None, "n_correct": int(correct.sum()), "n_judgments": n}


def human_accuracy(judgments: pd.DataFrame, protocol: str, variants: list[str], groups: pd.DataFrame, *,
                   has_distance: bool) -> dict[str, Any] | None:
    """Share of the humans' judgments that prefer the reference to every variant (None without judgments)."""
    needed = {"judgment", "item", "system", "is_reference"}
    if judgments.empty or not needed <= set(judgments.columns):
        return None
    frame = judgments
    spam = "is_spam_item" if "is_spam_item" in frame.columns else "is_spam"
    if spam in frame.columns:
        frame = frame[~frame[spam].astype(bool)]
    if "excluded" in frame.columns:
        frame = frame[~frame["excluded"].astype(bool)]
    if "pilot" in frame.columns:
        frame = frame[~frame["pilot"].astype(bool)]
    if "is_current" in frame.columns:
        frame = frame[frame["is_current"].astype(bool)]
    frame = frame[frame["is_reference"].astype(bool) | frame["system"].astype(str).isin(variants)]
    correct = protocol_named(protocol).prefers_reference(frame)
    if correct is None:
        return None
    if correct.empty:
        return None
    item_of = frame.drop_duplicates("judgment").set_index("judgment")["item"].astype(str)
    per = pd.DataFrame({"correct": correct, "item": item_of.reindex(correct.index)})
    per = per.merge(groups, on="item", how="left").fillna({"pronoun": NONE, "antecedent_distance": NONE})
    out = _share(per["correct"]) | {"n_items": int(per["item"].nunique())}
    out["by_pronoun"] = _order({str(g): _share(c) for g, c in per.groupby("pronoun")["correct"]}, distance=False)
    out["by_antecedent_distance"] = (
        _order({str(g): _share(c) for g, c in per.groupby("antecedent_distance")["correct"]}, distance=True)
        if has_distance else None)
    return out


def contrastive_block(*, judgments: pd.DataFrame, protocol: str, scores: pd.DataFrame, items: pd.DataFrame,
                      systems: Iterable[str], references: set[str],
                      evaluators: list[tuple[str, bool]]) -> dict[str, Any] | None:
    """The ``contrastive`` block of the comparison JSON, or None when the study has no contrastive variant.

    ``scores``: the prepared score frame (real and spam rows, ``item, system,
    score, is_reference, is_spam_item, evaluator``); ``items``: the study's
    real items (``item``, optional ``phenomenon``, ``pronoun``,
    ``antecedent_distance``); ``evaluators``: (name, higher_is_better).
    """
    variants = contrastive_variants(systems, references)
    if not variants:
        return None
    groups, has_distance = item_groups(items)
    real = scores[~scores["is_spam_item"]]
    block: dict[str, Any] = {
        "variants": variants,
        "n_items": int(real.loc[real["system"].isin(variants), "item"].nunique()) if len(real) else 0,
        "breakdown": {"pronoun": "metadata.pronoun, else the item's phenomenon",
                      "antecedent_distance": "metadata.antecedent_distance (sentences; 0, 1, 2, 3, >3)"},
        "human": human_accuracy(judgments, protocol, variants, groups, has_distance=has_distance),
        "evaluators": {},
    }
    for name, hib in evaluators:
        rows = real[real["evaluator"] == name]
        block["evaluators"][name] = evaluator_accuracy(rows, variants, groups, higher_is_better=hib,
                                                       has_distance=has_distance)
    return block
