"""What the span protocols share on the annotator's pages: one card per candidate with its marks and score."""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotation.handout.answers import JudgmentError
from annotation.pages import tutorial_feedback as tf
from annotation.pages.forms import form_number, payload_from_post
from annotation.pages.span_screen import candidate_errors, shown_offsets, span_screen, stored_offset
from protocols.parts.pages import PagesRules

if TYPE_CHECKING:
    from django.http import QueryDict

    from annotation.pages.tutorial_feedback import Feedback
    from studies.models import Candidate, Item, Study

SCORE_FIELD = "score-{}"
NO_ERROR_FIELD = "noerror-{}"
_SPAN_MISSING = re.compile(r"Every candidate needs an answer; \d+ missing \(([^)]*)\)\.")
_SCORE_MISSING = re.compile(r"candidate (\S+)\.score: required, .*")


class SpanPages(PagesRules):
    #: What a candidate the server found unanswered is told, beside it.
    unanswered_text: ClassVar[Promise | str] = ""
    keys_template = "protocols/spans/_keys.html"

    def answer_from_post(self, study: Study, candidates: list[Candidate], data: QueryDict) -> dict[str, Any]:
        """The ``annotations`` object.

        With JavaScript the page posts it whole as JSON in the ``annotations``
        field (offsets into the text as shown, moved here to the stored text).
        Without, each candidate's "no error" box and score field make it; a
        candidate with neither is left out, so the service names it as unanswered.
        """
        raw = data.get("annotations", "").strip()
        fates = data.get("suggestions", "").strip()
        if raw:
            try:
                value = json.loads(raw)
            except ValueError:
                return {"annotations": raw}  # refused by the service as "must be an object"
            payload: dict[str, Any] = {"annotations": _to_stored_offsets(study, candidates, value)}
            if fates:
                try:
                    payload["suggestions"] = _fates_to_stored_offsets(study, candidates, json.loads(fates))
                except ValueError:
                    payload["suggestions"] = fates  # refused by the service as "must be an object"
            return payload
        out: dict[str, Any] = {}
        for cand in candidates:
            entry: dict[str, Any] = {}
            if study.uses_spans and (data.get(NO_ERROR_FIELD.format(cand.public_id)) or study.uses_score):
                entry["spans"] = []
            score = data.get(SCORE_FIELD.format(cand.public_id), "").strip()
            if study.uses_score and score:
                entry["score"] = form_number(score)
            if entry:
                out[cand.public_id] = entry
        return {"annotations": out}

    def answer_screen(self, *, study: Study, item: Item, cands: list[Candidate], candidate_views: list[dict[str, Any]],
                      answer: dict[str, Any], errors: dict[str, list[str]], letters: dict[str, str],
                      messages: list[str], suggestions: Sequence[Any] = ()) -> tuple[dict[str, Any], list[str]]:
        """The marking screen, and each refusal beside the candidate it names (``view["errors"]``).

        "Unanswered" and "score required" are reworded in the interface language;
        the other messages (a bad span's offsets, say) keep the server's words with
        the candidate's letter instead of its id.
        """
        parts = span_screen(study=study, item=item, cands=cands, candidate_views=candidate_views, answer=answer,
                            show_source=study.show_source, suggestions=suggestions)
        unanswered: list[str] = []
        rest: list[str] = []
        for field_messages in errors.values():
            for message in field_messages:
                missing = _SPAN_MISSING.fullmatch(message)
                score = _SCORE_MISSING.fullmatch(message)
                if missing:
                    unanswered += [x.strip() for x in missing.group(1).split(",")]
                elif score and score.group(1) in letters:
                    unanswered.append(score.group(1))
                elif message == "This field is required.":
                    rest.append(str(self.required_message))
                else:
                    rest.append(message)
        by_candidate, general = candidate_errors(rest, letters)
        for view in candidate_views:
            own = [str(self.unanswered_text)] if view["public_id"] in unanswered else []
            view["errors"] = own + by_candidate.get(view["public_id"], [])
            view["invalid"] = bool(view["errors"])
        named = [view["letter"] for view in candidate_views if view["errors"]]
        if named:
            general.insert(0, ngettext("See the message under candidate %(letters)s.",
                                       "See the messages under candidates %(letters)s.", len(named))
                           % {"letters": _(", ").join(named)})
        return parts, general

    def tutorial_answer_from_post(self, study: Study, candidates: list[Candidate], cands: list[dict[str, Any]],
                                  data: QueryDict) -> dict[str, Any]:
        """The ``annotations`` field as JSON (what the span-marking page posts), else the plain practice
        form's rows: per candidate up to ``SPAN_ROWS`` "words with an error" fields located in its text
        (first occurrence), their severity (and category, where the study has a taxonomy), and the score."""
        if data.get("annotations", "").strip():
            return payload_from_post(study=study, candidates=candidates, data=data)
        annotations: dict[str, Any] = {}
        problems: list[str] = []
        letters = tf.letters_of(cands)
        for cand in cands:
            entry: dict[str, Any] = {}
            if study.uses_spans:
                entry["spans"] = _form_spans(study, cand, letters[cand["id"]], data, problems)
            if study.uses_score:
                score = data.get(f"score-{cand['id']}", "").strip()
                entry["score"] = _number_or_text(score) if score else None
            annotations[cand["id"]] = entry
        if problems:
            raise JudgmentError({"annotations": problems})
        return {"annotations": annotations}

    def tutorial_feedback(self, *, study: Study, answer: dict[str, Any], gold: dict[str, Any],
                          letters: dict[str, str], texts: dict[str, str], source: str) -> Feedback:
        return tf.spans_feedback(study, answer, gold, letters, texts, source)


