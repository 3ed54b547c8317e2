"""Researcher pages (staff only): the studies, one study's dashboard, import, invitations, exports."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.links import invitation_url
from annotation.services import annotators_create
from config.http import HtmxHttpRequest

from . import selectors
from .export import FORMATS, export_lines
from .forms import InviteForm, StudyImportForm, decode_upload, load_study_texts
from .importing import StudyFileError, parse_study, study_create
from .models import Study

IMPORT_SESSION_KEY = "studies.import"


def _quality_url(study: Study) -> str:
    """The quality page lives in another module; link to its named route once it exists."""
    try:
        return reverse("studies:quality", args=[study.slug])
    except NoReverseMatch:
        return f"/studies/{study.slug}/quality/"


def _annotator_rows(request: HttpRequest, study: Study) -> list[dict]:
    base = request.build_absolute_uri("/")
    return [{"annotator": a, "link": invitation_url(a, base)} for a in selectors.annotator_list(study=study)]


@require_GET
@staff_member_required
def study_list(request: HttpRequest) -> HttpResponse:
    studies = selectors.study_list().order_by("-created_at")
    return render(request, "studies/list.html", {"studies": studies})


@require_GET
@staff_member_required
def study_detail(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(Study, slug=slug)
    return render(request, "studies/detail.html", {
        "study": study, "progress": selectors.study_progress(study), "rows": _annotator_rows(request, study),
        "invite_form": InviteForm(), "quality_url": _quality_url(study), "report_url": f"/reports/{study.slug}/",
        "formats": FORMATS,
    })


@require_POST
@staff_member_required
def study_invite(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Create N annotators; htmx gets the refreshed annotator table, a plain form post a redirect."""
    study = get_object_or_404(Study, slug=slug)
    form = InviteForm(request.POST)
    created = []
    if form.is_valid():
        created = annotators_create(study=study, count=form.cleaned_data["count"])
    if request.htmx:
        response = render(request, "studies/_annotators.html", {
            "study": study, "rows": _annotator_rows(request, study), "invite_form": form,
            "new_codes": {a.code for a in created}}, status=200 if form.is_valid() else 400)
        return response
    if form.is_valid():
        messages.success(request, f"{len(created)} annotator(s) invited.")
    else:
        # str(): the stubs type ErrorList's items as ValidationError | str; iterating yields str.
        messages.error(request, "count: " + " ".join(str(m) for m in form.errors.get("count", ["invalid"])))
    return redirect("studies:detail", slug=study.slug)


@require_GET
@staff_member_required
def study_export(request: HttpRequest, slug: str, fmt: str) -> StreamingHttpResponse:
    """Stream the judgments as CSV or JSON Lines (``?history=1`` adds superseded revisions)."""
    study = get_object_or_404(Study, slug=slug)
    if fmt not in FORMATS:
        raise Http404(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")
    return export_response(study, fmt=fmt, history=request.GET.get("history") in {"1", "true", "yes"})


def export_response(study: Study, *, fmt: str, history: bool = False) -> StreamingHttpResponse:
    """A streaming download of one study's export (also used by the admin action and the API)."""
    content_type = "text/csv; charset=utf-8" if fmt == "csv" else "application/x-ndjson; charset=utf-8"
    response = StreamingHttpResponse(export_lines(study, fmt=fmt, history=history), content_type=content_type)
    suffix = "-history" if history else ""
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-judgments{suffix}.{fmt}"'
    return response


@require_http_methods(["GET", "POST"])
@staff_member_required
def study_import(request: HttpRequest) -> HttpResponse:
    """Upload → preview (every error, or a summary) → create. Nothing is stored before "Create"."""
    context: dict = {"form": StudyImportForm(), "errors": [], "summary": None}
    if request.method == "POST" and request.POST.get("step") == "create":
        texts = request.session.get(IMPORT_SESSION_KEY)
        if not texts:
            messages.error(request, "Nothing to create: upload the study file again.")
            return redirect("studies:import")
        try:
            data, items = load_study_texts(**texts)
            study = study_create(parsed=parse_study(data, items))
        except StudyFileError as exc:  # e.g. the slug was taken since the preview
            context["errors"] = _error_rows(exc.errors)
            return render(request, "studies/import.html", context, status=400)
        del request.session[IMPORT_SESSION_KEY]
        messages.success(request, f"Study {study.slug!r} created with {study.items.count()} items.")
        return redirect("studies:detail", slug=study.slug)
    if request.method == "POST":
        form = StudyImportForm(request.POST, request.FILES)
        context["form"] = form
        if not form.is_valid():
            return render(request, "studies/import.html", context, status=400)
        try:
            study_text = decode_upload(form.cleaned_data["study_file"], "study file")
            items_upload = form.cleaned_data.get("items_file")
            items_name = items_upload.name if items_upload else ""
            items_text = decode_upload(items_upload, f"items file {items_name}") if items_upload else ""
            texts = {"study_text": study_text, "items_name": items_name, "items_text": items_text}
            data, items = load_study_texts(**texts)
            parsed = parse_study(data, items)
        except StudyFileError as exc:
            request.session.pop(IMPORT_SESSION_KEY, None)
            context["errors"] = _error_rows(exc.errors)
            return render(request, "studies/import.html", context, status=400)
        request.session[IMPORT_SESSION_KEY] = texts
        context["summary"] = selectors.study_file_summary(parsed)
    return render(request, "studies/import.html", context)


def _error_rows(errors: list[str]) -> list[dict[str, str]]:
    """Split "item ext-3.candidates[1].text: message" into where / what, for a readable table."""
    rows = []
    for error in errors:
        where, sep, what = error.partition(": ")
        rows.append({"where": where, "what": what} if sep else {"where": "", "what": error})
    return rows
