"""The judgment protocol in exports and imports: the label(s), joined by "+", repeated on each row."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocols.parts.transfer import TransferRules

if TYPE_CHECKING:
    from studies.models import Candidate, Item


class JudgmentTransfer(TransferRules):
    def claims_unnamed_export(self, rows: list[Any]) -> bool:
        return True  # asked last of the three: rows without ranks or a choice hold labels

    def import_problems(self, judgment: Any) -> list[str]:
        first = judgment.rows[0]
        return [] if first.label else [f"line {first.line}: label is empty in a judgment study"]

    def import_settings(self, rows: list[Any], judgments: list[Any], settings: dict[str, Any]) -> None:
        seen: list[str] = list(settings.get("labels", []))
        multi = False
        for j in judgments:
            parts = j.rows[0].label.split("+")
            multi = multi or len(parts) > 1
            seen.extend(p for p in parts if p not in seen)
        settings["labels"] = seen
        settings["multi_label"] = bool(settings.get("multi_label")) or multi

    def import_answer(self, rows: list[Any], candidates: dict[tuple[int, str], Candidate], item: Item) -> dict[str, Any]:
        return {"labels": rows[0].label.split("+")}
