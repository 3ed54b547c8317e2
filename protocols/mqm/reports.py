"""The mqm protocol: how the protocol's answers become ratings for agreement and scores for rankings, and what the reports and methods text say (evaluators.reports, research)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocols.spans.reports import SpanReports

if TYPE_CHECKING:
    import pandas as pd

    from evaluators.stats.mqm import MqmWeights


class MqmReports(SpanReports):
    """MQM points: the sum of a rating's error weights, lower is better; spans carry a category."""

    answer_column = "spans"
    higher_is_better = False
    spans_have_categories = True

    def file_uses_spans(self, spans_seen: bool) -> bool:
        return True  # an MQM rating without spans is a segment with no error

    def segment_scores(self, ratings: pd.DataFrame, weights: MqmWeights) -> pd.DataFrame:
        from evaluators.reports.span_report import error_rows
        from evaluators.stats.mqm import mqm_segment_scores

        scores = mqm_segment_scores(error_rows(ratings), weights)
        return scores.rename(columns={"segment": "item", "rater": "annotator"})[["system", "item", "annotator", "score"]]

    def score_scheme(self, weights: MqmWeights) -> dict[str, Any]:
        return {**weights.describe(), "z": "per-annotator z-scores of −MQM (higher is better)"}

    def score_methods(self, uses_spans: bool) -> dict[str, str]:
        from evaluators.reports.span_report import METHODS

        return {"score": "MQM: a rating's score is the sum of its error weights (Freitag et al. 2021; the scheme and "
                         "every weight in ranking.score), 0 = no error, lower is better. " + METHODS["score"],
                "ranking": METHODS["ranking"] + " MQM points enter the ranking negated (higher is better there)."}

    def comparison_score_notes(self) -> tuple[str, str]:
        return " negated (lower MQM is better)", ", negated"
