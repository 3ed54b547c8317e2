"""The ranking protocol on the annotator's pages: a rank field per candidate."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.utils.functional import Promise
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
    card_controls_template = "protocols/ranking/_card_controls.html"
    keys_template = "protocols/ranking/_keys.html"
    document_actions_template = "protocols/ranking/_rank_summary.html"
    pairs_side_by_side = False

    def cards_class(self, n_candidates: int) -> str:
        # More than five rank toggles do not fit beside a card's title: they wrap under it (annotate.css).
        return "many-ranks" if n_candidates > 5 else ""

    def item_data(self) -> dict[str, Promise | str]:
        # static/js/annotate.js shows it while a typed digit waits for a second one (ranks 10 and above).
        return {"pending-hint": gettext_lazy(
            "Waiting for a second digit: type it for ranks 10 and above, or press Space for this rank alone.")}

    def setting_rows(self, study: Study) -> list[tuple[str, str]]:
        return [("Ties", "allowed" if study.allow_ties else "not allowed"), *super().setting_rows(study)]

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
