"""What the span protocols share: how the protocol's answers become ratings for agreement and scores for rankings, and what the reports and methods text say (evaluators.reports, research)."""
from __future__ import annotations

from protocols.parts.reports import ReportsRules


class SpanReports(ReportsRules):
    pass
