"""Writes on the annotator's side: handing out work and storing judgments.

Pages and the JSON API both call these functions; nothing else writes
assignments or judgments.
"""
from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, OperationalError, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from studies.models import Candidate, Item, Status, Study, Unit

from annotation.handout import allocation, ordering
from annotation.handout.exclusion import annotator_apply_auto_exclusion

from annotation.handout import slots

from annotation.handout import statements
from annotation.handout.answers import (  # noqa: F401 (callers use services.X for the whole judging API)
    TIME_FIELDS, JudgmentError, client_time, judgment_validate)
from annotation.models import Annotator, Assignment, AssignmentStatus, Judgment


# --- annotators -------------------------------------------------------------

#: The most invitations one call creates (``invite --count`` / ``--ids``; the study page's form allows 200).
#: Each is a row and a link printed; a bigger panel is invited in several calls.
MAX_INVITATIONS = 10_000


@transaction.atomic
def annotators_create(*, study: Study, count: int = 1, external_ids: list[str] | None = None,
                      is_pilot: bool = False) -> list[Annotator]:
    """Create annotators (invitations) for a study, numbered in arrival order; pilot annotators if ``is_pilot``.

    The numbers are allocated under the study's row lock (PostgreSQL ``SELECT … FOR UPDATE``; SQLite's
    IMMEDIATE transaction holds the database's write lock already): two arrivals at the same moment read the
    highest number one after the other, never both the same one. The (study, sequence) unique constraint
    backs this up: a collision would be an error, never two annotators sharing their item and screen orders.
    """
    n = len(external_ids) if external_ids is not None else count
    if not 0 <= n <= MAX_INVITATIONS:
        raise ValueError(f"count: {n} invitations asked for; one call creates 0 to {MAX_INVITATIONS}")
    ids = external_ids if external_ids is not None else [""] * count
    Study.objects.select_for_update().filter(pk=study.pk).values_list("pk", flat=True).get()
    last = study.annotators.order_by("-sequence").values_list("sequence", flat=True).first() or 0
    return [Annotator.objects.create(study=study, external_id=ext, sequence=last + k + 1, is_pilot=is_pilot)
            for k, ext in enumerate(ids)]


def annotator_for_external_id(*, study: Study, external_id: str, session: dict[str, str] | None = None) -> Annotator:
    """The annotator with this external id (e.g. a Prolific PID), created on first arrival.

    ``session`` (e.g. Prolific's study and session ids) is appended to the
    annotator's arrivals when it is new, so payments can be reconciled.
    """
    annotator = study.annotators.filter(external_id=external_id).first()
    if annotator is None:
        try:
            annotator = annotators_create(study=study, external_ids=[external_id])[0]
        except IntegrityError:
            # The same participant arrived twice at once (a double click on the platform's link): the other
            # request created them first (unique (study, external_id)); this one rolled back whole.
            annotator = study.annotators.get(external_id=external_id)
    known = [{k: v for k, v in entry.items() if k != "at"} for entry in annotator.external_sessions]
    if session and session not in known:
        with transaction.atomic():
            locked = Annotator.objects.select_for_update().get(pk=annotator.pk)
            locked.external_sessions = [*locked.external_sessions, {**session, "at": timezone.now().isoformat()}]
            locked.save(update_fields=["external_sessions"])
        annotator.external_sessions = locked.external_sessions
    return annotator


# --- assignment -------------------------------------------------------------

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


def annotator_may_get_work(*, annotator: Annotator) -> bool:
    """Open studies hand out work to everyone invited, pilot studies to pilot annotators only; drafts to no one."""
    status = annotator.study.status
    if annotator.excluded:
        return False
    return status == Status.OPEN or (status == Status.PILOT and annotator.is_pilot)


#: ``assignment_next(last=…)`` when the caller has not read the annotator's latest assignment.
_UNREAD: Any = object()


