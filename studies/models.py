"""What a study is: Study, Item, Candidate.

One model serves every protocol; what differs between protocols lives in the
protocol's registered spec (``Study.spec``, protocols/), configured by the typed
settings fields on Study, never by one model per task type.
"""
from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models, transaction

from protocols import registry
from protocols.registry import protocol_for, validate_protocol_name
from studies.definition import taxonomy as tx
from studies.definition.allocation import SCORE_RANGE, allocation_errors, is_adaptive, normalise_allocation, score_range
from studies.definition.languages import html_lang, interface_language_error, language_tag_error, validate_language_tag
from studies.definition.prefill import skips_clean
from studies.definition.tutorial_shape import tutorial_model_errors

if TYPE_CHECKING:
    from protocols.spec import ProtocolSpec


def opaque_id() -> str:
    """An unguessable public identifier (what annotators see instead of a pk)."""
    return secrets.token_urlsafe(12)


def default_seed() -> int:
    return secrets.randbelow(2**31 - 1)


class Unit(models.TextChoices):
    SENTENCE = "sentence", "Sentence"
    DOCUMENT = "document", "Document (block of consecutive sentences)"


class Status(models.TextChoices):
    """The study's lifecycle: draft → pilot → open → closed (docs/study-file.md, "Study lifecycle")."""
    DRAFT = "draft", "Draft (preview only)"
    PILOT = "pilot", "Pilot (pilot annotators only)"
    OPEN = "open", "Open"
    CLOSED = "closed", "Closed"


#: ValidationError code of a change refused because the study already has judgments (studies/lifecycle/invariants.py).
LOCKED_CODE = "study_locked"

#: Options a choice study may offer besides the candidates themselves.
CHOICE_OPTIONS = ("neither", "tie", "invalid")


