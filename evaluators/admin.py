"""Admin for evaluators and their scores: browse and delete; scores are written by `evaluate`/`import_scores`."""
from __future__ import annotations

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from studies.admin.access import StudyScopedAdmin, related_only

from evaluators.models import EvaluationJob, Evaluator, LLMJudge, MetricScore


@admin.register(Evaluator)
class EvaluatorAdmin(StudyScopedAdmin):
    view_action = "compare"
    change_action = "scores"
    list_display = ("name", "study", "kind", "higher_is_better", "n_scores", "updated_at")
    list_filter = ("kind", "higher_is_better", related_only("study"))
    search_fields = ("name", "study__slug", "description")
    readonly_fields = ("study", "name", "kind", "higher_is_better", "signature", "backend", "system_scores", "notes",
                       "paired", "created_at", "updated_at")
    fields = ("study", "name", "kind", "higher_is_better", "description", "signature", "backend", "system_scores",
              "notes", "paired", "created_at", "updated_at")

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).select_related("study").annotate(_n=Count("scores"))

    @admin.display(description="scores", ordering="_n")
    def n_scores(self, obj: Evaluator) -> int:
        return obj._n  # type: ignore[attr-defined]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # scores come from `evaluate` or `import_scores`, never typed in


@admin.register(MetricScore)
class MetricScoreAdmin(StudyScopedAdmin):
    study_path = "evaluator__study"
    view_action = "compare"
    change_action = None
    list_display = ("evaluator", "item", "system", "score", "document")
    list_filter = (related_only("evaluator__study"), "evaluator__name")
    search_fields = ("item__external_id", "system", "evaluator__name")
    list_select_related = ("evaluator", "evaluator__study", "item")
    readonly_fields = ("evaluator", "item", "system", "score", "document")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: MetricScore | None = None) -> bool:
        return False


@admin.register(EvaluationJob)
class EvaluationJobAdmin(StudyScopedAdmin):
    view_action = "compare"
    change_action = None
    """Background jobs (docs/deploy.md §10): read-only; they are queued from the compare page."""

    list_display = ("pk", "study", "kind", "state", "progress_done", "progress_total", "requested_by", "created_at",
                    "finished_at")
    list_filter = ("state", "kind", related_only("study"))
    list_select_related = ("study", "requested_by")
    exclude = ("payload", "result")
    readonly_fields = ("study", "kind", "params", "state", "progress_done", "progress_total", "progress_label",
                       "summary", "errors", "data_version", "task_id", "requested_by", "created_at", "started_at",
                       "finished_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: EvaluationJob | None = None) -> bool:
        return False


@admin.register(LLMJudge)
class LLMJudgeAdmin(StudyScopedAdmin):
    """LLM judges (docs/ai-assistance.md): read-only; they come from ``import_judge`` and leave with their study."""

    view_action = "report"
    change_action = None
    list_display = ("name", "study", "n_answers", "file_name", "imported_at", "imported_by")
    list_filter = (related_only("study"),)
    search_fields = ("name", "study__slug", "file_name")
    list_select_related = ("study",)
    readonly_fields = ("study", "name", "description", "file_name", "file_format", "sha256", "n_answers",
                       "imported_at", "imported_by")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: LLMJudge | None = None) -> bool:
        return False
