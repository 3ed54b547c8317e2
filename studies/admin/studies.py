"""The Django admin for studies, items and candidates.

The annotation app extends ``StudyAdmin`` with what needs its data (progress
columns, invitations, judgment export): see annotation/admin.py. Items are not an
inline of the study (a formset of 20k items would not load); the study page
links to the item changelist filtered on the study and previews the first few.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join

from studies.access import rules as access

from studies.admin import actions as admin_actions
from studies.admin.access import StudyScopedAdmin, related_only
from studies.access.audit import audit
from studies.lifecycle.stages import study_status_set
from studies.forms import CandidateAdminForm, ItemAdminForm, StudyAdminForm
from studies.lifecycle.invariants import (LOCKED_CANDIDATE_FIELDS, LOCKED_FIELDS, LOCKED_ITEM_FIELDS, StudyCopyError,
                                candidate_change_errors, free_copy_slug, free_copy_title, slug_error, study_copy,
                                study_has_judgments)
from studies.models import AuditEvent, Candidate, Item, Status, Study, StudyMembership

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations  # a dev-only package: types only


class _CandidateCount(TypedDict):
    n_candidates: int


if TYPE_CHECKING:
    ItemWithCount = WithAnnotations[Item, _CandidateCount]

ITEM_PREVIEW = 10


def allowed(request: HttpRequest, queryset: QuerySet[Study], action: str) -> list[Study]:
    """The selected studies, once the user may take ``action`` on every one of them (403 otherwise, nothing done)."""
    studies = list(queryset)
    for study in studies:
        access.check(request.user, action, study)
    return studies


def _status_set(request: HttpRequest, queryset: QuerySet[Study], status: str) -> int:
    studies = allowed(request, queryset, "lifecycle")
    for study in studies:
        study_status_set(study=study, status=status, user=request.user, via="admin action")
    return len(studies)


@admin.action(description="Open the selected studies (hand out work)", permissions=["manage"])
def open_studies(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study]) -> None:
    n = _status_set(request, queryset, Status.OPEN)
    modeladmin.message_user(request, f"{n} study(ies) open.", messages.SUCCESS)


@admin.action(description="Start a pilot with the selected studies (pilot annotators only)", permissions=["manage"])
def pilot_studies(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study]) -> None:
    n = _status_set(request, queryset, Status.PILOT)
    modeladmin.message_user(request, f"{n} study(ies) in pilot.", messages.SUCCESS)


@admin.action(description="Copy as new study (settings, items, candidates; no annotators or judgments)",
              permissions=["manage"])
def copy_studies(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study]) -> None:
    for study in allowed(request, queryset, "settings"):
        new = study_copy(study=study, slug=free_copy_slug(study))
        access.study_created_by(new, request.user, how="copy (admin action)", copy_of=study.slug)
        modeladmin.message_user(request, format_html(
            'Study {}: copied as <a href="{}">{}</a> “{}” (draft).', study.slug,
            reverse("admin:studies_study_change", args=[new.pk]), new.slug, new.title), messages.SUCCESS)


class StudyCopyForm(forms.Form):
    # A CharField, not a SlugField: the slug rule and its one message are studies.lifecycle.invariants.slug_error's.
    slug = forms.CharField(help_text="The new study's slug: lowercase letters, digits, hyphens and underscores.",
                           widget=forms.TextInput(attrs={"maxlength": 80}))
    title = forms.CharField(max_length=200, required=False,
                            help_text="The new study's title, told apart from the original's (blank: “… (copy)”).")


class StudySlugAdminForm(StudyAdminForm):
    """The study form with the same slug rule and message as the import and the copy (one message, not two)."""

    slug = forms.CharField(help_text=Study._meta.get_field("slug").help_text + " Lowercase letters, digits, "
                           "hyphens and underscores.", widget=forms.TextInput(attrs={"maxlength": 80}))

    def clean_slug(self) -> str:
        slug = self.cleaned_data["slug"].strip()
        problem = slug_error(slug)
        if problem:
            raise forms.ValidationError(problem, code="invalid")
        return slug


@admin.action(description="Close the selected studies (stop handing out work)", permissions=["manage"])
def close_studies(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study]) -> None:
    n = _status_set(request, queryset, Status.CLOSED)
    modeladmin.message_user(request, f"{n} study(ies) closed.", messages.SUCCESS)


class MembershipFormSet(forms.BaseInlineFormSet):
    """A table row has no <label> per input: each select and checkbox is named by its column and row."""

    def add_fields(self, form: forms.Form, index: int | None) -> None:
        super().add_fields(form, index)
        which = f"member {index + 1}" if index is not None else "the new member"
        for name, field in form.fields.items():
            if not field.widget.is_hidden:
                label = f"delete {which}" if name == "DELETE" else f"{str(field.label or name).lower()} of {which}"
                field.widget.attrs["aria-label"] = label
                inner = getattr(field.widget, "widget", None)  # the admin's related-object wrapper around a select
                if inner is not None:
                    inner.attrs["aria-label"] = label


class StudyRowsInline(admin.TabularInline):
    """An inline whose rows belong to a study: a non-superuser's rows are those of the studies they have a role on.

    Django empties an inline's queryset when ``has_view_permission(request)`` without an object is false, which
    it is for a researcher (the role is per study; the inline checks it on the parent object), so a manager's
    item page showed no candidates and their study form no members."""
    study_path = "study"

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        if request.user.is_superuser:
            return super().get_queryset(request)
        return self.model._default_manager.filter(**{f"{self.study_path}__in": access.studies_visible_to(request.user)})


class MembershipInline(StudyRowsInline):
    """The study's members (docs/access.md): managers add, change and remove them; changes go to the audit log."""
    model = StudyMembership
    formset = MembershipFormSet
    extra = 1
    fields = ("user", "role")
    verbose_name = "member"

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "user":  # researchers sign in through the admin: staff accounts only
            kwargs["queryset"] = get_user_model().objects.filter(is_staff=True, is_active=True).order_by("username")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def _manager(self, request: HttpRequest, obj: Study | None) -> bool:
        return obj is not None and access.can(request.user, "members", obj)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return obj is not None and access.can(request.user, "view", obj)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._manager(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._manager(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._manager(request, obj)


@admin.register(Study)
class StudyAdmin(StudyScopedAdmin):
    study_path = ""
    inlines = [MembershipInline]
    list_display: tuple[str, ...] = ("slug", "title", "protocol", "status")
    list_display_links = ("slug", "title")
    list_filter = ("status", "protocol", "unit", "show_source")
    raw_id_fields = ("owner",)
    search_fields = ("slug", "title", "description")
    readonly_fields = ("seed_note", "items_overview", "dashboard_link", "created_at")
    form = StudySlugAdminForm
    actions = [pilot_studies, open_studies, close_studies, copy_studies] + list(admin_actions.STUDY_ACTIONS)
    fieldsets = (
        (None, {"fields": ("slug", "title", "description", "protocol", "status", "owner", "dashboard_link")}),
        ("What annotators see", {"fields": ("public_title", "show_source", "unit", "normalise_typography", "question", "instructions")}),
        ("Languages", {"fields": ("source_language", "target_language", "interface_language")}),
        ("Answers", {"fields": ("allow_ties", "options", "labels", "multi_label"),
                     "description": "Ranking uses allow_ties; choice uses options; judgment uses labels."}),
        ("Error spans (MQM, ESA)", {"fields": ("taxonomy", "severities", "allow_overlap", "esa_spans", "mqm_weights",
                                                   "snap_to_words"),
                                    "description": "MQM uses the taxonomy (blank: MQM core + Discourse branch), "
                                                   "severities and weights; ESA uses minor/major spans and a 0–100 "
                                                   "score (esa_spans off: DA, docs/protocols/mqm-esa.md)."}),
        ("Assignment", {"fields": ("redundancy", "allocation", "items_per_annotator", "reservation_minutes", "completion_code",
                                   "contact", "screened_out_code", "failed_code", "prolific_study_id")}),
        ("Quality control", {"fields": ("spam_rate", "probe_rate", "min_seconds", "auto_exclude_share", "auto_exclude_min_checks",
                                        "pass_max_failed_share")}),
        ("Reproducibility", {"fields": ("seed", "seed_note", "created_at"), "classes": ("collapse",)}),
        ("Items", {"fields": ("items_overview",)}),
    )

    def _locked(self, obj: Study | None) -> bool:
        """True once the study has a judgment (studies/lifecycle/invariants.py), looked up once per request and study."""
        if obj is None or obj.pk is None:
            return False
        cached = getattr(obj, "_admin_locked", None)
        if cached is None:
            cached = study_has_judgments(study=obj)
            obj._admin_locked = cached  # type: ignore[attr-defined]
        return cached

    def get_readonly_fields(self, request: HttpRequest, obj: Study | None = None) -> tuple[str, ...]:
        """A study with judgments shows its locked settings as text, not as inputs that a save would refuse."""
        fields = tuple(super().get_readonly_fields(request, obj))
        if not request.user.is_superuser:  # only an administrator hands a study to someone else
            fields = (*fields, "owner")
        if self._locked(obj):
            return (*fields, *(f for f in LOCKED_FIELDS if f not in fields))
        return fields

    def get_fieldsets(self, request: HttpRequest, obj: Study | None = None) -> list:
        fieldsets = [(name, dict(options)) for name, options in super().get_fieldsets(request, obj)]
        if obj is not None and self._locked(obj):
            fieldsets[0][1]["description"] = format_html(
                '<strong>This study has judgments</strong>, so what gives them their meaning is fixed and shown '
                'read-only: {}. Redundancy may rise, or fall down to what an item already has. '
                '<a href="{}">Copy as new study</a> to run it with other settings.',
                ", ".join(LOCKED_FIELDS), reverse("admin:studies_study_copy", args=[obj.pk]))
        return fieldsets

    def save_model(self, request: HttpRequest, obj: Study, form: Any, change: bool) -> None:
        """A new study is owned by whoever created it; every settings edit is recorded (audit log)."""
        if not change and obj.owner_id is None and request.user.is_authenticated:
            obj.owner = request.user
        before = Study.objects.filter(pk=obj.pk).values_list("status", flat=True).first() if change else None
        super().save_model(request, obj, form, change)
        if not change:
            access.study_created_by(obj, request.user, how="admin")
            return
        fields = [f for f in form.changed_data if f != "status"]
        if fields:
            audit(request.user, "settings_changed", obj, fields=fields, via="admin")
        if "status" in form.changed_data:
            audit(request.user, "status_changed", obj, before=before, after=obj.status, via="admin")

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        """Membership rows: saved, then each addition, role change and removal recorded in the audit log."""
        if formset.model is not StudyMembership:
            return super().save_formset(request, form, formset, change)
        changed = {f.instance.pk: f.initial.get("role") for f in formset.forms if f.instance.pk and f.has_changed()}
        super().save_formset(request, form, formset, change)
        study = form.instance
        for m in formset.new_objects:
            audit(request.user, "member_added", study, member=m.user.get_username(), role=m.role, via="admin")
        for m, _ in formset.changed_objects:
            audit(request.user, "member_changed", study, member=m.user.get_username(), before=changed.get(m.pk),
                  role=m.role, via="admin")
        for m in formset.deleted_objects:
            audit(request.user, "member_removed", study, member=m.user.get_username(), role=m.role, via="admin")

    def get_urls(self) -> list[URLPattern]:
        copy = path("<int:pk>/copy/", self.admin_site.admin_view(self.copy_view), name="studies_study_copy")
        return [copy, *super().get_urls()]

    def copy_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """Copy as new study: the way out when a study with judgments needs a different protocol or setting."""
        study = get_object_or_404(self.get_queryset(request), pk=pk)
        access.check(request.user, "settings", study)
        form = StudyCopyForm(request.POST or None, initial={"slug": free_copy_slug(study),
                                                            "title": free_copy_title(study)})
        if request.method == "POST" and form.is_valid():
            try:
                new = study_copy(study=study, slug=form.cleaned_data["slug"].strip(), title=form.cleaned_data["title"])
            except StudyCopyError as exc:
                for name, message in exc.errors.items():
                    form.add_error(name if name in form.fields else None, message)
            else:
                access.study_created_by(new, request.user, how="copy (admin)", copy_of=study.slug)
                self.message_user(request, f"Study {study.slug} copied as {new.slug} “{new.title}” (draft): "
                                  "change its settings now.", messages.SUCCESS)
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


def _item_locked(item: Item | None) -> bool:
    """True once the item's study has a judgment: its texts and candidates are fixed (studies/lifecycle/invariants.py)."""
    if item is None or item.pk is None:
        return False
    cached = getattr(item, "_admin_locked", None)
    if cached is None:
        cached = study_has_judgments(study=Study(pk=item.study_id))
        item._admin_locked = cached  # type: ignore[attr-defined]
    return cached


class CandidateFormSet(forms.BaseInlineFormSet):
    """Adding, changing or deleting a candidate of a study with judgments is refused (studies/lifecycle/invariants.py).

    A table row has no <label> per input (the column headers name them), so each input
    gets an ``aria-label`` naming its column and its candidate ("text of candidate 2").
    """

    def add_fields(self, form: forms.Form, index: int | None) -> None:
        super().add_fields(form, index)
        which = f"candidate {index + 1}" if index is not None else "the new candidate"
        for name, field in form.fields.items():
            if field.widget.is_hidden:
                continue
            label = f"delete {which}" if name == "DELETE" else f"{str(field.label or name).lower()} of {which}"
            field.widget.attrs["aria-label"] = label

    def clean(self) -> None:
        super().clean()
        for form in self.deleted_forms:
            if form.instance.pk is not None:
                errors = candidate_change_errors(candidate=form.instance, deleting=True)
                if errors:
                    raise forms.ValidationError(list(errors.values()))


class CandidateInline(StudyRowsInline):
    model = Candidate
    study_path = "item__study"
    form = CandidateAdminForm
    formset = CandidateFormSet
    extra = 0
    fields = ("position", "system", "is_reference", "is_spam", "text", "highlights", "public_id")
    readonly_fields = ("public_id", "is_spam")

    def get_readonly_fields(self, request: HttpRequest, obj: Item | None = None) -> tuple[str, ...]:
        """Once the study has judgments, what annotators judged is shown as text (it can no longer change)."""
        fields = tuple(super().get_readonly_fields(request, obj))
        return (*fields, *LOCKED_CANDIDATE_FIELDS) if _item_locked(obj) else fields

    def _may(self, request: HttpRequest, obj: Item | None, default: bool) -> bool:
        """Superusers: their model permissions; others: a manager role on the item's study."""
        if request.user.is_superuser:
            return default
        return obj is not None and access.can(request.user, "settings", obj.study)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if request.user.is_superuser:
            return super().has_view_permission(request, obj)
        return obj is not None and access.can(request.user, "view", obj.study)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may(request, obj, request.user.is_superuser and super().has_change_permission(request, obj))

    def has_add_permission(self, request: HttpRequest, obj: Item | None = None) -> bool:
        return not _item_locked(obj) and self._may(request, obj, request.user.is_superuser and super().has_add_permission(request, obj))

    def has_delete_permission(self, request: HttpRequest, obj: Item | None = None) -> bool:
        return not _item_locked(obj) and self._may(request, obj, request.user.is_superuser and super().has_delete_permission(request, obj))


class PhenomenonFilter(admin.SimpleListFilter):
    """The items' phenomena, with a named choice for items without one (the default filter shows an empty link)."""

    title = "phenomenon"
    parameter_name = "phenomenon"
    NONE = "(none)"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        qs = model_admin.get_queryset(request)
        study = request.GET.get("study__id__exact")
        if study and study.isdigit():
            qs = qs.filter(study_id=int(study))
        values = sorted(set(qs.order_by().values_list("phenomenon", flat=True)))
        return [(v, v) if v else (self.NONE, "(no phenomenon)") for v in values]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value is None:
            return queryset
        return queryset.filter(phenomenon="" if value == self.NONE else value)


@admin.register(Item)
class ItemAdmin(StudyScopedAdmin):
    form = ItemAdminForm
    list_display = ("external_id", "study", "document_id", "position", "phenomenon", "is_spam", "candidates_column",
                    "n_assigned")
    list_filter = (related_only("study"), "is_spam", PhenomenonFilter)
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

    def get_readonly_fields(self, request: HttpRequest, obj: Item | None = None) -> tuple[str, ...]:
        """Once the study has judgments, the source and context annotators read are shown as text."""
        fields = tuple(super().get_readonly_fields(request, obj))
        return (*fields, *LOCKED_ITEM_FIELDS) if _item_locked(obj) else fields

    def get_fieldsets(self, request: HttpRequest, obj: Item | None = None) -> list:
        fieldsets = [(name, dict(options)) for name, options in super().get_fieldsets(request, obj)]
        if obj is not None and _item_locked(obj):
            fieldsets[0][1]["description"] = format_html(
                "<strong>Study {} has judgments</strong>: this item's {} and its candidates' {} are fixed and shown "
                'read-only; candidates can no longer be added or deleted. <a href="{}">Copy as new study</a> to '
                "run it with other texts.", obj.study.slug, ", ".join(LOCKED_ITEM_FIELDS),
                ", ".join(LOCKED_CANDIDATE_FIELDS), reverse("admin:studies_study_copy", args=[obj.study_id]))
        return fieldsets

    @admin.display(description="candidates", ordering="n_candidates")
    def candidates_column(self, item: ItemWithCount) -> int:
        return item.n_candidates


@admin.register(AuditEvent)
class AuditEventAdmin(StudyScopedAdmin):
    """The audit log, read-only for everyone, superusers included (studies/access/audit.py, docs/access.md)."""

    view_action = "audit"
    change_action = None
    list_display = ("at", "username", "action", "study_slug", "details")
    list_filter = ("action", related_only("study"))
    search_fields = ("username", "study_slug", "action")
    date_hierarchy = "at"
    fields = ("at", "user", "username", "study", "study_slug", "action", "details")
    readonly_fields = fields
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
