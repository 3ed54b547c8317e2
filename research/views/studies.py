"""Researcher pages (staff only): the studies, one study's dashboard, import, invitations, exports."""
from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.pages.links import invitation_url, prolific_url
from annotation.handout.services import annotators_create
from config.http import HtmxHttpRequest
from evaluators.live_allocation import allocation_refresh
from evaluators.study_selection import Selection, SelectionError, SelectionRequest, apply_selection, select_items
from research.forms import ItemSelectionForm

from annotation.dashboard import progress
from studies import selectors as study_selectors
from annotation.exporting.judgments import FORMATS, export_lines
from studies.forms import InviteForm, StudyImportForm, decode_upload, load_study_texts
from studies.controls.blinding import BlindingReport, parsed_study_lint
from studies.definition.allocation import refresh_every
from studies.importing.study_file import ParsedStudy, StudyFileError, parse_study, study_create
from studies.lifecycle.invariants import LOCKED_FIELDS, study_has_judgments, typography_lock_reason, typography_normalise
from studies.lifecycle.stages import CLOSED_WHEN_SETTLED, NEXT_STATUSES, study_status_set
from studies.access import rules as access
from studies.access.audit import audit
from studies.access.rules import membership_set
from studies.models import Role, Status, Study

IMPORT_SESSION_KEY = "studies.import"
#: Set by the import preview's "Normalise typography": the study is created with normalise_typography on.
IMPORT_NORMALISE_KEY = "studies.import.normalise_typography"
#: The import page's "Select items" (method, metric, budget, seed, score file): redone at "Create", never stored before.
IMPORT_SELECTION_KEY = "studies.import.selection"
#: The selection form's field of each SelectionError field.
SELECTION_FIELDS = {"method": "select_method", "metric": "select_metric", "budget": "select_budget",
                    "scores": "scores_file", "seed": "select_seed"}
#: The preview lists at most this many kept items.
SELECTION_SHOWN = 200


def _typographic_cues(blinding: BlindingReport) -> bool:
    """True when a blinding finding is one that ``normalise_typography`` would hide and it is still off."""
    return not blinding.normalised and any(f.typographic for f in blinding.findings)


def _annotator_rows(request: HttpRequest, study: Study) -> list[dict]:
    base = request.build_absolute_uri("/")
    return [{"annotator": a, "link": invitation_url(a, base)} for a in progress.annotator_list(study=study)]


@require_GET
@staff_member_required
def study_list(request: HttpRequest) -> HttpResponse:
    studies = list(progress.study_list(queryset=access.studies_visible_to(request.user)).order_by("-created_at"))
    activity = progress.study_activity(studies=studies)
    rows = [{"s": s, "activity": activity[s.pk]} for s in studies]
    return render(request, "studies/list.html", {"studies": studies, "rows": rows})


@require_GET
@staff_member_required
def study_detail(request: HttpRequest, slug: str) -> HttpResponse:
    study = access.study_for(request.user, slug, "view")
    listed = progress.study_list(queryset=Study.objects.filter(pk=study.pk)).get()
    blinding = study_selectors.study_blinding_lint(study=study)
    typography = None
    if _typographic_cues(blinding):
        typography = {"action": reverse("studies:normalise-typography", args=[study.slug]),
                      "reason": typography_lock_reason(study=study),
                      "copy_url": reverse("admin:studies_study_copy", args=[study.pk])}
    # Adaptive allocation: recomputed from the judgments on every view (exclusions change it without a judgment).
    allocation = allocation_refresh(study) if study.allocation else {}
    return render(request, "studies/detail.html", {
        "study": study, "progress": progress.study_progress(study), "rows": _annotator_rows(request, study),
        "allocation": allocation,
        "closed_when_settled": (study.provenance or {}).get(CLOSED_WHEN_SETTLED) if allocation else None,
        "refresh_every": refresh_every(study.allocation) if allocation else None,
        "refresh_every_default": bool(allocation) and "refresh_every" not in study.allocation,
        "activity": progress.study_activity(studies=[listed])[study.pk],
        "prolific_url": prolific_url(slug=study.slug, base_url=request.build_absolute_uri("/")),
        "invite_form": InviteForm(), "quality_url": reverse("studies:quality", args=[study.slug]),
        "report_url": reverse("evaluators:report", args=[study.slug]),
        "formats": FORMATS, "blinding": blinding, "typography": typography,
        "protocol_setting_rows": study.spec.setting_rows(study),
        "lifecycle": _lifecycle(study), **_access_context(request, study),
        "members_notice": request.session.pop(MEMBERS_NOTICE_KEY, None),
    })