def _number_or_text(raw: str) -> Any:
    try:
        return float(raw) if "." in raw else int(raw)
    except ValueError:
        return raw  # refused by the validator with its message


def _form_spans(study: Study, cand: dict[str, Any], letter: str, data: QueryDict,
                problems: list[str]) -> list[dict[str, Any]]:
    spans = []
    categories = bool(study.effective_taxonomy())
    for k in range(tf.SPAN_ROWS):
        words = data.get(f"span-{cand['id']}-{k}-text", "").strip()
        if not words:
            continue
        start = cand["text"].find(words)
        if start < 0:
            problems.append(_("Candidate %(letter)s: the words “%(words)s” are not in its text.")
                            % {"letter": letter, "words": words})
            continue
        span: dict[str, Any] = {"start": start, "end": start + len(words), "side": "target",
                                "severity": data.get(f"span-{cand['id']}-{k}-severity", "")}
        if categories:
            span["category"] = data.get(f"span-{cand['id']}-{k}-category", "")
        spans.append(span)
    return spans


def _fates_to_stored_offsets(study: Study, candidates: list[Candidate], value: Any) -> Any:
    """An edited suggestion's offsets (``candidate``: its candidate's public id, as the page sends it) moved to
    the stored text; the ``candidate`` key dropped (the server knows each suggestion's candidate)."""
    if not isinstance(value, dict):
        return value
    texts = {c.public_id: c.text for c in candidates}
    out: dict[str, Any] = {}
    for sid, entry in value.items():
        if isinstance(entry, dict):
            entry = dict(entry)
            owner = entry.pop("candidate", None)
            if (study.normalise_typography and entry.get("fate") == "edited" and owner in texts
                    and entry.get("side", "target") == "target"):
                offsets = shown_offsets(texts[owner], True)
                for field, is_end in (("start", False), ("end", True)):
                    number = entry.get(field)
                    if isinstance(number, int) and not isinstance(number, bool):
                        entry[field] = stored_offset(offsets, number, end=is_end)
        out[sid] = entry
    return out


def _to_stored_offsets(study: Study, candidates: list[Candidate], value: Any) -> Any:
    """Target offsets of the shown text moved to the stored text (they differ only with typography normalised)."""
    if not study.normalise_typography or not isinstance(value, dict):
        return value
    texts = {c.public_id: c.text for c in candidates}
    for key, entry in value.items():
        spans = entry.get("spans") if isinstance(entry, dict) and key in texts else None
        if not isinstance(spans, list):
            continue
        offsets = shown_offsets(texts[key], True)
        for span in spans:
            if not isinstance(span, dict) or span.get("side", "target") != "target":
                continue
            for field, is_end in (("start", False), ("end", True)):
                number = span.get(field)
                if isinstance(number, int) and not isinstance(number, bool):
                    span[field] = stored_offset(offsets, number, end=is_end)
    return value
