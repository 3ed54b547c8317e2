"""The pairwise protocol in the reports: its 0-100 scores are reported as ESA's (or DA's, without spans)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evaluators.reports.facts import how
from evaluators.reports.span_paper import CITATIONS, severity_words
from evaluators.reports.span_report import METHODS
from protocols.spans.reports import SpanReports

if TYPE_CHECKING:
    from evaluators.stats.mqm import MqmWeights


class PairwiseReports(SpanReports):
    """Each candidate's 0–100 score as given, higher is better; spans, when the study asks for them."""

    comparison_score_label = "0–100 score (pairwise), higher is better"
    answer_column = "score"

    def score_kind(self, uses_spans: bool) -> str:
        return "esa" if uses_spans else "da"

    def score_scheme(self, weights: MqmWeights) -> dict[str, Any]:
        return {"name": "esa", "scale": [0, 100]}

    def score_methods(self, uses_spans: bool) -> dict[str, str]:
        return {"score": "Pairwise: the two candidates of an item shown side by side, each given a 0–100 score "
                         "used as given; higher is better. " + METHODS["score"]}

    def tests_score_drop(self, uses_spans: bool) -> bool:
        return uses_spans

    def methods_protocol_sentence(self, kind: str, facts: dict[str, Any], report: dict[str, Any]) -> str:
        native = how(facts) == "native"
        slider = " on a slider anchored at 0, 33, 66 and 100" if native else ""
        spans = ""
        if (report.get("policies") or {}).get("uses_spans", True):
            spans = f", after marking error spans with {severity_words(facts)}"
        return (f"Annotators saw two candidate translations of each item side by side and scored each from 0 to "
                f"100{slider}{spans} (pairwise assessment as in Appraise; anchors of {CITATIONS['esa']}).")
