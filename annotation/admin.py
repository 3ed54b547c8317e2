"""The Django admin for annotators, assignments and judgments.

Judgments and assignments are read-only here: nothing an annotator submitted
may be changed or deleted by a researcher. Because the admin checks delete
permission on every object a deletion would cascade to, this also blocks
deleting an annotator, item or study that already has judgments.
"""
from __future__ import annotations

from django.contrib import admin
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from .models import Annotator, Assignment, AssignmentStatus, Judgment


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Annotator)
class AnnotatorAdmin(admin.ModelAdmin):
    list_display = ("code", "study", "external_id", "progress_column", "excluded", "finished_at", "link_column")
    list_filter = ("study", "excluded")
    search_fields = ("code", "external_id")
    list_select_related = ("study",)
    fields = ("study", "code", "external_id", "external_sessions", "sequence", "link_column", "progress_column",
              "instructions_seen_at", "finished_at", "excluded", "exclusion_reason", "excluded_at", "created_at")
    readonly_fields = ("study", "code", "external_sessions", "sequence", "link_column", "progress_column",
                       "instructions_seen_at", "finished_at", "excluded_at", "created_at")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Annotator]:
        return super().get_queryset(request).annotate(
            n_done=Count("assignments", filter=Q(assignments__status=AssignmentStatus.DONE)),
            n_assigned=Count("assignments"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # annotators are invited (study action, study page or `invite`), never typed in

    @admin.display(description="done / assigned", ordering="n_done")
    def progress_column(self, annotator: Annotator) -> str:
        return f"{getattr(annotator, 'n_done', 0)} / {getattr(annotator, 'n_assigned', 0)}"

    @admin.display(description="invitation link")
    def link_column(self, annotator: Annotator) -> str:
        url = reverse("annotation:start", args=[annotator.token])
        return format_html('<a href="{}" target="_blank" rel="noopener">link</a>', url)


@admin.register(Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    list_display = ("public_id", "annotator", "item", "sequence", "status", "created_at", "completed_at")
    list_filter = ("status", "annotator__study")
    search_fields = ("public_id", "annotator__code", "item__external_id")
    list_select_related = ("annotator", "item")
    show_full_result_count = False


@admin.register(Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    list_display = ("public_id", "annotator_column", "item_column", "revision", "is_current", "submitted_at",
                    "duration_ms")
    list_filter = ("is_current", "assignment__annotator__study")
    search_fields = ("public_id", "assignment__annotator__code", "assignment__item__external_id")
    list_select_related = ("assignment__annotator", "assignment__item")
    show_full_result_count = False
    fields = ("public_id", "assignment", "revision", "is_current", "answer", "started_at", "submitted_at",
              "client_started_at", "client_submitted_at", "duration_ms", "history")
    readonly_fields = fields

    @admin.display(description="annotator", ordering="assignment__annotator__code")
    def annotator_column(self, judgment: Judgment) -> str:
        return judgment.assignment.annotator.code

    @admin.display(description="item", ordering="assignment__item__external_id")
    def item_column(self, judgment: Judgment) -> str:
        return judgment.assignment.item.external_id

    @admin.display(description="revision history")
    def history(self, judgment: Judgment) -> str:
        """Every revision of this assignment's answer, oldest first; none is ever overwritten."""
        revisions = judgment.assignment.judgments.order_by("revision")
        rows = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>", (
            (format_html('<a href="{}">r{}</a>', reverse("admin:annotation_judgment_change", args=[j.pk]), j.revision),
             "current" if j.is_current else "superseded", j.submitted_at, j.answer) for j in revisions))
        return format_html("<table><thead><tr><th>revision</th><th>state</th><th>submitted</th><th>answer</th></tr>"
                           "</thead><tbody>{}</tbody></table>", rows)
