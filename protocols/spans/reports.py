"""What the span protocols share: how the protocol's answers become ratings for agreement and scores for rankings, and what the reports and methods text say (evaluators.reports, research).

Their report is ``evaluators.reports.span_report``'s: one unit per segment (item ×
candidate), a segment score per rating, the WMT ranking over those scores.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from protocols.parts.reports import ReportsRules

if TYPE_CHECKING:
    import pandas as pd

    from evaluators.stats.mqm import MqmWeights


class SpanReports(ReportsRules):
    report_unit = "segments (item × candidate)"
    has_ties = False

    def segment_scores(self, ratings: pd.DataFrame, weights: MqmWeights) -> pd.DataFrame:
        """The 0–100 scores as the raters gave them."""
        from evaluators.reports.span_report import given_scores

        return given_scores(ratings)

    def facts_kind(self, uses_spans: bool) -> str:
        return "span" if uses_spans else "da"

    def file_facts_kind(self) -> str | None:
        return None  # spans or DA: a file does not record whether the study asked for spans
