"""What the annotator's pages show for an item of the protocol and how their form becomes an answer.

Core code (``annotation.pages.screens``, ``annotation.pages.forms``, the tutorial and the
staff preview) asks these; the texts are the interface's (gettext), so a protocol's
wording is translated with the rest of the page.
"""
from __future__ import annotations

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

    def default_question(self, study: Study) -> Promise | str:
        return self.default_question_text

    def answer_from_post(self, study: Study, candidates: list[Candidate], data: QueryDict) -> dict[str, Any]:
        """The protocol's part of the API payload a posted item form describes (possibly incomplete).

        Nothing is decided here: an incomplete answer is passed on and refused by the
        service with its own message.
        """
        raise NotImplementedError(f"{type(self).__name__} has no item form")

    def answer_screen(self, *, study: Study, item: Item, cands: list[Candidate], candidate_views: list[dict[str, Any]],
                      answer: dict[str, Any], errors: dict[str, list[str]], letters: dict[str, str],
                      messages: list[str]) -> tuple[dict[str, Any], list[str]]:
        """Extra context of the item page for the protocol's answer controls, and the refusal's messages.

        ``messages`` is the refusal worded for the annotator (candidate ids as letters); a protocol
        that shows some messages beside their candidate returns the rest. Two context keys let a
        protocol add to the shared page: ``answer_extra_template`` (a template included under the
        candidates, inside the form) and ``span_cards_class`` (a class on the span page's cards).
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
