"""The judgment protocol: quality control, the spam check in words."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocols.parts.quality import QualityRules

if TYPE_CHECKING:
    from studies.models import Candidate, Study


class JudgmentQuality(QualityRules):
    spam_rule_text = "fails when the study's first label ({label}) is given to the scrambled candidate"

    def spam_answer_words(self, study: Study, answer: dict[str, Any],
                          candidates: list[Candidate]) -> tuple[list[str], str]:
        first = study.labels[0] if study.labels else ""
        return ([f"label “{label}”" for label in answer.get("labels", [])],
                f"any label but “{first}” (the first label means the text was not read)")

    def spam_check_failed(self, study: Study, answer: dict[str, Any], spam_pk: int, control: Any = None) -> bool:
        """Fails when the study's first label is given to the scrambled candidate."""
        labels = answer.get("labels", [])
        return bool(study.labels) and study.labels[0] in labels

    probe_rule_text = "caught when the changed candidate does not get the study's first label ({label})"

    def probe_caught(self, study: Study, answer: dict[str, Any], probe: Any) -> bool:
        labels = answer.get("labels", [])
        return bool(labels) and bool(study.labels) and study.labels[0] not in labels