#: Audit events shown on the study page (the rest: ``export_judgments SLUG --audit`` or the admin).
AUDIT_ON_PAGE = 20


def _access_context(request: HttpRequest, study: Study) -> dict:
    """What the user may do here (which cards and buttons to show), the members and the last audit events."""
    role = access.role_of(request.user, study)
    may = {action: access.role_allows(role, action) for action in access.ACTIONS}
    events = list(study.audit_events.order_by("-at", "-pk")[:AUDIT_ON_PAGE]) if may["audit"] else []
    return {"may": may, "my_role": role, "members": access.members_of(study), "roles": Role.choices,
            "audit_events": [{"event": e, "details": audit_details(e.details)} for e in events],
            "audit_limit": AUDIT_ON_PAGE}


def _detail_value(value: object) -> str:
    """One audit detail as a reader wants it: yes/no, lists joined, nested objects as key value pairs."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(_detail_value(v) for v in value) if value else "none"
    if isinstance(value, dict):
        return "; ".join(f"{k.replace('_', ' ')} {_detail_value(v)}" for k, v in value.items()) if value else "none"
    return str(value)


def audit_details(details: object) -> list[tuple[str, str]]:
    """An event's details as (label, text) pairs for the page: ``{"count": 3, "pilot": True}`` is
    count 3, pilot yes (the raw JSON stays in ``export_judgments --audit``)."""
    if not isinstance(details, dict):
        return [("", _detail_value(details))] if details not in (None, "", [], {}) else []
    return [(str(k).replace("_", " "), _detail_value(v)) for k, v in details.items()]


@require_POST
@staff_member_required
def study_members(request: HttpRequest, slug: str) -> HttpResponse:
    """The study page's member form: add a user by username with a role, change a role, or remove (role=remove)."""
    study = access.study_for(request.user, slug, "members")
    try:
        message = membership_set(study=study, username=request.POST.get("username", ""),
                                 role=request.POST.get("role", ""), by=request.user)
    except ValidationError as exc:
        _members_notice(request, "; ".join(f"{field}: {' '.join(errs)}" for field, errs in exc.message_dict.items()),
                        error=True)
        # no #fragment: browsers skip autofocus on a page opened at a fragment, and the field (with its error
        # beside it) is what the page must open on
        return redirect("studies:detail", slug=study.slug)
    _members_notice(request, message, error=False)
    return redirect(reverse("studies:detail", args=[study.slug]) + "#members")


#: The members form's outcome, shown at the form after the redirect (not at the top of the page, 2,500 px away).
MEMBERS_NOTICE_KEY = "studies.members_notice"


def _members_notice(request: HttpRequest, text: str, *, error: bool) -> None:
    request.session[MEMBERS_NOTICE_KEY] = {"text": text, "error": error,
                                           "username": request.POST.get("username", "") if error else "",
                                           "role": request.POST.get("role", "") if error else ""}


def _lifecycle(study: Study) -> dict:
    """What the study page's lifecycle card shows: the status buttons, the preview, what is locked."""
    labels = dict(Status.choices)
    return {"next": [{"value": s, "label": labels[s]} for s in NEXT_STATUSES.get(study.status, ())],
            "locked": study_has_judgments(study=study), "locked_fields": ", ".join(LOCKED_FIELDS),
            "n_pilot": study.annotators.filter(is_pilot=True).count()}


@require_POST
@staff_member_required
def study_set_status(request: HttpRequest, slug: str) -> HttpResponse:
    """The study page's status buttons (draft → pilot → open → closed)."""
    study = access.study_for(request.user, slug, "lifecycle")
    try:
        study_status_set(study=study, status=request.POST.get("status", ""), user=request.user)
    except ValidationError as exc:
        messages.error(request, "status: " + " ".join(exc.message_dict.get("status", ["invalid"])))
        return redirect("studies:detail", slug=study.slug)
    messages.success(request, f"Study {study.slug} is now {study.get_status_display().lower()}.")
    return redirect("studies:detail", slug=study.slug)


