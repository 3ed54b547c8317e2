"""The ranking protocol in exports and imports: one rank per candidate row."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocols.parts.transfer import TransferRules

if TYPE_CHECKING:
    from studies.models import Candidate, Item


class RankingTransfer(TransferRules):
    def claims_unnamed_export(self, rows: list[Any]) -> bool:
        return any(r.rank is not None for r in rows)

    def import_problems(self, judgment: Any) -> list[str]:
        empty = [r.line for r in judgment.rows if r.rank is None]
        return [f"line {empty[0]}: rank is empty in a ranking study"] if empty else []

    def import_settings(self, rows: list[Any], judgments: list[Any], settings: dict[str, Any]) -> None:
        tied = any(len({r.rank for r in j.rows}) < len(j.rows) for j in judgments)
        settings["allow_ties"] = bool(settings.get("allow_ties")) or tied

    def import_answer(self, rows: list[Any], candidates: dict[tuple[int, str], Candidate], item: Item) -> dict[str, Any]:
        ranks = {candidates[(item.pk, r.system)].pk: r.rank for r in rows}
        return {"ranks": {str(pk): rank for pk, rank in sorted(ranks.items())}}
