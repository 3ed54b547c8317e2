"""Suggested error spans (ESA^AI / MQM^AI) in the span protocols: their settings and the fates in an answer.

Zouhar, Kocmi & Sachan (NAACL 2025), *AI-Assisted Human Evaluation of Machine Translation*:
annotators see a quality-estimation system's error spans and keep, edit or delete each.
An answer on an assisted item carries, beside its ``annotations``, ``suggestions``: every
suggestion's id mapped to ``{"fate": "kept"}``, ``{"fate": "deleted"}`` or ``{"fate": "edited",
"start", "end", "severity", "category" (MQM), "side"}`` (the edited span). The stored answer's
spans are the annotator's own plus the kept and edited ones, so scores and agreement read them
as any answer; ``answer["prefill"]`` keeps whether the item was assisted and every fate.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from studies.definition.prefill import FATES
from studies.importing.span_checks import SPAN_FIELDS, category_names, overlap_problems, sorted_spans, span_checked

if TYPE_CHECKING:
    from studies.definition.prefill import Shown
    from studies.models import Candidate, Study

#: The span protocols' own settings for suggestions (Study.protocol_settings; docs/ai-assistance.md).
PREFILL_SETTINGS: dict[str, Any] = {
    "prefill_share": {
        "type": "number", "minimum": 0, "maximum": 1, "default": 0.5,
        "description": "Share of items shown with suggested error spans (import_prefill), drawn per annotator "
                       "and item from the study's seed; the rest are annotated unassisted."},
    "prefill_decoys": {
        "type": "number", "minimum": 0, "maximum": 0.5, "default": 0.0,
        "description": "Share of all suggestions that are decoys: spans placed on text the data marks clean, "
                       "shown like the others, to measure how often annotators keep a suggestion unchecked."},
    "prefill_skip_clean": {
        "type": "number", "minimum": 0, "maximum": 1, "default": 0.0,
        "description": "Share of the items on which the suggestions' source marks every candidate clean that are not "
                       "handed out (drawn per item from the study's seed; 1: all of them, 0: none). Fixed once an item "
                       "has been handed out; their spam copies and probes are handed out as usual."},
}

SUGGESTIONS_SCHEMA: dict[str, Any] = {
    "type": "object", "description": "Every suggestion shown (GET next: suggestions[].id) mapped to its fate.",
    "additionalProperties": {
        "type": "object", "required": ["fate"],
        "properties": {"fate": {"enum": list(FATES)}, "start": {"type": "integer"}, "end": {"type": "integer"},
                       "side": {"enum": ["target", "source"]}, "severity": {"type": "string"},
                       "category": {"type": "string"}}},
}


def prefill_settings_schema() -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "properties": dict(PREFILL_SETTINGS)}


class SpanPrefill:
    """The span protocols' part of suggestions; ESA and MQM set :attr:`takes_prefill`."""

    name: ClassVar[str] = ""
    takes_prefill: ClassVar[bool] = False
    extra_answer_fields: ClassVar[tuple[str, ...]] = ("suggestions",)

    if TYPE_CHECKING:  # the spec's own (protocols/spec.py), declared for the type checker
        def uses_spans(self, study: Study) -> bool: ...
        def severities(self, study: Study) -> list[str]: ...
        def source_spans_allowed(self, study: Study) -> bool: ...

    def prefill_problem(self, study: Study) -> str | None:
        if not self.takes_prefill:
            return f"a {self.name} study takes no suggested error spans (ESA and MQM studies do)."
        if not self.uses_spans(study):
            return f"this {self.name} study marks no error spans (a score alone), so it takes no suggested spans."
        return None

    def answer_with_suggestions(self, study: Study, *, shown: Shown | None, candidates: dict[str, Candidate],
                                payload: dict[str, Any], answer: dict[str, Any],
                                errors: dict[str, list[str]]) -> dict[str, Any]:
        field = "suggestions"
        if shown is None:
            if field in payload:
                errors[field] = ["This study shows no suggestions."]
            return answer
        raw = payload.get(field)
        by_id = {s.public_id: s for s in shown.suggestions}
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            errors[field] = ["Must be an object mapping every suggestion id to {\"fate\": \"kept\" | \"edited\" | "
                             "\"deleted\"}."]
            return answer
        unknown = [k for k in raw if k not in by_id]
        if unknown:
            errors.setdefault(field, []).append(
                f"Unknown suggestion id(s) for this item: {', '.join(map(str, unknown))}.")
        missing = [k for k in by_id if k not in raw]
        if missing:
            errors.setdefault(field, []).append(
                f"Every suggestion shown needs a fate (kept, edited or deleted); {len(missing)} missing "
                f"({', '.join(missing)}).")
        public_of = {c.pk: pid for pid, c in candidates.items()}
        categories, severities = category_names(study), self.severities(study)
        fates: dict[str, dict[str, Any]] = {}
        added: dict[int, list[dict[str, Any]]] = {}
        for sid, suggestion in by_id.items():
            entry = raw.get(sid)
            if entry is None:
                continue
            where = f"{field}.{sid}"
            if not isinstance(entry, dict):
                errors.setdefault(field, []).append(f"{where}: must be an object with a fate.")
                continue
            fate = entry.get("fate")
            if fate not in FATES:
                errors.setdefault(field, []).append(f"{where}.fate: must be one of {', '.join(FATES)}.")
                continue
            rest = {k: v for k, v in entry.items() if k != "fate"}
            record: dict[str, Any] = {"candidate": suggestion.candidate_id, "fate": fate}
            if fate == "edited":
                extra = sorted(set(rest) - SPAN_FIELDS)
                if extra:
                    errors.setdefault(field, []).append(f"{where}: unknown field(s) {', '.join(extra)}.")
                    continue
                cand = candidates[public_of[suggestion.candidate_id]]
                texts = {"target": cand.text, "source": cand.item.source or ""}
                checked, problems = span_checked(rest, study, texts, categories, severities, where,
                                                 source_allowed=self.source_spans_allowed(study))
                if checked is None:
                    errors.setdefault(field, []).extend(problems)
                    continue
                record["edit"] = checked
                added.setdefault(suggestion.candidate_id, []).append(checked)
            elif rest:
                errors.setdefault(field, []).append(
                    f"{where}: a {fate} suggestion takes no other field (got {', '.join(sorted(rest))}).")
                continue
            elif fate == "kept":
                added.setdefault(suggestion.candidate_id, []).append(suggestion.as_span())
            fates[sid] = record
        annotations = answer.get("annotations") or {}
        for pk, spans in added.items():
            entry = annotations.get(str(pk))
            if entry is None:
                continue
            merged = list(entry.get("spans") or []) + spans
            for problem in overlap_problems(study, merged, f"candidate {public_of[pk]}"):
                errors.setdefault(field, []).append(problem)
            entry["spans"] = sorted_spans(merged)
        if errors.get(field):
            return answer
        return {**answer, "prefill": {"assisted": shown.assisted, "suggestions": fates}}


def with_suggestions(answer_schema: dict[str, Any]) -> dict[str, Any]:
    """An answer schema with the optional ``suggestions`` field (the fates of the suggestions shown)."""
    return {**answer_schema, "properties": {**answer_schema.get("properties", {}), "suggestions": SUGGESTIONS_SCHEMA}}