def assignment_next(*, annotator: Annotator, last: Assignment | None = _UNREAD) -> Assignment | None:
    """The annotator's current assignment, handing out a new item if they have none.

    The new item is the first open item (fewer counted assignments than the
    redundancy) they have not seen, in their own document order
    (annotation.handout.ordering); items of one document come in document order. The
    claim is a conditional UPDATE of the item row (a row lock; SQLite
    transactions are IMMEDIATE), so concurrent arrivals never push an item past
    its redundancy. A constant number of index-backed queries whatever the
    study's size: no sort or count over the study's items.

    ``last``: the annotator's latest assignment with its item, when the caller read it together with the
    annotator (``statements.annotator_for_next``); else it is read here. The assignment returned carries
    ``progress_delta`` when this call knows how it changed the annotator's progress counts.
    """
    study = annotator.study
    if last is _UNREAD:
        last = _last_assignment(annotator)
    if last is not None and last.status == AssignmentStatus.PENDING:
        last.progress_delta = (0, 0, 0)
        return last
    if not annotator_may_get_work(annotator=annotator):
        return None
    if last is not None and last.status == AssignmentStatus.RELEASED and _reclaim(last, study):
        return last
    done = last.sequence if last is not None else 0
    if study.items_per_annotator and done >= study.items_per_annotator:
        # Released items (taken back after going unanswered) and skipped ones do not count against the quota.
        counted = annotator.assignments.exclude(
            status__in=[AssignmentStatus.RELEASED, AssignmentStatus.SKIPPED]).count()
        if counted >= study.items_per_annotator:
            return None
    # Adaptive allocation only (an empty dict is uniform: no query, the path below unchanged).
    limit = allocation.restriction(study) if study.allocation else None
    if limit is not None and limit.settled:
        return None
    cursor = last.order_step if last is not None else 0
    checks = _checks_due(study, annotator, last, sequence=done + 1)
    for look in ("first", "after releasing stale reservations"):
        try:
            handed_out = _hand_out(study, annotator, sequence=done + 1, cursor=cursor, checks=checks, limit=limit)
        except IntegrityError:
            # The same annotator asked twice at once and the other request took this sequence
            # number; ours rolled back whole (the slot too): give them the one that request made.
            return _last_assignment(annotator)
        if handed_out is not None:
            if look != "first":
                handed_out.progress_delta = None  # the release changed counts this call did not follow
            return handed_out
        # The pool looks empty: free what others left unanswered too long, then look once more.
        if look != "first" or not assignments_release_stale(study=study):
            return None
    return None


class _Checks:
    """The attention checks due at this hand-out (annotation.handout.ordering.CheckSchedule).

    ``owed``: check slots of the annotator's schedule reached but not served
    (this position's slot included). A check waits while the annotator is in
    the middle of a document, and is owed at most two deep (never more than two
    checks in a row); ``served``: checks handed out so far, where the check walk
    resumes.
    """

    __slots__ = ("owed", "served", "last_doc", "run")

    def __init__(self, owed: int, served: int, last_doc: int | None, run: int = 0):
        self.owed, self.served, self.last_doc, self.run = owed, served, last_doc, run


def _checks_due(study: Study, annotator: Annotator, last: Assignment | None, *, sequence: int) -> _Checks:
    if not study.n_spam_items:
        return _Checks(0, 0, None)
    schedule = ordering.check_schedule(seed=study.seed, sequence=annotator.sequence, n_checks=study.n_spam_items,
                                       n_items=study.n_real_items + study.n_spam_items)
    carried = last.checks_owed if last is not None else 0
    owed = min(2, carried + (1 if schedule.is_check(sequence) else 0))
    served = max(0, schedule.checks_up_to(sequence) - owed)
    return _Checks(owed, served, last.item.doc_index if last is not None and not last.item.is_spam else None,
                   run=last.check_run if last is not None else 0)

def _last_assignment(annotator: Annotator) -> Assignment | None:
    """The annotator's latest assignment with its item (the item's study is the annotator's, already loaded)."""
    return statements.last_assignment(annotator)


#: Rows fetched per look-up: enough to survive a few lost races without another query.
_CANDIDATES = 8


def _open_items(study: Study, annotator: Annotator) -> QuerySet[Item]:
    """The study's open items this annotator has never had (the partial index, then the unique (annotator, item) one)."""
    mine = Assignment.objects.filter(annotator=annotator, item=OuterRef("pk"))
    return Item.objects.filter(study=study, is_open=True).filter(~Exists(mine))


def window_slots(*, study: Study, annotator: Annotator, documents: list[int]) -> list[tuple[int, int, int]]:
    """(item id, its count, its document) of the first open items of these documents the annotator has never
    had, in the given document order.

    The hand-out's one query per window (annotation.handout.statements.window_sql;
    bench/assignment_scale.py shows its plan): the partial index on open items,
    probed once per document, and the sort is over those few rows only.
    """
    return statements.window_slots(study_id=study.pk, annotator_id=annotator.pk, documents=documents,
                                   limit=_CANDIDATES)


