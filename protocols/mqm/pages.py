"""The MQM protocol on the annotator's pages: marks with a category and a severity, or "no error"."""
from __future__ import annotations

from django.utils.translation import gettext_lazy

from protocols.spans.pages import SpanPages


class MqmPages(SpanPages):
    default_question_text = gettext_lazy("Mark every error in each translation with its category and severity, or "
                                         "confirm that it has none.")
    required_message = gettext_lazy("Mark the errors of every translation, or confirm that it has none, before going on.")
    unanswered_text = gettext_lazy("Mark this translation's errors, or confirm that it has none.")
