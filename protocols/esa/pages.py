"""The ESA protocol on the annotator's pages: marks, then a 0-100 score (the score alone for DA)."""
from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy

from studies.models import Study

from protocols.spans.pages import SpanPages

#: ESA without spans is direct assessment: the score alone.
DA_QUESTION = gettext_lazy("How much of the meaning does each translation preserve? Score it from 0 to 100.")


class EsaPages(SpanPages):
    default_question_text = gettext_lazy("Mark the errors in each translation, then score it from 0 to 100.")
    required_message = gettext_lazy("Score every translation before going on.")
    unanswered_text = gettext_lazy("Give this translation a score from 0 to 100.")

    def default_question(self, study: Study) -> Promise | str:
        return self.default_question_text if study.esa_spans else DA_QUESTION
