"""The pairwise protocol on the annotator's pages: the two span cards side by side, then the preference."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext_lazy

from protocols.spans.pages import SpanPages

if TYPE_CHECKING:
    from django.http import QueryDict

    from studies.models import Candidate, Item, Study

PREFERENCE_FIELD = "preference"
TIE = "tie"


class PairwisePages(SpanPages):
    default_question_text = gettext_lazy("Score both translations from 0 to 100, then say which one is better.")
    required_message = gettext_lazy("Score both translations before going on.")
    unanswered_text = gettext_lazy("Give this translation a score from 0 to 100.")

    def answer_from_post(self, study: Study, candidates: list[Candidate], data: QueryDict) -> dict[str, Any]:
        payload = super().answer_from_post(study, candidates, data)
        preference = data.get(PREFERENCE_FIELD, "").strip()
        if preference:
            payload[PREFERENCE_FIELD] = preference
        return payload

    def answer_screen(self, *, study: Study, item: Item, cands: list[Candidate], candidate_views: list[dict[str, Any]],
                      answer: dict[str, Any], errors: dict[str, list[str]], letters: dict[str, str],
                      messages: list[str], suggestions: Sequence[Any] = ()) -> tuple[dict[str, Any], list[str]]:
        parts, rest = super().answer_screen(study=study, item=item, cands=cands, candidate_views=candidate_views,
                                            answer=answer, errors=errors, letters=letters, messages=messages,
                                            suggestions=suggestions)
        asked = self.setting(study, "preference")  # type: ignore[attr-defined]
        if asked == "off":
            return {**parts, "span_cards_class": "side-by-side"}, rest
        given = _given_preference(answer, cands)
        choices = [{"value": c.public_id, "letter": letters[c.public_id], "checked": given == c.public_id}
                   for c in cands]
        return {**parts, "span_cards_class": "side-by-side",
                "answer_extra_template": "protocols/pairwise/_preference.html",
                "preference": {"choices": choices, "ties": bool(self.setting(study, "ties")),  # type: ignore[attr-defined]
                               "tie_checked": given == TIE, "required": asked == "required"}}, rest


def _given_preference(answer: dict[str, Any], cands: list[Candidate]) -> str:
    """The preference to pre-fill: a public id or "tie", from a stored answer or a refused payload."""
    raw = answer.get(PREFERENCE_FIELD)
    if isinstance(raw, str):
        return raw
    stored = answer.get("choice")
    if isinstance(stored, dict):
        if stored.get("option") == TIE:
            return TIE
        by_pk = {c.pk: c.public_id for c in cands}
        chosen = stored.get("candidate")
        return by_pk.get(chosen, "") if isinstance(chosen, int) else ""
    return ""
