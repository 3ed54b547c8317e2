"""The esa protocol: how the protocol's answers become ratings for agreement and scores for rankings, and what the reports and methods text say (evaluators.reports, research)."""
from __future__ import annotations

from typing import Any

from protocols.spans.reports import ScoreReports, slider_words


class EsaReports(ScoreReports):
    """The 0–100 score as given, higher is better; spans (when the study asks for them) have a severity only.
    Without spans the study is DA."""

    comparison_score_label = "ESA score, higher is better"

    def score_methods(self, uses_spans: bool) -> dict[str, str]:
        from evaluators.reports.span_report import METHODS

        if uses_spans:
            return {"score": "ESA: annotators mark minor/major error spans, then give the 0–100 score used as given "
                             "(Kocmi et al. 2024); higher is better. " + METHODS["score"]}
        return {"score": "DA: the 0–100 score as given, higher is better (Graham et al. 2013; WMT). " + METHODS["score"]}

    def methods_protocol_sentence(self, kind: str, facts: dict[str, Any], report: dict[str, Any]) -> str:
        from evaluators.reports.facts import how
        from evaluators.reports.span_paper import CITATIONS, severity_words

        native = how(facts) == "native"
        slider = slider_words(facts)
        if (report.get("policies") or {}).get("uses_spans", True):
            return (f"Annotators marked error spans in each candidate translation with {severity_words(facts)} and "
                    f"then scored the candidate from 0 to 100{slider}: Error Span Annotation (ESA; "
                    f"{CITATIONS['esa']}).")
        anchors = f", with ESA's anchors, {CITATIONS['esa']}" if native else ""
        verb = "scored each candidate translation from 0 to 100" if native else "gave each candidate translation a score"
        scale = "" if native else " (stored on a 0–100 scale)"
        return f"Annotators {verb}{slider}{scale} (direct assessment, {CITATIONS['da']}{anchors}; no error spans)."
