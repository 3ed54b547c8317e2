"""Shapes of the annotation API, for the OpenAPI schema.

Validation itself lives in ``services.judgment_validate`` (shared with the
pages); these serializers describe the contract of INTERFACES.md.

Some field names (source, context, label, errors) are also attributes of DRF's
``Field``/``Serializer`` in the stubs. The names are the API contract, and DRF's
metaclass moves declared fields off the class, so nothing is shadowed at run
time: those lines carry a targeted ``type: ignore[assignment]``.
"""
from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers

from annotation.handout.skips import REASON_MAX_LENGTH
from protocols import registry
from studies.definition import taxonomy as tx



class ProtocolField(serializers.ChoiceField):
    """A registered protocol's name. DRF copies declared fields per serializer by calling ``__init__``
    again, so the choices are read from the registry when a serializer is built, not at import."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=registry.names(), **kwargs)

class CandidateOut(serializers.Serializer):
    id = serializers.CharField(help_text="Opaque candidate id.")
    text = serializers.CharField()
    highlights = serializers.ListField(child=serializers.ListField(child=serializers.IntegerField()),
                                       help_text="Character spans [start, end) to mark.")
    sentences = serializers.ListField(
        child=serializers.CharField(allow_blank=True),
        help_text="The text's sentences (the study file's list, else the text split at line breaks); "
                  "sentence i is aligned with source_sentences[i].")


class EarlierCandidateOut(serializers.Serializer):
    id = serializers.CharField(help_text="Opaque id of the candidate on this screen whose earlier text this is.")
    sentences = serializers.ListField(child=serializers.CharField(allow_blank=True),
                                      help_text="That candidate's own sentences in the earlier block "
                                                "(empty when its system has none there).")


class DocumentBlockOut(serializers.Serializer):
    source_sentences = serializers.ListField(child=serializers.CharField(allow_blank=True),
                                             help_text="The block's source sentences (empty without the source).")
    candidates = EarlierCandidateOut(many=True, help_text="Without the source: each candidate's own text of "
                                                          "the earlier block (the same systems keep one order "
                                                          "throughout a document); empty with the source.")


class DocumentOut(serializers.Serializer):
    block = serializers.IntegerField(help_text="This block's number in its document, from 1.")
    blocks = serializers.IntegerField(help_text="Blocks in the document.")
    previous = DocumentBlockOut(many=True, help_text="The earlier blocks, oldest first: their source sentences "
                                                     "when the study shows the source, else each candidate's "
                                                     "own earlier sentences.")


class ContextOut(serializers.Serializer):
    source = serializers.ListField(child=serializers.CharField())  # type: ignore[assignment]  # see top
    target = serializers.ListField(child=serializers.CharField())


class ProgressOut(serializers.Serializer):
    done = serializers.IntegerField()
    total = serializers.IntegerField()


class CategoryOut(serializers.Serializer):
    name = serializers.CharField(help_text="The category's path, branch and leaf separated by '/' "
                                           "(\"Accuracy/Omission\"); a span's `category` names one of these.")
    description = serializers.CharField(allow_blank=True)
    examples = serializers.ListField(child=serializers.CharField())


class ScoreScaleOut(serializers.Serializer):
    min = serializers.IntegerField(help_text="Lowest score (0).")
    max = serializers.IntegerField(help_text="Highest score (100).")
    anchors = serializers.ListField(child=serializers.IntegerField(),
                                    help_text="Where the slider shows its labels (WMT24: 0, 33, 66, 100).")


class SpanSettingsOut(serializers.Serializer):
    """MQM and ESA studies: what the answer may contain (annotation/items/span_config.py)."""

    spans = serializers.BooleanField(help_text="Whether error spans are marked (false: ESA as DA, a score alone; "
                                               "then each candidate's answer has no `spans`).")
    taxonomy = CategoryOut(many=True, help_text="MQM: the categories a span chooses from (matched "
                                                "case-insensitively); empty for ESA.")
    severities = serializers.ListField(child=serializers.CharField(),
                                       help_text="The severities a span may have (empty without spans).")
    allow_overlap = serializers.BooleanField(help_text="Whether spans of one text may overlap.")
    sides = serializers.ListField(child=serializers.CharField(),
                                  help_text="Texts spans may be marked in (a span's `side`): target (the "
                                            "candidate's text) and, when the study shows the source, source "
                                            "(e.g. omissions); empty without spans.")
    note_max_length = serializers.IntegerField(help_text="Longest optional note of a span.")
    score = ScoreScaleOut(allow_null=True, help_text="ESA/DA: the 0–100 score every candidate needs; null for MQM.")


class SuggestionOut(serializers.Serializer):
    id = serializers.CharField(help_text="Opaque suggestion id: the key of its fate in the answer's `suggestions`.")
    candidate = serializers.CharField(help_text="The candidate's id.")
    start = serializers.IntegerField()
    end = serializers.IntegerField()
    side = serializers.ChoiceField(choices=["target", "source"])
    severity = serializers.CharField()
    category = serializers.CharField(required=False, help_text="MQM: the suggested category; ESA: absent.")


class AssignmentOut(serializers.Serializer):
    assignment = serializers.CharField(help_text="Opaque assignment id.")
    item_key = serializers.CharField(
        help_text="Opaque, stable key of the item: the same for every annotator and every request, "
                  "unrelated to any database id, external id or system name (annotation/items/item_keys.py).")
    protocol = ProtocolField()
    unit = serializers.ChoiceField(choices=["sentence", "document"])
    question = serializers.CharField()
    allow_ties = serializers.BooleanField()
    options = serializers.ListField(child=serializers.CharField())
    labels = serializers.ListField(child=serializers.CharField())
    multi_label = serializers.BooleanField()
    source_language = serializers.CharField(help_text="BCP 47 tag of the source texts ('' when the study does not say).")
    target_language = serializers.CharField(help_text="BCP 47 tag of the candidates and target context ('' when unknown).")
    context = ContextOut()  # type: ignore[assignment]  # see top
    source = serializers.CharField(allow_null=True)  # type: ignore[assignment]  # see top
    source_sentences = serializers.ListField(
        child=serializers.CharField(allow_blank=True),
        help_text="The source's sentences (empty when the study does not show the source).")
    candidates = CandidateOut(many=True)
    document = DocumentOut(allow_null=True, help_text="Document units: where the block sits; else null.")
    progress = ProgressOut()
    answer = serializers.JSONField(allow_null=True, help_text="The current answer when revising, else null.")
    spans = SpanSettingsOut(allow_null=True, help_text="MQM and ESA studies: the span and score settings; "
                                                       "null for the other protocols.")
    suggestions = SuggestionOut(many=True, required=False,
                                help_text="Studies with suggested error spans (docs/ai-assistance.md): the spans "
                                          "shown on this item as suggestions ([] on an item shown without); every "
                                          "one needs a fate in the answer's `suggestions`. Absent otherwise.")


class SpanIn(serializers.Serializer):
    start = serializers.IntegerField(min_value=0, help_text="First character of the span (0-based offset).")
    end = serializers.IntegerField(min_value=1, help_text="Character after the span (end excluded; start < end "
                                                         "≤ the text's length).")
    side = serializers.ChoiceField(choices=["target", "source"], required=False,
                                   help_text="The text the offsets are in: target (the candidate's text, the "
                                             "default) or source (the item's source, e.g. an omission).")
    category = serializers.CharField(required=False, help_text="MQM (required): one of `spans.taxonomy`'s names. "
                                                               "ESA: absent.")
    severity = serializers.CharField(help_text="One of `spans.severities`.")
    note = serializers.CharField(required=False, allow_blank=True, max_length=tx.NOTE_MAX_LENGTH,
                                 help_text="Optional note on the error.")


class CandidateAnnotationIn(serializers.Serializer):
    spans = SpanIn(many=True, required=False,
                   help_text="The candidate's error spans; [] confirms it has no error. Required unless the "
                             "study is DA (`spans.spans` false), which takes no spans.")
    score = serializers.FloatField(required=False, min_value=tx.SCORE_MIN, max_value=tx.SCORE_MAX,
                                   help_text="ESA/DA (required): the candidate's 0–100 score. MQM: absent.")


class JudgmentIn(serializers.Serializer):
    annotations = serializers.DictField(
        child=CandidateAnnotationIn(), required=False,
        help_text="MQM and ESA: candidate id → {spans, score} for every candidate of the item. Spans are "
                  "character offsets [start, end) into the candidate's text or the item's source.")
    suggestions = serializers.DictField(
        child=serializers.JSONField(), required=False,
        help_text="Studies with suggested spans: every suggestion shown (`suggestions[].id`) → {\"fate\": \"kept\"}, "
                  "{\"fate\": \"deleted\"} or {\"fate\": \"edited\", start, end, severity, category (MQM), side}. "
                  "Kept and edited suggestions join the candidate's spans; `annotations` holds the annotator's own.")
    ranks = serializers.DictField(child=serializers.IntegerField(), required=False,
                                  help_text="Ranking: candidate id → rank (1 = best).")
    choice = serializers.CharField(required=False, help_text="Choice: a candidate id, or neither / tie / invalid.")
    label = serializers.CharField(  # type: ignore[assignment]  # see top
        required=False, help_text="Judgment: one label.")
    labels = serializers.ListField(child=serializers.CharField(), required=False,
                                   help_text="Judgment with several labels.")
    client_started_at = serializers.DateTimeField(required=False)
    client_submitted_at = serializers.DateTimeField(required=False)


class JudgmentOut(serializers.Serializer):
    judgment = serializers.CharField(help_text="Opaque judgment id (the same for an identical resubmission).")
    revision = serializers.IntegerField()


class SkipIn(serializers.Serializer):
    reason = serializers.CharField(
        max_length=REASON_MAX_LENGTH, trim_whitespace=False, validators=[RegexValidator(r"\S")],
        help_text="Why the annotator skips the item (required, not blank, at most "
                  f"{REASON_MAX_LENGTH} characters). Seen by the researchers only.")


class SkipOut(serializers.Serializer):
    assignment = serializers.CharField(help_text="The skipped assignment's opaque id.")
    status = serializers.CharField(help_text="Always \"skipped\".")
    reason = serializers.CharField(help_text="The stored reason (the first one, when skipped twice).")


class ConflictOut(serializers.Serializer):
    detail = serializers.CharField()


class ErrorsOut(serializers.Serializer):
    errors = serializers.DictField(  # type: ignore[assignment]  # see top
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Field name → messages.")


class ExcludedOut(serializers.Serializer):
    """``GET next`` for an excluded annotator (403)."""

    detail = serializers.CharField()
    contact = serializers.CharField(help_text="The study's contact for annotators (may be empty).")
    screened_out_code = serializers.CharField(required=False, help_text="Prolific's screened-out completion code, when the study sets one.")
