"""The ranking protocol: the protocol's quality control: what a control or spam item checks and how a check passes (annotation.quality, studies.controls)."""
from __future__ import annotations

from protocols.parts.quality import QualityRules


class RankingQuality(QualityRules):
    pass
