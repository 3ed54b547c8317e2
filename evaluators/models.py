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
    signature = models.TextField(blank=True, help_text="What exactly was computed (sacrebleu-style signature of the "
                                                       "registry evaluator; one line per distinct signature).")
    backend = models.CharField(max_length=200, blank=True,
                               help_text="The language backend asked for (--nlp); blank: the evaluator's default "
                                         "(its signature names the backend and versions used).")
    system_scores = models.JSONField(default=dict, blank=True,
                                     help_text="Corpus-level score per system on the metric's own scale, with its "
                                               "categories and counts: {system: {score, categories, counts, notes}}.")
    notes = models.JSONField(default=list, blank=True,
                             help_text="What the run left out, guessed or could not define (one message each).")
    references = models.JSONField(default=list, blank=True,
                                  help_text="The reference system(s) the scores were computed against (several: a "
                                            "multi-reference metric scored against all); empty: not recorded "
                                            "(imported scores, or the study has no named reference).")
    paired = models.JSONField(null=True, blank=True,
                              help_text="Paired significance tests between systems (first system = baseline): "
                                        "{method, baseline, n_samples, seed, tests: [...]}; null when not run.")
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


class JudgeFileFormat(models.TextChoices):
    CSV = "csv", "CSV (one row per item, the answer's fields as columns)"
    JSONL = "jsonl", "JSON Lines (one answer object per item)"


class LLMJudge(models.Model):
    """An automatic judge (an LLM prompted as an annotator) whose answers were imported with ``import_judge``.

    It sits beside the study's annotators and is never one of them: no Annotator, Assignment or Judgment is
    made for it, so agreement, progress, quality control, assignment and the export of human judgments never
    see it, and nothing of it reaches an annotator. The report compares it with the annotators
    (evaluators/reports/judges.py, docs/ai-assistance.md).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="llm_judges",
                              help_text="The study whose items the judge answered.")
    name = models.CharField(max_length=100, help_text="The judge's name, unique within the study (--name); "
                                                      "importing the same name again replaces it.")
    description = models.TextField(blank=True, help_text="What the judge is (model, prompt), as given with "
                                                         "--description; quoted by the report.")
    file_name = models.CharField(max_length=255, help_text="The imported file's name (without its directory).")
    file_format = models.CharField(max_length=10, choices=JudgeFileFormat.choices, help_text="How the file was read.")
    sha256 = models.CharField(max_length=64, help_text="SHA-256 of the imported file's text.")
    n_answers = models.PositiveIntegerField(help_text="Answers stored (one per item the file answers).")
    imported_at = models.DateTimeField(help_text="When the file was imported.")
    imported_by = models.CharField(max_length=150, blank=True,
                                   help_text="Who imported it (--user); blank: the server's administrator.")

    class Meta:
        ordering = ["study_id", "name"]
        verbose_name = "LLM judge"
        constraints = [models.UniqueConstraint(fields=["study", "name"], name="llmjudge_unique_name_per_study")]

    def __str__(self) -> str:
        return f"{self.study.slug}/{self.name}"


class JudgeAnswer(models.Model):
    """One answer of an :class:`LLMJudge` to one item, stored as an annotator's answer is (``Judgment.answer``)."""

    judge = models.ForeignKey(LLMJudge, on_delete=models.CASCADE, related_name="answers",
                              help_text="The judge that gave the answer.")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="judge_answers",
                             help_text="The item answered.")
    answer = models.JSONField(help_text="The answer in the protocol's stored form (candidate pks as keys), as the "
                                        "protocol's validate_answer returned it.")
    line = models.PositiveIntegerField(help_text="The line of the imported file the answer came from.")

    class Meta:
        ordering = ["judge_id", "item_id"]
        constraints = [models.UniqueConstraint(fields=["judge", "item"], name="judgeanswer_unique_item")]

    def __str__(self) -> str:
        return f"{self.judge.name}:{self.item_id}"


