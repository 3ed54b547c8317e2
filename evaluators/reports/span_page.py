"""The report of a span or score study (MQM, ESA, DA) as the page and the CSV downloads show it.

Everything is read from the report dict (``agreement SLUG --json``; built by
``study_stats._span_report``), so the page, the CSV files and the JSON show the
same numbers; what differs between the protocols is asked of the report's protocol
(``protocols.registry``). No database: the view only adds URLs.

* :func:`ranking_rows` — the WMT-style ranking table, with a flag on the first row
  of every cluster so the page draws a rule there;
* :func:`error_matrix` — errors per category (grouped by top-level category, the
  Discourse branch first and marked) × system, each cell split by severity;
* :func:`error_shares` — errors per rating by top-level category per system, for the
  stacked bar plot;
* ``*_table`` — the CSV downloads (unrounded numbers).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from protocols.registry import UnknownProtocol, protocol_named
#: Severity order in every table: the worst first.
SEVERITIES = ("critical", "major", "minor", "neutral")
DISCOURSE = "Discourse"
ESA_GROUP = "(ESA span)"


def is_span_report(report: dict | None) -> bool:
    """Whether the report is an MQM / ESA / DA one (it has the span blocks)."""
    if not report or "span_agreement" not in report:
        return False
    try:
        return protocol_named(str(report.get("protocol"))).per_candidate_annotations
    except UnknownProtocol:
        return False


def score_kind(report: dict) -> str:
    """``mqm``, ``esa`` or ``da`` (an ESA study with spans switched off scores only): the protocol's ``score_kind``."""
    return protocol_named(str(report["protocol"])).score_kind((report.get("policies") or {}).get("uses_spans", True))


def lower_is_better(report: dict) -> bool:
    """The report's segment scores are penalties (MQM points), not 0–100 scores."""
    return not protocol_named(str(report["protocol"])).higher_is_better


def by_severity(report: dict) -> bool:
    """Errors are grouped by severity: the protocol's spans carry no category (ESA)."""
    return not protocol_named(str(report["protocol"])).spans_have_categories


def top_level(category: str) -> str:
    """``Accuracy/Mistranslation`` → ``Accuracy``; a name without ``/`` is its own group."""
    return str(category).split("/", 1)[0].strip() or str(category)


def is_discourse(category: str) -> bool:
    return top_level(category).lower() == DISCOURSE.lower()


# ---------------------------------------------------------------- ranking
def ranking_rows(report: dict) -> list[dict[str, Any]]:
    """The ranking's systems in order, each with ``cluster_start`` (first of its cluster, not the first row)."""
    systems = (report.get("ranking") or {}).get("systems") or []
    rows, previous = [], None
    for index, s in enumerate(systems):
        rng = s.get("rank_range") or [s.get("rank"), s.get("rank")]
        rows.append({**s, "index": index, "cluster_start": previous is not None and s.get("cluster") != previous,
                     "rank_range_text": f"{rng[0]}" if rng[0] == rng[1] else f"{rng[0]}–{rng[1]}"})
        previous = s.get("cluster")
    return rows


def weights_text(score: dict) -> str:
    """The scoring scheme in one line: ``wmt-mqm: minor 1, major 5, …`` or the ESA/DA scale."""
    if not score:
        return ""
    weights = score.get("weights")
    if not weights:
        scale = score.get("scale") or [0, 100]
        return f"{score.get('name', 'score')}: the annotators' {scale[0]}–{scale[1]} scores as given"
    names = {"minor_punctuation": "minor Fluency/Punctuation", "non_translation": "Non-translation"}
    parts = [f"{names.get(k, k)} {v:g}" for k, v in weights.items()]
    return f"{score.get('name', 'custom')}: " + ", ".join(parts)


def score_axis(report: dict) -> tuple[str, float, float]:
    """Axis label and range of the score plot: MQM points from 0 up, or the 0–100 scale."""
    kind = score_kind(report)
    systems = (report.get("ranking") or {}).get("systems") or []
    if not lower_is_better(report):
        return f"{kind.upper()} score (0–100, higher is better)", 0.0, 100.0
    top = max([0.0, *(v for s in systems for v in [s.get("score"), *(s.get("score_ci") or [])] if v is not None)])
    return "MQM points per segment (lower is better)", 0.0, max(1.0, top * 1.1)


