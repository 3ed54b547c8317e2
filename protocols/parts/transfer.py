"""How judgments of the protocol are written out (export_judgments) and read in (import_judgments)."""
from __future__ import annotations

from typing import ClassVar


class TransferRules:
    name: ClassVar[str] = ""
