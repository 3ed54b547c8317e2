"""The choice protocol: quality control, the spam check in words."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocols.parts.quality import QualityRules

if TYPE_CHECKING:
    from studies.models import Candidate, Study


class ChoiceQuality(QualityRules):
    spam_rule_text = "fails when the scrambled candidate is chosen or the answer is 'tie'"

    def spam_answer_words(self, study: Study, answer: dict[str, Any],
                          candidates: list[Candidate]) -> tuple[list[str], str]:
        name = {c.pk: ("scrambled copy" if c.is_spam else f"{c.system}") for c in candidates}
        choice = answer.get("choice", {})
        picked = (name.get(choice["candidate"], choice["candidate"]) if "candidate" in choice
                  else f"option “{choice.get('option', '')}”")
        return [f"chose {picked}"], "a real candidate, or “neither” / “invalid” (never the scrambled copy or “tie”)"

    def spam_check_failed(self, study: Study, answer: dict[str, Any], spam_pk: int, control: Any = None) -> bool:
        """Fails when the scrambled candidate is chosen, or "tie" (a tie with a scrambled text)."""
        choice = answer.get("choice", {})
        return choice.get("candidate") == spam_pk or choice.get("option") == "tie"

    def reference_won(self, study: Study, answer: dict[str, Any], reference_pk: int) -> bool | None:
        return answer.get("choice", {}).get("candidate") == reference_pk

    probe_rule_text = "caught when the unchanged original is chosen over the changed candidate"

    def probe_caught(self, study: Study, answer: dict[str, Any], probe: Any) -> bool:
        choice = answer.get("choice", {})
        if probe.original_pk is not None:
            return choice.get("candidate") == probe.original_pk
        return "candidate" in choice and choice["candidate"] != probe.probe_pk