class Study(models.Model):
    slug = models.SlugField(unique=True, max_length=80, help_text="Short unique name used in URLs and commands.")
    title = models.CharField(max_length=200, help_text="Research title, shown to researchers only.")
    public_title = models.CharField(max_length=200, blank=True,
                                    help_text="Title shown to annotators (blank: a neutral \"Translation study\" in their language). "
                                              "Keep the design out of it: no system names, no 'reference vs MT'.")
    description = models.TextField(blank=True, help_text="Researcher-facing notes (data origin, design caveats).")
    # The registered protocols (protocols/registry.py) are the choices: a protocol app adds one without a migration.
    protocol = models.CharField(max_length=16, default="ranking", validators=[validate_protocol_name],
                                help_text="How annotators answer: a registered protocol (manage.py protocols).")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN,
                              help_text="Draft: only the staff preview works; pilot: only pilot annotators get work; "
                                        "open: everyone invited; closed: no new work.")
    # Typed settings (the study file's "settings" object).
    show_source = models.BooleanField(default=False, help_text="Show source context and the source sentence (bilingual set-up); otherwise the target-side context.")
    allow_ties = models.BooleanField(default=False, help_text="Ranking: several candidates may share a rank.")
    options = models.JSONField(default=list, blank=True, help_text="Choice: extra answers offered, from neither, tie, invalid.")
    labels = models.JSONField(default=list, blank=True, help_text="Judgment: the labels an annotator may give.")
    multi_label = models.BooleanField(default=False, help_text="Judgment: several labels may be given at once.")
    taxonomy = models.JSONField(
        default=list, blank=True,
        help_text="MQM: the error categories [{name, description, examples}], names as paths (\"Accuracy/Omission\"). "
                  "Blank: the MQM core typology plus the Discourse branch (studies/definition/taxonomy.py).")
    severities = models.JSONField(
        default=list, blank=True,
        help_text="Span protocols: the severities offered, from neutral, minor, major, critical (ESA: minor, major). "
                  "Blank: minor, major, critical for MQM; minor, major for ESA.")
    allow_overlap = models.BooleanField(default=False, help_text="Span protocols: error spans of one text may overlap.")
    esa_spans = models.BooleanField(default=True, help_text="ESA: mark error spans before scoring; off = direct "
                                                            "assessment (DA), the 0–100 score alone.")
    snap_to_words = models.BooleanField(
        null=True, blank=True, default=None,
        help_text="Span protocols: a mouse or touch selection grows to whole words. Blank: yes, unless the target "
                  "language is written without spaces (Chinese, Japanese, Thai…), where marks may cover part of a "
                  "run of characters.")
    mqm_weights = models.JSONField(
        default=dict, blank=True,
        help_text="MQM: weights overriding the WMT/Google scheme (minor 1, major 5, critical 25, neutral 0, "
                  "non_translation 25, minor_punctuation 0.1).")
    protocol_settings = models.JSONField(
        default=dict, blank=True,
        help_text="The settings a protocol plug-in defines for itself (its settings schema: manage.py protocols --json); "
                  "the typed fields above are the built-in protocols' settings.")
    allocation = models.JSONField(
        default=dict, blank=True,
        help_text="Allocation: {} (uniform: every item to its redundancy) or {\"policy\": \"adaptive\", \"alpha\": 0.05, "
                  "\"min_effect\": null, \"warmup\": 20, \"target\": \"all\" or \"top\", \"close_when_settled\": false}: "
                  "after the warm-up judgments, only items of still-open system pairs are handed out, and none once the "
                  "study is settled (which closes an open study when close_when_settled is true) "
                  "(protocols with a score per candidate: ESA, DA, pairwise, MQM; docs/efficient-evaluation.md).")
    allocation_state = models.JSONField(
        default=dict, blank=True, editable=False,
        help_text="Adaptive allocation: the confidence sequences' state computed from the judgments "
                  "(evaluators.live_allocation), read by the hand-out; never set by hand.")
    redundancy = models.PositiveSmallIntegerField(default=3, help_text="Distinct annotators who judge each item.")
    spam_rate = models.FloatField(default=0.0, help_text="Share of spam (control) items mixed into the study, 0 to 0.5.")
    probe_rate = models.FloatField(
        default=0.0, help_text="Share of context probes mixed into the study, 0 to 0.5: control copies whose one error "
                               "(a term, pronoun, connective or form of address) is wrong only in the document's context "
                               "(docs/protocols/spam-and-quality.md, \"Context probes\").")
    unit = models.CharField(max_length=10, choices=Unit.choices, default=Unit.SENTENCE, help_text="Sentence items or document blocks.")
    normalise_typography = models.BooleanField(
        default=False, help_text="Show every candidate in one typographic form (straight quotes, '...', '-', plain "
                                 "spaces) so the reference cannot be told by its typography; stored texts and exports "
                                 "are unchanged (docs/protocols/blinding.md).")
    instructions = models.TextField(blank=True, help_text="Markdown shown to annotators before the first item.")
    source_language = models.CharField(max_length=35, blank=True, help_text="BCP 47 tag of the source texts (e.g. en, ar, zh-Hans); sets their lang and direction. Blank: unknown (direction auto).")
    target_language = models.CharField(max_length=35, blank=True, help_text="BCP 47 tag of the candidate and target-side texts; sets their lang and direction. Blank: unknown (direction auto).")
    interface_language = models.CharField(max_length=10, blank=True, help_text="Language of the annotator interface: en, fr, de, es, zh-hans or ar. Blank: the best match of the annotator's browser languages, else English.")
    instructions_language = models.CharField(
        max_length=35, blank=True, validators=[validate_language_tag],
        help_text="BCP 47 tag of the study's own wording (instructions, question, public title, labels), marked with "
                  "lang when the interface is translated. Blank: the interface_language, else English.")
    question = models.CharField(max_length=300, blank=True, help_text="One-line question repeated above every item.")
    items_per_annotator = models.PositiveIntegerField(null=True, blank=True, help_text="Stop an annotator after this many items (blank: as many as are left).")
    reservation_minutes = models.PositiveIntegerField(
        default=120, help_text="An item handed out but unanswered for this long goes back to the pool for others "
                               "(the annotator keeps it if it is still free when they return); 0 keeps it reserved forever.")
    completion_code = models.CharField(max_length=64, blank=True, help_text="Code shown on the completion page (e.g. a Prolific completion code).")
    min_seconds = models.FloatField(default=3.0, help_text="Quality control: answers faster than this are flagged.")
    auto_exclude_share = models.FloatField(null=True, blank=True, help_text="Exclude an annotator automatically when their share of failed spam checks exceeds this (blank: never).")
    auto_exclude_min_checks = models.PositiveSmallIntegerField(
        default=3, help_text="The automatic rule waits until an annotator has answered at least this many spam checks.")
    contact = models.CharField(max_length=300, blank=True,
                               help_text="How annotators reach the researcher (an email address or a sentence); "
                                         "shown to excluded annotators.")
    screened_out_code = models.CharField(max_length=64, blank=True,
                                         help_text="Prolific's screened-out completion code, shown to excluded "
                                                   "participants (separate from the completion code).")
    prolific_study_id = models.CharField(
        max_length=200, blank=True,
        help_text="Prolific's STUDY_ID of this study: set, it turns the Prolific entry link p/<slug>/ on, and every "
                  "arrival must carry this STUDY_ID; blank (the default), the entry answers 404 (docs/crowd.md).")
    failed_code = models.CharField(
        max_length=64, blank=True,
        help_text="Code shown on the completion page to an annotator who did not pass the quality rule (Prolific's "
                  "code for a rejected or returned submission). Blank: the screened-out code, else no code and the "
                  "contact line (docs/crowd.md, \"Pass/fail completion codes\").")
    pass_max_failed_share = models.FloatField(
        null=True, blank=True,
        help_text="Pass rule of the completion page: an annotator passes with at most this share of failed spam "
                  "checks (once they answered auto_exclude_min_checks). Blank: auto_exclude_share; both blank: "
                  "everyone passes.")
    tutorial = models.JSONField(
        default=list, blank=True,
        help_text="Practice items shown before the first item, with feedback against a gold answer; never judged "
                  "or counted (studies/importing/tutorial.py, docs/study-file.md \"Tutorial items\").")
    seed = models.BigIntegerField(default=default_seed, help_text="Seeds spam generation and per-annotator shuffles, for reproducibility.")
    created_at = models.DateTimeField(auto_now_add=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="owned_studies",
                              help_text="Who created the study; a manager of it (docs/access.md).")
    provenance = models.JSONField(
        default=dict, blank=True, editable=False,
        help_text="Where the judgments came from when they were imported (import_judgments: format, file, SHA-256, "
                  "source, time); empty for a study collected here. The report's facts read it (docs/reports.md).")
    # Bookkeeping for assignment (annotation.handout.ordering): never set by hand.
    n_documents = models.PositiveIntegerField(default=0, help_text="Documents (real and spam), numbered 0..n-1 by Item.doc_index.")
    n_open_items = models.IntegerField(default=0, help_text="Items still short of their redundancy (kept with every claim and release).")
    n_real_items = models.PositiveIntegerField(default=0, help_text="Items of the study file (not spam copies).")
    n_spam_items = models.PositiveIntegerField(default=0, help_text="Spam copies; each is its own document, numbered "
                                                                    "after the real ones (doc_index ≥ n_documents − n_spam_items).")

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.slug

    #: The redundancy and the share of clean items skipped as loaded, to notice a change on save (not columns).
    _saved_redundancy: int | None = None
    _saved_skip_clean: Any = None

    @classmethod
    def from_db(cls, db: str | None, field_names: Any, values: Any) -> Study:
        instance = super().from_db(db, field_names, values)
        instance._saved_redundancy = instance.__dict__.get("redundancy")
        settings_ = instance.__dict__.get("protocol_settings")
        instance._saved_skip_clean = settings_.get("prefill_skip_clean") if isinstance(settings_, dict) else None
        return instance

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Saving a changed redundancy or ``prefill_skip_clean`` (admin, shell, any caller) recomputes which items
        are open."""
        super().save(*args, **kwargs)
        saved = getattr(self, "_saved_redundancy", None)
        settings_ = self.__dict__.get("protocol_settings")  # not loaded (deferred): not changed here
        skip = settings_.get("prefill_skip_clean") if isinstance(settings_, dict) else getattr(self, "_saved_skip_clean", None)
        if saved is not None and (saved != self.redundancy or skip != getattr(self, "_saved_skip_clean", None)):
            self._recount_open_items()
        self._saved_redundancy = self.redundancy
        self._saved_skip_clean = skip

    def skip_clean_share(self) -> float:
        """The share of the items the AI source marks clean that are not handed out (``prefill_skip_clean``; 0
        for a protocol without the setting)."""
        value = (self.protocol_settings or {}).get("prefill_skip_clean") if isinstance(self.protocol_settings, dict) else None
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0

    def _apply_skip_clean(self) -> None:
        """Mark ``Item.skipped_clean``: real items whose every candidate the suggestions' source marks clean, drawn
        per item from the study's seed under ``prefill_skip_clean``; record the count in ``provenance["prefill"]``.

        Called only while no item has been handed out (``import_prefill`` and the setting's lock,
        studies/lifecycle/invariants.py), so a skipped item has no assignment.
        """
        source = PrefillSource.objects.filter(study=self).first()
        share = self.skip_clean_share()
        items = Item.objects.filter(study=self)
        clean_items: list[int] = []
        if source is not None:
            clean = set(source.clean_candidates or [])
            by_item: dict[int, list[int]] = {}
            for item_id, cand_id in Candidate.objects.filter(item__study=self, item__is_spam=False).values_list(
                    "item_id", "pk"):
                by_item.setdefault(item_id, []).append(cand_id)
            clean_items = sorted(i for i, cands in by_item.items() if cands and all(c in clean for c in cands))
        skipped = [i for i in clean_items if skips_clean(seed=self.seed, item=i, share=share)]
        items.filter(skipped_clean=True).exclude(pk__in=skipped).update(skipped_clean=False)
        items.filter(pk__in=skipped, skipped_clean=False).update(skipped_clean=True)
        record = self.provenance.get("prefill") if isinstance(self.provenance, dict) else None
        if isinstance(record, dict):
            provenance = {**self.provenance, "prefill": {**record, "n_clean_items": len(clean_items),
                                                         "skip_clean_share": share, "n_skipped_clean": len(skipped)}}
            Study.objects.filter(pk=self.pk).update(provenance=provenance)
            self.provenance = provenance

    def _recount_open_items(self) -> None:
        """Recompute Item.skipped_clean, Item.is_open and n_open_items from n_assigned: an item is open when it is
        short of the redundancy and not skipped as clean (annotation.handout.slots keeps them in step otherwise)."""
        with transaction.atomic():
            self._apply_skip_clean()
            items = Item.objects.filter(study=self)
            items.filter(n_assigned__lt=self.redundancy, skipped_clean=False).update(is_open=True)
            items.filter(models.Q(n_assigned__gte=self.redundancy) | models.Q(skipped_clean=True)).update(is_open=False)
            self.n_open_items = items.filter(is_open=True).count()
            Study.objects.filter(pk=self.pk).update(n_open_items=self.n_open_items)

    def clean(self) -> None:
        errors: dict[str, list[str]] = {}
        bad = [o for o in (self.options or []) if o not in CHOICE_OPTIONS]
        if bad:
            errors["options"] = [f"Unknown option(s) {bad}; allowed: {', '.join(CHOICE_OPTIONS)}."]
        if self.protocol in registry.names():
            spec = protocol_for(self)
            for field, problems in spec.study_errors(self).items():
                errors.setdefault(field, []).extend(problems)
            problems = spec.settings_errors(self.protocol_settings)
            if problems:
                errors["protocol_settings"] = problems
        if self.taxonomy:
            problems = tx.taxonomy_errors(self.taxonomy, "taxonomy")
            if problems:
                errors["taxonomy"] = problems
        if self.mqm_weights:
            problems = tx.weights_errors(self.mqm_weights, "mqm_weights")
            if problems:
                errors["mqm_weights"] = problems
        if self.tutorial:
            problems = tutorial_model_errors(self.tutorial)
            if problems:
                errors["tutorial"] = problems
        scale = None
        if self.protocol in registry.names():
            spec = protocol_for(self)
            scale = score_range(uses_score=spec.uses_score(self),
                                per_candidate_spans=spec.per_candidate_annotations and spec.uses_spans(self),
                                preference=spec.preference_observations)
        problems = allocation_errors(self.allocation, scale=scale or SCORE_RANGE)
        if not problems:
            self.allocation = normalise_allocation(self.allocation)  # "adaptive" typed in the admin → every option
            if is_adaptive(self.allocation) and self.protocol in registry.names() and scale is None:
                problems = [f"adaptive allocation needs a score per candidate (ESA, DA, pairwise, MQM) "
                            f"or an order of the candidates (ranking, choice); "
                            f"a {self.protocol} study has none"]
        if problems:
            errors["allocation"] = problems
        if self.pass_max_failed_share is not None and not 0 <= self.pass_max_failed_share <= 1:
            errors["pass_max_failed_share"] = ["Must be between 0 and 1."]
        if not 0 <= self.spam_rate <= 0.5:
            errors["spam_rate"] = ["Must be between 0 and 0.5."]
        if not 0 <= self.probe_rate <= 0.5:
            errors["probe_rate"] = ["Must be between 0 and 0.5."]
        if self.redundancy < 1:
            errors["redundancy"] = ["Must be at least 1."]
        for name in ("source_language", "target_language", "instructions_language"):
            problem = language_tag_error(getattr(self, name))
            if problem:
                errors[name] = [problem]
        problem = interface_language_error(self.interface_language)
        if problem:
            errors["interface_language"] = [problem]
        if errors:
            raise ValidationError(errors)

    @property
    def spec(self) -> ProtocolSpec:
        """The study's protocol as registered (protocols/spec.py): what differs between protocols."""
        return protocol_for(self)

    @property
    def is_span_protocol(self) -> bool:
        """Answers are per-candidate annotations: error spans and/or a 0–100 score (MQM, ESA, DA)."""
        return self.spec.per_candidate_annotations

    @property
    def uses_spans(self) -> bool:
        """Annotators mark error spans (MQM; ESA unless it is DA, ``esa_spans`` off)."""
        return self.spec.uses_spans(self)

    @property
    def uses_score(self) -> bool:
        """Annotators give a 0–100 score per candidate (ESA and DA)."""
        return self.spec.uses_score(self)

    def effective_taxonomy(self) -> list[dict[str, Any]]:
        """The categories annotators choose from ([] where spans carry no category, as in ESA)."""
        return self.spec.taxonomy(self)

    def effective_severities(self) -> list[str]:
        return self.spec.severities(self)

    def wording_language(self) -> str:
        """The BCP 47 tag of the study's own wording: ``instructions_language``, else the interface language, else en."""
        return self.instructions_language or (html_lang(self.interface_language) if self.interface_language else "en")


