"""The ESA protocol in exports and imports: a score per candidate row, spans without categories."""
from __future__ import annotations

from typing import Any

from protocols.spans.transfer import SpanTransfer
from studies.definition import taxonomy as tx


class EsaTransfer(SpanTransfer):
    imports_scores = True

    def rated_row_problems(self, row: Any) -> list[str]:
        problems = []
        if row.score is None:
            problems.append(f"line {row.line}: score is empty in an esa study")
        for k, span in enumerate(row.spans or []):
            if span.get("category"):
                problems.append(f"line {row.line}: spans[{k}].category: ESA spans have no category")
            if span["severity"] not in tx.ESA_SEVERITIES:
                problems.append(f"line {row.line}: spans[{k}].severity: {span['severity']!r} is not an ESA "
                                f"severity ({', '.join(tx.ESA_SEVERITIES)})")
        return problems

    def import_settings(self, rows: list[Any], judgments: list[Any], settings: dict[str, Any]) -> None:
        """``esa_spans``: on when any span was marked (a DA export and an ESA export without a single error
        mark look the same; their numbers do too)."""
        if "esa_spans" not in settings:
            settings["esa_spans"] = any(r.spans for r in rows)
        super().import_settings(rows, judgments, settings)
