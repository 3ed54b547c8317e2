"""What the annotator's pages show for an item of the protocol and how their form becomes an answer.

Core code (``annotation.pages.screens``, ``annotation.pages.forms``, the tutorial and the
staff preview) asks these; the texts are the interface's (gettext), so a protocol's
wording is translated with the rest of the page.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from django.utils.functional import Promise

from annotation.pages.forms import payload_from_post

if TYPE_CHECKING:
    from django.http import QueryDict

    from annotation.pages.tutorial_feedback import Feedback
    from studies.models import Candidate, Item, Study


class PagesRules:
    name: ClassVar[str] = ""
    #: The question above the item when the study sets none.
    default_question_text: ClassVar[Promise | str] = ""
    #: What a page says when the answer is missing altogether ("This field is required.").
    required_message: ClassVar[Promise | str] = ""

    # The protocol's pieces of the shared item page (annotation/_item.html, the practice page tutorial.html
    # and the keyboard legend _keys.html), each a template name, "" for none; they see the page's context.
    #: Inside each candidate's card: the rank toggles, the "Choose A" toggle.
    card_controls_template: ClassVar[str] = ""
    #: Under the candidates, inside the form: a choice study's other options, a judgment study's labels.
    #: A protocol whose piece depends on the study returns it from :meth:`answer_screen` instead.
    answer_extra_template: ClassVar[str] = ""
    #: The keyboard legend's lines for the protocol's controls.
    keys_template: ClassVar[str] = ""
    #: Beside Submit on a document item (ranking: every candidate's rank at a glance).
    document_actions_template: ClassVar[str] = ""
    #: Two candidates go side by side on wide screens (a ranking's cards stay stacked, ranks under the text).
    pairs_side_by_side: ClassVar[bool] = True

    def default_question(self, study: Study) -> Promise | str:
        return self.default_question_text

    def cards_class(self, n_candidates: int) -> str:
        """Classes on the cards' container for ``n_candidates`` candidates."""
        return "two-up" if n_candidates == 2 and self.pairs_side_by_side else ""

    def item_data(self) -> dict[str, Promise | str]:
        """``data-*`` attributes of the item (name without ``data-`` → value) that the protocol's script reads."""
        return {}

    def page_parts(self, n_candidates: int) -> dict[str, Any]:
        """The context keys of the protocol's page pieces, for the item, practice and instructions pages."""
        return {"card_controls_template": self.card_controls_template,
                "answer_extra_template": self.answer_extra_template,
                "keys_template": self.keys_template,
                "document_actions_template": self.document_actions_template,
                "cards_class": self.cards_class(n_candidates), "item_data": self.item_data()}

    def setting_rows(self, study: Study) -> list[tuple[str, str]]:
        """The protocol's own settings as (label, value) rows of the study page's settings list."""
        return [(key.replace("_", " ").capitalize(), _shown(value))
                for key, value in sorted((study.protocol_settings or {}).items())]

    def answer_from_post(self, study: Study, candidates: list[Candidate], data: QueryDict) -> dict[str, Any]:
        """The protocol's part of the API payload a posted item form describes (possibly incomplete).

        Nothing is decided here: an incomplete answer is passed on and refused by the
        service with its own message.
        """
        raise NotImplementedError(f"{type(self).__name__} has no item form")

    def answer_screen(self, *, study: Study, item: Item, cands: list[Candidate], candidate_views: list[dict[str, Any]],
                      answer: dict[str, Any], errors: dict[str, list[str]], letters: dict[str, str],
                      messages: list[str], suggestions: Sequence[Any] = ()) -> tuple[dict[str, Any], list[str]]:
        """Extra context of the item page for the protocol's answer controls, and the refusal's messages.

        ``messages`` is the refusal worded for the annotator (candidate ids as letters); a protocol
        that shows some messages beside their candidate returns the rest. Two context keys let a
        protocol add to the shared page: ``answer_extra_template`` (a template included under the
        candidates, inside the form) and ``span_cards_class`` (a class on the span page's cards).
        ``suggestions``: the suggested error spans this annotator sees on the item (``Suggestion`` rows).
        """
        return {}, messages

    # --- practice (tutorial) screens: annotation.pages.tutorial_feedback -------------------------

    def tutorial_answer_from_post(self, study: Study, candidates: list[Candidate], cands: list[dict[str, Any]],
                                  data: QueryDict) -> dict[str, Any]:
        """The payload a practice form describes; by default the item page's form (``candidates`` are
        stand-ins with the practice item's opaque ids, ``cands`` the practice item's candidates)."""
        return payload_from_post(study=study, candidates=candidates, data=data)

    def tutorial_feedback(self, *, study: Study, answer: dict[str, Any], gold: dict[str, Any],
                          letters: dict[str, str], texts: dict[str, str], source: str) -> Feedback:
        """A validated practice answer compared with the gold one, both keyed by opaque candidate id."""
        raise NotImplementedError(f"{type(self).__name__} has no practice feedback")


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)
