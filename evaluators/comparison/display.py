"""Display rows for the comparison page's significance and ContraPro sections.

Formatting only (numbers → strings, JSON blocks → table rows); the numbers
come from :func:`evaluators.comparison.selectors.study_comparison`.
"""
from __future__ import annotations

from typing import Any


def _num(value: Any, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    if value is None:
        return "—"
    return "< 0.0001" if value < 0.0001 else f"{value:.4f}"


def mean_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Systems (references last) × evaluators: mean and its bootstrap CI."""
    evaluators = result["evaluators"]
    systems: dict[str, bool] = {}
    for e in evaluators:
        for name, entry in e["system_means"]["systems"].items():
            systems[name] = systems.get(name, False) or entry["is_reference"]
    rows = []
    for name in sorted(systems, key=lambda s: (systems[s], s)):
        cells = []
        for e in evaluators:
            entry = e["system_means"]["systems"].get(name)
            cells.append({"mean": _num(entry["mean"], 4), "n": entry["n"],
                          "ci": f"{_num(entry['ci_low'], 4)} … {_num(entry['ci_high'], 4)}"}
                         if entry else {"mean": "—", "n": None, "ci": ""})
        rows.append({"system": name, "is_reference": systems[name], "cells": cells})
    return rows


def mean_units(result: dict[str, Any]) -> str:
    """'item', 'document' or 'item or document' (evaluators may differ: document-level scores)."""
    units = sorted({e["system_means"]["unit"] for e in result["evaluators"]})
    return " or ".join(units)


def t_test_groups(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Per evaluator its paired t-tests, formatted."""
    groups = []
    for e in result["evaluators"]:
        block = e["paired_t_tests"]
        tests = [{"a": t["a"], "b": t["b"], "n": t["n"], "mean_diff": _num(t["mean_diff"], 4),
                  "ci": (f"{_num(t['ci_low'], 4)} … {_num(t['ci_high'], 4)}" if t["ci_low"] is not None else ""),
                  "t": _num(t["t"]), "p": _p(t["p_value"]), "better": t.get("better") or "—",
                  "significant": bool(t.get("better")),
                  # too few units: the summary says it once, not on every row
                  "note": "; ".join(n for n in (None if block.get("note") else t.get("verdict"), t.get("note")) if n)}
                 for t in block["tests"]]
        n_significant = sum(1 for t in tests if t["significant"])
        groups.append({"name": e["name"], "unit": block["unit"], "tests": tests, "n_significant": n_significant,
                       "direction": "higher" if e["higher_is_better"] else "lower", "note": block.get("note") or "",
                       "alpha": block.get("alpha", 0.05), "min_units": block.get("min_units", 10)})
    return groups


def _groups(block: dict[str, Any], key: str) -> list[str]:
    names: list[str] = []
    entries: list[dict[str, Any]] = [block["human"]] if block.get("human") else []
    for entry in entries + list(block["evaluators"].values()):
        for g in (entry.get(key) or {}):
            if g not in names:
                names.append(g)
    return names


def contrastive_table(block: dict[str, Any] | None) -> dict[str, Any] | None:
    """ContraPro accuracy rows (humans first, then each evaluator) with the pronoun and distance breakdowns."""
    if not block:
        return None
    pronouns = _groups(block, "by_pronoun")
    distances = _groups(block, "by_antecedent_distance")

    def cells(entry: dict[str, Any], key: str, groups: list[str], count: str) -> list[dict[str, Any]]:
        by = entry.get(key) or {}
        return [{"value": _num(by[g]["accuracy"]), "n": by[g][count]} if g in by else {"value": "—", "n": None}
                for g in groups]

    rows = []
    human = block.get("human")
    if human:
        rows.append({"name": "humans", "is_human": True, "accuracy": _num(human["accuracy"]),
                     "n": human["n_judgments"], "unit": "judgments", "note": "",
                     "pronouns": cells(human, "by_pronoun", pronouns, "n_judgments"),
                     "distances": cells(human, "by_antecedent_distance", distances, "n_judgments")})
    for name, entry in block["evaluators"].items():
        rows.append({"name": name, "is_human": False, "accuracy": _num(entry["accuracy"]),
                     "n": entry["n_items"], "unit": "items", "note": entry.get("note", ""),
                     "pronouns": cells(entry, "by_pronoun", pronouns, "n_items"),
                     "distances": cells(entry, "by_antecedent_distance", distances, "n_items")})
    return {"variants": block["variants"], "n_items": block["n_items"], "pronouns": pronouns,
            "distances": distances, "rows": rows, "n_columns": 2 + len(pronouns) + len(distances)}


def dip_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Evaluators whose system score is DiP Eq. 1, with the item counts behind each sum."""
    rows = []
    for e in result["evaluators"]:
        if e["system_score"] != "dip_eq1":
            continue
        counts = sorted({v.get("dip_n_items", 0) for v in e["systems"].values()})
        rows.append({"name": e["name"], "n_items": counts,
                     "uneven": len(counts) > 1})
    return rows


def corpus_groups(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Per evaluator with a signature or corpus scores: its signature lines, notes and paired-test rows."""
    groups = []
    for e in result["evaluators"]:
        paired = e.get("paired")
        if not (e.get("signature") or e.get("corpus") or paired):
            continue
        tests = []
        if paired:
            for t in paired["tests"]:
                ci = f"± {_num(t['ci'], 2)}" if t.get("ci") is not None else ""
                tests.append({"system": t["system"], "is_baseline": t["is_baseline"], "score": _num(t["score"], 2),
                              "mean": _num(t.get("mean"), 2) if t.get("mean") is not None else "", "ci": ci,
                              "p": "" if t["is_baseline"] else _p(t["p_value"]),
                              "significant": bool(t.get("significant"))})
        groups.append({"name": e["name"], "signature": (e.get("signature") or "").splitlines(),
                       "references": e.get("references") or [],
                       "backend": e.get("backend") or "", "system_score": e["system_score"],
                       "notes": e.get("evaluator_notes") or [], "tests": tests,
                       "method": paired["method_name"] if paired else "",
                       "n_samples": paired["n_samples"] if paired else None,
                       "seed": paired["seed"] if paired else None,
                       "baseline": paired["baseline"] if paired else ""})
    return groups
