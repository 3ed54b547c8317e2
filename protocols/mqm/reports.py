"""The mqm protocol: how the protocol's answers become ratings for agreement and scores for rankings, and what the reports and methods text say (evaluators.reports, research)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocols.spans.reports import SpanReports

if TYPE_CHECKING:
    import pandas as pd

    from evaluators.stats.mqm import MqmWeights


class MqmReports(SpanReports):
    """MQM points: the sum of a rating's error weights, lower is better; spans carry a category."""

    comparison_score_label = "MQM points, lower is better"

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

    def methods_protocol_sentence(self, kind: str, facts: dict[str, Any], report: dict[str, Any]) -> str:
        from evaluators.reports import span_page
        from evaluators.reports.facts import how
        from evaluators.reports.span_paper import CITATIONS, DISCOURSE_NOTE, listing, severity_words

        categories = facts.get("categories") or {}
        from_file = categories.get("from") == "imported file"
        taxonomy = list(categories.get("names") or [])
        branches = sorted({span_page.top_level(c) for c in taxonomy})
        discourse = [c.split("/", 1)[1] for c in taxonomy if span_page.is_discourse(c) and "/" in c]
        score = (report.get("ranking") or {}).get("score") or {}
        weights = span_page.weights_text(score) if score.get("weights") else "the WMT weights"
        if taxonomy:
            taxonomy_words = (f"the {len(taxonomy)} categories used in the file ({listing(branches)})" if from_file
                              else f"a typology of {len(taxonomy)} categories ({listing(branches)})")
        else:
            taxonomy_words = "the study's typology"
        if discourse:
            taxonomy_words += (f", including {DISCOURSE_NOTE} for errors that only show across sentences "
                               f"({listing([d.lower() for d in discourse])})")
        omissions = " (omissions as spans in the source)" if how(facts) == "native" else ""
        return (f"Annotators marked every error span in each candidate translation{omissions} with a category from "
                f"{taxonomy_words} and {severity_words(facts)}, or confirmed that it had no error: Multidimensional "
                f"Quality Metrics (MQM) as in {CITATIONS['mqm']}. A segment's MQM score is the sum of its errors' "
                f"weights ({weights}; 0 = no error, lower is better).")

    def segment_scores_name(self) -> str:
        return "MQM scores"

    def z_scores_of(self) -> str:
        return " of −MQM"

    def score_unit_words(self) -> str:
        return "MQM points, lower is better"
