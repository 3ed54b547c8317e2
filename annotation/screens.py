"""What the item page shows: the template context of one assignment.

Only annotator-safe data goes in: candidate letters and opaque public ids,
escaped texts, the study's wording. No system names, no reference or spam
flags, no database ids.
"""
from __future__ import annotations

from typing import Any

from django.urls import reverse

from studies.models import Candidate, Protocol, Study

from . import selectors
from .models import Annotator, Assignment, AssignmentStatus
from .rendering import candidate_letter, highlighted_lines

#: Wording and key of the extra answers a choice study may offer.
OPTION_TEXT = {
    "neither": ("Neither", "n", "Neither candidate is acceptable."),
    "tie": ("Tie", "t", "Both are equally good (or equally bad)."),
    "invalid": ("Invalid", "i", "The item itself is broken or cannot be judged."),
}

DEFAULT_QUESTION = {
    Protocol.RANKING: "Rank the candidate translations from best (1) to worst.",
    Protocol.CHOICE: "Which candidate translation is better?",
    Protocol.JUDGMENT: "Which label describes the highlighted part of the translation?",
}

REQUIRED_MESSAGE = {
    Protocol.RANKING: "Give every candidate a rank before going on.",
    Protocol.CHOICE: "Choose one answer before going on.",
    Protocol.JUDGMENT: "Choose a label before going on.",
}


def option_views(study: Study, choice: str | None = None) -> list[dict[str, Any]]:
    """The study's extra answers (Neither, Tie, Invalid) with their keys, in the study's order."""
    return [{"value": o, "text": OPTION_TEXT[o][0], "key": OPTION_TEXT[o][1], "help": OPTION_TEXT[o][2],
             "checked": choice == o} for o in study.options if o in OPTION_TEXT]


def readable_errors(*, study: Study, errors: dict[str, list[str]], letters: dict[str, str]) -> list[str]:
    """The service's refusal, worded for the annotator: candidate ids become "candidate A"."""
    messages: list[str] = []
    for field_messages in errors.values():
        for message in field_messages:
            if message == "This field is required.":
                message = REQUIRED_MESSAGE[Protocol(study.protocol)]
            for public_id, letter in letters.items():
                message = message.replace(f"candidate {public_id}", f"candidate {letter}")
                message = message.replace(public_id, f"candidate {letter}")
            if message not in messages:
                messages.append(message)
    return messages


def item_screen(*, annotator: Annotator, assignment: Assignment, answer: dict[str, Any] | None,
                errors: dict[str, list[str]] | None = None,
                candidates: list[Candidate] | None = None) -> dict[str, Any]:
    """Template context for ``annotation/item.html`` and its fragment ``_item.html``."""
    item = assignment.item
    study = item.study
    cands = selectors.ordered_candidates(assignment, candidates)
    answer = answer or {}
    ranks = answer.get("ranks") or {}
    choice = answer.get("choice")
    chosen_labels = set(answer.get("labels") or [])
    letters = {c.public_id: candidate_letter(k) for k, c in enumerate(cands)}
    candidate_views = [{
        "letter": letters[c.public_id],
        "number": k + 1,
        "public_id": c.public_id,
        "lines": highlighted_lines(c.text, c.highlights),
        "rank": ranks.get(c.public_id),
        "chosen": choice == c.public_id,
    } for k, c in enumerate(cands)]
    options = option_views(study, choice)
    labels = [{"value": label, "number": k + 1, "checked": label in chosen_labels}
              for k, label in enumerate(study.labels)]
    previous = selectors.assignment_previous(annotator=annotator, before=assignment)
    token = annotator.token
    return {
        "study": study,
        "annotator": annotator,
        "assignment_id": assignment.public_id,
        "protocol": study.protocol,
        "is_revision": assignment.status == AssignmentStatus.DONE,
        "show_source": study.show_source,
        "context": list(item.source_context) if study.show_source else list(item.target_context),
        "source": item.source if study.show_source else "",
        "question": study.question or DEFAULT_QUESTION[Protocol(study.protocol)],
        "candidates": candidate_views,
        "rank_choices": list(range(1, len(cands) + 1)),
        "allow_ties": study.allow_ties,
        "options": options,
        "labels": labels,
        "multi_label": study.multi_label,
        "errors": readable_errors(study=study, errors=errors or {}, letters=letters),
        "progress": selectors.progress(annotator=annotator),
        "post_url": reverse("annotation:item-detail", args=[token, assignment.public_id]),
        "back_url": reverse("annotation:item-detail", args=[token, previous.public_id]) if previous else "",
        "document_unit": study.unit == "document",
    }
