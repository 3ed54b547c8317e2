"""The annotator's pages: instructions, one item a page, completion, Prolific entry.

Server-rendered and usable without JavaScript (plain form POST, redirect to
the next item); with htmx the item form posts in place and the response is
the next item's fragment from the same template. Answers go through
``services.judgment_submit``, the same service as the JSON API.
"""
from __future__ import annotations

import re
from functools import wraps
from typing import Any, Callable
from urllib.parse import urlencode

from django.db import IntegrityError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from config.http import HtmxHttpRequest
from studies.models import Status

from . import selectors, services
from .forms import answer_from_payload, payload_from_post
from .models import Annotator, Assignment
from .rendering import instructions_html
from .screens import item_screen, option_views

PROLIFIC_PID = re.compile(r"[A-Za-z0-9]{1,200}")
PROLIFIC_SESSION_PARAMS = {"STUDY_ID": "prolific_study_id", "SESSION_ID": "prolific_session_id"}
PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete"


# --- small helpers ------------------------------------------------------------

def _message(request: HttpRequest, *, title: str, message: str, status: int = 200,
             study_title: str = "") -> HttpResponse:
    """A calm one-message page (unknown link, closed study, excluded annotator, bad entry link)."""
    context = {"title": title, "message": message, "study_title": study_title}
    return render(request, "annotation/message.html", context, status=status)


def _unknown_link(request: HttpRequest) -> HttpResponse:
    return _message(request, status=404, title="This link does not work",
                    message="We could not find a study for this link. Please check that you copied the whole "
                            "address from your invitation, or ask the researcher who invited you for a new link.")


def _unavailable(request: HttpRequest, annotator: Annotator) -> HttpResponse | None:
    """The polite page for an annotator who may not (or no longer) judge; None when they may."""
    study = annotator.study
    if annotator.excluded:
        return _message(request, title="Thank you for your help", study_title=study.title,
                        message="This study no longer needs answers from you. "
                                "Your previous answers are kept. Please contact the researcher if you have questions.")
    if study.status == Status.DRAFT:
        return _message(request, title="This study has not started yet", study_title=study.title,
                        message="Please come back later with the same link.")
    if study.status == Status.CLOSED:
        return _message(request, title="This study is closed", study_title=study.title,
                        message="It no longer accepts answers. Thank you for your interest.")
    return None


def annotator_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Resolve the link's token to an annotator who may judge; else the polite 404 or refusal page.

    The wrapped view receives the annotator instead of the token.
    """
    @wraps(view)
    def wrapper(request: HttpRequest, token: str, *args: Any, **kwargs: Any) -> HttpResponse:
        annotator = selectors.annotator_by_token(token)
        if annotator is None:
            return _unknown_link(request)
        # An answer to an item already handed out is always taken (as the API takes it): closing a
        # study or excluding an annotator stops new work, it never throws away work in progress.
        refusal = None if request.method == "POST" else _unavailable(request, annotator)
        if refusal is not None:
            return refusal
        return view(request, annotator, *args, **kwargs)
    return wrapper


def _item_url(annotator: Annotator, assignment: Assignment) -> str:
    return reverse("annotation:item-detail", args=[annotator.token, assignment.public_id])


def _render_item(request: HttpRequest, context: dict[str, Any], status: int = 200) -> HttpResponse:
    """The whole page, or only the item fragment for htmx requests (not for history restores)."""
    htmx: HtmxDetails | None = getattr(request, "htmx", None)
    fragment = htmx is not None and bool(htmx) and not htmx.history_restore_request
    template = "annotation/_item.html" if fragment else "annotation/item.html"
    return render(request, template, context, status=status)


def _show(request: HttpRequest, annotator: Annotator, assignment: Assignment,
          answer: dict[str, Any] | None = None, errors: dict[str, list[str]] | None = None,
          status: int = 200) -> HttpResponse:
    candidates = list(assignment.item.candidates.all())
    if errors is None:
        services.assignment_open(assignment=assignment)
        answer = selectors.answer_for_client(selectors.current_judgment(assignment), candidates)
    context = item_screen(annotator=annotator, assignment=assignment, answer=answer, errors=errors,
                          candidates=candidates)
    return _render_item(request, context, status=status)


# --- pages --------------------------------------------------------------------

@require_GET
@annotator_required
def start(request: HttpRequest, annotator: Annotator) -> HttpResponse:
    """Instructions, keyboard help and the Start/Continue button."""
    services.annotator_instructions_seen(annotator=annotator)
    study = annotator.study
    context = {
        "study": study,
        "annotator": annotator,
        "instructions": instructions_html(study.instructions),
        "done_count": selectors.assignments_done_count(annotator=annotator),
        "protocol": study.protocol,
        "options": option_views(study),
        "labels": study.labels,
        "multi_label": study.multi_label,
    }
    return render(request, "annotation/start.html", context)


@require_GET
@annotator_required
def item_current(request: HttpRequest, annotator: Annotator) -> HttpResponse:
    """Where the Start button leads: the current item, or the completion page when nothing is left."""
    assignment = services.assignment_next(annotator=annotator)
    if assignment is None:
        return redirect("annotation:done", token=annotator.token)
    return redirect(_item_url(annotator, assignment))


@require_http_methods(["GET", "POST"])
@annotator_required
def item_detail(request: HtmxHttpRequest, annotator: Annotator, assignment: str) -> HttpResponse:
    """One of the annotator's items: GET shows it (pre-filled when judged), POST stores the answer."""
    found = selectors.assignment_for_annotator(annotator=annotator, public_id=assignment)
    if found is None:
        return _message(request, status=404, title="Item not found", study_title=annotator.study.title,
                        message="This item is not one of yours. Open the link from your invitation again to go on with "
                                "your own items.")
    if request.method == "GET":
        return _show(request, annotator, found)
    return _submit(request, annotator, found)