class JobKind(models.TextChoices):
    EVALUATE = "evaluate", "Run built-in evaluators"
    IMPORT_SCORES = "import_scores", "Import a score file"
    COMPARE = "compare", "Compute the comparison statistics"


class JobState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class EvaluationJob(models.Model):
    """One piece of long evaluation work run by a task worker, never inside a web request.

    The row is the job's state as the researcher sees it (queued, running with
    progress, done with a summary, failed with its error), independent of the
    task backend: the database backend's own result rows, RQ's Redis keys and the
    immediate backend (tests) all report through this one table, so the compare
    page can show it after a reload, from any web server.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="evaluation_jobs",
                              help_text="The study the work is for.")
    kind = models.CharField(max_length=20, choices=JobKind.choices, help_text="What the job does.")
    params = models.JSONField(default=dict, blank=True,
                              help_text="The job's input: evaluator names, import options, comparison options.")
    payload = models.TextField(blank=True, help_text="A score file's text for an import job (emptied once imported).")
    state = models.CharField(max_length=10, choices=JobState.choices, default=JobState.QUEUED, db_index=True,
                             help_text="Queued until a worker takes it; running; done; failed.")
    progress_done = models.PositiveIntegerField(default=0, help_text="Units of work done (segments, documents, rows).")
    progress_total = models.PositiveIntegerField(default=0, help_text="Units of work in all (0 while unknown).")
    progress_label = models.CharField(max_length=200, blank=True, help_text="What is being worked on now.")
    summary = models.TextField(blank=True, help_text="What a finished job did, one line per result.")
    errors = models.JSONField(default=list, blank=True, help_text="Why a failed job failed (one message per problem).")
    result = models.JSONField(null=True, blank=True, help_text="A comparison job's result (the compare JSON).")
    data_version = models.CharField(max_length=64, blank=True,
                                    help_text="For comparison jobs: the judgments/scores version the result was computed on.")
    task_id = models.CharField(max_length=64, blank=True, help_text="The task backend's id for the job's task.")
    requested_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+", help_text="Who asked for the work (none from the command line).")
    created_at = models.DateTimeField(auto_now_add=True, help_text="When the job was queued.")
    started_at = models.DateTimeField(null=True, blank=True, help_text="When a worker started it.")
    finished_at = models.DateTimeField(null=True, blank=True, help_text="When it finished or failed.")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["study", "kind", "state"], name="evaljob_study_kind_state")]

    def __str__(self) -> str:
        return f"{self.study.slug}/{self.kind}#{self.pk} ({self.state})"

    @property
    def active(self) -> bool:
        return self.state in (JobState.QUEUED, JobState.RUNNING)

    @property
    def percent(self) -> int | None:
        """Progress in whole percent, or None while the amount of work is unknown."""
        if self.state == JobState.DONE:
            return 100
        if not self.progress_total:
            return None
        return min(100, int(100 * self.progress_done / self.progress_total))


class StoredReport(models.Model):
    """A study report as computed for one data version and one set of options, kept for other processes.

    ``evaluators.reports.report_cache`` writes one when it computes a report and reads it back for
    ``REPORT_SECONDS`` (the page's cache time): the ``agreement`` command and every app server then share a report
    that the process-local cache would hold for one process only.
    """
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="stored_reports",
                              help_text="The study reported on.")
    key = models.CharField(max_length=64, unique=True,
                           help_text="SHA-256 of the study's data version and the report's options.")
    report = models.TextField(help_text="The report as JSON text (its keys in the report's own order, which a JSON "
                                        "column on PostgreSQL would not keep).")
    computed_at = models.DateTimeField(help_text="When the report was computed; read back for REPORT_SECONDS.")

    class Meta:
        verbose_name = "stored report"

    def __str__(self) -> str:
        return f"report of study {self.study_id} at {self.computed_at:%Y-%m-%d %H:%M:%S}"
