"""What a study is: Study, Item, Candidate.

One model serves every protocol (ranking, choice, judgment); protocol-specific
behaviour is driven by the typed settings fields on Study, never by free-form
strings or one model per task type.
"""
from __future__ import annotations

import secrets

from django.core.exceptions import ValidationError
from django.db import models


def opaque_id() -> str:
    """An unguessable public identifier (what annotators see instead of a pk)."""
    return secrets.token_urlsafe(12)


def default_seed() -> int:
    return secrets.randbelow(2**31 - 1)


class Protocol(models.TextChoices):
    RANKING = "ranking", "Ranking (rank all candidates)"
    CHOICE = "choice", "Choice (pick one candidate or an option)"
    JUDGMENT = "judgment", "Judgment (label one candidate)"


class Unit(models.TextChoices):
    SENTENCE = "sentence", "Sentence"
    DOCUMENT = "document", "Document (block of consecutive sentences)"


class Status(models.TextChoices):
    DRAFT = "draft", "Draft"
    OPEN = "open", "Open"
    CLOSED = "closed", "Closed"


#: Options a choice study may offer besides the candidates themselves.
CHOICE_OPTIONS = ("neither", "tie", "invalid")


class Study(models.Model):
    slug = models.SlugField(unique=True, max_length=80, help_text="Short unique name used in URLs and commands.")
    title = models.CharField(max_length=200, help_text="Title shown to researchers and annotators.")
    description = models.TextField(blank=True, help_text="Researcher-facing notes (data origin, design caveats).")
    protocol = models.CharField(max_length=16, choices=Protocol.choices, default=Protocol.RANKING,
                                help_text="How annotators answer.")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN,
                              help_text="Only open studies hand out work.")
    # Typed settings (the study file's "settings" object).
    show_source = models.BooleanField(default=False, help_text="Show source context and the source sentence (bilingual set-up); otherwise the target-side context.")
    allow_ties = models.BooleanField(default=False, help_text="Ranking: several candidates may share a rank.")
    options = models.JSONField(default=list, blank=True, help_text="Choice: extra answers offered, from neither, tie, invalid.")
    labels = models.JSONField(default=list, blank=True, help_text="Judgment: the labels an annotator may give.")
    multi_label = models.BooleanField(default=False, help_text="Judgment: several labels may be given at once.")
    redundancy = models.PositiveSmallIntegerField(default=3, help_text="Distinct annotators who judge each item.")
    spam_rate = models.FloatField(default=0.0, help_text="Share of spam (control) items mixed into the study, 0 to 0.5.")
    unit = models.CharField(max_length=10, choices=Unit.choices, default=Unit.SENTENCE, help_text="Sentence items or document blocks.")
    instructions = models.TextField(blank=True, help_text="Markdown shown to annotators before the first item.")
    question = models.CharField(max_length=300, blank=True, help_text="One-line question repeated above every item.")
    items_per_annotator = models.PositiveIntegerField(null=True, blank=True, help_text="Stop an annotator after this many items (blank: as many as are left).")
    reservation_minutes = models.PositiveIntegerField(
        default=120, help_text="An item handed out but unanswered for this long goes back to the pool for others "
                               "(the annotator keeps it if it is still free when they return); 0 keeps it reserved forever.")
    completion_code = models.CharField(max_length=64, blank=True, help_text="Code shown on the completion page (e.g. a Prolific completion code).")
    min_seconds = models.FloatField(default=3.0, help_text="Quality control: answers faster than this are flagged.")
    auto_exclude_share = models.FloatField(null=True, blank=True, help_text="Exclude an annotator automatically when their share of failed spam checks exceeds this (blank: never).")
    seed = models.BigIntegerField(default=default_seed, help_text="Seeds spam generation and per-annotator shuffles, for reproducibility.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.slug

    def clean(self) -> None:
        errors: dict[str, list[str]] = {}
        bad = [o for o in (self.options or []) if o not in CHOICE_OPTIONS]
        if bad:
            errors["options"] = [f"Unknown option(s) {bad}; allowed: {', '.join(CHOICE_OPTIONS)}."]
        if self.protocol == Protocol.JUDGMENT and not self.labels:
            errors["labels"] = ["A judgment study needs at least one label."]
        if not 0 <= self.spam_rate <= 0.5:
            errors["spam_rate"] = ["Must be between 0 and 0.5."]
        if self.redundancy < 1:
            errors["redundancy"] = ["Must be at least 1."]
        if errors:
            raise ValidationError(errors)


class Item(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=200, help_text="The item's id in the study file.")
    document_id = models.CharField(max_length=200, blank=True, help_text="Items of one document are shown in document order.")
    position = models.IntegerField(default=0, help_text="Position inside its document.")
    phenomenon = models.CharField(max_length=100, blank=True, help_text="Discourse phenomenon (e.g. a pronoun pair or a connective).")
    source_context = models.JSONField(default=list, blank=True, help_text="Preceding source sentences.")
    source = models.TextField(blank=True, help_text="The source sentence (or block).")
    target_context = models.JSONField(default=list, blank=True, help_text="Preceding target-side (reference) sentences.")
    metadata = models.JSONField(default=dict, blank=True, help_text="Anything else from the study file, kept verbatim.")
    is_spam = models.BooleanField(default=False, help_text="A generated spam (control) copy of another item.")
    spam_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="spam_copies",
                                help_text="The real item this spam item copies.")
    order_key = models.BigIntegerField(default=0, help_text="Seeded random key of the item's document; shuffles documents per annotator.")
    n_assigned = models.PositiveIntegerField(default=0, help_text="Assignments handed out so far (kept under the row lock).")

    class Meta:
        ordering = ["study", "order_key", "position", "pk"]
        constraints = [models.UniqueConstraint(fields=["study", "external_id"], name="item_unique_external_id")]
        indexes = [models.Index(fields=["study", "n_assigned", "order_key", "position"])]

    def __str__(self) -> str:
        return self.external_id


class Candidate(models.Model):
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="candidates")
    public_id = models.CharField(max_length=32, unique=True, default=opaque_id, editable=False,
                                 help_text="Opaque id shown to annotators.")
    system = models.CharField(max_length=100, help_text="System that produced the text (never shown to annotators).")
    text = models.TextField()
    is_reference = models.BooleanField(default=False, help_text="The human reference, used as a hidden control.")
    is_spam = models.BooleanField(default=False, help_text="A scrambled copy of a real candidate (spam check).")
    highlights = models.JSONField(default=list, blank=True, help_text="Character spans [start, end) to mark.")
    position = models.PositiveSmallIntegerField(default=0, help_text="Order in the study file.")

    class Meta:
        ordering = ["item", "position", "pk"]
        constraints = [models.UniqueConstraint(fields=["item", "system"], name="candidate_unique_system")]

    def __str__(self) -> str:
        return f"{self.item.external_id}/{self.system}"
