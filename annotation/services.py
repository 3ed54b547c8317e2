"""Writes on the annotator's side: handing out work and storing judgments.

Pages and the JSON API both call these functions; nothing else writes
assignments or judgments.
"""
from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, ExpressionWrapper, F, OuterRef, BigIntegerField
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from studies.importing import ORDER_KEY_MODULUS
from studies.models import Candidate, Item, Protocol, Status, Study, Unit

from .models import Annotator, Assignment, AssignmentStatus, Judgment


class JudgmentError(Exception):
    """A refused submission; ``errors`` maps each field to its messages (the API's 400 body)."""

    def __init__(self, errors: dict[str, list[str]]):
        super().__init__(json.dumps(errors))
        self.errors = errors


# --- annotators -------------------------------------------------------------

@transaction.atomic
def annotators_create(*, study: Study, count: int = 1, external_ids: list[str] | None = None) -> list[Annotator]:
    """Create annotators (invitations) for a study, numbered in arrival order."""
    ids = external_ids if external_ids is not None else [""] * count
    last = study.annotators.order_by("-sequence").values_list("sequence", flat=True).first() or 0
    return [Annotator.objects.create(study=study, external_id=ext, sequence=last + k + 1) for k, ext in enumerate(ids)]


def annotator_for_external_id(*, study: Study, external_id: str, session: dict[str, str] | None = None) -> Annotator:
    """The annotator with this external id (e.g. a Prolific PID), created on first arrival.

    ``session`` (e.g. Prolific's study and session ids) is appended to the
    annotator's arrivals when it is new, so payments can be reconciled.
    """
    annotator = (study.annotators.filter(external_id=external_id).first()
                 or annotators_create(study=study, external_ids=[external_id])[0])
    known = [{k: v for k, v in entry.items() if k != "at"} for entry in annotator.external_sessions]
    if session and session not in known:
        with transaction.atomic():
            locked = Annotator.objects.select_for_update().get(pk=annotator.pk)
            locked.external_sessions = [*locked.external_sessions, {**session, "at": timezone.now().isoformat()}]
            locked.save(update_fields=["external_sessions"])
        annotator.external_sessions = locked.external_sessions
    return annotator


# --- assignment -------------------------------------------------------------

def _annotator_permutation(study: Study, annotator: Annotator) -> tuple[int, int]:
    """Coefficients (a, b) of the affine map key -> (a·key + b) mod p that orders this annotator's documents.

    p is prime and a ≠ 0, so the map is a permutation of document keys: every
    annotator gets their own seeded shuffle of documents, computable inside the
    database query, while items of one document keep their document order.
    """
    rng = random.Random(f"{study.seed}:annotator:{annotator.sequence}")
    return rng.randrange(1, ORDER_KEY_MODULUS), rng.randrange(ORDER_KEY_MODULUS)


def candidate_order_for(*, study: Study, annotator: Annotator, item: Item, candidates: list[Candidate]) -> list[int]:
    """Screen order of an item's candidates for one annotator (seeded, stored on the assignment).

    In document-unit studies — and for the sentences of one document — the
    systems come in the same order throughout a document (BlonDe App. D).
    """
    if study.unit == Unit.DOCUMENT and item.document_id:
        scope = f"doc:{item.document_id}"
    else:
        scope = f"item:{item.external_id}"  # not the pk: the same study file and seed give the same screens in any database
    rng = random.Random(f"{study.seed}:order:{annotator.sequence}:{scope}")
    systems = sorted(c.system for c in candidates)
    rng.shuffle(systems)
    rank = {s: k for k, s in enumerate(systems)}
    return [c.pk for c in sorted(candidates, key=lambda c: rank[c.system])]


def assignment_next(*, annotator: Annotator) -> Assignment | None:
    """The annotator's current assignment, handing out a new item if they have none.

    The new item is the first in the annotator's own order that still needs
    judgments (fewer than ``redundancy`` assignments) and that they have not
    seen. The item row is locked (``SKIP LOCKED`` on PostgreSQL; SQLite
    transactions are IMMEDIATE) and its counter is only raised while below the
    redundancy, so concurrent arrivals never push an item past it.
    Runs a constant number of queries whatever the study's size.
    """
    study = annotator.study
    last = _last_assignment(annotator)
    if last is not None and last.status == AssignmentStatus.PENDING:
        return last
    if study.status != Status.OPEN or annotator.excluded:
        return None
    if last is not None and last.status == AssignmentStatus.RELEASED and _reclaim(last, study.redundancy):
        return last
    done = last.sequence if last is not None else 0
    if study.items_per_annotator and done >= study.items_per_annotator:
        # Released items (taken back after going unanswered) do not count against the quota.
        counted = annotator.assignments.exclude(status=AssignmentStatus.RELEASED).count()
        if counted >= study.items_per_annotator:
            return None
    a, b = _annotator_permutation(study, annotator)
    shuffled = ExpressionWrapper((F("order_key") * a + b) % ORDER_KEY_MODULUS, output_field=BigIntegerField())
    for look in ("first", "after releasing stale reservations"):
        try:
            handed_out = _hand_out(study, annotator, shuffled, sequence=done + 1)
        except IntegrityError:
            # The same annotator asked twice at once and the other request took this sequence
            # number; ours rolled back whole (the slot too): give them the one that request made.
            return _last_assignment(annotator)
        if handed_out is not None:
            return handed_out
        # The pool looks empty: free what others left unanswered too long, then look once more.
        if look != "first" or not assignments_release_stale(study=study):
            return None
    return None


