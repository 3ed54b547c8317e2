"""The esa protocol: quality control, the spam check in words."""
from __future__ import annotations

from protocols.spans.quality import SpanQuality


class EsaQuality(SpanQuality):
    compares_control_scores = True
    spam_rule_text = ("passes only when a major span overlaps the generated error (DA: when the copy scores lower "
                      "than its original, counted on the quality page)")
