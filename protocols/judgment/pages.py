"""The judgment protocol on the annotator's pages: the study's labels, one or several."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext_lazy

from annotation.pages import tutorial_feedback as tf
from protocols.parts.pages import PagesRules

if TYPE_CHECKING:
    from django.http import QueryDict

    from annotation.pages.tutorial_feedback import Feedback
    from studies.models import Candidate, Study


class JudgmentPages(PagesRules):
    default_question_text = gettext_lazy("Which label describes the highlighted part of the translation?")
    required_message = gettext_lazy("Choose a label before going on.")
    answer_extra_template = "protocols/judgment/_labels.html"
    keys_template = "protocols/judgment/_keys.html"

    def answer_from_post(self, study: Study, candidates: list[Candidate], data: QueryDict) -> dict[str, Any]:
        if study.multi_label:
            labels = [v for v in data.getlist("labels") if v]
            return {"labels": labels} if labels else {}
        label = data.get("label", "").strip()
        return {"label": label} if label else {}

    def tutorial_feedback(self, *, study: Study, answer: dict[str, Any], gold: dict[str, Any],
                          letters: dict[str, str], texts: dict[str, str], source: str) -> Feedback:
        return tf.labels_feedback(answer, gold)
