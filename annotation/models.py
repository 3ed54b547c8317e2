"""The annotator's side: Annotator, Assignment, Judgment.

Judgments are append-only: a revision is a new row and the previous one is
marked superseded, so nothing an annotator submitted is ever overwritten.
"""
from __future__ import annotations

import secrets

from django.db import models

from studies.models import Candidate, Study, Item, opaque_id


def annotator_token() -> str:
    return secrets.token_urlsafe(24)


def annotator_code() -> str:
    """A short non-secret code identifying an annotator in reports and exports."""
    return "a" + secrets.token_hex(4)


class Annotator(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="annotators")
    token = models.CharField(max_length=64, unique=True, default=annotator_token, editable=False,
                             help_text="Secret in the invitation link; also the API token.")
    code = models.CharField(max_length=16, unique=True, default=annotator_code, editable=False,
                            help_text="Non-secret name used in exports and reports.")
    external_id = models.CharField(max_length=200, blank=True, help_text="Optional external id (e.g. Prolific PID).")
    external_sessions = models.JSONField(default=list, blank=True,
                                         help_text="Each arrival from a recruiting platform: its study and session ids "
                                                   "(Prolific STUDY_ID, SESSION_ID) and when, for reconciling payments.")
    entry_session = models.CharField(
        max_length=200, blank=True,
        help_text="The Prolific SESSION_ID that first entered with this participant id: the entry link works again "
                  "only with it, in the browser that first used it (docs/crowd.md).")
    sequence = models.PositiveIntegerField(default=0, help_text="Arrival number in the study; seeds the annotator's item order.")
    created_at = models.DateTimeField(auto_now_add=True)
    instructions_seen_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    is_pilot = models.BooleanField(default=False, help_text="A pilot annotator: the only ones who get work while the "
                                   "study is in pilot; their judgments are flagged and left out of reports unless asked.")
    excluded = models.BooleanField(default=False, help_text="Excluded annotators drop out of reports (their work is kept).")
    exclusion_reason = models.CharField(max_length=300, blank=True)
    excluded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study_id", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["study", "external_id"], condition=~models.Q(external_id=""),
                                    name="annotator_unique_external_id"),
            # Allocated under the study's row lock (services.annotators_create); the constraint makes a
            # collision an error rather than two annotators sharing item and screen orders.
            models.UniqueConstraint(fields=["study", "sequence"], name="annotator_unique_sequence"),
        ]

    def __str__(self) -> str:
        return self.code


class AssignmentStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DONE = "done", "Done"
    #: Unanswered for longer than the study's reservation: its slot went back to the pool.
    RELEASED = "released", "Released (unanswered too long)"
    #: The annotator skipped it (with a reason): its slot went back to the pool, never to be handed to them again.
    SKIPPED = "skipped", "Skipped by the annotator"


class Assignment(models.Model):
    public_id = models.CharField(max_length=32, unique=True, default=opaque_id, editable=False)
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    sequence = models.PositiveIntegerField(help_text="Position in the annotator's queue (1-based).")
    candidate_order = models.JSONField(default=list, help_text="Candidate pks in the order shown to this annotator.")
    status = models.CharField(max_length=8, choices=AssignmentStatus.choices, default=AssignmentStatus.PENDING)
    created_at = models.DateTimeField(auto_now_add=True, help_text="When the item was handed out (server time).")
    opened_at = models.DateTimeField(null=True, blank=True, help_text="Last time the item was shown (server time); starts the clock of the next answer.")
    completed_at = models.DateTimeField(null=True, blank=True)
    order_step = models.PositiveIntegerField(default=0, help_text="The annotator's place in their document permutation "
                                                                  "after this hand-out (where the next one looks first).")
    checks_owed = models.PositiveSmallIntegerField(
        default=0, help_text="Check slots of the annotator's schedule passed but not yet served after this hand-out "
                             "(a check waits for the end of a document; annotation.handout.ordering.CheckSchedule).")
    check_run = models.PositiveSmallIntegerField(
        default=0, help_text="Checks in a row ending with this assignment (never more than two).")
    skipped_at = models.DateTimeField(null=True, blank=True, help_text="When the annotator skipped the item "
                                      "(server time); kept if they answer it later anyway.")
    skip_reason = models.CharField(max_length=300, blank=True, help_text="The annotator's reason for skipping.")

    #: Not a column: the item's candidates in their stored order when the hand-out has just read them
    #: (services._claim), so the screen shown next needs no query, or when the submit read them with the
    #: assignment (statements.assignment_by_token); None otherwise. Read them through
    #: ``selectors.item_candidates``, which falls back to a query.
    candidates_loaded: list[Candidate] | None = None
    #: Not a column: how this hand-out changed the annotator's progress counts (pending, their assignments'
    #: items still open, the study's open items) since they were read with the token (``statements.
    #: annotator_for_next``), when the hand-out knows it exactly (its own claim, or the pending assignment
    #: given back); None otherwise, and the counts are read again (``selectors.progress``).
    progress_delta: tuple[int, int, int] | None = None

    class Meta:
        ordering = ["annotator_id", "sequence"]  # by column: "annotator" would join up to studies
        constraints = [
            models.UniqueConstraint(fields=["annotator", "item"], name="assignment_unique_annotator_item"),
            models.UniqueConstraint(fields=["annotator", "sequence"], name="assignment_unique_sequence"),
        ]
        indexes = [models.Index(fields=["annotator", "status"])]

    def __str__(self) -> str:
        return f"{self.annotator} #{self.sequence}"


class Judgment(models.Model):
    public_id = models.CharField(max_length=32, unique=True, default=opaque_id, editable=False)
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="judgments")
    revision = models.PositiveIntegerField(default=1, help_text="1 for the first answer, then 2, 3, … for revisions.")
    is_current = models.BooleanField(default=True, help_text="False once a later revision supersedes it.")
    answer = models.JSONField(help_text="Normalised answer: ranks by candidate pk, a choice, or labels.")
    payload_digest = models.CharField(max_length=64, help_text="Digest of the answer, for idempotent resubmission.")
    client_started_at = models.DateTimeField(null=True, blank=True)
    client_submitted_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(help_text="Server time the item was shown (or the previous revision saved).")
    submitted_at = models.DateTimeField(auto_now_add=True, help_text="Server time of submission.")
    duration_ms = models.PositiveIntegerField(
        null=True, blank=True, help_text="Server time on the item: from started_at to the answer's arrival (ms).")
    client_duration_ms = models.PositiveIntegerField(
        null=True, blank=True, help_text="The client's own figure (client_submitted_at − client_started_at, ms) when "
                                         "it sent both times; never used by quality control.")

    class Meta:
        ordering = ["assignment_id", "revision"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "revision"], name="judgment_unique_revision"),
            models.UniqueConstraint(fields=["assignment"], condition=models.Q(is_current=True),
                                    name="judgment_one_current"),
        ]

    def __str__(self) -> str:
        return f"{self.assignment} r{self.revision}"
