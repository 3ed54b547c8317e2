"""The item page's form: turning a plain POST into the service's payload.

The page posts ordinary form fields (so it works without JavaScript); this
module translates them into exactly the payload the JSON API accepts, so both
go through ``services.judgment_submit`` and its one set of rules. Nothing is
decided here: an incomplete or contradictory answer is passed on as it is
and refused by the service with its own message.
"""
from __future__ import annotations

import json
from typing import Any

from django.http import QueryDict

from studies.models import SPAN_PROTOCOLS, Candidate, Protocol, Study

from annotation.handout.services import client_time
from annotation.pages.span_screen import shown_offsets, stored_offset

RANK_FIELD = "rank-{}"
TIME_FIELDS = ("client_started_at", "client_submitted_at")


def _rank_value(raw: str) -> int | str:
    """An int when the field holds a plain number; anything else is passed on for the service to refuse."""
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 6 else raw


def payload_from_post(*, study: Study, candidates: list[Candidate], data: QueryDict) -> dict[str, Any]:
    """The judgment payload the posted form describes (possibly incomplete)."""
    payload: dict[str, Any] = {}
    if study.protocol == Protocol.RANKING:
        ranks: dict[str, int | str] = {}
        for cand in candidates:
            raw = data.get(RANK_FIELD.format(cand.public_id), "").strip()
            if raw:
                ranks[cand.public_id] = _rank_value(raw)
        payload["ranks"] = ranks
    elif study.protocol == Protocol.CHOICE:
        choice = data.get("choice", "").strip()
        if choice:
            payload["choice"] = choice
    elif study.protocol in SPAN_PROTOCOLS:
        payload["annotations"] = _annotations_from_post(study=study, candidates=candidates, data=data)
    elif study.multi_label:
        labels = [v for v in data.getlist("labels") if v]
        if labels:
            payload["labels"] = labels
    else:
        label = data.get("label", "").strip()
        if label:
            payload["label"] = label
    for key in TIME_FIELDS:
        # Client clocks only refine the duration; a garbled one is dropped
        # rather than refusing the annotator's answer because of it.
        value = data.get(key, "").strip()
        if value and len(value) <= 40 and client_time(value) is not None:
            payload[key] = value
    return payload


SCORE_FIELD = "score-{}"
NO_ERROR_FIELD = "noerror-{}"


def _annotations_from_post(*, study: Study, candidates: list[Candidate], data: QueryDict) -> Any:
    """Span pages: the ``annotations`` object of the API payload.

    With JavaScript the page posts it whole as JSON in the ``annotations``
    field (offsets into the text as shown, moved here to the stored text).
    Without, each candidate's "no error" box and score field make it; a
    candidate with neither is left out, so the service names it as unanswered.
    """
    raw = data.get("annotations", "").strip()
    if raw:
        try:
            value = json.loads(raw)
        except ValueError:
            return raw  # refused by the service as "must be an object"
        return _to_stored_offsets(study, candidates, value)
    out: dict[str, Any] = {}
    for cand in candidates:
        entry: dict[str, Any] = {}
        if study.uses_spans and (data.get(NO_ERROR_FIELD.format(cand.public_id)) or study.uses_score):
            entry["spans"] = []
        score = data.get(SCORE_FIELD.format(cand.public_id), "").strip()
        if study.uses_score and score:
            entry["score"] = _rank_value(score)
        if entry:
            out[cand.public_id] = entry
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


def answer_from_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """What to pre-fill when a refused answer is shown again (same shape as selectors.answer_for_client)."""
    if "ranks" in payload:
        return {"ranks": {k: v for k, v in payload["ranks"].items() if isinstance(v, int)}}
    if "choice" in payload:
        return {"choice": payload["choice"]}
    if "annotations" in payload:
        return {"annotations": payload["annotations"] if isinstance(payload["annotations"], dict) else {}}
    if "labels" in payload:
        return {"labels": list(payload["labels"])}
    if "label" in payload:
        return {"labels": [payload["label"]]}
    return {}
