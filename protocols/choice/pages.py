"""The choice protocol on the annotator's pages: one radio button per candidate and option."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext_lazy

from annotation.pages import tutorial_feedback as tf
from protocols.parts.pages import PagesRules

if TYPE_CHECKING:
    from django.http import QueryDict

    from annotation.pages.tutorial_feedback import Feedback
    from studies.models import Candidate, Study


class ChoicePages(PagesRules):
    default_question_text = gettext_lazy("Which candidate translation is better?")
    required_message = gettext_lazy("Choose one answer before going on.")
    card_controls_template = "protocols/choice/_card_controls.html"
    answer_extra_template = "protocols/choice/_options.html"
    keys_template = "protocols/choice/_keys.html"

    def answer_from_post(self, study: Study, candidates: list[Candidate], data: QueryDict) -> dict[str, Any]:
        choice = data.get("choice", "").strip()
        return {"choice": choice} if choice else {}

    def tutorial_feedback(self, *, study: Study, answer: dict[str, Any], gold: dict[str, Any],
                          letters: dict[str, str], texts: dict[str, str], source: str) -> Feedback:
        return tf.choice_feedback(study, answer, gold, letters)
