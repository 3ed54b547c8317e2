"""The protocol's quality control: what a control or spam item checks and how a check passes (annotation.quality, studies.controls)."""
from __future__ import annotations

from typing import ClassVar


class QualityRules:
    name: ClassVar[str] = ""
