"""The item page's form: turning a plain POST into the service's payload.

The page posts ordinary form fields (so it works without JavaScript); this
module translates them into exactly the payload the JSON API accepts, so both
go through ``services.judgment_submit`` and its one set of rules. Nothing is
decided here: an incomplete or contradictory answer is passed on as it is
and refused by the service with its own message.
"""
from __future__ import annotations

from typing import Any

from django.http import QueryDict

from studies.models import Candidate, Protocol, Study

from annotation.services import client_time

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


def answer_from_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """What to pre-fill when a refused answer is shown again (same shape as selectors.answer_for_client)."""
    if "ranks" in payload:
        return {"ranks": {k: v for k, v in payload["ranks"].items() if isinstance(v, int)}}
    if "choice" in payload:
        return {"choice": payload["choice"]}
    if "labels" in payload:
        return {"labels": list(payload["labels"])}
    if "label" in payload:
        return {"labels": [payload["label"]]}
    return {}
