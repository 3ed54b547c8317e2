"""The study report as flat tables: the CSV downloads and the rows of the report page.

One function per table, each taking the report dict (the JSON of
``agreement SLUG --json``) and returning ``(columns, rows)``, so a CSV
download and the page show exactly the JSON's numbers (unrounded in the CSV).
"""
from __future__ import annotations

from typing import Any, Callable

from evaluators.reports.text import COEFFICIENT_NAMES, coefficient_name

COEF_FIELDS = ("value", "se", "ci_low", "ci_high", "p_value")
DIP_COUNTS = ("n_judgments_with_reference", "n_reference_won", "n_system_won", "n_tie", "n_neither", "n_invalid")


def ties_label(report: dict) -> str:
    """The name of the report's main agreement block: with or without ties, or all ratings (span protocols)."""
    ties = report["policies"].get("ties")
    return "all ratings" if ties is None else "with ties" if ties == "keep" else "without ties"


def _variants(report: dict) -> list[tuple[str, dict]]:
    """(name, agreement block) for the main policy and the other ties variant."""
    out = [(ties_label(report), report)]
    for key in ("without_ties", "with_ties"):
        if report.get(key):
            out.append((key.replace("_", " "), report[key]))
    return out


def coefficients_table(report: dict) -> tuple[list[str], list[list[Any]]]:
    columns = ["variant", "coefficient", "name", *COEF_FIELDS, "note", "n_items", "n_raters", "n_ratings", "weights"]
    rows = []
    for variant, block in _variants(report):
        for key in COEFFICIENT_NAMES:
            c = block["coefficients"].get(key)
            if c is None:
                continue
            rows.append([variant, key, coefficient_name(key, block.get("weights", "identity")),
                         *(c.get(f) for f in COEF_FIELDS), c.get("note"), block["n_items"], block["n_raters"],
                         block["n_ratings"], block.get("weights")])
    return columns, rows


def pairwise_kappa_table(report: dict) -> tuple[list[str], list[list[Any]]]:
    columns = ["rater_a", "rater_b", "n", "value", "note"]
    return columns, [[p["rater_a"], p["rater_b"], p["n"], p["value"], p.get("note")]
                     for p in report.get("pairwise_cohen_kappa", [])]


def by_phenomenon_table(report: dict) -> tuple[list[str], list[list[Any]]]:
    keys = [k for k in COEFFICIENT_NAMES if k != "cohen_kappa"]
    other = "without_ties" if report.get("policies", {}).get("ties", "keep") == "keep" else "with_ties"
    columns = ["phenomenon", "n_items", "n_raters", "n_ratings", *DIP_COUNTS,
               *(f"{k}_{f}" for k in keys for f in COEF_FIELDS), f"gwet_ac1_value_{other}"]
    rows = []
    for phen, block in report.get("by_phenomenon", {}).items():
        coefs = block["coefficients"]
        other_ac1 = ((block.get(other) or {}).get("coefficients") or {}).get("gwet_ac1") or {}
        rows.append([phen, block["n_items"], block["n_raters"], block["n_ratings"],
                     *(block.get(c) for c in DIP_COUNTS),
                     *((coefs.get(k) or {}).get(f) for k in keys for f in COEF_FIELDS), other_ac1.get("value")])
    return columns, rows


def ranking_table(report: dict) -> tuple[list[str], list[list[Any]]]:
    columns = ["position", "rank", "rank_range_low", "rank_range_high", "system", "n", "wins", "ties", "losses",
               "win_rate", "win_rate_ci_low", "win_rate_ci_high", "expected_wins", "expected_wins_ci_low",
               "expected_wins_ci_high", "bt", "bt_ci_low", "bt_ci_high"]
    rows = []
    for s in (report.get("ranking") or {}).get("systems", []):
        def ci(key: str) -> list:
            return list(s.get(key) or [None, None])
        rows.append([s.get("position", s["rank"]), s["rank"], *ci("rank_range"), s["system"], s["n"], s["wins"], s["ties"], s["losses"],
                     s["win_rate"], *ci("win_rate_ci"), s["expected_wins"], *ci("expected_wins_ci"),
                     s["bt"], *ci("bt_ci")])
    return columns, rows


def control_table(report: dict) -> tuple[list[str], list[list[Any]]]:
    control = report.get("control")
    columns = ["share", "ci_low", "ci_high", "n_judgments", "n_reference_won", "n_system_won", "n_tie",
               "n_neither", "n_invalid"]
    return columns, ([[control.get(c) for c in columns]] if control else [])


#: Name in the URL -> table builder.
TABLES: dict[str, Callable[[dict], tuple[list[str], list[list[Any]]]]] = {
    "coefficients": coefficients_table,
    "pairwise_kappa": pairwise_kappa_table,
    "by_phenomenon": by_phenomenon_table,
    "control": control_table,
    "ranking": ranking_table,
}