class Item(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=200, help_text="The item's id in the study file.")
    document_id = models.CharField(max_length=200, blank=True, help_text="Items of one document are shown in document order.")
    position = models.IntegerField(default=0, help_text="Position inside its document.")
    phenomenon = models.CharField(max_length=100, blank=True, help_text="Discourse phenomenon (e.g. a pronoun pair or a connective).")
    source_context = models.JSONField(default=list, blank=True, help_text="Preceding source sentences.")
    source = models.TextField(blank=True, help_text="The source sentence (or block).")
    source_sentences = models.JSONField(default=list, blank=True,
                                        help_text="The source block's sentences, in order (document view rows).")
    target_context = models.JSONField(default=list, blank=True, help_text="Preceding target-side (reference) sentences.")
    context_languages = models.JSONField(
        default=dict, blank=True,
        help_text="Per context sentence, its BCP 47 tag where it differs from its side's language (a bilingual "
                  "dialogue's turns): {\"source_context\": [...], \"target_context\": [...]}, \"\" = the side's "
                  "language. Sets each sentence's lang.")
    metadata = models.JSONField(default=dict, blank=True, help_text="Anything else from the study file, kept verbatim.")
    source_language = models.CharField(max_length=35, blank=True, validators=[validate_language_tag],
                                       help_text="BCP 47 tag of this item's source texts, "
                                       "for studies that mix directions. Blank: the study's source_language.")
    target_language = models.CharField(max_length=35, blank=True, validators=[validate_language_tag],
                                       help_text="BCP 47 tag of this item's candidates and "
                                       "target-side texts. Blank: the study's target_language.")
    is_spam = models.BooleanField(default=False, help_text="A generated spam (control) copy of another item.")
    spam_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="spam_copies",
                                help_text="The real item this spam item copies.")
    order_key = models.BigIntegerField(default=0, help_text="Seeded random key of the item's document; shuffles documents per annotator.")
    doc_index = models.IntegerField(default=0, help_text="The document's number in the study, 0..n_documents-1 "
                                                         "(a seeded shuffle); annotators walk their own permutation of these.")
    n_assigned = models.PositiveIntegerField(default=0, help_text="Assignments that count toward the redundancy: pending or "
                                                                  "done, of annotators who are not excluded.")
    is_open = models.BooleanField(default=True, help_text="n_assigned < the study's redundancy (kept in the same UPDATE) "
                                                          "and not skipped_clean.")
    skipped_clean = models.BooleanField(
        default=False, help_text="Not handed out: the suggestions' source (import_prefill) marks every candidate clean "
                                 "and the study's prefill_skip_clean share drew it (docs/ai-assistance.md). Never shown "
                                 "to annotators.")

    class Meta:
        ordering = ["study_id", "order_key", "position", "pk"]  # by column: "study" would join studies for their ordering
        constraints = [models.UniqueConstraint(fields=["study", "external_id"], name="item_unique_external_id")]
        indexes = [
            # The hand-out's only index: open items by document, in document order (annotation.handout.ordering).
            models.Index(fields=["study", "doc_index", "position"], condition=models.Q(is_open=True),
                         name="item_open_by_document"),
        ]

    def __str__(self) -> str:
        return self.external_id


