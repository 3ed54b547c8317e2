"""The choice protocol in exports and imports: the chosen system or option, repeated on each row."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from annotation.importing.base import JudgmentImportError
from protocols.parts.transfer import TransferRules
from studies.models import CHOICE_OPTIONS

if TYPE_CHECKING:
    from studies.models import Candidate, Item


class ChoiceTransfer(TransferRules):
    def claims_unnamed_export(self, rows: list[Any]) -> bool:
        return any(r.choice for r in rows)

    def import_problems(self, judgment: Any) -> list[str]:
        first = judgment.rows[0]
        return [] if first.choice else [f"line {first.line}: choice is empty in a choice study"]

    def import_settings(self, rows: list[Any], judgments: list[Any], settings: dict[str, Any]) -> None:
        used = {j.rows[0].choice for j in judgments} & set(CHOICE_OPTIONS)
        settings["options"] = sorted(set(settings.get("options", [])) | used)

    def import_answer(self, rows: list[Any], candidates: dict[tuple[int, str], Candidate], item: Item) -> dict[str, Any]:
        choice = rows[0].choice
        if choice in CHOICE_OPTIONS:
            return {"choice": {"option": choice}}
        chosen = candidates.get((item.pk, choice))
        if chosen is None:
            raise JudgmentImportError([f"line {rows[0].line}: choice {choice!r} is neither an option nor a system "
                                       f"of item {item.external_id!r}"])
        return {"choice": {"candidate": chosen.pk}}