# ---------------------------------------------------------------- errors
@dataclass
class ErrorCell:
    """One category × system cell: the count and its split by severity."""

    count: int = 0
    penalty: float = 0.0
    per_segment: float = 0.0
    by_severity: dict[str, int] = field(default_factory=dict)

    def add(self, row: dict) -> None:
        self.count += int(row.get("count") or 0)
        self.penalty += float(row.get("penalty") or 0.0)
        self.per_segment += float(row.get("per_segment") or 0.0)
        sev = str(row.get("severity") or "")
        self.by_severity[sev] = self.by_severity.get(sev, 0) + int(row.get("count") or 0)

    def split(self) -> list[tuple[str, int]]:
        """(severity, count) worst first, only the severities that occur."""
        known = [(s, self.by_severity[s]) for s in SEVERITIES if self.by_severity.get(s)]
        other = [(s, n) for s, n in sorted(self.by_severity.items()) if s not in SEVERITIES and n]
        return known + other


def _group_order(name: str) -> tuple[int, str]:
    """Discourse first (the study's point), the others alphabetically."""
    return (0 if name.lower() == DISCOURSE.lower() else 1, name.lower())


def _severity_first(name: str) -> tuple[int, str]:
    """``Severity/critical`` before ``Severity/major`` before ``Severity/minor``."""
    sev = name.split("/", 1)[-1]
    return (SEVERITIES.index(sev) if sev in SEVERITIES else len(SEVERITIES), sev)


def error_matrix(report: dict) -> dict[str, Any] | None:
    """Category groups × systems (ranking order), each cell an :class:`ErrorCell`; None without errors block."""
    errors = report.get("errors")
    if not errors:
        return None
    systems = [s["system"] for s in (report.get("ranking") or {}).get("systems") or []]
    for row in errors["rows"]:
        if row["system"] not in systems:
            systems.append(row["system"])
    cells: dict[tuple[str, str], ErrorCell] = {}
    categories: dict[str, set[str]] = {}
    totals = {s: ErrorCell() for s in systems}
    flat = by_severity(report)  # ESA spans have a severity, no category: one row per severity
    for row in errors["rows"]:
        cat = f"Severity/{row['severity']}" if flat else str(row["category"])
        categories.setdefault(top_level(cat), set()).add(cat)
        cells.setdefault((cat, row["system"]), ErrorCell()).add(row)
        totals[row["system"]].add(row)
    groups = []
    for group in sorted(categories, key=_group_order):
        subtotal = {s: ErrorCell() for s in systems}
        for (cat, system), cell in cells.items():
            if top_level(cat) == group:
                for sev, n in cell.by_severity.items():
                    subtotal[system].add({"count": n, "severity": sev})
                subtotal[system].per_segment += cell.per_segment
        groups.append({
            "name": group, "discourse": group.lower() == DISCOURSE.lower(),
            "subtotal": [subtotal[s] for s in systems],
            "categories": [{"name": cat, "label": cat.split("/", 1)[1] if "/" in cat else cat,
                            "cells": [cells.get((cat, s), ErrorCell()) for s in systems]}
                           for cat in sorted(categories[group], key=_severity_first if flat else str)],
        })
    return {"systems": systems, "groups": groups, "flat": flat, "totals": [totals[s] for s in systems],
            "discourse_categories": errors.get("discourse_categories", []),
            "n_errors": errors.get("n_errors", 0), "n_ratings": errors.get("n_ratings", 0)}


def error_shares(report: dict) -> tuple[list[str], list[tuple[str, dict[str, float]]]]:
    """(groups, [(system, {group: errors per rating})]) for the stacked bars; ESA groups by severity."""
    errors = report.get("errors")
    if not errors:
        return [], []
    esa = by_severity(report)
    systems = [s["system"] for s in (report.get("ranking") or {}).get("systems") or []]
    shares: dict[str, dict[str, float]] = {s: {} for s in systems}
    for row in errors["rows"]:
        key = str(row["severity"]) if esa else top_level(str(row["category"]))
        bucket = shares.setdefault(row["system"], {})
        bucket[key] = bucket.get(key, 0.0) + float(row.get("per_segment") or 0.0)
    present = {g for bucket in shares.values() for g in bucket}
    if esa:
        groups = [s for s in SEVERITIES if s in present] + sorted(present - set(SEVERITIES))
    else:
        groups = sorted(present, key=_group_order)
    return groups, list(shares.items())


