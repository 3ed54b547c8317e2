"""What the item page shows: the template context of one assignment.

Only annotator-safe data goes in: candidate letters and opaque public ids,
escaped texts, the study's wording. No system names, no reference or spam
flags, no database ids.
"""
from __future__ import annotations

import math
import re
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from studies.definition.languages import text_direction
from studies.models import Candidate, Item, Study, Unit
from studies.definition.typography import shown_candidate

from annotation.items import selectors
from annotation.items.document import document_screen
from annotation.pages.interface import wording_languages
from annotation.pages.links import page_url
from annotation.models import Annotator, Assignment, AssignmentStatus
from annotation.handout.services import candidate_order_for
from annotation.handout.suggestions import suggestions_shown
from annotation.pages.span_screen import span_keys
from annotation.items.rendering import candidate_letter, highlighted_lines, instructions_html

#: Wording and key of the extra answers a choice study may offer (the keys stay Latin letters in every language).
OPTION_TEXT: dict[str, tuple[Promise, str, Promise]] = {
    "neither": (gettext_lazy("Neither"), "n", gettext_lazy("Neither candidate is acceptable.")),
    "tie": (gettext_lazy("Tie"), "t", gettext_lazy("Both are equally good (or equally bad).")),
    "invalid": (gettext_lazy("Invalid"), "i", gettext_lazy("The item itself is broken or cannot be judged.")),
}

# The service's ranking refusals (annotation/handout/services.py, English, with candidate ids), reworded here
# in the interface language with letters; the ids in them also tell which cards to mark.
_MISSING = re.compile(r"Every candidate needs a rank; (\d+) missing \(([^)]*)\)\.")
_TIED = re.compile(r"Two candidates share a rank, but this study does not allow ties \(([^)]*)\)\.")
_RANGE = re.compile(r"Rank of candidate (\S+) must be a whole number from 1 to (\d+)\.")


def option_views(study: Study, choice: str | None = None) -> list[dict[str, Any]]:
    """The study's extra answers (Neither, Tie, Invalid) with their keys, in the study's order."""
    return [{"value": o, "text": OPTION_TEXT[o][0], "key": OPTION_TEXT[o][1], "help": OPTION_TEXT[o][2],
             "checked": choice == o} for o in study.options if o in OPTION_TEXT]


def _letter_list(ids: str, letters: dict[str, str]) -> list[str]:
    """The letters of a comma-separated list of candidate ids, in page order."""
    wanted = {x.strip() for x in ids.split(",")}
    return [letter for public_id, letter in letters.items() if public_id in wanted]


def _join(letters: list[str]) -> str:
    return _(", ").join(letters)


def refused_candidates(*, errors: dict[str, list[str]], letters: dict[str, str]) -> list[str]:
    """Letters of the candidates a refusal is about (unranked, out of range, sharing a rank), in page order."""
    found: set[str] = set()
    for message in errors.get("ranks", []):
        for pattern in (_MISSING, _TIED):
            match = pattern.fullmatch(message)
            if match:
                found.update(_letter_list(match.group(match.re.groups), letters))
        match = _RANGE.fullmatch(message)
        if match and match.group(1) in letters:
            found.add(letters[match.group(1)])
    return [letter for letter in letters.values() if letter in found]


def _reworded(message: str, study: Study, letters: dict[str, str]) -> str:
    if message == "This field is required.":
        return str(study.spec.required_message)
    match = _MISSING.fullmatch(message)
    if match:
        count, which = int(match.group(1)), _letter_list(match.group(2), letters)
        text = ngettext("Every candidate needs a rank; %(count)d missing.",
                        "Every candidate needs a rank; %(count)d missing.", count) % {"count": count}
        if which:
            text += " " + ngettext("No rank yet: candidate %(letters)s.", "No rank yet: candidates %(letters)s.",
                                   len(which)) % {"letters": _join(which)}
        return text
    match = _TIED.fullmatch(message)
    if match:
        which = _letter_list(match.group(1), letters)
        text = _("Two candidates share a rank, but this study does not allow ties.")
        if which:
            text += " " + _("Same rank: candidates %(letters)s.") % {"letters": _join(which)}
        return text
    match = _RANGE.fullmatch(message)
    if match:
        return _("Rank of candidate %(letter)s must be a whole number from 1 to %(count)s.") % {
            "letter": letters.get(match.group(1), match.group(1)), "count": match.group(2)}
    for public_id, letter in letters.items():  # anything else: at least no ids on screen
        message = message.replace(f"candidate {public_id}", f"candidate {letter}")
        message = message.replace(public_id, f"candidate {letter}")
    return message


