"""Per-evaluator system means with bootstrap CIs and paired t-tests between systems.

Part of the human-vs-evaluator comparison (:mod:`evaluators.comparison.core`),
kept apart so that module stays small.  Pure pandas, no Django.

BlonDe (Jiang et al. 2022) reports each system's mean metric score with a
bootstrap confidence interval (Fig. 4) and paired t-tests between systems on
per-document scores (Table 4).  Both are computed here on the same *units*:

* **document** when the study has documents (any item with a
  ``document_id``): a unit's score is the mean of the system's scores on the
  document's items — a document-level score, stored on each of its items,
  is thus counted once; an item without a document id is its own document.
  Resampling whole documents keeps the items of one document (which are not
  independent) together.
* **item** otherwise: a unit's score is the item's score.

Scores are the evaluator's raw scores (not oriented); ``favours`` in a t-test
says which system the mean difference favours given the metric's direction,
and ``better`` names it only as a verdict: when the test rests on at least
:data:`MIN_UNITS` units and ``p < ALPHA``.  Otherwise ``better`` is null and
``verdict`` says why ("3 documents: too few for a per-document test (at least
10)", "p = 0.94 ≥ 0.05: no difference shown"); a t-test on a handful of
documents (2 degrees of freedom on the TED demo) is not evidence either way.  The
statistics themselves are :func:`evaluators.stats.correlation.system_means`
(percentile bootstrap, Efron & Tibshirani 1993; seeded, ``seed + i`` for the
i-th system in name order) and
:func:`evaluators.stats.correlation.paired_t_test` (``scipy.stats.ttest_rel``,
two-sided p).
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from evaluators.stats.correlation import paired_t_test, system_means

CONFIDENCE = 0.95
#: Significance level of the paired t-tests: a system is called better only at p < ALPHA.
ALPHA = 0.05
#: Fewest units (documents, or items in a study without documents) a paired t-test needs for a verdict.
MIN_UNITS = 10
_OWN_DOCUMENT = "\x00item:"  # prefix of the unit of an item without a document id, in a study with documents


def _num(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def unit_scores(rows: pd.DataFrame, item_documents: Mapping[str, str]) -> tuple[pd.DataFrame, str]:
    """One score per (system, unit): ``system, unit, score, is_reference`` and the unit kind.

    ``rows``: one evaluator's scores on real (non-spam) items (columns ``item,
    system, score, document, is_reference``).  ``item_documents``: the study's
    item id → document id ("" for none); the study "has documents" when any
    value is non-empty, or when a score row carries a document (a
    document-level score).
    """
    has_documents = any(item_documents.values()) or bool((rows["document"] != "").any())
    frame = rows[["item", "system", "score", "document", "is_reference"]].copy()
    if not has_documents:
        frame["unit"] = frame["item"]
        kind = "item"
    else:
        study_doc = frame["item"].map(lambda i: item_documents.get(i, "")).fillna("")
        doc = frame["document"].where(frame["document"] != "", study_doc)
        frame["unit"] = doc.where(doc != "", _OWN_DOCUMENT + frame["item"])
        kind = "document"
    if frame.empty:
        return pd.DataFrame(columns=["system", "unit", "score", "is_reference"]), kind
    units = frame.groupby(["system", "unit"], sort=True).agg(score=("score", "mean"),
                                                             is_reference=("is_reference", "any")).reset_index()
    return units, kind


def system_means_block(units: pd.DataFrame, kind: str, *, n_boot: int, seed: int) -> dict[str, Any]:
    """Each scored system's mean over units with a seeded percentile-bootstrap 95% CI (units resampled)."""
    references = set(units.loc[units["is_reference"].astype(bool), "system"]) if len(units) else set()
    rows = system_means(units, system="system", score="score", n_boot=n_boot, seed=seed,
                        confidence=CONFIDENCE) if len(units) else []
    systems = {}
    for row in sorted(rows, key=lambda r: r["system"]):
        systems[row["system"]] = {"mean": _num(row["mean"]), "ci_low": _num(row["ci_low"]),
                                  "ci_high": _num(row["ci_high"]), "n": int(row["n"]),
                                  "is_reference": row["system"] in references}
        if row.get("note"):
            systems[row["system"]]["note"] = row["note"]
    return {"unit": kind, "confidence": CONFIDENCE, "n_boot": n_boot, "seed": seed,
            "method": "percentile bootstrap over units", "systems": systems}


def paired_t_tests_block(units: pd.DataFrame, kind: str, *, higher_is_better: bool) -> dict[str, Any]:
    """A paired t-test for every pair of systems (name order, a < b) on the units both scored.

    ``mean_diff`` = mean(a − b) in raw scores with its 95% t CI; ``p_value``
    two-sided; ``favours`` = the system the mean difference favours under the
    metric's direction (null when the difference is 0 or undefined); ``better``
    = that system as a verdict, only with at least :data:`MIN_UNITS` units and
    ``p < ALPHA``, else null and ``verdict`` says why.  The block's ``note``
    says when the study has too few units for any verdict.
    """
    wide = units.pivot(index="unit", columns="system", values="score") if len(units) else pd.DataFrame()
    tests = []
    for a, b in combinations(sorted(str(s) for s in wide.columns), 2):
        diffs = (wide[a] - wide[b]).dropna()
        constant = len(diffs) > 1 and np.ptp(diffs.to_numpy(float)) == 0
        with warnings.catch_warnings():
            if constant:
                warnings.simplefilter("ignore", RuntimeWarning)
            res = paired_t_test(wide[a], wide[b], confidence=CONFIDENCE)
        if constant:
            # equal differences (e.g. 0.9 − 0.1 on every unit): their float mean can differ from them in the
            # last bit, giving a tiny non-zero sd and an absurd t — undefined, as for an exactly zero sd
            res = res | {"t": None, "p_value": None, "ci_low": res["mean_diff"], "ci_high": res["mean_diff"],
                         "note": "all differences are equal: t undefined"}
        diff = _num(res["mean_diff"])
        favours = None
        if diff:
            favours = a if (diff > 0) == higher_is_better else b
        p_value, n = _num(res["p_value"]), int(res["n"])
        verdict = _verdict(n, p_value, kind)
        row = {"a": a, "b": b, "n": n, "mean_diff": diff, "ci_low": _num(res["ci_low"]),
               "ci_high": _num(res["ci_high"]), "t": _num(res["t"]), "df": int(res["df"]) if res["n"] else None,
               "p_value": p_value, "favours": favours, "better": favours if verdict is None else None}
        if verdict is not None:
            row["verdict"] = verdict
        if res.get("note"):
            row["note"] = res["note"]
        tests.append(row)
    block: dict[str, Any] = {"unit": kind, "alternative": "two-sided", "confidence": CONFIDENCE, "alpha": ALPHA,
                             "min_units": MIN_UNITS, "n_units": int(len(wide.index)), "tests": tests}
    if tests and len(wide.index) < MIN_UNITS:
        block["note"] = too_few(len(wide.index), kind)
    return block


def too_few(n: int, kind: str) -> str:
    """Why a paired test on ``n`` units gives no verdict."""
    return f"{n} {kind}{'' if n == 1 else 's'}: too few for a per-{kind} test (at least {MIN_UNITS}): no verdict"


def _verdict(n: int, p_value: float | None, kind: str) -> str | None:
    """Why no system is called better (None: the test gives a verdict)."""
    if n < MIN_UNITS:
        return too_few(n, kind)
    if p_value is None:
        return "p undefined: no verdict"
    if p_value >= ALPHA:
        return f"p = {p_value:.3g} ≥ {ALPHA}: no difference shown"
    return None
