"""The judgment protocol: how the protocol's answers become ratings for agreement and scores for rankings, and what the reports and methods text say (evaluators.reports, research)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocols.parts.reports import ReportsRules

if TYPE_CHECKING:
    import pandas as pd


class JudgmentReports(ReportsRules):
    """Labels are not preferences: no system ranking, no reference contest, no ties."""

    report_unit = "items"
    answer_column = "label"
    has_ties = False

    def methods_design_words(self) -> str:
        return "labelled the candidate translation of each item"

    def agreement_ratings(self, frame: pd.DataFrame, *, ties: str, spam: str, excluded: str,
                          ranking_coding: str) -> tuple[pd.DataFrame, dict[str, Any]]:
        from evaluators.stats.ratings import judgment_to_labels

        # One label per judgment: the export repeats it on every candidate row.
        one = frame.drop_duplicates("judgment", keep="first")
        return judgment_to_labels(one, spam=spam, excluded=excluded, unit="item")