# ---------------------------------------------------------------- CSV tables
def errors_table(report: dict) -> tuple[list[str], list[list[Any]]]:
    """One row per system × category × severity: count, summed weights, count per rating."""
    columns = ["system", "category", "top_level", "discourse", "severity", "count", "penalty", "per_segment"]
    rows = [[r["system"], r["category"], top_level(str(r["category"])), is_discourse(str(r["category"])),
             r["severity"], r["count"], r["penalty"], r["per_segment"]]
            for r in (report.get("errors") or {}).get("rows", [])]
    return columns, rows


def span_ranking_table(report: dict) -> tuple[list[str], list[list[Any]]]:
    """The WMT ranking: cluster, rank range, score with CI, z, wins/losses, counts."""
    columns = ["position", "rank", "cluster", "rank_range_low", "rank_range_high", "system", "is_reference", "score",
               "score_ci_low", "score_ci_high", "z", "wins", "losses", "n_items", "n_ratings"]
    rows = []
    for s in (report.get("ranking") or {}).get("systems", []):
        rng = s.get("rank_range") or [None, None]
        ci = s.get("score_ci") or [None, None]
        rows.append([s.get("position", s["rank"]), s["rank"], s.get("cluster"), rng[0], rng[1], s["system"], s.get("is_reference"), s.get("score"),
                     ci[0], ci[1], s.get("z"), s.get("wins"), s.get("losses"), s.get("n_items"), s.get("n_ratings")])
    return columns, rows


def _f1(block: dict | None, key: str) -> list[Any]:
    part = (block or {}).get(key) or {}
    return [part.get("precision"), part.get("recall"), part.get("f1")]


def span_agreement_table(report: dict) -> tuple[list[str], list[list[Any]]]:
    """One row per rater pair: score τ and r, span P/R/F1 (characters, exact, overlap), category AC1, uα."""
    block = report.get("span_agreement") or {}
    columns = ["rater_a", "rater_b", "n_scored", "kendall_tau", "pearson",
               "n_units", *(f"{k}_{m}" for k in ("characters", "exact", "overlap") for m in ("precision", "recall", "f1")),
               "n_matched", "category_ac1", "top_level_ac1", "unitized_alpha"]
    pairs: dict[tuple[str, str], list[Any]] = {}

    def row(a: str, b: str) -> list[Any]:
        return pairs.setdefault((a, b), [a, b, *([None] * (len(columns) - 2))])

    for p in ((block.get("scores") or {}).get("pairs") or []):
        row(p["rater_a"], p["rater_b"])[2:5] = [p.get("n"), p.get("kendall_tau"), p.get("pearson")]
    for p in block.get("spans") or []:
        r = row(p["rater_a"], p["rater_b"])
        r[5:15] = [p.get("n_units"), *_f1(p, "characters"), *_f1(p, "exact"), *_f1(p, "overlap")]
    for key, col in (("categories", 16), ("categories_top_level", 17)):
        for p in ((block.get(key) or {}).get("pairs") or []):
            r = row(p["rater_a"], p["rater_b"])
            r[15] = p.get("n_matched")
            r[col] = (p.get("gwet_ac1") or {}).get("value")
    for p in block.get("unitized_alpha") or []:
        row(p["rater_a"], p["rater_b"])[18] = p.get("alpha")
    return columns, list(pairs.values())


#: The CSV downloads of a span report (name in the URL -> builder); ``ratings`` is added by the view.
SPAN_TABLES: dict[str, Callable[[dict], tuple[list[str], list[list[Any]]]]] = {
    "ranking": span_ranking_table,
    "errors": errors_table,
    "span_agreement": span_agreement_table,
}


# ---------------------------------------------------------------- span agreement for the page
def span_agreement_view(report: dict) -> dict[str, Any] | None:
    """The span agreement blocks as the page lists them (pairs joined across blocks)."""
    block = report.get("span_agreement")
    if not block:
        return None
    columns, rows = span_agreement_table(report)
    pairs = [dict(zip(columns, r)) for r in rows]
    categories = block.get("categories") or {}
    top = block.get("categories_top_level") or {}

    def pooled_ac1(cat: dict) -> dict | None:
        return ((cat.get("pooled") or {}).get("coefficients") or {}).get("gwet_ac1")

    return {
        "scores": block.get("scores"), "alpha": (block.get("scores") or {}).get("krippendorff_alpha_interval"),
        "pairs": pairs, "has_spans": block.get("spans") is not None,
        "categories": categories or None, "category_ac1": pooled_ac1(categories) if categories else None,
        "top_ac1": pooled_ac1(top) if top else None, "n_matched": categories.get("n_matched"),
        "unitized": block.get("unitized_alpha"), "note": block.get("note"),
    }
