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
    #: Other tools' files that ``import_judgments --format NAME`` reads into a study of this protocol:
    #: name → what the file is (the report's ``facts.collection.format_name``). Read by :meth:`import_records`.
    import_formats: ClassVar[dict[str, str]] = {}

    def import_records(self, fmt: str, name: str, content: str) -> tuple[list[tuple[int, dict[str, Any]]], str]:
        """One of :attr:`import_formats` turned into this tool's export records, and a summary for the provenance.

        Each record is ``(line of the file, {export column: value})`` with the columns ``export_judgments``
        writes (docs/export.md; ``protocol`` set to this protocol), so the file then goes the export's way:
        the same checks, study and judgments, every problem named by the file's own line. A bad file raises
        ``annotation.importing.base.JudgmentImportError`` naming every problem by line and field.
        """
        raise NotImplementedError(f"{type(self).__name__} reads no other tool's file")

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