def _last_assignment(annotator: Annotator) -> Assignment | None:
    last = annotator.assignments.select_related("item").order_by("-sequence").first()
    if last is not None:
        last.item.study = annotator.study  # already loaded: spare the callers a query
    return last


def _hand_out(study: Study, annotator: Annotator, shuffled: ExpressionWrapper, *, sequence: int) -> Assignment | None:
    """Claim the annotator's next open item in one transaction; None when no item is open to them."""
    for _attempt in range(5):
        with transaction.atomic():
            mine = Assignment.objects.filter(annotator=annotator, item=OuterRef("pk"))
            candidates_qs = (Item.objects.filter(study=study, n_assigned__lt=study.redundancy)
                             .filter(~Exists(mine))
                             .annotate(shuffled=shuffled)
                             .order_by("shuffled", "position", "pk"))
            if connection.features.has_select_for_update_skip_locked:
                candidates_qs = candidates_qs.select_for_update(skip_locked=True, of=("self",))
            item = candidates_qs.first()
            if item is not None:
                item.study = study
                if not _claim_slot(item.pk, study.redundancy):
                    continue  # someone took the last slot between our read and write
                cands = list(item.candidates.all())
                return Assignment.objects.create(
                    annotator=annotator, item=item, sequence=sequence, opened_at=timezone.now(),
                    candidate_order=candidate_order_for(study=study, annotator=annotator, item=item,
                                                        candidates=cands))
        return None
    return None


def _claim_slot(item_id: int, redundancy: int) -> bool:
    """Take one of the item's slots if it still has one: the only place the redundancy bound is enforced."""
    return bool(Item.objects.filter(pk=item_id, n_assigned__lt=redundancy)
                .update(n_assigned=F("n_assigned") + 1))


def _reclaim(assignment: Assignment, redundancy: int) -> bool:
    """Give a released assignment back to its annotator when the item still has a free slot."""
    with transaction.atomic():
        if not _claim_slot(assignment.item_id, redundancy):
            return False
        assignment.status = AssignmentStatus.PENDING
        assignment.opened_at = timezone.now()
        Assignment.objects.filter(pk=assignment.pk).update(status=assignment.status, opened_at=assignment.opened_at)
    return True


def assignments_release_stale(*, study: Study) -> int:
    """Put items handed out but unanswered for longer than the study's reservation back in the pool.

    The assignment is kept (marked released, never deleted): if its annotator
    comes back and the slot is still free they get the item again, and an answer
    they send for it anyway is stored (the item then has one judgment more
    than the redundancy). Returns how many were released.
    """
    if not study.reservation_minutes:
        return 0
    cutoff = timezone.now() - timedelta(minutes=study.reservation_minutes)
    with transaction.atomic():
        stale = list(Assignment.objects.select_for_update()
                     .filter(item__study=study, status=AssignmentStatus.PENDING, opened_at__lt=cutoff)
                     .values_list("pk", "item_id"))
        if not stale:
            return 0
        Assignment.objects.filter(pk__in=[pk for pk, _ in stale]).update(status=AssignmentStatus.RELEASED)
        for item_id, n in Counter(item_id for _, item_id in stale).items():
            Item.objects.filter(pk=item_id).update(n_assigned=F("n_assigned") - n)
    return len(stale)


def assignment_open(*, assignment: Assignment) -> None:
    """Record that the item is on screen now; the next answer's server clock starts here."""
    assignment.opened_at = timezone.now()
    Assignment.objects.filter(pk=assignment.pk).update(opened_at=assignment.opened_at)


