"""The pairwise protocol in exports and imports: a score (and spans) per candidate row, the preference in
the ``choice`` column (the preferred system, or ``tie``) of both rows."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from annotation.importing.base import JudgmentImportError
from protocols.spans.transfer import SpanTransfer

if TYPE_CHECKING:
    from studies.models import Candidate, Item


class PairwiseTransfer(SpanTransfer):
    imports_scores = True

    def rated_row_problems(self, row: Any) -> list[str]:
        return [f"line {row.line}: score is empty in a pairwise study"] if row.score is None else []

    def import_answer(self, rows: list[Any], candidates: dict[tuple[int, str], Candidate], item: Item) -> dict[str, Any]:
        answer = super().import_answer(rows, candidates, item)
        preferred = rows[0].choice
        if preferred == "tie":
            answer["choice"] = {"option": "tie"}
        elif preferred:
            chosen = candidates.get((item.pk, preferred))
            if chosen is None:
                raise JudgmentImportError([f"line {rows[0].line}: choice {preferred!r} is neither 'tie' nor a system "
                                           f"of item {item.external_id!r}"])
            answer["choice"] = {"candidate": chosen.pk}
        return answer
