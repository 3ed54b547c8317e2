"""The mqm protocol: quality control, the spam check in words."""
from __future__ import annotations

from protocols.spans.quality import SpanQuality


class MqmQuality(SpanQuality):
    spam_rule_text = "passes only when a major or critical span overlaps the generated error"
