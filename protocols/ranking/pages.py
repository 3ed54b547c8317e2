"""The ranking protocol on the annotator's pages: a rank field per candidate."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext_lazy

from annotation.pages import tutorial_feedback as tf
from annotation.pages.forms import form_number
from protocols.parts.pages import PagesRules

if TYPE_CHECKING:
    from django.http import QueryDict

    from annotation.pages.tutorial_feedback import Feedback
    from studies.models import Candidate, Study

RANK_FIELD = "rank-{}"


class RankingPages(PagesRules):
    default_question_text = gettext_lazy("Rank the candidate translations from best (1) to worst.")
    required_message = gettext_lazy("Give every candidate a rank before going on.")

    def answer_from_post(self, study: Study, candidates: list[Candidate], data: QueryDict) -> dict[str, Any]:
        ranks: dict[str, int | str] = {}
        for cand in candidates:
            raw = data.get(RANK_FIELD.format(cand.public_id), "").strip()
            if raw:
                ranks[cand.public_id] = form_number(raw)
        return {"ranks": ranks}

    def tutorial_feedback(self, *, study: Study, answer: dict[str, Any], gold: dict[str, Any],
                          letters: dict[str, str], texts: dict[str, str], source: str) -> Feedback:
        return tf.ranking_feedback(answer, gold, letters)
