"""The choice protocol: how judgments of the protocol are written out (export_judgments) and read in (import_judgments)."""
from __future__ import annotations

from protocols.parts.transfer import TransferRules


class ChoiceTransfer(TransferRules):
    pass