def _submit(request: HtmxHttpRequest, annotator: Annotator, assignment: Assignment) -> HttpResponse:
    candidates = list(assignment.item.candidates.all())
    payload = payload_from_post(study=assignment.item.study, candidates=candidates, data=request.POST)
    try:
        services.judgment_submit(assignment=assignment, payload=payload, candidates=candidates)
    except services.JudgmentError as refused:
        # htmx only swaps 2xx responses; a plain form POST gets the honest 422.
        status = 200 if request.htmx else 422
        return _show(request, annotator, assignment, answer=answer_from_payload(payload),
                     errors=refused.errors, status=status)
    following = selectors.assignment_following(annotator=annotator, after=assignment)
    if following is None:
        following = services.assignment_next(annotator=annotator)
    if following is None:
        done_url = reverse("annotation:done", args=[annotator.token])
        if request.htmx:
            return HttpResponseClientRedirect(done_url)
        return HttpResponseRedirect(done_url, status=303)
    url = _item_url(annotator, following)
    if not request.htmx:
        return HttpResponseRedirect(url, status=303)
    response = _show(request, annotator, following)
    response["HX-Push-Url"] = url
    return response


@require_GET
def done(request: HttpRequest, token: str) -> HttpResponse:
    """Thanks and the completion code, once nothing is left for this annotator.

    Work still open sends them back to it, so the code cannot be had by
    jumping straight to this address.
    """
    annotator = selectors.annotator_by_token(token)
    if annotator is None:
        return _unknown_link(request)
    study = annotator.study
    done_count = selectors.assignments_done_count(annotator=annotator)
    if annotator.excluded or (study.status != Status.OPEN and done_count == 0):
        return _unavailable(request, annotator) or _unknown_link(request)
    pending = services.assignment_next(annotator=annotator)
    if pending is not None:
        return redirect(_item_url(annotator, pending))
    if done_count == 0:
        # Every item already has its annotators: no work, so no completion code to claim payment with.
        return _message(request, title="No items are left for you", study_title=study.title,
                        message="Other annotators have already taken every item of this study. Thank you for your "
                                "interest; if you came from a recruiting platform, please return the study there.")
    services.annotator_finish(annotator=annotator)
    prolific_url = ""
    if annotator.external_id and study.completion_code:
        prolific_url = f"{PROLIFIC_COMPLETE_URL}?{urlencode({'cc': study.completion_code})}"
    last = selectors.assignment_previous(annotator=annotator, before=None)
    context = {
        "study": study,
        "annotator": annotator,
        "done_count": done_count,
        "completion_code": study.completion_code,
        "prolific_url": prolific_url,
        "back_url": _item_url(annotator, last) if last else "",
    }
    return render(request, "annotation/done.html", context)


@require_GET
def prolific(request: HttpRequest, slug: str) -> HttpResponse:
    """Entry from Prolific: one annotator per PROLIFIC_PID, re-used when they come back."""
    study = selectors.study_by_slug(slug)
    if study is None:
        return _unknown_link(request)
    pid = request.GET.get("PROLIFIC_PID", "")
    if not PROLIFIC_PID.fullmatch(pid):
        problem = "is missing" if not pid else "must be 1 to 200 letters and digits"
        return _message(request, status=400, title="This entry link is incomplete", study_title=study.title,
                        message=f"The parameter PROLIFIC_PID {problem}. Please open the study again from "
                                "Prolific, or contact the researcher through Prolific.")
    session = {}
    for param, key in PROLIFIC_SESSION_PARAMS.items():
        value = request.GET.get(param, "")
        if value and not PROLIFIC_PID.fullmatch(value):
            return _message(request, status=400, title="This entry link is incomplete", study_title=study.title,
                            message=f"The parameter {param} must be 1 to 200 letters and digits. Please open the "
                                    "study again from Prolific, or contact the researcher through Prolific.")
        if value:
            session[key] = value
    if study.status != Status.OPEN:
        closed = "has not started yet" if study.status == Status.DRAFT else "is closed"
        return _message(request, title=f"This study {closed}", study_title=study.title,
                        message="It does not accept answers right now. Please return the study on Prolific; "
                                "thank you for your interest.")
    try:
        annotator = services.annotator_for_external_id(study=study, external_id=pid, session=session)
    except IntegrityError:  # the same participant arrived twice at the same moment
        annotator = services.annotator_for_external_id(study=study, external_id=pid, session=session)
    return redirect("annotation:start", token=annotator.token)
