"""The pairwise protocol's spec: answers, settings and what a study of it is."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from studies.definition.taxonomy import DEFAULT_MQM_TAXONOMY, ESA_SEVERITIES, MQM_SEVERITIES, normalise_taxonomy
from studies.models import Candidate, Study

from protocols.pairwise.demo import build_pairwise_sentences
from protocols.pairwise.pages import PairwisePages
from protocols.pairwise.quality import PairwiseQuality
from protocols.pairwise.reports import PairwiseReports
from protocols.pairwise.transfer import PairwiseTransfer
from protocols.spans.family import SpanFamily

#: The preference an answer may give besides one of the two candidates' public ids.
TIE = "tie"

SETTINGS_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "spans": {"enum": ["none", "esa", "mqm"], "default": "none",
                  "description": "Error spans before the scores: none, ESA's (severity only) or MQM's (category "
                                 "and severity, from the study's taxonomy)."},
        "preference": {"enum": ["off", "optional", "required"], "default": "optional",
                       "description": "Which of the two is better, asked after the scores."},
        "ties": {"type": "boolean", "default": True,
                 "description": "The preference may be a tie (\"tie\")."},
    },
}


class Pairwise(PairwisePages, PairwiseTransfer, PairwiseReports, PairwiseQuality, SpanFamily):
    name = "pairwise"
    label = "Pairwise (two candidates side by side: 0–100 scores, optional spans and preference)"
    answer_fields = ("annotations", "preference")
    candidates_per_item = (2, 2)
    settings_schema = SETTINGS_SCHEMA

    answer_schema = SpanFamily.annotations_schema(score=True)
    answer_schema = {**answer_schema, "properties": {
        **answer_schema["properties"],
        "preference": {"type": ["string", "null"],
                       "description": "The better candidate's public id, \"tie\" (when the study allows ties), "
                                      "or null / absent when the study does not require one."}}}

    def demo_studies(self) -> list[Callable[[], dict[str, Any]]]:
        return [build_pairwise_sentences]

    def spans_kind(self, study: Study) -> str:
        return str(self.setting(study, "spans"))

    def uses_spans(self, study: Study) -> bool:
        return self.spans_kind(study) != "none"

    def uses_score(self, study: Study) -> bool:
        return True

    def taxonomy(self, study: Study) -> list[dict[str, Any]]:
        if self.spans_kind(study) != "mqm":
            return []
        return normalise_taxonomy(study.taxonomy) if study.taxonomy else DEFAULT_MQM_TAXONOMY

    def severities(self, study: Study) -> list[str]:
        kind = self.spans_kind(study)
        if kind == "none":
            return []
        return list(study.severities or (MQM_SEVERITIES if kind == "mqm" else ESA_SEVERITIES))

    def source_spans_allowed(self, study: Study) -> bool:
        return self.spans_kind(study) == "mqm" and bool(study.show_source)

    def study_errors(self, study: Study) -> dict[str, list[str]]:
        errors = super().study_errors(study) if self.uses_spans(study) else {}
        if self.spans_kind(study) != "mqm" and study.taxonomy:
            errors.setdefault("taxonomy", []).append("A pairwise study takes a taxonomy only with MQM spans "
                                                     "(protocol_settings.spans = \"mqm\").")
        return errors

    def validate_answer(self, study: Study, *, item_source: str, candidates: dict[str, Candidate],
                        payload: dict[str, Any], errors: dict[str, list[str]]) -> dict[str, Any] | None:
        if len(candidates) != 2:
            errors["body"] = [f"A pairwise item has two candidates; this one has {len(candidates)}."]
            return None
        if "annotations" not in payload:
            errors["annotations"] = ["This field is required: both candidates' scores."]
            return None
        answer = super().validate_answer(study, item_source=item_source, candidates=candidates, payload=payload,
                                         errors=errors)
        preference = self._preference(study, candidates, payload.get("preference"), errors)
        if answer is None or errors.get("preference"):
            return None
        if preference is not None:
            # Stored as a choice answer is, so exports, the choice column and its readers take it as it is.
            answer["choice"] = preference
        return answer

    def _preference(self, study: Study, candidates: dict[str, Candidate], value: Any,
                    errors: dict[str, list[str]]) -> dict[str, Any] | None:
        asked = self.setting(study, "preference")
        ties = bool(self.setting(study, "ties"))
        if value is None:
            if asked == "required":
                errors["preference"] = ["Required: the better candidate's id" + (" or \"tie\"." if ties else ".")]
            return None
        if asked == "off":
            errors["preference"] = ["This study does not ask for a preference."]
            return None
        if value == TIE:
            if not ties:
                errors["preference"] = ["This study does not allow ties: choose one of the two candidates."]
                return None
            return {"option": TIE}
        if isinstance(value, str) and value in candidates:
            return {"candidate": candidates[value].pk}
        errors["preference"] = [f"{value!r} is neither a candidate of this item" + (" nor \"tie\"." if ties else ".")]
        return None