def readable_errors(*, study: Study, errors: dict[str, list[str]], letters: dict[str, str]) -> list[str]:
    """The service's refusal, worded for the annotator in their language: candidate ids become letters."""
    messages: list[str] = []
    for field_messages in errors.values():
        for message in field_messages:
            text = _reworded(message, study, letters)
            if text not in messages:
                messages.append(text)
    return messages


def time_estimate(*, remaining: int, median_ms: int | None) -> str:
    """"About N minutes" for the items left, from the study's median time per item ('' without one)."""
    if median_ms is None or remaining <= 0:
        return ""
    minutes = math.ceil(remaining * median_ms / 60_000)
    if minutes <= 1:
        return _("Less than a minute")
    return ngettext("About %(count)d minute", "About %(count)d minutes", minutes) % {"count": minutes}


def start_screen(*, annotator: Annotator) -> dict[str, Any]:
    """The start page's figures: items answered, items in all, a time estimate, and whether all are done."""
    progress = selectors.progress(annotator=annotator)
    remaining = progress["total"] - progress["done"]
    median, n_answers = selectors.median_item_duration_ms(study=annotator.study) if remaining > 0 else (None, 0)
    return {
        **wording_languages(annotator.study),
        **span_keys(annotator.study),
        "estimate_n": n_answers,
        "done_count": progress["done"],
        "total_count": progress["total"],
        "remaining_count": remaining,
        "estimate": time_estimate(remaining=remaining, median_ms=median),
        "finished": progress["done"] > 0 and remaining == 0,
    }


def item_screen(*, annotator: Annotator, assignment: Assignment, answer: dict[str, Any] | None,
                errors: dict[str, list[str]] | None = None,
                candidates: list[Candidate] | None = None) -> dict[str, Any]:
    """Template context for ``annotation/item.html`` and its fragment ``_item.html``."""
    item = assignment.item
    study = item.study
    cands = selectors.ordered_candidates(assignment, candidates)
    previous = selectors.assignment_previous(annotator=annotator, before=assignment)
    shown = suggestions_shown(assignment, cands)
    return {
        **item_screen_parts(study=study, item=item, cands=cands, answer=answer, errors=errors,
                            suggestions=shown.suggestions if shown else []),
        "annotator": annotator,
        "assignment_id": assignment.public_id,
        "is_revision": assignment.status == AssignmentStatus.DONE,
        "progress": selectors.progress(annotator=annotator),
        "post_url": page_url(annotator, "item-detail", assignment.public_id),
        "back_url": page_url(annotator, "item-detail", previous.public_id) if previous else "",
        "start_url": page_url(annotator, "start"),
        # Only an unanswered item can be skipped (annotation/handout/skips.py); previews have no skip.
        "skip_url": (page_url(annotator, "item-skip", assignment.public_id)
                     if assignment.status == AssignmentStatus.PENDING else ""),
    }


def preview_screen(*, item: Item, candidates: list[Candidate], answer: dict[str, Any] | None,
                   errors: dict[str, list[str]] | None, post_url: str, position: int, total: int) -> dict[str, Any]:
    """Context of ``annotation/_item.html`` for a staff preview of any item: no annotator, no assignment.

    The same keys as :func:`item_screen`, whose annotator-specific part (queue,
    progress, links) is replaced here. Candidates come in a fixed seeded order,
    as a first annotator would see them; nothing here is stored.
    """
    study = item.study
    order = candidate_order_for(study=study, annotator=Annotator(study=study, sequence=1), item=item,
                                candidates=candidates)
    preview = Assignment(item=item, candidate_order=order, public_id="preview")
    context = item_screen_parts(study=study, item=item, cands=selectors.ordered_candidates(preview, candidates),
                                answer=answer, errors=errors)
    # The preview stores nothing, so nothing is "done": its progress says which item this is ("Item 2 of 13").
    return {**context, "annotator": None, "assignment_id": "preview", "is_revision": False,
            "progress": {"done": position, "total": total, "current": position}, "post_url": post_url,
            "back_url": "", "start_url": post_url}


