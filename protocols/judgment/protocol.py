"""The judgment protocol's spec."""
from __future__ import annotations

from typing import Any

from studies.models import Candidate, Study

from protocols.answers import answer_body
from protocols.spec import ProtocolSpec
from protocols.judgment.pages import JudgmentPages
from protocols.judgment.quality import JudgmentQuality
from protocols.judgment.reports import JudgmentReports
from protocols.judgment.transfer import JudgmentTransfer


class Judgment(JudgmentPages, JudgmentTransfer, JudgmentReports, JudgmentQuality, ProtocolSpec):
    name = "judgment"
    label = "Judgment (label one candidate)"
    answer_fields = ("label", "labels")
    candidates_per_item = (1, None)
    answer_schema = answer_body(
        {"label": {"type": "string", "minLength": 1, "description": "One of the study's labels."},
         "labels": {"type": "array", "minItems": 1, "uniqueItems": True, "items": {"type": "string"},
                    "description": "Several of the study's labels (multi-label studies only)."}},
        one_of=[{"required": ["label"]}, {"required": ["labels"]}])

    def study_errors(self, study: Study) -> dict[str, list[str]]:
        return {} if study.labels else {"labels": ["A judgment study needs at least one label."]}

    def validate_answer(self, study: Study, *, item_source: str, candidates: dict[str, Candidate],
                        payload: dict[str, Any], errors: dict[str, list[str]]) -> dict[str, Any] | None:
        if "label" in payload and "labels" in payload:
            errors["body"] = ["Send either label or labels, not both."]
            return None
        if "labels" in payload:
            field, value = "labels", payload["labels"]
            if not study.multi_label:
                errors["labels"] = ["This study takes a single label: send {\"label\": …}."]
                return None
            if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
                errors["labels"] = ["Must be a non-empty list of labels."]
                return None
            labels = value
        else:
            field, value = "label", payload.get("label")
            if not isinstance(value, str) or not value:
                errors["label"] = ["Must be one of the study's labels."]
                return None
            labels = [value]
        unknown = [v for v in labels if v not in study.labels]
        if unknown:
            errors[field] = [f"Not a label of this study: {', '.join(unknown)} (labels: {', '.join(study.labels)})."]
            return None
        if len(set(labels)) != len(labels):
            errors[field] = ["A label is repeated."]
            return None
        order = {label: k for k, label in enumerate(study.labels)}
        return {"labels": sorted(labels, key=order.__getitem__)}
