"""The pairwise protocol: quality control, as ESA's (a control copy with one generated error)."""
from __future__ import annotations

from protocols.spans.quality import SpanQuality


class PairwiseQuality(SpanQuality):
    compares_control_scores = True
    spam_rule_text = ("passes only when a major span overlaps the generated error (without spans: when the copy "
                      "scores lower than its original, counted on the quality page)")
