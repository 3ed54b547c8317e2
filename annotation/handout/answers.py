"""Checking an answer against its study's protocol: no writes, no queries beyond the item's candidates.

What a protocol accepts is its spec's ``validate_answer`` (protocols/); this module adds what every
answer shares: a JSON object, only the protocol's fields and the client's times.

``judgment_validate`` turns an API or form payload into the normalised answer that
``services.judgment_submit`` stores, or raises :class:`JudgmentError` whose ``errors``
are the API's 400 body (each field with its messages, naming the candidates concerned).
"""
from __future__ import annotations

import json
from datetime import datetime
from datetime import timezone as dt_timezone
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from studies.models import Candidate

from annotation.handout import statements
from annotation.handout.suggestions import suggestions_shown
from annotation.models import Assignment


class JudgmentError(Exception):
    """A refused submission; ``errors`` maps each field to its messages (the API's 400 body)."""

    def __init__(self, errors: dict[str, list[str]]):
        super().__init__(json.dumps(errors))
        self.errors = errors



def client_time(value: Any) -> datetime | None:
    """A client's ISO 8601 time as an aware datetime (naive = UTC); None when it is not one.

    ``parse_datetime`` raises on well-formed but impossible values
    ("2026-02-30T10:00:00Z", hour 25, offset +99:00): those are bad input too,
    never a server error.
    """
    if not isinstance(value, str):
        return None
    try:
        parsed = parse_datetime(value)
    except ValueError:
        return None
    if parsed is not None and timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, dt_timezone.utc)
    return parsed


def _parse_time(payload: dict, key: str, errors: dict[str, list[str]]) -> datetime | None:
    value = payload.get(key)
    if value in (None, ""):
        return None
    parsed = client_time(value)
    if parsed is None:
        errors.setdefault(key, []).append("Must be an ISO 8601 date-time, e.g. 2026-11-22T10:15:00Z.")
    return parsed


TIME_FIELDS = ("client_started_at", "client_submitted_at")


def judgment_validate(*, assignment: Assignment, payload: Any, candidates: list[Candidate] | None = None) -> tuple[dict, dict]:
    """Check a payload against the study's protocol; return (normalised answer, client times) or raise JudgmentError."""
    study = assignment.item.study
    if not isinstance(payload, dict):
        raise JudgmentError({"body": ["Must be a JSON object."]})
    errors: dict[str, list[str]] = {}
    spec = study.spec
    expected = spec.answer_fields
    unknown = sorted(set(payload) - set(expected) - set(spec.extra_answer_fields) - set(TIME_FIELDS))
    if unknown:
        errors["body"] = [f"Unknown field(s) {', '.join(unknown)}; a {study.protocol} answer uses {' or '.join(expected)}."]
    times = {key: _parse_time(payload, key, errors) for key in TIME_FIELDS}
    if candidates is None:
        candidates = statements.candidates_of(assignment.item_id)
    by_public = {c.public_id: c for c in candidates}
    answer = None
    if not any(k in payload for k in expected):
        errors.setdefault(expected[0], []).append("This field is required.")
    else:
        answer = spec.validate_answer(study, item_source=assignment.item.source or "", candidates=by_public,
                                      payload=payload, errors=errors)
        if answer is not None:
            answer = spec.answer_with_suggestions(study, shown=suggestions_shown(assignment, candidates),
                                                  candidates=by_public, payload=payload, answer=answer, errors=errors)
    if errors or answer is None:
        raise JudgmentError(errors)
    return answer, times