class Candidate(models.Model):
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="candidates")
    public_id = models.CharField(max_length=32, unique=True, default=opaque_id, editable=False,
                                 help_text="Opaque id shown to annotators.")
    system = models.CharField(max_length=100, help_text="System that produced the text (never shown to annotators).")
    text = models.TextField()
    sentences = models.JSONField(default=list, blank=True,
                                 help_text="The text's sentences, aligned with the item's source sentences.")
    is_reference = models.BooleanField(default=False, help_text="The human reference, used as a hidden control.")
    is_spam = models.BooleanField(default=False, help_text="A scrambled copy of a real candidate (spam check).")
    highlights = models.JSONField(default=list, blank=True, help_text="Character spans [start, end) to mark.")
    position = models.PositiveSmallIntegerField(default=0, help_text="Order in the study file.")

    class Meta:
        ordering = ["item_id", "position", "pk"]  # by column: "item" would join items and studies
        constraints = [models.UniqueConstraint(fields=["item", "system"], name="candidate_unique_system")]

    def __str__(self) -> str:
        return f"{self.item.external_id}/{self.system}"


class Role(models.TextChoices):
    """A member's rights on one study, lowest first (studies/access/rules.py orders them)."""
    VIEWER = "viewer", "Viewer (progress and reports)"
    ANALYST = "analyst", "Analyst (reports, quality, compare, exports)"
    MANAGER = "manager", "Manager (settings, lifecycle, invitations, exclusions, scores, members)"


