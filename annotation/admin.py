"""The Django admin for annotators, assignments and judgments.

Judgments and assignments are read-only here: nothing an annotator submitted
may be changed or deleted by a researcher. Because the admin checks delete
permission on every object a deletion would cascade to, this also blocks
deleting an annotator, item or study that already has judgments.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from django.contrib import admin, messages
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, StreamingHttpResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from annotation.dashboard import progress
from annotation.exporting.judgments import csv_lines, judgment_rows
from annotation.pages.links import invitation_url
from annotation.models import Annotator, Assignment, AssignmentStatus, Judgment
from annotation.handout.services import annotators_create
from studies.access import rules as access
from studies.admin import studies as studies_admin
from studies.admin import actions as admin_actions
from studies.admin.access import StudyScopedAdmin, related_only
from annotation.handout.exclusion import annotator_exclude, annotator_include
from studies.access.audit import audit
from studies.models import Study

if TYPE_CHECKING:
    from annotation.dashboard.progress import StudyWithCounts

INVITE_COUNT = 5


class ReadOnlyAdmin(StudyScopedAdmin):
    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Annotator)
class AnnotatorAdmin(StudyScopedAdmin):
    view_action = "quality"
    change_action = "exclude"
    list_display = ("code", "study", "external_id", "progress_column", "is_pilot", "excluded", "finished_at",
                    "link_column")
    list_filter = (related_only("study"), "is_pilot", "excluded")
    search_fields = ("code", "external_id")
    list_select_related = ("study",)
    fields = ("study", "code", "is_pilot", "external_id", "external_sessions", "sequence", "link_column", "progress_column",
              "instructions_seen_at", "finished_at", "excluded", "exclusion_reason", "excluded_at", "created_at")
    # is_pilot is set at invitation: flipping it later would move finished work in or out of the reports.
    readonly_fields = ("study", "code", "is_pilot", "external_sessions", "sequence", "link_column", "progress_column",
                       "instructions_seen_at", "finished_at", "excluded_at", "created_at")

    # The invitation link carries the annotator's secret token: managers only (the "invite" action), never
    # analysts, who may read this list and the change form (docs/access.md).
    def _may_invite(self, request: HttpRequest, study: Study) -> bool:
        cache: dict[int, bool] = request.__dict__.setdefault("_annotator_admin_invite", {})
        if study.pk not in cache:
            cache[study.pk] = access.can(request.user, "invite", study)
        return cache[study.pk]

    def get_list_display(self, request: HttpRequest) -> Any:
        columns = [c for c in super().get_list_display(request) if c != "link_column"]

        @admin.display(description="invitation link")
        def link_column(annotator: Annotator) -> str:
            return self.link_column(annotator) if self._may_invite(request, annotator.study) else "—"

        return [*columns, link_column]

    def get_fields(self, request: HttpRequest, obj: Annotator | None = None) -> Any:
        fields = list(super().get_fields(request, obj))
        if obj is None or not self._may_invite(request, obj.study):
            fields = [f for f in fields if f != "link_column"]
        return fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Annotator]:
        return super().get_queryset(request).annotate(
            n_done=Count("assignments", filter=Q(assignments__status=AssignmentStatus.DONE)),
            n_assigned=Count("assignments"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # annotators are invited (study action, study page or `invite`), never typed in

    def save_model(self, request: HttpRequest, obj: Annotator, form, change: bool) -> None:
        """Ticking or clearing "excluded" goes through the quality services, which move the item counts."""
        if not (change and "excluded" in form.changed_data):
            super().save_model(request, obj, form, change)
            return
        wanted = obj.excluded
        obj.excluded = not wanted  # saved as it was; the service flips it and reopens or recounts the items
        super().save_model(request, obj, form, change)
        if wanted:
            annotator_exclude(annotator=obj, reason=obj.exclusion_reason or "excluded in the admin")
            audit(request.user, "excluded", obj.study, annotator=obj.code, reason=obj.exclusion_reason, via="admin")
            return
        over = annotator_include(annotator=obj)
        audit(request.user, "included", obj.study, annotator=obj.code, over_redundancy=over, via="admin")
        if over:
            messages.warning(request, f"{over} item(s) of this study now have more judgments than its redundancy "
                                      "(handed to others while this annotator was excluded); nothing was deleted.")

    @admin.display(description="done / assigned", ordering="n_done")
    def progress_column(self, annotator: Annotator) -> str:
        return f"{getattr(annotator, 'n_done', 0)} / {getattr(annotator, 'n_assigned', 0)}"

    @admin.display(description="invitation link")
    def link_column(self, annotator: Annotator) -> str:
        url = reverse("annotation:start", args=[annotator.token])
        return format_html('<a href="{}" target="_blank" rel="noopener">link</a>', url)


@admin.register(Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    study_path = "annotator__study"
    view_action = "quality"
    list_display = ("public_id", "annotator", "item", "sequence", "status", "created_at", "completed_at")
    list_filter = ("status", related_only("annotator__study"))
    search_fields = ("public_id", "annotator__code", "item__external_id")
    list_select_related = ("annotator", "item")
    show_full_result_count = False


@admin.register(Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    study_path = "assignment__annotator__study"
    view_action = "export"  # the raw answers: analysts and up
    list_display = ("public_id", "annotator_column", "item_column", "revision", "is_current", "submitted_at",
                    "duration_ms")
    list_filter = ("is_current", related_only("assignment__annotator__study"))
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


# --- the study admin, with what needs annotation data ------------------------------
# studies/admin/studies.py defines the study itself; its progress, invitations and judgments
# are the annotation app's, so this app re-registers Study with those added (studies
# never imports annotation).

def _progress_bar(done: int, needed: int) -> str:
    percent = round(100 * done / needed) if needed else 0
    return format_html(
        '<span title="{}% of the judgments needed" style="display:block;width:5rem;height:.6rem;background:#e6e9ef;'
        'border-radius:.3rem;overflow:hidden"><span style="display:block;height:100%;width:{}%;background:#1d7a46">'
        '</span></span><span style="white-space:nowrap">{} / {}</span>', percent, percent, done, needed)


@admin.action(description=f"Invite {INVITE_COUNT} annotators (shows the links)", permissions=["manage"])
def invite_annotators(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study]) -> None:
    base = request.build_absolute_uri("/")
    for study in studies_admin.allowed(request, queryset, "invite"):
        links = [invitation_url(a, base) for a in annotators_create(study=study, count=INVITE_COUNT)]
        audit(request.user, "invited", study, count=len(links), pilot=False, via="admin action")
        modeladmin.message_user(request, format_html(
            "{}: {} annotators invited:<br>{}", study.slug, len(links),
            format_html_join("", "<code>{}</code><br>", ((link,) for link in links))), messages.SUCCESS)


@admin.action(description=f"Invite {INVITE_COUNT} pilot annotators (shows the links)", permissions=["manage"])
def invite_pilot_annotators(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study]) -> None:
    base = request.build_absolute_uri("/")
    for study in studies_admin.allowed(request, queryset, "invite"):
        links = [invitation_url(a, base) for a in annotators_create(study=study, count=INVITE_COUNT, is_pilot=True)]
        audit(request.user, "invited", study, count=len(links), pilot=True, via="admin action")
        modeladmin.message_user(request, format_html(
            "{}: {} pilot annotators invited (they get work while the study is in pilot):<br>{}", study.slug,
            len(links), format_html_join("", "<code>{}</code><br>", ((link,) for link in links))), messages.SUCCESS)


@admin.action(description="Export judgments (CSV)", permissions=["analyse"])
def export_judgments_csv(modeladmin: admin.ModelAdmin, request: HttpRequest,
                         queryset: QuerySet[Study]) -> StreamingHttpResponse:
    """One CSV for every selected study (the ``study`` column tells them apart)."""
    studies = studies_admin.allowed(request, queryset.order_by("slug"), "export")
    for study in studies:
        audit(request.user, "judgments_exported", study, format="csv", history=False, via="admin action")

    def rows() -> Iterator[dict[str, Any]]:
        for study in studies:
            yield from judgment_rows(study)

    response = StreamingHttpResponse(csv_lines(rows()), content_type="text/csv; charset=utf-8")
    name = studies[0].slug if len(studies) == 1 else "studies"
    response["Content-Disposition"] = f'attachment; filename="{name}-judgments.csv"'
    return response


admin.site.unregister(Study)


@admin.register(Study)
class StudyAdmin(studies_admin.StudyAdmin):
    """Counts come from ``progress.study_list`` (correlated subqueries), so the
    changelist costs the same with 20 or 20,000 items per study."""

    list_display = ("slug", "title", "protocol", "status", "items_column", "annotators_column", "progress_column")
    actions = [invite_annotators, invite_pilot_annotators, studies_admin.pilot_studies, studies_admin.open_studies,
               studies_admin.close_studies, studies_admin.copy_studies,
               export_judgments_csv] + list(admin_actions.STUDY_ACTIONS)

    def get_queryset(self, request: HttpRequest) -> QuerySet[StudyWithCounts]:
        return progress.study_list(queryset=super().get_queryset(request))

    @admin.display(description="items", ordering="n_items")
    def items_column(self, study: StudyWithCounts) -> str:
        url = reverse("admin:studies_item_changelist") + f"?study__id__exact={study.pk}"
        return format_html('<a href="{}">{}</a>{}{}', url, study.n_items,
                           format_html(' <span title="spam items">+{} spam</span>', study.n_spam) if study.n_spam else "",
                           format_html(' <span title="skipped as clean by the suggestions\' source (prefill_skip_clean): '
                                       'never handed out">({} skipped)</span>', study.n_skipped)
                           if study.n_skipped else "")

    @admin.display(description="annotators", ordering="n_annotators")
    def annotators_column(self, study: StudyWithCounts) -> str:
        url = reverse("admin:annotation_annotator_changelist") + f"?study__id__exact={study.pk}"
        return format_html('<a href="{}">{}</a>', url, study.n_annotators)

    @admin.display(description="progress", ordering="n_done")
    def progress_column(self, study: StudyWithCounts) -> str:
        return _progress_bar(study.n_done, study.n_needed)