@require_POST
@staff_member_required
def study_normalise_typography(request: HttpRequest, slug: str) -> HttpResponse:
    """The blinding warnings' "Normalise typography" button: turns the setting on for a draft study."""
    study = access.study_for(request.user, slug, "settings")
    try:
        typography_normalise(study=study)
    except ValidationError as exc:
        messages.error(request, "normalise_typography: " + " ".join(exc.message_dict["normalise_typography"]))
    else:
        audit(request.user, "settings_changed", study, fields=["normalise_typography"], via="page")
        messages.success(request, f"Study {study.slug}: typography is now normalised on annotators' screens "
                                  "(straight quotes, \"...\", \"-\", plain spaces); the warnings below are what remains.")
    return redirect(reverse("studies:detail", args=[study.slug]) + "#blinding-h")


@require_POST
@staff_member_required
def study_invite(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Create N annotators; htmx gets the refreshed annotator table, a plain form post a redirect."""
    study = access.study_for(request.user, slug, "invite")
    form = InviteForm(request.POST)
    created = []
    if form.is_valid():
        created = annotators_create(study=study, count=form.cleaned_data["count"],
                                    is_pilot=form.cleaned_data["pilot"])
        audit(request.user, "invited", study, count=len(created), pilot=form.cleaned_data["pilot"], via="page")
    if request.htmx:
        # the table, and out of band the cards that count annotators (the pilot count of the status card)
        return render(request, "studies/_invite_response.html", {
            "study": study, "rows": _annotator_rows(request, study), "invite_form": form,
            "new_codes": {a.code for a in created}, "lifecycle": _lifecycle(study), "oob": True,
            **_access_context(request, study)}, status=200 if form.is_valid() else 400)
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
    study = access.study_for(request.user, slug, "export")
    if fmt not in FORMATS:
        raise Http404(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")
    history = request.GET.get("history") in {"1", "true", "yes"}
    audit(request.user, "judgments_exported", study, format=fmt, history=history, via="page")
    return export_response(study, fmt=fmt, history=history)


def export_response(study: Study, *, fmt: str, history: bool = False) -> StreamingHttpResponse:
    """A streaming download of one study's export (also used by the admin action and the API)."""
    content_type = "text/csv; charset=utf-8" if fmt == "csv" else "application/x-ndjson; charset=utf-8"
    response = StreamingHttpResponse(export_lines(study, fmt=fmt, history=history), content_type=content_type)
    suffix = "-history" if history else ""
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-judgments{suffix}.{fmt}"'
    return response


def _import_parsed(texts: dict, selection: dict | None) -> tuple[ParsedStudy, Selection | None]:
    """The uploaded study file parsed, and with "Select items" only the kept items (StudyFileError, SelectionError)."""
    data, items = load_study_texts(**texts)
    parsed = parse_study(data, items)
    if not selection:
        return parsed, None
    chosen = select_items(parsed, SelectionRequest(**selection))
    return apply_selection(parsed, chosen), chosen


def _import_forget(request: HttpRequest) -> None:
    for key in (IMPORT_SESSION_KEY, IMPORT_NORMALISE_KEY, IMPORT_SELECTION_KEY):
        request.session.pop(key, None)


@require_http_methods(["GET", "POST"])
@staff_member_required
def study_import(request: HttpRequest) -> HttpResponse:
    """Upload → preview (every error, or a summary and the items a selection keeps) → create. Nothing stored before."""
    context: dict = {"form": StudyImportForm(), "select_form": ItemSelectionForm(), "errors": [], "summary": None}
    step = request.POST.get("step") if request.method == "POST" else None
    if step in ("create", "normalise"):
        texts = request.session.get(IMPORT_SESSION_KEY)
        if not texts:
            messages.error(request, "Nothing to create: upload the study file again.")
            return redirect("studies:import")
        if step == "normalise":  # the preview's "Normalise typography": preview again, as it will be created
            request.session[IMPORT_NORMALISE_KEY] = True
        try:
            parsed, selection = _import_parsed(texts, request.session.get(IMPORT_SELECTION_KEY))
            if request.session.get(IMPORT_NORMALISE_KEY):
                parsed.fields["normalise_typography"] = True
            if step == "normalise":
                return _import_preview(request, context, parsed, selection)
            study = study_create(parsed=parsed)
            access.study_created_by(study, request.user, how="import page")
        except StudyFileError as exc:  # e.g. the slug was taken since the preview
            context["errors"] = _error_rows(exc.errors)
            return render(request, "studies/import.html", context, status=400)
        except SelectionError as exc:
            context["errors"] = [{"where": SELECTION_FIELDS[f], "what": m} for f, ms in exc.errors.items() for m in ms]
            return render(request, "studies/import.html", context, status=400)
        _import_forget(request)
        typography = " Typography is normalised on annotators' screens." if study.normalise_typography else ""
        selected = (f", selected from {selection.n_total} by {selection.request.method}" if selection else "")
        messages.success(request, f"Study {study.slug!r} created with {study.items.count()} items{selected}."
                                  f"{typography}")
        return redirect("studies:detail", slug=study.slug)
    if request.method == "POST":
        form = StudyImportForm(request.POST, request.FILES)
        select_form = ItemSelectionForm(request.POST, request.FILES)
        context.update(form=form, select_form=select_form)
        if not (form.is_valid() & select_form.is_valid()):  # both forms' errors at once
            _import_forget(request)
            return render(request, "studies/import.html", context, status=400)
        chosen = select_form.cleaned_data
        selection_params = None
        if chosen["select_method"]:
            upload = chosen.get("scores_file")
            try:
                scores_text = decode_upload(upload, "score file") if upload else None
            except StudyFileError as exc:
                select_form.add_error("scores_file", exc.errors[0])
                _import_forget(request)
                return render(request, "studies/import.html", context, status=400)
            selection_params = {"method": chosen["select_method"], "metric": chosen["select_metric"].strip(),
                                "budget": chosen["select_budget"], "seed": chosen["select_seed"] or 0,
                                "scores_name": upload.name if upload else "", "scores_text": scores_text}
        try:
            study_text = decode_upload(form.cleaned_data["study_file"], "study file")
            items_upload = form.cleaned_data.get("items_file")
            items_name = items_upload.name if items_upload else ""
            items_text = decode_upload(items_upload, f"items file {items_name}") if items_upload else ""
            texts = {"study_text": study_text, "items_name": items_name, "items_text": items_text}
            parsed, selection = _import_parsed(texts, selection_params)
        except StudyFileError as exc:
            _import_forget(request)
            context["errors"] = _error_rows(exc.errors)
            return render(request, "studies/import.html", context, status=400)
        except SelectionError as exc:
            _import_forget(request)
            for field, problems in exc.errors.items():
                for problem in problems:
                    select_form.add_error(SELECTION_FIELDS[field], problem)
            return render(request, "studies/import.html", context, status=400)
        request.session[IMPORT_SESSION_KEY] = texts
        request.session.pop(IMPORT_NORMALISE_KEY, None)  # a new file starts with its own setting
        if selection_params:
            request.session[IMPORT_SELECTION_KEY] = selection_params
        else:
            request.session.pop(IMPORT_SELECTION_KEY, None)
        return _import_preview(request, context, parsed, selection)
    return render(request, "studies/import.html", context)


def _import_preview(request: HttpRequest, context: dict, parsed: ParsedStudy,
                    selection: Selection | None = None) -> HttpResponse:
    """The import page's preview of a parsed file: summary, the selection, blinding warnings, "Normalise typography"."""
    context["summary"] = study_selectors.study_file_summary(parsed)
    if selection is not None:
        context["selection"] = {"record": selection.record(),
                                "kept": [{"rank": rank, "id": ext, "utility": utility} for rank, (ext, utility)
                                         in enumerate(selection.ranked[:len(selection.kept)][:SELECTION_SHOWN], 1)],
                                "n_hidden": max(0, len(selection.kept) - SELECTION_SHOWN)}
    context["blinding"] = blinding = parsed_study_lint(fields=parsed.fields, items=parsed.items)
    if _typographic_cues(blinding):
        # Nothing is stored yet, so nobody has seen the texts: the setting may always be turned on here.
        context["typography"] = {"action": reverse("studies:import"), "step": "normalise", "reason": None}
    return render(request, "studies/import.html", context)


def _error_rows(errors: list[str]) -> list[dict[str, str]]:
    """Split "item ext-3.candidates[1].text: message" into where / what, for a readable table."""
    rows = []
    for error in errors:
        where, sep, what = error.partition(": ")
        rows.append({"where": where, "what": what} if sep else {"where": "", "what": error})
    return rows
