"""Invitation links of a study as a download (staff only): one row per annotator; the Prolific entry switch."""
from __future__ import annotations

import io

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.dashboard import progress
from annotation.pages.links import invitation_url
from annotation.pages.prolific import prolific_entry_set
from studies.access import rules as access
from formats.csvcells import csv_writer
from studies.models import Study

LINK_COLUMNS = ("annotator", "external_id", "link", "created", "done")


@require_GET
@staff_member_required
def study_links_csv(request: HttpRequest, slug: str) -> HttpResponse:
    """annotator, external_id, link, created (ISO 8601, UTC), done (judged items): for mail merges and sheets."""
    study = access.study_for(request.user, slug, "invite")
    base = request.build_absolute_uri("/")
    out = io.StringIO()
    writer = csv_writer(out, lineterminator="\n")
    writer.writerow(LINK_COLUMNS)
    for a in progress.annotator_list(study=study):
        writer.writerow([a.code, a.external_id, invitation_url(a, base), a.created_at.isoformat(), a.n_done])
    response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-links.csv"'
    return response


@require_POST
@staff_member_required
def study_prolific(request: HttpRequest, slug: str) -> HttpResponse:
    """The study page's Prolific card: turn the entry on with Prolific's STUDY_ID, or off (blank); managers only."""
    study = access.study_for(request.user, slug, "invite")
    try:
        message = prolific_entry_set(study=study, study_id=request.POST.get("prolific_study_id", ""), by=request.user)
    except ValidationError as exc:
        messages.error(request, "; ".join(f"{field}: {' '.join(errs)}" for field, errs in exc.message_dict.items()))
    else:
        messages.success(request, message)
    return redirect(reverse("studies:detail", args=[study.slug]) + "#prolific-h")