def _hand_out(study: Study, annotator: Annotator, *, sequence: int, cursor: int,
              checks: _Checks | None = None, limit: allocation.Restriction | None = None) -> Assignment | None:
    """Claim the annotator's next open item in one transaction; None when no item is open to them.

    When a check is due (and the annotator is not in the middle of a
    document), first a spam copy from the annotator's walk of the spam
    documents. Otherwise, and when no check is open, up to MAX_WINDOWS windows
    of the annotator's walk of the real documents (one query each: the open
    items of WINDOW documents, in walk then document order); then, for the tail
    of the study and items reopened behind the cursor, the open items from a
    seeded document on (an index range scan, never a sort), real documents
    before spam ones. ``limit`` (adaptive allocation after its warm-up) keeps the
    real items to those holding an open pair of systems.
    """
    checks = checks or _Checks(0, 0, None)
    n_real_docs = study.n_documents - study.n_spam_items
    walk = ordering.walk_for(seed=study.seed, sequence=annotator.sequence, n_documents=n_real_docs)
    for _attempt in range(5):
        try:
            made, lost_race = _hand_out_once(study, annotator, walk, sequence=sequence, cursor=cursor, checks=checks,
                                             limit=limit)
        except _ExcludedMeanwhile:
            # An exclusion committed after this request checked the flag: the claim was rolled back whole.
            annotator.excluded = True
            return None
        except OperationalError as exc:
            if not _is_deadlock(exc):
                raise
            # PostgreSQL broke a lock cycle between concurrent hand-outs by rolling this attempt back
            # whole (it happens with many annotators on few items): nothing of it was stored, look again.
            continue
        if made is not None or not lost_race:
            return made
    return None


def _is_deadlock(exc: OperationalError) -> bool:
    """PostgreSQL's deadlock_detected (SQLSTATE 40P01), as psycopg reports it under Django's wrapper."""
    return getattr(exc.__cause__, "sqlstate", None) == "40P01"


def _hand_out_once(study: Study, annotator: Annotator, walk: ordering.Walk, *, sequence: int,
                   cursor: int, checks: _Checks, limit: allocation.Restriction | None = None,
                   ) -> tuple[Assignment | None, bool]:
    """One transaction of the hand-out: (the assignment made or None, whether a lost race may explain None)."""
    lost_race = False
    n_real_docs = walk.d
    with transaction.atomic():
        if checks.owed and checks.run < 2 and not _document_goes_on(study, annotator, checks.last_doc):
            made, lost = _hand_out_check(study, annotator, sequence=sequence, cursor=cursor, checks=checks,
                                         first_doc=n_real_docs)
            if made is not None:
                return made, lost
            lost_race = lost
        owed = checks.owed
        step = cursor
        for _window in range(ordering.MAX_WINDOWS):
            if step >= walk.p:
                break
            window, after = walk.window(step)
            if window:
                rows = window_slots(study=study, annotator=annotator, documents=[doc for _, doc in window])
                if limit is not None and rows:
                    kept = allocation.items_with_open_pair(limit, [item_id for item_id, _, _ in rows])
                    rows = [row for row in rows if row[0] in kept]
                steps = dict((doc, s) for s, doc in window)
                for item_id, seen, doc in rows:
                    made = _claim(study, annotator, item_id, seen, sequence=sequence, order_step=steps[doc],
                                  checks_owed=owed)
                    if made is not None:
                        return made, lost_race
                lost_race = lost_race or bool(rows)
            step = after
        # The tail: real documents first, from a seeded place; spam copies only when no real item is left.
        offset = ordering.fallback_offset(seed=study.seed, sequence=annotator.sequence, request=sequence,
                                          n_documents=n_real_docs)
        real = Q(doc_index__lt=n_real_docs)
        for part, run in ((real & Q(doc_index__gte=offset), 0), (real & Q(doc_index__lt=offset), 0),
                          (~real, checks.run + 1)):
            pool = _open_items(study, annotator).filter(part)
            if limit is not None and run == 0:  # the real parts (the spam copies' part has run ≥ 1): open pairs only
                pool = pool.filter(allocation.open_pair_filter(limit))
            tail = list(pool.order_by("doc_index", "position", "pk").values_list("pk", "n_assigned")[:_CANDIDATES])
            for item_id, seen in tail:
                made = _claim(study, annotator, item_id, seen, sequence=sequence, order_step=step, checks_owed=owed,
                              check_run=run)
                if made is not None:
                    return made, lost_race
            lost_race = lost_race or bool(tail)
            if tail:
                break
    return None, lost_race


def _document_goes_on(study: Study, annotator: Annotator, last_doc: int | None) -> bool:
    """Whether the annotator's last (real) document still has an open item for them: a check then waits."""
    if last_doc is None:
        return False
    return _open_items(study, annotator).filter(doc_index=last_doc).exists()


