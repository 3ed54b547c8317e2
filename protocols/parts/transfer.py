"""How judgments of the protocol are written out (export_judgments) and read back in (import_judgments).

An export row (``annotation.importing.judgments``: one row per judgment and candidate) carries the
answer columns ``rank``, ``choice``, ``label``, ``score``, ``spans``; a protocol reads its answer
back from the rows of one judgment and says which settings the rows imply.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from studies.models import Candidate, Item


class TransferRules:
    name: ClassVar[str] = ""
    #: ``export_judgments --format mqm-tsv`` writes this protocol's studies (Google's MQM TSV needs categories).
    exports_mqm_tsv: ClassVar[bool] = False

    def claims_unnamed_export(self, rows: list[Any]) -> bool:
        """Whether an export without a ``protocol`` column is of this protocol (asked in registration order;
        exports written before the column existed are of the label and preference protocols only)."""
        return False

    def import_problems(self, judgment: Any) -> list[str]:
        """Problems of one imported judgment's rows for this protocol, each starting ``line N:``."""
        return []

    def import_settings(self, rows: list[Any], judgments: list[Any], settings: dict[str, Any]) -> None:
        """Settings an export does not carry, inferred from its rows unless the study file gives them (in place)."""

    def import_answer(self, rows: list[Any], candidates: dict[tuple[int, str], Candidate], item: Item) -> dict[str, Any]:
        """The stored answer of one imported judgment (``candidates``: (item pk, system) → candidate)."""
        raise NotImplementedError(f"{type(self).__name__} cannot import judgments")
