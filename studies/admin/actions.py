"""Admin actions on studies (study generators, spam regeneration); StudyAdmin lists STUDY_ACTIONS.

Each action calls the same functions as the commands and reports per study:
the new study's slug (with a link to it), what was skipped, or every error.
"""
from __future__ import annotations

from typing import Callable

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from studies.generators.choice import Generated, connective_study, contrastive_study, free_slug, generated_import, items_from_study
from studies.access import rules as access
from studies.importing.study_file import StudyFileError
from studies.models import Study
from studies.controls.spam import SpamError, spam_items_create


def _generate(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study], suffix: str,
              build: Callable[[Study, str], Generated]) -> None:
    studies = list(queryset)
    for study in studies:  # a manager of every selected study, or nothing is done (403)
        access.check(request.user, "settings", study)
    for study in studies:
        try:
            generated = build(study, free_slug(f"{study.slug}-{suffix}"))
            new = generated_import(generated=generated)
            access.study_created_by(new, request.user, how=f"{suffix} study (admin action)", made_from=study.slug)
        except StudyFileError as exc:
            modeladmin.message_user(request, format_html(
                "Study {}: nothing created, {} error(s):<br>{}", study.slug, len(exc.errors),
                format_html_join("", "{}<br>", ((e,) for e in exc.errors[:20]))), messages.ERROR)
            continue
        url = reverse("admin:studies_study_change", args=[new.pk])
        note = f" ({len(generated.skipped)} item(s) skipped: no marked connective)" if generated.skipped else ""
        modeladmin.message_user(request, format_html(
            'Study {}: created <a href="{}">{}</a> with {} items{}.', study.slug, url, new.slug,
            new.items.filter(is_spam=False).count(), note), messages.SUCCESS)


@admin.action(description="Make a connective-deletion study from this study (DiP A.4)", permissions=["manage"])
def make_connective_study(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study]) -> None:
    """Reference vs reference with the connective deleted; items without a marked connective are skipped."""
    _generate(modeladmin, request, queryset, "connective", lambda study, slug: connective_study(
        items=items_from_study(study), slug=slug, skip_unmarked=True, redundancy=study.redundancy,
        spam_rate=study.spam_rate))


@admin.action(description="Make a contrastive-choice study from this study (ContraPro)", permissions=["manage"])
def make_contrastive_study(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study]) -> None:
    _generate(modeladmin, request, queryset, "contrastive", lambda study, slug: contrastive_study(
        items=items_from_study(study), slug=slug, redundancy=study.redundancy, spam_rate=study.spam_rate,
        show_source=study.show_source))


@admin.action(description="Regenerate spam items (only before any item is handed out)", permissions=["manage"])
def regenerate_spam_items(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Study]) -> None:
    studies = list(queryset)
    for study in studies:
        access.check(request.user, "settings", study)
    for study in studies:
        try:
            created = spam_items_create(study=study)
        except SpamError as exc:
            modeladmin.message_user(request, str(exc), messages.ERROR)
            continue
        modeladmin.message_user(request, f"Study {study.slug}: {len(created)} spam item(s) at rate {study.spam_rate:g}.",
                                messages.SUCCESS)


STUDY_ACTIONS: list = [make_connective_study, make_contrastive_study, regenerate_spam_items]
