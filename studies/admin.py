"""The Django admin for studies, items and candidates.

The annotation app extends ``StudyAdmin`` with what needs its data (progress
columns, invitations, judgment export): see annotation/admin.py. Items are not an
inline of the study (a formset of 20k items would not load); the study page
links to the item changelist filtered on the study and previews the first few.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join

from studies import admin_actions
from studies.forms import CandidateAdminForm, ItemAdminForm, StudyAdminForm
from studies.invariants import StudyCopyError, candidate_change_errors, free_copy_slug, study_copy
from studies.models import Candidate, Item, Status, Study

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations  # a dev-only package: types only


class _CandidateCount(TypedDict):
    n_candidates: int


if TYPE_CHECKING:
    ItemWithCount = WithAnnotations[Item, _CandidateCount]

ITEM_PREVIEW = 10


@admin.action(description="Open the selected studies (hand out work)")
def open_studies(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study]) -> None:
    n = queryset.update(status=Status.OPEN)
    modeladmin.message_user(request, f"{n} study(ies) open.", messages.SUCCESS)


@admin.action(description="Start a pilot with the selected studies (pilot annotators only)")
def pilot_studies(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study]) -> None:
    n = queryset.update(status=Status.PILOT)
    modeladmin.message_user(request, f"{n} study(ies) in pilot.", messages.SUCCESS)


@admin.action(description="Copy as new study (settings, items, candidates; no annotators or judgments)")
def copy_studies(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study]) -> None:
    for study in queryset:
        new = study_copy(study=study, slug=free_copy_slug(study))
        modeladmin.message_user(request, format_html(
            'Study {}: copied as <a href="{}">{}</a> (draft).', study.slug,
            reverse("admin:studies_study_change", args=[new.pk]), new.slug), messages.SUCCESS)


class StudyCopyForm(forms.Form):
    slug = forms.SlugField(max_length=80, help_text="The new study's slug.")


@admin.action(description="Close the selected studies (stop handing out work)")
def close_studies(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study]) -> None:
    n = queryset.update(status=Status.CLOSED)
    modeladmin.message_user(request, f"{n} study(ies) closed.", messages.SUCCESS)


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display: tuple[str, ...] = ("slug", "title", "protocol", "status")
    list_display_links = ("slug", "title")
    list_filter = ("status", "protocol", "unit", "show_source")
    search_fields = ("slug", "title", "description")
    readonly_fields = ("seed_note", "items_overview", "dashboard_link", "created_at")
    form = StudyAdminForm
    actions = [pilot_studies, open_studies, close_studies, copy_studies] + list(admin_actions.STUDY_ACTIONS)
    fieldsets = (
        (None, {"fields": ("slug", "title", "description", "protocol", "status", "dashboard_link")}),
        ("What annotators see", {"fields": ("public_title", "show_source", "unit", "normalise_typography", "question", "instructions")}),
        ("Languages", {"fields": ("source_language", "target_language", "interface_language")}),
        ("Answers", {"fields": ("allow_ties", "options", "labels", "multi_label"),
                     "description": "Ranking uses allow_ties; choice uses options; judgment uses labels."}),
        ("Assignment", {"fields": ("redundancy", "items_per_annotator", "reservation_minutes", "completion_code",
                                   "contact", "screened_out_code")}),
        ("Quality control", {"fields": ("spam_rate", "min_seconds", "auto_exclude_share", "auto_exclude_min_checks")}),
        ("Reproducibility", {"fields": ("seed", "seed_note", "created_at"), "classes": ("collapse",)}),
        ("Items", {"fields": ("items_overview",)}),
    )

    def get_urls(self) -> list[URLPattern]:
        copy = path("<int:pk>/copy/", self.admin_site.admin_view(self.copy_view), name="studies_study_copy")
        return [copy, *super().get_urls()]

    def copy_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """Copy as new study: the way out when a study with judgments needs a different protocol or setting."""
        study = get_object_or_404(Study, pk=pk)
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = StudyCopyForm(request.POST or None, initial={"slug": free_copy_slug(study)})
        if request.method == "POST" and form.is_valid():
            try:
                new = study_copy(study=study, slug=form.cleaned_data["slug"])
            except StudyCopyError as exc:
                for name, message in exc.errors.items():
                    form.add_error(name if name in form.fields else None, message)
            else:
                self.message_user(request, f"Study {study.slug} copied as {new.slug} (draft): change its settings now.",
                                  messages.SUCCESS)
                return redirect("admin:studies_study_change", new.pk)
        context = {**self.admin_site.each_context(request), "title": f"Copy {study.slug} as a new study",
                   "study": study, "form": form, "opts": self.model._meta}
        return TemplateResponse(request, "admin/studies/study/copy.html", context)

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
    def items_overview(self, study: Study) -> str:
        if not study.pk:
            return "Items come from a study file: use “Import study” on the study list."
        items = list(study.items.order_by("order_key", "position", "pk")
                     .annotate(n_candidates=Count("candidates"))[:ITEM_PREVIEW])
        all_url = reverse("admin:studies_item_changelist") + f"?study__id__exact={study.pk}"
        rows = format_html_join("", '<li><a href="{}">{}</a>{} — {} candidates</li>', (
            (reverse("admin:studies_item_change", args=[i.pk]), i.external_id, " (spam)" if i.is_spam else "",
             i.n_candidates) for i in items))
        n_spam = study.items.filter(is_spam=True).count()
        n_items = study.items.count() - n_spam
        return format_html('<p><a href="{}">All {} items and {} spam items →</a></p><ul>{}</ul>',
                           all_url, n_items, n_spam, rows)


class CandidateFormSet(forms.BaseInlineFormSet):
    """Adding, changing or deleting a candidate of a study with judgments is refused (studies/invariants.py)."""

    def clean(self) -> None:
        super().clean()
        for form in self.deleted_forms:
            if form.instance.pk is not None:
                errors = candidate_change_errors(candidate=form.instance, deleting=True)
                if errors:
                    raise forms.ValidationError(list(errors.values()))


class CandidateInline(admin.TabularInline):
    model = Candidate
    form = CandidateAdminForm
    formset = CandidateFormSet
    extra = 0
    fields = ("position", "system", "is_reference", "is_spam", "text", "highlights", "public_id")
    readonly_fields = ("public_id", "is_spam")


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    form = ItemAdminForm
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
        ("Context", {"fields": ("source_context", "source", "source_sentences", "target_context")}),
        ("Bookkeeping", {"fields": ("is_spam", "spam_of", "order_key", "n_assigned", "metadata"),
                         "classes": ("collapse",)}),
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[ItemWithCount]:
        return super().get_queryset(request).annotate(n_candidates=Count("candidates"))

    @admin.display(description="candidates", ordering="n_candidates")
    def candidates_column(self, item: ItemWithCount) -> int:
        return item.n_candidates