class StudyMembership(models.Model):
    """A user's role on a study (docs/access.md); the owner is a manager without a row."""
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="study_memberships")
    role = models.CharField(max_length=8, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "user"], name="membership_unique_study_user")]
        ordering = ["study_id", "user_id"]

    def __str__(self) -> str:
        return f"{self.user} on {self.study_id}: {self.role}"


class AuditEvent(models.Model):
    """One append-only line of the audit log (studies/access/audit.py writes them; nothing updates or deletes them)."""
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                             related_name="+", help_text="Blank: the server (a command without --user, a rule).")
    username = models.CharField(max_length=150, blank=True, help_text="The user's name when it happened.")
    study = models.ForeignKey(Study, null=True, blank=True, on_delete=models.SET_NULL, related_name="audit_events")
    study_slug = models.CharField(max_length=80, blank=True, help_text="Kept when the study is deleted.")
    action = models.CharField(max_length=40, db_index=True)
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [models.Index(fields=["study_slug", "at"], name="audit_by_study")]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.username or '(server)'} {self.action} {self.study_slug}"


class PrefillSource(models.Model):
    """One import of automatic error spans (``import_prefill``): where they came from, and what the data marks clean.

    Annotators never see any of this; the report's methods text quotes it.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="prefill_sources")
    name = models.CharField(max_length=100, help_text="The system that produced the spans (--source); never shown "
                                                      "to annotators.")
    file_name = models.CharField(max_length=300, blank=True, help_text="The imported file's name.")
    file_format = models.CharField(max_length=20, help_text="jsonl or mqm-tsv.")
    sha256 = models.CharField(max_length=64, blank=True, help_text="SHA-256 of the imported file.")
    clean_candidates = models.JSONField(default=list, blank=True,
                                        help_text="Pks of the candidates the file marks clean (no error span).")
    decoy_share = models.FloatField(default=0.0, help_text="The study's decoy share when the decoys were placed.")
    seed = models.BigIntegerField(default=0, help_text="Seed of the decoys' placement (from the study's seed).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study"], name="prefill_one_source_per_study")]

    def __str__(self) -> str:
        return f"{self.study.slug}: {self.name}"


class Suggestion(models.Model):
    """An automatic error span shown to annotators as a suggestion (ESA^AI / MQM^AI), or a decoy.

    A decoy is placed on text the data marks clean; only this row knows it is one.
    """

    source = models.ForeignKey(PrefillSource, on_delete=models.CASCADE, related_name="suggestions")
    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="suggestions")
    public_id = models.CharField(max_length=32, unique=True, default=opaque_id, editable=False,
                                 help_text="Opaque id shown to annotators.")
    side = models.CharField(max_length=6, default="target", help_text="target (the candidate) or source.")
    start = models.PositiveIntegerField(help_text="Character offset where the span starts (stored text).")
    end = models.PositiveIntegerField(help_text="Character offset after its last character.")
    category = models.CharField(max_length=200, blank=True, help_text="The MQM category ('' for ESA).")
    severity = models.CharField(max_length=20, help_text="One of the study's severities.")
    score = models.FloatField(null=True, blank=True, help_text="The automatic system's own score of the span, if any.")
    is_decoy = models.BooleanField(default=False, help_text="Placed on text the data marks clean (never shown as such).")

    class Meta:
        ordering = ["candidate_id", "side", "start", "end", "pk"]

    def __str__(self) -> str:
        return f"{self.candidate_id}[{self.start}:{self.end}] {self.severity}"

    def as_span(self) -> dict[str, Any]:
        """The suggestion as an answer's span (start, end, side, severity and category where it has one)."""
        span: dict[str, Any] = {"start": self.start, "end": self.end, "side": self.side, "severity": self.severity}
        if self.category:
            span["category"] = self.category
        return span