def _hand_out_check(study: Study, annotator: Annotator, *, sequence: int, cursor: int, checks: _Checks,
                    first_doc: int) -> tuple[Assignment | None, bool]:
    """A spam copy from the annotator's own walk of the spam documents (doc_index ≥ ``first_doc``).

    The walk resumes at the number of checks already served; the real walk's
    cursor is kept on the assignment, so the next real item comes from where
    the annotator was.
    """
    lost_race = False
    walk = ordering.walk_for(seed=study.seed, sequence=annotator.sequence, n_documents=study.n_spam_items,
                             salt="checks-walk")
    step = min(checks.served, max(walk.p - 1, 0))
    for _window in range(ordering.MAX_WINDOWS):
        if step >= walk.p:
            break
        window, after = walk.window(step)
        if window:
            rows = window_slots(study=study, annotator=annotator, documents=[first_doc + doc for _, doc in window])
            for item_id, seen, _doc in rows:
                made = _claim(study, annotator, item_id, seen, sequence=sequence, order_step=cursor,
                              checks_owed=checks.owed - 1, check_run=checks.run + 1)
                if made is not None:
                    return made, lost_race
            lost_race = lost_race or bool(rows)
        step = after
    return None, lost_race


class _ExcludedMeanwhile(Exception):
    """The annotator was excluded while their hand-out ran (the assignment INSERT found them excluded)."""


def _claim(study: Study, annotator: Annotator, item_id: int, seen: int, *, sequence: int,
           order_step: int, checks_owed: int = 0, check_run: int = 0) -> Assignment | None:
    """Take a slot of the item (whose count was ``seen``) and create the assignment; None when someone else
    changed its count first."""
    loaded = slots.slot_claim_loading(item_id=item_id, seen=seen, redundancy=study.redundancy)
    if loaded is None:
        return None
    item, cands, full = loaded
    item.study = study
    assignment = statements.insert_assignment(Assignment(
        annotator=annotator, item=item, sequence=sequence, opened_at=timezone.now(), order_step=order_step,
        checks_owed=checks_owed, check_run=check_run, candidate_order=candidate_order_for(study=study, annotator=annotator, item=item, candidates=cands)))
    if assignment is None:
        raise _ExcludedMeanwhile  # rolls the claim back with the hand-out's transaction
    # The caller shows these next: handed over explicitly (selectors.item_candidates reads them), no query.
    assignment.candidates_loaded = cands
    if full:
        slots.study_open_items_add(study=study, delta=-1)
    # One more pending assignment; its item, open until now, is either still open (one more of theirs
    # open) or full (one open item fewer in the study).
    assignment.progress_delta = (1, 0, -1) if full else (1, 1, 0)
    return assignment


#: Reads of a released assignment's item before its reclaim gives up (each lost one means another claim won).
_RECLAIM_ATTEMPTS = 8


def _reclaim(assignment: Assignment, study: Study) -> bool:
    """Give a released assignment back to its annotator when the item still has a free slot.

    The status flips RELEASED → PENDING in one conditional UPDATE (``WHERE status = 'released'``) before the
    slot is claimed: of two requests of one annotator (two tabs, a double click) that both read the
    assignment as released, the second waits on the first's row lock and then matches no row, so the item's
    count rises once. True when the assignment is pending for the annotator now (reclaimed by this request or
    by the other one); False when it is not (its item is full, or it was answered meanwhile).
    """
    now = timezone.now()
    with transaction.atomic():
        flipped = Assignment.objects.filter(pk=assignment.pk, status=AssignmentStatus.RELEASED).update(
            status=AssignmentStatus.PENDING, opened_at=now)
        if not flipped:
            current = Assignment.objects.filter(pk=assignment.pk).values_list("status", "opened_at").get()
            assignment.status, assignment.opened_at = current
            return assignment.status == AssignmentStatus.PENDING
        for _attempt in range(_RECLAIM_ATTEMPTS):
            # Another annotator's claim of the same item may change its count between our read and our
            # conditional UPDATE: read it again (each statement sees the latest commit) while a slot is free.
            seen = Item.objects.filter(pk=assignment.item_id).values_list("n_assigned", flat=True).get()
            claimed, full = slots.slot_claim(item_id=assignment.item_id, seen=seen, redundancy=study.redundancy)
            if claimed or seen >= study.redundancy:
                break
        if not claimed:
            transaction.set_rollback(True)  # the status flip too: the assignment stays released
            return False
        if full:
            slots.study_open_items_add(study=study, delta=-1)
    assignment.status = AssignmentStatus.PENDING
    assignment.opened_at = now
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
                     .values_list("pk", "item_id", "annotator__excluded"))
        if not stale:
            return 0
        Assignment.objects.filter(pk__in=[pk for pk, _, _ in stale]).update(status=AssignmentStatus.RELEASED)
        # An excluded annotator's assignments stopped counting when they were excluded. Several annotators'
        # assignments of one item can go stale together: each item moves down by as many as it lost.
        lost = Counter(item_id for _, item_id, excluded in stale if not excluded)
        for n in sorted(set(lost.values())):
            slots.items_count_add(study=study, items=Item.objects.filter(pk__in=[i for i, m in lost.items() if m == n]),
                                  delta=-n)
    return len(stale)


