"""The esa protocol: how the protocol's answers become ratings for agreement and scores for rankings, and what the reports and methods text say (evaluators.reports, research)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocols.spans.reports import SpanReports

if TYPE_CHECKING:
    from evaluators.stats.mqm import MqmWeights


class EsaReports(SpanReports):
    """The 0–100 score as given, higher is better; spans (when the study asks for them) have a severity only.
    Without spans the study is DA."""

    answer_column = "score"

    def score_kind(self, uses_spans: bool) -> str:
        return "esa" if uses_spans else "da"

    def score_scheme(self, weights: MqmWeights) -> dict[str, Any]:
        return {"name": "esa", "scale": [0, 100]}

    def score_methods(self, uses_spans: bool) -> dict[str, str]:
        from evaluators.reports.span_report import METHODS

        if uses_spans:
            return {"score": "ESA: annotators mark minor/major error spans, then give the 0–100 score used as given "
                             "(Kocmi et al. 2024); higher is better. " + METHODS["score"]}
        return {"score": "DA: the 0–100 score as given, higher is better (Graham et al. 2013; WMT). " + METHODS["score"]}
