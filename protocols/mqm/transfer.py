"""The MQM protocol in exports and imports: spans with categories; Google's MQM TSV."""
from __future__ import annotations

from typing import Any

from protocols.spans.transfer import SpanTransfer
from studies.definition import taxonomy as tx


class MqmTransfer(SpanTransfer):
    exports_mqm_tsv = True

    def rated_row_problems(self, row: Any) -> list[str]:
        problems = []
        if row.spans is None:
            problems.append(f"line {row.line}: spans is empty in an mqm study ([] = no error)")
        for k, span in enumerate(row.spans or []):
            if not str(span.get("category", "")).strip():
                problems.append(f"line {row.line}: spans[{k}].category: required in an mqm study")
        return problems

    def import_settings(self, rows: list[Any], judgments: list[Any], settings: dict[str, Any]) -> None:
        """Also the categories used beyond the study's taxonomy (or the default one)."""
        super().import_settings(rows, judgments, settings)
        spans = [span for r in rows for span in (r.spans or [])]
        taxonomy = tx.normalise_taxonomy(settings["taxonomy"]) if settings.get("taxonomy") else tx.DEFAULT_MQM_TAXONOMY
        known = {c["name"].lower() for c in taxonomy}
        missing = [c for c in dict.fromkeys(str(span.get("category", "")).strip() for span in spans)
                   if c and c.lower() not in known]
        if missing:
            settings["taxonomy"] = list(taxonomy) + [
                {"name": c, "description": "(a category of the imported file)", "examples": []} for c in missing]