def assignment_open(*, assignment: Assignment) -> None:
    """Record that the item is on screen now; the next answer's server clock starts here."""
    assignment.opened_at = timezone.now()
    Assignment.objects.filter(pk=assignment.pk).update(opened_at=assignment.opened_at)


# --- judgments --------------------------------------------------------------

#: The largest duration a PositiveIntegerField holds on every backend (PostgreSQL integer): about 24.8 days.
#: Longer spans (client clocks years apart, an item left open for weeks) are stored at this cap, never refused.
DURATION_MS_MAX = 2_147_483_647


def _digest(answer: dict) -> str:
    return hashlib.sha256(json.dumps(answer, sort_keys=True).encode()).hexdigest()


def _duration_ms(span: timedelta) -> int:
    """A time span in whole milliseconds, within what the column holds (negative spans, from clocks set back,
    as 0)."""
    return min(max(0, int(span.total_seconds() * 1000)), DURATION_MS_MAX)


def _excluded_locked(annotator_id: int) -> bool:
    """The annotator's exclusion flag read under their row lock (``SELECT … FOR UPDATE``), held to the commit.

    A late answer to a released item and the annotator's exclusion are serialised on the annotator row
    (``annotator_exclude`` writes it first): whichever commits second sees the other's work, so the item is
    counted exactly when the annotator is not excluded. Only this rare path (an answer to a released
    assignment) pays the extra query; the flag read when the request started may be stale by now.
    """
    return Annotator.objects.select_for_update().filter(pk=annotator_id).values_list("excluded", flat=True).get()


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
        if assignment.item.study.allocation and not assignment.item.is_spam:
            # Adaptive allocation reads the judgments after the highest id it has seen: they must commit in id order.
            statements.study_judgments_ordered(assignment.item.study_id)
        # One statement locks the assignment (revisions of one answer are serialised) and reads its current answer.
        locked, current_pk, current_digest, current_revision = statements.assignment_locked(assignment.pk)
        if current_pk is not None and current_digest == digest:
            return Judgment.objects.get(pk=current_pk), False
        started = locked.opened_at or locked.created_at
        client_duration = None
        if times["client_started_at"] and times["client_submitted_at"]:
            client_duration = _duration_ms(times["client_submitted_at"] - times["client_started_at"])
        revision = 1
        if current_pk is not None:
            revision = (current_revision or 0) + 1
            Judgment.objects.filter(pk=current_pk).update(is_current=False)
        # The assignment is marked done in the judgment's INSERT statement (PostgreSQL; a second one elsewhere).
        judgment = statements.insert_judgment(Judgment(
            assignment=locked, revision=revision, is_current=True, answer=answer, payload_digest=digest,
            client_started_at=times["client_started_at"], client_submitted_at=times["client_submitted_at"],
            started_at=started, duration_ms=_duration_ms(now - started), client_duration_ms=client_duration),
            done_at=None if locked.status == AssignmentStatus.DONE else now, status=AssignmentStatus.DONE)
        if locked.status in (AssignmentStatus.RELEASED, AssignmentStatus.SKIPPED) \
                and not _excluded_locked(locked.annotator_id):
            # Its slot had gone back to the pool (released, or skipped: annotation.handout.skips); the answer is kept
            # and counts again (maybe past the redundancy).
            slots.items_count_add(study=assignment.item.study, items=Item.objects.filter(pk=locked.item_id), delta=1)
        assignment.status = AssignmentStatus.DONE
    if assignment.item.study.allocation and not assignment.item.is_spam:
        # Adaptive allocation: the confidence sequences see this judgment (at the latest at the refresh after
        # ``refresh_every`` judgments).
        allocation.after_judgment(assignment.item.study, judgment.pk)
    if assignment.item.is_spam and assignment.item.study.auto_exclude_share is not None:
        # Cheap: only answers to spam items, a small share of all answers (annotation/handout/exclusion.py).
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
