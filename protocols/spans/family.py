"""What the span protocols (MQM, ESA and its DA form) share: per-candidate annotations.

An answer gives every candidate its error spans (``[]`` confirms there is none)
and, where the protocol scores, a 0-100 score; the spans' rules are those of
``studies.importing.span_checks`` (the same rules check a tutorial's gold).
"""
from __future__ import annotations

from typing import Any, ClassVar

from studies.definition import taxonomy as tx
from studies.importing.span_checks import category_names, overlap_problems, sorted_spans, span_checked
from studies.models import Candidate, Study

from protocols.answers import answer_body
from protocols.spec import ProtocolSpec
from protocols.spans.pages import SpanPages
from protocols.spans.prefill import SpanPrefill
from protocols.spans.quality import SpanQuality
from protocols.spans.reports import SpanReports
from protocols.spans.transfer import SpanTransfer

SPAN_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["start", "end", "severity"], "additionalProperties": False,
    "properties": {
        "start": {"type": "integer", "minimum": 0, "description": "Character offset where the error starts."},
        "end": {"type": "integer", "minimum": 0, "description": "Character offset after its last character."},
        "side": {"enum": ["target", "source"], "default": "target"},
        "category": {"type": "string", "description": "One of the study's categories (MQM)."},
        "severity": {"type": "string", "description": "One of the study's severities."},
        "note": {"type": "string"},
    },
}


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float))


class SpanFamily(SpanPrefill, SpanPages, SpanTransfer, SpanReports, SpanQuality, ProtocolSpec):
    answer_fields: ClassVar[tuple[str, ...]] = ("annotations",)
    candidates_per_item: ClassVar[tuple[int, int | None]] = (1, None)
    per_candidate_annotations = True
    #: The severities of a study that names none.
    default_severities: ClassVar[tuple[str, ...]] = ()
    #: The severities a study may name.
    allowed_severities: ClassVar[tuple[str, ...]] = tuple(tx.ALLOWED_SEVERITIES)

    @classmethod
    def annotations_schema(cls, *, score: bool) -> dict[str, Any]:
        entry: dict[str, Any] = {"type": "object", "additionalProperties": False,
                                 "properties": {"spans": {"type": "array", "items": SPAN_SCHEMA}}}
        if score:
            entry["properties"]["score"] = {"type": "number", "minimum": tx.SCORE_MIN, "maximum": tx.SCORE_MAX}
        return answer_body({"annotations": {"type": "object", "additionalProperties": entry,
                                            "description": "Every candidate's public id mapped to its annotation."}},
                           required=["annotations"])

    def severities(self, study: Study) -> list[str]:
        return list(study.severities or self.default_severities)

    def study_errors(self, study: Study) -> dict[str, list[str]]:
        if study.severities:
            problems = tx.severities_errors(study.severities, self.name, "severities")
            if problems:
                return {"severities": problems}
        return {}

    def validate_answer(self, study: Study, *, item_source: str, candidates: dict[str, Candidate],
                        payload: dict[str, Any], errors: dict[str, list[str]]) -> dict[str, Any] | None:
        field = "annotations"
        value = payload[field]
        uses_spans, uses_score = self.uses_spans(study), self.uses_score(study)
        if not isinstance(value, dict):
            errors[field] = ["Must be an object mapping every candidate id to {\"spans\": […]"
                             + (", \"score\": 0–100" if uses_score else "") + "}."]
            return None
        unknown = [k for k in value if k not in candidates]
        missing = [k for k in candidates if k not in value]
        if unknown:
            errors.setdefault(field, []).append(f"Unknown candidate id(s) for this item: {', '.join(map(str, unknown))}.")
        if missing:
            errors.setdefault(field, []).append(
                f"Every candidate needs an answer; {len(missing)} missing ({', '.join(missing)}).")
        categories = category_names(study)
        severities = self.severities(study)
        source_allowed = self.source_spans_allowed(study)
        out: dict[str, dict] = {}
        for key, entry in value.items():
            if key not in candidates:
                continue
            where = f"candidate {key}"
            if not isinstance(entry, dict):
                errors.setdefault(field, []).append(f"{where}: must be an object.")
                continue
            allowed = ({"spans"} if uses_spans else set()) | ({"score"} if uses_score else set())
            extra = sorted(set(entry) - allowed)
            if extra:
                errors.setdefault(field, []).append(
                    f"{where}: unknown field(s) {', '.join(extra)} (this study takes {', '.join(sorted(allowed))}).")
            spans: list[dict] = []
            if uses_spans:
                raw = entry.get("spans")
                if not isinstance(raw, list):
                    errors.setdefault(field, []).append(
                        f"{where}.spans: required, a list of error spans ([] confirms there is no error).")
                    raw = []
                texts = {"target": candidates[key].text, "source": item_source}
                for k, span in enumerate(raw):
                    checked, problems = span_checked(span, study, texts, categories, severities, f"{where}.spans[{k}]",
                                                     source_allowed=source_allowed)
                    if checked is None:
                        errors.setdefault(field, []).extend(problems)
                    else:
                        spans.append(checked)
                for problem in overlap_problems(study, spans, where):
                    errors.setdefault(field, []).append(problem)
            score = None
            if uses_score:
                score = entry.get("score")
                if score is None:
                    errors.setdefault(field, []).append(
                        f"{where}.score: required, a number from {tx.SCORE_MIN} to {tx.SCORE_MAX}.")
                elif not _is_number(score) or not tx.SCORE_MIN <= score <= tx.SCORE_MAX or score != score:
                    errors.setdefault(field, []).append(
                        f"{where}.score: must be a number from {tx.SCORE_MIN} to {tx.SCORE_MAX}.")
                    score = None
            result: dict[str, Any] = {"spans": sorted_spans(spans)}
            if uses_score:
                result["score"] = score
            out[str(candidates[key].pk)] = result
        if errors.get(field):
            return None
        return {"annotations": dict(sorted(out.items(), key=lambda kv: int(kv[0])))}
