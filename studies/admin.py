"""The Django admin for studies, items and candidates.

Counts come from ``selectors.study_list`` (correlated subqueries), so the
changelist costs the same with 20 or 20,000 items per study. Items are not an
inline of the study (a formset of 20k items would not load); the study page
links to the item changelist filtered on the study and previews the first few.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, TypedDict

from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest, StreamingHttpResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from annotation.links import invitation_url
from annotation.services import annotators_create

from . import admin_actions, selectors
from .export import csv_lines, judgment_rows
from .models import Candidate, Item, Status, Study

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations  # a dev-only package: types only

    from .selectors import StudyWithCounts


class _CandidateCount(TypedDict):
    n_candidates: int


if TYPE_CHECKING:
    ItemWithCount = WithAnnotations[Item, _CandidateCount]

INVITE_COUNT = 5
ITEM_PREVIEW = 10


def _progress_bar(done: int, needed: int) -> str:
    percent = round(100 * done / needed) if needed else 0
    return format_html(
        '<span title="{}% of the judgments needed" style="display:block;width:5rem;height:.6rem;background:#e6e9ef;'
        'border-radius:.3rem;overflow:hidden"><span style="display:block;height:100%;width:{}%;background:#1d7a46">'
        '</span></span><span style="white-space:nowrap">{} / {}</span>', percent, percent, done, needed)


@admin.action(description=f"Invite {INVITE_COUNT} annotators (shows the links)")
def invite_annotators(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study]) -> None:
    base = request.build_absolute_uri("/")
    for study in queryset:
        links = [invitation_url(a, base) for a in annotators_create(study=study, count=INVITE_COUNT)]
        modeladmin.message_user(request, format_html(
            "{}: {} annotators invited:<br>{}", study.slug, len(links),
            format_html_join("", "<code>{}</code><br>", ((link,) for link in links))), messages.SUCCESS)


@admin.action(description="Open the selected studies (hand out work)")
def open_studies(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study]) -> None:
    n = queryset.update(status=Status.OPEN)
    modeladmin.message_user(request, f"{n} study(ies) open.", messages.SUCCESS)


@admin.action(description="Close the selected studies (stop handing out work)")
def close_studies(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study]) -> None:
    n = queryset.update(status=Status.CLOSED)
    modeladmin.message_user(request, f"{n} study(ies) closed.", messages.SUCCESS)


@admin.action(description="Export judgments (CSV)")
def export_judgments_csv(modeladmin: admin.ModelAdmin, request: HttpRequest,
                         queryset: QuerySet[Study]) -> StreamingHttpResponse:
    """One CSV for every selected study (the ``study`` column tells them apart)."""
    studies = list(queryset.order_by("slug"))

    def rows() -> Iterator[dict[str, Any]]:
        for study in studies:
            yield from judgment_rows(study)

    response = StreamingHttpResponse(csv_lines(rows()), content_type="text/csv; charset=utf-8")
    name = studies[0].slug if len(studies) == 1 else "studies"
    response["Content-Disposition"] = f'attachment; filename="{name}-judgments.csv"'
    return response


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ("slug", "title", "protocol", "status", "items_column", "annotators_column", "progress_column")
    list_display_links = ("slug", "title")
    list_filter = ("status", "protocol", "unit", "show_source")
    search_fields = ("slug", "title", "description")
    readonly_fields = ("seed_note", "items_overview", "dashboard_link", "created_at")
    actions = [invite_annotators, open_studies, close_studies, export_judgments_csv] + list(admin_actions.STUDY_ACTIONS)
    fieldsets = (
        (None, {"fields": ("slug", "title", "description", "protocol", "status", "dashboard_link")}),
        ("What annotators see", {"fields": ("show_source", "unit", "question", "instructions")}),
        ("Answers", {"fields": ("allow_ties", "options", "labels", "multi_label"),
                     "description": "Ranking uses allow_ties; choice uses options; judgment uses labels."}),
        ("Assignment", {"fields": ("redundancy", "items_per_annotator", "reservation_minutes", "completion_code")}),
        ("Quality control", {"fields": ("spam_rate", "min_seconds", "auto_exclude_share")}),
        ("Reproducibility", {"fields": ("seed", "seed_note", "created_at"), "classes": ("collapse",)}),
        ("Items", {"fields": ("items_overview",)}),
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[StudyWithCounts]:
        return selectors.study_list(queryset=super().get_queryset(request))

    @admin.display(description="items", ordering="n_items")
    def items_column(self, study: StudyWithCounts) -> str:
        url = reverse("admin:studies_item_changelist") + f"?study__id__exact={study.pk}"
        return format_html('<a href="{}">{}</a>{}', url, study.n_items,
                           format_html(' <span title="spam items">+{} spam</span>', study.n_spam) if study.n_spam else "")

    @admin.display(description="annotators", ordering="n_annotators")
    def annotators_column(self, study: StudyWithCounts) -> str:
        url = reverse("admin:annotation_annotator_changelist") + f"?study__id__exact={study.pk}"
        return format_html('<a href="{}">{}</a>', url, study.n_annotators)

    @admin.display(description="progress", ordering="n_done")
    def progress_column(self, study: StudyWithCounts) -> str:
        return _progress_bar(study.n_done, study.n_needed)

    @admin.display(description="researcher page")
    def dashboard_link(self, study: Study) -> str:
        if not study.pk:
            return "—"
        return format_html('<a href="{}">Open the study page</a> (progress, invitations, exports)',
                           reverse("studies:detail", args=[study.slug]))

    @admin.display(description="about the seed")
    def seed_note(self, study: Study) -> str:
        return ("The seed fixes spam generation and every annotator's item and candidate order. "
                "Changing it after annotators started changes the order of the items they have not seen yet.")

    @admin.display(description="items")
    def items_overview(self, study: StudyWithCounts) -> str:
        if not study.pk:
            return "Items come from a study file: use “Import study” on the study list."
        items = list(study.items.order_by("order_key", "position", "pk")
                     .annotate(n_candidates=Count("candidates"))[:ITEM_PREVIEW])
        all_url = reverse("admin:studies_item_changelist") + f"?study__id__exact={study.pk}"
        rows = format_html_join("", '<li><a href="{}">{}</a>{} — {} candidates</li>', (
            (reverse("admin:studies_item_change", args=[i.pk]), i.external_id, " (spam)" if i.is_spam else "",
             i.n_candidates) for i in items))
        return format_html('<p><a href="{}">All {} items and {} spam items →</a></p><ul>{}</ul>',
                           all_url, study.n_items, study.n_spam, rows)


class CandidateInline(admin.TabularInline):
    model = Candidate
    extra = 0
    fields = ("position", "system", "is_reference", "is_spam", "text", "highlights", "public_id")
    readonly_fields = ("public_id", "is_spam")


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("external_id", "study", "document_id", "position", "phenomenon", "is_spam", "candidates_column",
                    "n_assigned")
    list_filter = ("study", "is_spam", "phenomenon")
    search_fields = ("external_id", "document_id", "source", "candidates__text")
    list_select_related = ("study",)
    raw_id_fields = ("spam_of",)
    readonly_fields = ("study", "is_spam", "spam_of", "order_key", "n_assigned")
    inlines = [CandidateInline]
    show_full_result_count = False  # a COUNT(*) per page is wasted on 20k-item studies
    list_per_page = 50
    fieldsets = (
        (None, {"fields": ("study", "external_id", "document_id", "position", "phenomenon")}),
        ("Context", {"fields": ("source_context", "source", "target_context")}),
        ("Bookkeeping", {"fields": ("is_spam", "spam_of", "order_key", "n_assigned", "metadata"),
                         "classes": ("collapse",)}),
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[ItemWithCount]:
        return super().get_queryset(request).annotate(n_candidates=Count("candidates"))

    @admin.display(description="candidates", ordering="n_candidates")
    def candidates_column(self, item: ItemWithCount) -> int:
        return item.n_candidates
