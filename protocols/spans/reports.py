"""What the span protocols share: how the protocol's answers become ratings for agreement and scores for rankings, and what the reports and methods text say (evaluators.reports, research).

Their report is ``evaluators.reports.span_report``'s: one unit per segment (item ×
candidate), a segment score per rating, the WMT ranking over those scores.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

    def protocol_blocks(self, frame: pd.DataFrame, *, spam: str, excluded: str, seed: int) -> dict[str, Any]:
        """Studies with suggested spans: the ``prefill`` block (time, acceptance of suggestions and decoys, score
        difference, agreement with the AI; evaluators/reports/prefill.py)."""
        from evaluators.reports.prefill import prefill_block

        block = prefill_block(frame)
        return {"prefill": block} if block else {}

    def facts_kind(self, uses_spans: bool) -> str:
        return "span" if uses_spans else "da"

    def file_facts_kind(self) -> str | None:
        return None  # spans or DA: a file does not record whether the study asked for spans


class ScoreReports(SpanReports):
    """A 0–100 score per candidate used as given, higher is better (ESA's with spans, DA's without): ESA and pairwise."""

    answer_column = "score"

    def score_kind(self, uses_spans: bool) -> str:
        return "esa" if uses_spans else "da"

    def score_scheme(self, weights: MqmWeights) -> dict[str, Any]:
        return {"name": "esa", "scale": [0, 100]}

    def tests_score_drop(self, uses_spans: bool) -> bool:
        return uses_spans  # control items: the scores of the copies with an injected error must drop


def slider_words(facts: dict[str, Any]) -> str:
    """WMT's slider, in the methods text only of judgments collected here (an imported file does not record it)."""
    from evaluators.reports.facts import how

    return " on a slider anchored at 0, 33, 66 and 100" if how(facts) == "native" else ""
