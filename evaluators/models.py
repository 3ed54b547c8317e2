"""Automatic evaluators and their scores.

An :class:`Evaluator` is one metric within one study (a built-in one run by the
``evaluate`` command, or an external one whose scores were imported with
``import_scores``); a :class:`MetricScore` is its score for one system's
candidate of one item.  Scores are stored per (item, system) rather than per
Candidate row so that imported files can name items and systems exactly as the
study file does, and so an item's reference score (needed by DiP Eq. 1) is just
the row whose system is the reference's.
"""
from __future__ import annotations

from django.db import models

from studies.models import Item, Study


class EvaluatorKind(models.TextChoices):
    BUILTIN = "builtin", "Built-in (computed here)"
    IMPORTED = "imported", "Imported scores"


class Evaluator(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="evaluators",
                              help_text="The study whose candidates were scored.")
    name = models.CharField(max_length=100, help_text="Metric name, unique within the study (e.g. bleu, pronoun-f).")
    higher_is_better = models.BooleanField(default=True, help_text="Orientation of the score: False for error rates such as TER.")
    kind = models.CharField(max_length=10, choices=EvaluatorKind.choices, default=EvaluatorKind.IMPORTED,
                            help_text="Built-in evaluators are recomputed by `evaluate`; imported ones come from a file.")
    description = models.TextField(blank=True, help_text="What the metric measures and where it comes from (shown in reports).")
    created_at = models.DateTimeField(auto_now_add=True, help_text="When the scores were first stored.")
    updated_at = models.DateTimeField(auto_now=True, help_text="When the scores were last replaced.")

    class Meta:
        ordering = ["study_id", "name"]
        constraints = [models.UniqueConstraint(fields=["study", "name"], name="evaluator_unique_name_per_study")]

    def __str__(self) -> str:
        return f"{self.study.slug}/{self.name}"


class MetricScore(models.Model):
    evaluator = models.ForeignKey(Evaluator, on_delete=models.CASCADE, related_name="scores",
                                  help_text="The metric this score belongs to.")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="metric_scores",
                             help_text="The scored item (for document-level metrics: every item of the document).")
    system = models.CharField(max_length=100, help_text="System whose candidate was scored (may be the reference's).")
    score = models.FloatField(help_text="The metric's score; its orientation is the evaluator's higher_is_better.")
    document = models.CharField(max_length=200, blank=True,
                                help_text="Document id for document-level scores (the same score on each of its items).")

    class Meta:
        ordering = ["evaluator_id", "item_id", "system"]
        constraints = [models.UniqueConstraint(fields=["evaluator", "item", "system"], name="metricscore_unique_item_system")]

    def __str__(self) -> str:
        return f"{self.evaluator.name}:{self.item_id}/{self.system}={self.score:g}"