def text_languages(*, study: Study, item: Item) -> dict[str, str]:
    """``lang``/``dir`` of the item's texts: the item's own languages (studies that mix directions), else the study's."""
    source = item.source_language or study.source_language
    target = item.target_language or study.target_language
    return {"source_lang": source, "source_dir": text_direction(source),
            "target_lang": target, "target_dir": text_direction(target)}


def context_lines(*, study: Study, item: Item) -> list[dict[str, str]]:
    """The context box's sentences, each with its own ``lang``/``dir`` where the study file gave one that differs
    from its side's language (a bilingual dialogue's turns), else "" (the box's lang applies)."""
    key = "source_context" if study.show_source else "target_context"
    side = (item.source_language or study.source_language) if study.show_source else \
        (item.target_language or study.target_language)
    tags = (item.context_languages or {}).get(key) or []
    lines = []
    for k, text in enumerate(getattr(item, key) or []):
        tag = tags[k].strip() if k < len(tags) and isinstance(tags[k], str) else ""
        own = tag if tag and tag.lower() != (side or "").lower() else ""
        lines.append({"text": text, "lang": own, "dir": text_direction(own) if own else ""})
    return lines


def item_screen_parts(*, study: Study, item: Item, cands: list[Candidate], answer: dict[str, Any] | None,
                      errors: dict[str, list[str]] | None, suggestions: list[Any] | None = None) -> dict[str, Any]:
    """What an item page shows whoever looks at it: the context, the candidates, the answer controls."""
    answer = answer or {}
    ranks = answer.get("ranks") or {}
    choice = answer.get("choice")
    chosen_labels = set(answer.get("labels") or [])
    letters = {c.public_id: candidate_letter(k) for k, c in enumerate(cands)}
    refused = set(refused_candidates(errors=errors or {}, letters=letters))
    candidate_views = [{"letter": letters[c.public_id], "number": k + 1, "public_id": c.public_id,
                        "lines": highlighted_lines(*shown_candidate(text=c.text, highlights=c.highlights,
                                                                    normalise=study.normalise_typography)),
                        "rank": ranks.get(c.public_id), "chosen": choice == c.public_id,
                        "invalid": letters[c.public_id] in refused} for k, c in enumerate(cands)]
    spec = study.spec
    span_parts, messages = spec.answer_screen(
        study=study, item=item, cands=cands, candidate_views=candidate_views, answer=answer, errors=errors or {},
        letters=letters, messages=readable_errors(study=study, errors=errors or {}, letters=letters),
        suggestions=suggestions or [])
    return {
        **text_languages(study=study, item=item),
        **wording_languages(study),
        **spec.page_parts(len(cands)),
        **span_parts,
        "question_is_study_wording": bool(study.question),
        "study": study,
        "protocol": study.protocol,
        "show_source": study.show_source,
        "context": list(item.source_context) if study.show_source else list(item.target_context),
        "context_lines": context_lines(study=study, item=item),
        "source": item.source if study.show_source else "",
        "question": study.question or spec.default_question(study),
        "candidates": candidate_views,
        "rank_choices": list(range(1, len(cands) + 1)),
        "allow_ties": study.allow_ties,
        "options": option_views(study, choice),
        "labels": [{"value": label, "number": k + 1, "checked": label in chosen_labels}
                   for k, label in enumerate(study.labels)],
        "multi_label": study.multi_label,
        "errors": messages,
        "document_unit": study.unit == "document",
        "instructions": instructions_html(study.instructions),
        "document": (document_screen(item=item, study=study, cands=cands, candidate_views=candidate_views)
                     if study.unit == Unit.DOCUMENT else None),
    }
