"""What the span protocols share in exports and imports: per candidate row its spans (JSON) and score."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from protocols.parts.transfer import TransferRules
from studies.definition import taxonomy as tx

if TYPE_CHECKING:
    from studies.models import Candidate, Item


class SpanTransfer(TransferRules):
    #: The rows' ``score`` column is part of the answer.
    imports_scores: ClassVar[bool] = False
    default_severities: ClassVar[tuple[str, ...]]  # each protocol's own (protocols/spans/family.py)

    def import_problems(self, judgment: Any) -> list[str]:
        """A judgment rates at least one candidate; what each rated row needs is the protocol's."""
        rated = [r for r in judgment.rows if r.score is not None or r.spans is not None]
        if not rated:
            return [f"line {judgment.rows[0].line}: judgment {judgment.key!r} rates no candidate (score and spans "
                    "are empty on all its rows)"]
        return [problem for row in rated for problem in self.rated_row_problems(row)]

    def rated_row_problems(self, row: Any) -> list[str]:
        return []

    def import_settings(self, rows: list[Any], judgments: list[Any], settings: dict[str, Any]) -> None:
        """Severities used beyond the defaults are added, so the study describes every answer it holds."""
        spans = [span for r in rows for span in (r.spans or [])]
        severities = list(settings.get("severities") or self.default_severities)
        extra = [s for s in dict.fromkeys(span["severity"] for span in spans) if s not in severities]
        if extra:
            settings["severities"] = [s for s in tx.ALLOWED_SEVERITIES if s in severities + extra]

    def import_answer(self, rows: list[Any], candidates: dict[tuple[int, str], Candidate], item: Item) -> dict[str, Any]:
        annotations: dict[int, dict[str, Any]] = {}
        for r in rows:
            if r.score is None and r.spans is None:
                continue  # not rated in this judgment
            entry: dict[str, Any] = {"spans": r.spans or []}
            if self.imports_scores:
                entry["score"] = r.score
            annotations[candidates[(item.pk, r.system)].pk] = entry
        return {"annotations": {str(pk): entry for pk, entry in sorted(annotations.items())}}
