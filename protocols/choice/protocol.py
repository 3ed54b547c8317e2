"""The choice protocol's spec."""
from __future__ import annotations

from typing import Any

from studies.models import CHOICE_OPTIONS, Candidate, Study

from protocols.answers import answer_body
from protocols.spec import ProtocolSpec
from protocols.choice.pages import ChoicePages
from protocols.choice.quality import ChoiceQuality
from protocols.choice.reports import ChoiceReports
from protocols.choice.transfer import ChoiceTransfer


class Choice(ChoicePages, ChoiceTransfer, ChoiceReports, ChoiceQuality, ProtocolSpec):
    name = "choice"
    label = "Choice (pick one candidate or an option)"
    answer_fields = ("choice",)
    answer_schema = answer_body(
        {"choice": {"type": "string", "minLength": 1,
                    "description": f"A candidate's public id, or one of the study's options ({', '.join(CHOICE_OPTIONS)})."}},
        required=["choice"])
    preference_observations = True

    def preference_values(self, answer: dict[str, Any], keys: list[str]) -> dict[str, float]:
        """1 for the chosen candidate, 0 for the item's others: the chosen one is preferred to each other, the
        others tie; an option ("both equal", "neither") ties every pair."""
        chosen = (answer.get("choice") or {}).get("candidate")
        return {key: 1.0 if chosen is not None and key == str(chosen) else 0.0 for key in keys}

    def validate_answer(self, study: Study, *, item_source: str, candidates: dict[str, Candidate],
                        payload: dict[str, Any], errors: dict[str, list[str]]) -> dict[str, Any] | None:
        value = payload["choice"]
        if not isinstance(value, str) or not value:
            errors["choice"] = ["Must be a candidate id or one of the study's options."]
            return None
        if value in candidates:
            return {"choice": {"candidate": candidates[value].pk}}
        if value in study.options:
            return {"choice": {"option": value}}
        offered = ", ".join(study.options) if study.options else "none"
        errors["choice"] = [f"{value!r} is neither a candidate of this item nor an option of this study (options: {offered})."]
        return None
