"""Shapes of the annotation API, for the OpenAPI schema.

Validation itself lives in ``services.judgment_validate`` (shared with the
pages); these serializers describe the contract of INTERFACES.md.

Some field names (source, context, label, errors) are also attributes of DRF's
``Field``/``Serializer`` in the stubs. The names are the API contract, and DRF's
metaclass moves declared fields off the class, so nothing is shadowed at run
time: those lines carry a targeted ``type: ignore[assignment]``.
"""
from rest_framework import serializers


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


class AssignmentOut(serializers.Serializer):
    assignment = serializers.CharField(help_text="Opaque assignment id.")
    protocol = serializers.ChoiceField(choices=["ranking", "choice", "judgment"])
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


class JudgmentIn(serializers.Serializer):
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


class ErrorsOut(serializers.Serializer):
    errors = serializers.DictField(  # type: ignore[assignment]  # see top
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Field name → messages.")


class ExcludedOut(serializers.Serializer):
    """``GET next`` for an excluded annotator (403)."""

    detail = serializers.CharField()
    contact = serializers.CharField(help_text="The study's contact for annotators (may be empty).")
    screened_out_code = serializers.CharField(required=False, help_text="Prolific's screened-out completion code, when the study sets one.")
