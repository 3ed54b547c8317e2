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

from studies.models import Candidate, Study

from annotation.handout.services import client_time

TIME_FIELDS = ("client_started_at", "client_submitted_at")


def form_number(raw: str) -> int | str:
    """An int when a form field holds a plain number; anything else is passed on for the service to refuse."""
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 6 else raw


def payload_from_post(*, study: Study, candidates: list[Candidate], data: QueryDict) -> dict[str, Any]:
    """The judgment payload the posted form describes (possibly incomplete): the protocol's fields
    (its spec's ``answer_from_post``) and the client's times."""
    payload: dict[str, Any] = dict(study.spec.answer_from_post(study, candidates, data))
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
    if "annotations" in payload:
        return {"annotations": payload["annotations"] if isinstance(payload["annotations"], dict) else {}}
    if "labels" in payload:
        return {"labels": list(payload["labels"])}
    if "label" in payload:
        return {"labels": [payload["label"]]}
    return {}