# --- judgments --------------------------------------------------------------

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
        errors.setdefault("ranks", []).append(f"Every candidate needs a rank; {len(missing)} missing.")
    ranks: dict[str, int] = {}
    for key, rank in value.items():
        if key not in candidates:
            continue
        if isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= n:
            errors.setdefault("ranks", []).append(f"Rank of candidate {key} must be a whole number from 1 to {n}.")
        else:
            ranks[key] = rank
    if not errors.get("ranks") and not study.allow_ties and len(set(ranks.values())) != len(ranks):
        errors["ranks"] = ["Two candidates share a rank, but this study does not allow ties."]
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


ANSWER_FIELDS = {Protocol.RANKING: ("ranks",), Protocol.CHOICE: ("choice",), Protocol.JUDGMENT: ("label", "labels")}
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
        candidates = list(assignment.item.candidates.all())
    by_public = {c.public_id: c for c in candidates}
    answer = None
    if not any(k in payload for k in expected):
        errors.setdefault(expected[0], []).append("This field is required.")
    elif study.protocol == Protocol.RANKING:
        answer = _validate_ranks(study, by_public, payload["ranks"], errors)
    elif study.protocol == Protocol.CHOICE:
        answer = _validate_choice(study, by_public, payload["choice"], errors)
    else:
        answer = _validate_labels(study, payload, errors)
    if errors or answer is None:
        raise JudgmentError(errors)
    return answer, times


#: The largest duration a PositiveIntegerField holds on every backend (PostgreSQL integer): about 24.8 days.
#: Longer spans (client clocks years apart, an item left open for weeks) are stored at this cap, never refused.
DURATION_MS_MAX = 2_147_483_647


def _digest(answer: dict) -> str:
    return hashlib.sha256(json.dumps(answer, sort_keys=True).encode()).hexdigest()


def judgment_submit(*, assignment: Assignment, payload: Any,
                    candidates: list[Candidate] | None = None) -> tuple[Judgment, bool]:
    """Store an answer as a new judgment (or revision); return (judgment, created).

    One transaction per judgment. Sending the answer that is already current
    returns that judgment unchanged (idempotent); a different answer becomes a
    new revision and the old one is kept as history, never overwritten.
    ``candidates`` (the item's, already loaded by the caller) spares a query.
    """
    answer, times = judgment_validate(assignment=assignment, payload=payload, candidates=candidates)
    digest = _digest(answer)
    now = timezone.now()
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        current = Judgment.objects.filter(assignment=locked, is_current=True).first()
        if current is not None and current.payload_digest == digest:
            return current, False
        started = locked.opened_at or locked.created_at
        if times["client_started_at"] and times["client_submitted_at"]:
            duration = (times["client_submitted_at"] - times["client_started_at"]).total_seconds()
        else:
            duration = (now - started).total_seconds()
        revision = 1
        if current is not None:
            revision = current.revision + 1
            Judgment.objects.filter(pk=current.pk).update(is_current=False)
        judgment = Judgment.objects.create(
            assignment=locked, revision=revision, is_current=True, answer=answer, payload_digest=digest,
            client_started_at=times["client_started_at"], client_submitted_at=times["client_submitted_at"],
            started_at=started, duration_ms=min(max(0, int(duration * 1000)), DURATION_MS_MAX))
        if locked.status == AssignmentStatus.RELEASED:
            # Its slot had gone back to the pool; the answer is kept and counts again.
            Item.objects.filter(pk=locked.item_id).update(n_assigned=F("n_assigned") + 1)
        if locked.status != AssignmentStatus.DONE:
            Assignment.objects.filter(pk=locked.pk).update(status=AssignmentStatus.DONE, completed_at=now)
        assignment.status = AssignmentStatus.DONE
    if assignment.item.is_spam and assignment.item.study.auto_exclude_share is not None:
        # Cheap: only answers to spam items, a small share of all answers (see services_quality).
        from .services_quality import annotator_apply_auto_exclusion

        annotator_apply_auto_exclusion(annotator=assignment.annotator)
    return judgment, True


# --- annotator milestones (pages) --------------------------------------------

def annotator_instructions_seen(*, annotator: Annotator) -> None:
    """Remember the first time the annotator opened the instructions (kept, never moved later)."""
    if annotator.instructions_seen_at is None:
        annotator.instructions_seen_at = timezone.now()
        Annotator.objects.filter(pk=annotator.pk, instructions_seen_at__isnull=True).update(
            instructions_seen_at=annotator.instructions_seen_at)


def annotator_finish(*, annotator: Annotator) -> None:
    """Remember when the annotator reached the completion page for the first time."""
    if annotator.finished_at is None:
        annotator.finished_at = timezone.now()
        Annotator.objects.filter(pk=annotator.pk, finished_at__isnull=True).update(finished_at=annotator.finished_at)
