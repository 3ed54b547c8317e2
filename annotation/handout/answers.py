"""Checking an answer against its study's protocol: no writes, no queries beyond the item's candidates.

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

from studies.models import SPAN_PROTOCOLS, Candidate, Protocol, Study
from studies.definition import taxonomy as tx
from studies.importing.span_checks import category_names, overlap_problems, sorted_spans, span_checked

from annotation.handout import statements
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


def _validate_ranks(study: Study, candidates: dict[str, Candidate], value: Any, errors: dict) -> dict | None:
    if not isinstance(value, dict):
        errors["ranks"] = ["Must be an object mapping every candidate id to its rank."]
        return None
    n = len(candidates)
    unknown = [k for k in value if k not in candidates]
    missing = [k for k in candidates if k not in value]
    if unknown:
        errors.setdefault("ranks", []).append(f"Unknown candidate id(s) for this item: {', '.join(map(str, unknown))}.")
    if missing:
        # The ids let a client (and the item page, as letters) point at the unranked candidates.
        errors.setdefault("ranks", []).append(
            f"Every candidate needs a rank; {len(missing)} missing ({', '.join(missing)}).")
    ranks: dict[str, int] = {}
    for key, rank in value.items():
        if key not in candidates:
            continue
        if isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= n:
            errors.setdefault("ranks", []).append(f"Rank of candidate {key} must be a whole number from 1 to {n}.")
        else:
            ranks[key] = rank
    if not errors.get("ranks") and not study.allow_ties and len(set(ranks.values())) != len(ranks):
        shared = [k for k, r in ranks.items() if list(ranks.values()).count(r) > 1]
        errors["ranks"] = [f"Two candidates share a rank, but this study does not allow ties ({', '.join(shared)})."]
    if errors.get("ranks"):
        return None
    return {"ranks": {str(candidates[k].pk): r for k, r in sorted(ranks.items(), key=lambda kv: candidates[kv[0]].pk)}}


def _validate_choice(study: Study, candidates: dict[str, Candidate], value: Any, errors: dict) -> dict | None:
    if not isinstance(value, str) or not value:
        errors["choice"] = ["Must be a candidate id or one of the study's options."]
        return None
    if value in candidates:
        return {"choice": {"candidate": candidates[value].pk}}
    if value in study.options:
        return {"choice": {"option": value}}
    offered = ", ".join(study.options) if study.options else "none"
    errors["choice"] = [f"{value!r} is neither a candidate of this item nor an option of this study (options: {offered})."]
    return None


def _validate_labels(study: Study, payload: dict, errors: dict) -> dict | None:
    if "label" in payload and "labels" in payload:
        errors["body"] = ["Send either label or labels, not both."]
        return None
    if "labels" in payload:
        field, value = "labels", payload["labels"]
        if not study.multi_label:
            errors["labels"] = ["This study takes a single label: send {\"label\": …}."]
            return None
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            errors["labels"] = ["Must be a non-empty list of labels."]
            return None
        labels = value
    else:
        field, value = "label", payload.get("label")
        if not isinstance(value, str) or not value:
            errors["label"] = ["Must be one of the study's labels."]
            return None
        labels = [value]
    unknown = [v for v in labels if v not in study.labels]
    if unknown:
        errors[field] = [f"Not a label of this study: {', '.join(unknown)} (labels: {', '.join(study.labels)})."]
        return None
    if len(set(labels)) != len(labels):
        errors[field] = ["A label is repeated."]
        return None
    order = {label: k for k, label in enumerate(study.labels)}
    return {"labels": sorted(labels, key=order.__getitem__)}


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float))


def _validate_annotations(study: Study, item_source: str, candidates: dict[str, Candidate], value: Any,
                          errors: dict) -> dict | None:
    """MQM / ESA: per candidate its error spans (``[]`` = no error) and, for ESA, its 0–100 score."""
    field = "annotations"
    if not isinstance(value, dict):
        errors[field] = ["Must be an object mapping every candidate id to {\"spans\": […]"
                         + (", \"score\": 0–100" if study.uses_score else "") + "}."]
        return None
    unknown = [k for k in value if k not in candidates]
    missing = [k for k in candidates if k not in value]
    if unknown:
        errors.setdefault(field, []).append(f"Unknown candidate id(s) for this item: {', '.join(map(str, unknown))}.")
    if missing:
        errors.setdefault(field, []).append(
            f"Every candidate needs an answer; {len(missing)} missing ({', '.join(missing)}).")
    categories = category_names(study)
    severities = study.effective_severities()
    source_allowed = study.protocol == Protocol.MQM and study.show_source  # annotators mark only what they see
    out: dict[str, dict] = {}
    for key, entry in value.items():
        if key not in candidates:
            continue
        where = f"candidate {key}"
        if not isinstance(entry, dict):
            errors.setdefault(field, []).append(f"{where}: must be an object.")
            continue
        allowed = ({"spans"} if study.uses_spans else set()) | ({"score"} if study.uses_score else set())
        extra = sorted(set(entry) - allowed)
        if extra:
            errors.setdefault(field, []).append(
                f"{where}: unknown field(s) {', '.join(extra)} (this study takes {', '.join(sorted(allowed))}).")
        spans: list[dict] = []
        if study.uses_spans:
            raw = entry.get("spans")
            if not isinstance(raw, list):
                errors.setdefault(field, []).append(
                    f"{where}.spans: required, a list of error spans ([] confirms there is no error).")
                raw = []
            texts = {"target": candidates[key].text, "source": item_source}
            for k, span in enumerate(raw):
                checked, problems = span_checked(span, study, texts, categories, severities, f"{where}.spans[{k}]",
                                                 source_allowed=source_allowed)
                if checked is None:
                    errors.setdefault(field, []).extend(problems)
                else:
                    spans.append(checked)
            for problem in overlap_problems(study, spans, where):
                errors.setdefault(field, []).append(problem)
        score = None
        if study.uses_score:
            score = entry.get("score")
            if score is None:
                errors.setdefault(field, []).append(f"{where}.score: required, a number from {tx.SCORE_MIN} to {tx.SCORE_MAX}.")
            elif not _number(score) or not tx.SCORE_MIN <= score <= tx.SCORE_MAX or score != score:
                errors.setdefault(field, []).append(f"{where}.score: must be a number from {tx.SCORE_MIN} to {tx.SCORE_MAX}.")
                score = None
        result: dict[str, Any] = {"spans": sorted_spans(spans)}
        if study.uses_score:
            result["score"] = score
        out[str(candidates[key].pk)] = result
    if errors.get(field):
        return None
    return {"annotations": dict(sorted(out.items(), key=lambda kv: int(kv[0])))}


ANSWER_FIELDS = {Protocol.RANKING: ("ranks",), Protocol.CHOICE: ("choice",), Protocol.JUDGMENT: ("label", "labels"),
                 Protocol.MQM: ("annotations",), Protocol.ESA: ("annotations",)}
TIME_FIELDS = ("client_started_at", "client_submitted_at")


def judgment_validate(*, assignment: Assignment, payload: Any, candidates: list[Candidate] | None = None) -> tuple[dict, dict]:
    """Check a payload against the study's protocol; return (normalised answer, client times) or raise JudgmentError."""
    study = assignment.item.study
    if not isinstance(payload, dict):
        raise JudgmentError({"body": ["Must be a JSON object."]})
    errors: dict[str, list[str]] = {}
    expected = ANSWER_FIELDS[Protocol(study.protocol)]
    unknown = sorted(set(payload) - set(expected) - set(TIME_FIELDS))
    if unknown:
        errors["body"] = [f"Unknown field(s) {', '.join(unknown)}; a {study.protocol} answer uses {' or '.join(expected)}."]
    times = {key: _parse_time(payload, key, errors) for key in TIME_FIELDS}
    if candidates is None:
        candidates = statements.candidates_of(assignment.item_id)
    by_public = {c.public_id: c for c in candidates}
    answer = None
    if not any(k in payload for k in expected):
        errors.setdefault(expected[0], []).append("This field is required.")
    elif study.protocol == Protocol.RANKING:
        answer = _validate_ranks(study, by_public, payload["ranks"], errors)
    elif study.protocol == Protocol.CHOICE:
        answer = _validate_choice(study, by_public, payload["choice"], errors)
    elif study.protocol in SPAN_PROTOCOLS:
        answer = _validate_annotations(study, assignment.item.source or "", by_public, payload["annotations"], errors)
    else:
        answer = _validate_labels(study, payload, errors)
    if errors or answer is None:
        raise JudgmentError(errors)
    return answer, times
