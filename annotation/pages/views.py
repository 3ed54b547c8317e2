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
from django.utils.cache import add_never_cache_headers, patch_cache_control, patch_vary_headers
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from config.http import HtmxHttpRequest
from studies.models import Status

from annotation.items import selectors

from annotation.handout import services

from annotation.handout import skips
from annotation.quality.completion import completion_for, completion_record
from annotation.pages.forms import answer_from_payload, payload_from_post
from annotation.pages.interface import interface_language, page_context, vary_on_language
from annotation.pages.links import PROLIFIC_PARAMS, annotator_cookie_set, cookie_token, page_url, token_free_links
from annotation.models import Annotator, Assignment
from annotation.pages.prolific import PROLIFIC_ID, browser_bind, browser_participant, entry_enabled, prolific_enter
from annotation.items.rendering import instructions_html
from annotation.pages.screens import item_screen, option_views, start_screen
from annotation.pages.tutorial_feedback import tutorial_entry_url

PROLIFIC_PID = PROLIFIC_ID
PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete"
EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


# --- small helpers ------------------------------------------------------------

def _render(request: HttpRequest, template: str, context: dict[str, Any], *, study: Any = None,
            status: int = 200) -> HttpResponse:
    """Render an annotator page in the active interface language, with the study's public title and languages."""
    return render(request, template, {**page_context(study), **context}, status=status)


def _message(request: HttpRequest, *, title: str, message: str, status: int = 200,
             study: Any = None) -> HttpResponse:
    """A calm one-message page (unknown link, closed study, excluded annotator, bad entry link)."""
    return _render(request, "annotation/message.html", {"title": title, "message": message},
                   study=study, status=status)


def _unknown_link(request: HttpRequest) -> HttpResponse:
    return _message(request, status=404, title=_("This link does not work"),
                    message=_("We could not find a study for this link. Please check that you copied the whole "
                              "address from your invitation, or ask the researcher who invited you for a new link."))


def localized(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Run the view in the interface language of the study behind the token (or the browser's language).

    The token is the one in the address (``/a/<token>/…``), else the one in the annotator cookie (the token-free
    pages ``/a/…``, annotation/pages/links.py); a token in the address wins over the cookie. A GET of the invitation
    link itself sets the cookie and redirects to the token-free start page, so the token leaves the address
    after that one request. The view gets the annotator (None for an unknown token) instead of the token.
    """
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, token: str | None = None, **kwargs: Any) -> HttpResponse:
        cookie = cookie_token(request)
        annotator = selectors.annotator_by_token(token if token is not None else cookie)
        if annotator is not None and token is not None and _is_entry(request):
            entered = redirect(_token_free_entry(request))
            annotator_cookie_set(request, entered, annotator)
            add_never_cache_headers(entered)  # a cached redirect would skip the cookie
            return entered
        study = annotator.study if annotator is not None else None
        with interface_language(request, study), token_free_links(annotator is not None and
                                                                   annotator.token == cookie):
            response = view(request, annotator, *args, **kwargs) if annotator else _unknown_link(request)
        if token is None:  # one address, every annotator's page: no shared cache may keep it
            patch_vary_headers(response, ["Cookie"])
            patch_cache_control(response, private=True)
        return vary_on_language(response, study)
    return wrapper


def _is_entry(request: HttpRequest) -> bool:
    """True for a GET of the invitation link ``/a/<token>/`` (its other methods are refused by the view)."""
    match = request.resolver_match
    return request.method == "GET" and match is not None and match.url_name == "start"


def _token_free_entry(request: HttpRequest) -> str:
    """The token-free start page, with the invitation link's query string (``?lang=…``) kept."""
    query = request.META.get("QUERY_STRING", "")
    return reverse("annotation:cookie-start") + (f"?{query}" if query else "")


def _unavailable(request: HttpRequest, annotator: Annotator) -> HttpResponse | None:
    """The polite page for an annotator who may not (or no longer) judge; None when they may."""
    study = annotator.study
    if annotator.excluded:
        return _excluded(request, annotator)
    if study.status == Status.DRAFT or (study.status == Status.PILOT and not annotator.is_pilot):
        # A pilot is for pilot annotators only: everyone else's link works once the study opens.
        return _message(request, title=_("This study has not started yet"), study=study,
                        message=_("Please come back later with the same link."))
    if study.status == Status.CLOSED:
        return _message(request, title=_("This study is closed"), study=study,
                        message=_("It no longer accepts answers. Thank you for your interest."))
    return None


def prolific_return_url(annotator: Annotator, code: str) -> str:
    """Prolific's completion link with ``code``, for a participant who came from Prolific; else ""."""
    if not (annotator.external_id and code):
        return ""
    return f"{PROLIFIC_COMPLETE_URL}?{urlencode({'cc': code})}"


def excluded_context(annotator: Annotator) -> dict[str, Any]:
    """What an excluded annotator is told: the study's contact and, when set, Prolific's screened-out code."""
    study = annotator.study
    prolific_url = prolific_return_url(annotator, study.screened_out_code)
    return {"study": study, "contact": study.contact, "contact_is_email": bool(EMAIL.fullmatch(study.contact)),
            "screened_out_code": study.screened_out_code, "prolific_url": prolific_url}


def _excluded(request: HttpRequest, annotator: Annotator) -> HttpResponse:
    return _render(request, "annotation/excluded.html", excluded_context(annotator), study=annotator.study)


def annotator_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Resolve the link's token to an annotator who may judge; else the polite 404 or refusal page.

    The wrapped view receives the annotator instead of the token, and runs in the interface language.
    """
    @localized
    @wraps(view)
    def wrapper(request: HttpRequest, annotator: Annotator, *args: Any, **kwargs: Any) -> HttpResponse:
        # An answer to an item already handed out is always taken (as the API takes it): closing a
        # study or excluding an annotator stops new work, it never throws away work in progress.
        refusal = None if request.method == "POST" else _unavailable(request, annotator)
        if refusal is not None:
            return refusal
        return view(request, annotator, *args, **kwargs)
    return wrapper


def _item_url(annotator: Annotator, assignment: Assignment) -> str:
    return page_url(annotator, "item-detail", assignment.public_id)


def _render_item(request: HttpRequest, context: dict[str, Any], status: int = 200) -> HttpResponse:
    """The whole page, or only the item fragment for htmx requests (not for history restores)."""
    htmx: HtmxDetails | None = getattr(request, "htmx", None)
    fragment = htmx is not None and bool(htmx) and not htmx.history_restore_request
    template = "annotation/_item.html" if fragment else "annotation/item.html"
    return _render(request, template, context, study=context["study"], status=status)


def _show(request: HttpRequest, annotator: Annotator, assignment: Assignment,
          answer: dict[str, Any] | None = None, errors: dict[str, list[str]] | None = None,
          status: int = 200) -> HttpResponse:
    candidates = selectors.item_candidates(assignment)
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
    """Instructions, keyboard help, how much work is left and the Start/Continue button."""
    services.annotator_instructions_seen(annotator=annotator)
    study = annotator.study
    context = {
        "study": study,
        "annotator": annotator,
        "instructions": instructions_html(study.instructions),
        "protocol": study.protocol,
        "keys_template": study.spec.keys_template,
        "options": option_views(study),
        "labels": study.labels,
        "multi_label": study.multi_label,
        **start_screen(annotator=annotator),
    }
    # Practice items first (annotation/pages/tutorial.py), before the first real answer.
    context["tutorial_url"] = tutorial_entry_url(request, annotator, done_count=context["done_count"])
    context["tutorial_count"] = len(study.tutorial or [])
    context["items_url"] = page_url(annotator, "item-current")
    context["done_url"] = page_url(annotator, "done")
    return _render(request, "annotation/start.html", context, study=study)


@require_GET
@annotator_required
def item_current(request: HttpRequest, annotator: Annotator) -> HttpResponse:
    """Where the Start button leads: the current item, or the completion page when nothing is left."""
    assignment = services.assignment_next(annotator=annotator)
    if assignment is None:
        return redirect(page_url(annotator, "done"))
    return redirect(_item_url(annotator, assignment))


@csrf_exempt
@require_http_methods(["GET", "POST"])
@annotator_required
def item_detail(request: HtmxHttpRequest, annotator: Annotator, assignment: str) -> HttpResponse:
    """One of the annotator's items: GET shows it (pre-filled when judged), POST stores the answer.

    Exempt from Django's CSRF check: the annotator's credential is the secret token in the URL,
    not a cookie, so another site cannot post for them without knowing it; and the session's
    CSRF token changes whenever someone logs in or out of the admin in the same browser (a
    researcher piloting their own study), which made every later answer of an open annotator
    tab fail with 403 until a reload.
    """
    found = selectors.assignment_for_annotator(annotator=annotator, public_id=assignment)
    if found is None:
        return _message(request, status=404, title=_("Item not found"), study=annotator.study,
                        message=_("This item is not one of yours. Open the link from your invitation again to go "
                                  "on with your own items."))
    if request.method == "GET":
        return _show(request, annotator, found)
    return _submit(request, annotator, found)


@csrf_exempt  # as item_detail: the credential is the token in the URL
@require_http_methods(["POST"])
@annotator_required
def item_skip(request: HttpRequest, annotator: Annotator, assignment: str) -> HttpResponse:
    """Skip an unanswered item with a reason, as the API's skip (annotation/handout/skips.py): the item goes back to the
    pool and this annotator never gets it again; then the next item. A plain form post, never htmx."""
    found = selectors.assignment_for_annotator(annotator=annotator, public_id=assignment)
    if found is None:
        return _message(request, status=404, title=_("Item not found"), study=annotator.study,
                        message=_("This item is not one of yours. Open the link from your invitation again to go "
                                  "on with your own items."))
    try:
        reason = skips.skip_reason_validate({"reason": request.POST.get("reason", "")})
        skips.assignment_skip(assignment=found, reason=reason)
    except skips.SkipError:
        context = item_screen(annotator=annotator, assignment=found, answer=None)
        context["skip_error"] = _("Say in a few words why you skip this item (at most %(n)d characters).") % {
            "n": skips.REASON_MAX_LENGTH}
        return _render(request, "annotation/item.html", context, study=annotator.study, status=422)
    except skips.SkipConflict:
        pass  # answered meanwhile (another tab): it stays answered, and the next item follows
    return HttpResponseRedirect(page_url(annotator, "item-current"), status=303)


def _submit(request: HtmxHttpRequest, annotator: Annotator, assignment: Assignment) -> HttpResponse:
    candidates = selectors.item_candidates(assignment)
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
        done_url = page_url(annotator, "done")
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
@localized
def done(request: HttpRequest, annotator: Annotator) -> HttpResponse:
    """Thanks and the completion code, once nothing is left for this annotator.

    Work still open sends them back to it, so the code cannot be had by
    jumping straight to this address.
    """
    study = annotator.study
    done_count = selectors.assignments_done_count(annotator=annotator)
    if annotator.excluded or (done_count == 0 and not services.annotator_may_get_work(annotator=annotator)):
        return _unavailable(request, annotator) or _unknown_link(request)
    pending = services.assignment_next(annotator=annotator)
    if pending is not None:
        return redirect(_item_url(annotator, pending))
    if done_count == 0:
        # Every item already has its annotators: no work, so no completion code to claim payment with.
        return _message(request, title=_("No items are left for you"), study=study,
                        message=_("Other annotators have already taken every item of this study. Thank you for "
                                  "your interest; if you came from a recruiting platform, please return the study "
                                  "there."))
    services.annotator_finish(annotator=annotator)
    # Pass or fail is decided here, on the server, from the QC rule (annotation/quality/completion.py).
    completion = completion_for(annotator=annotator)
    completion_record(annotator=annotator, completion=completion, via="page")
    prolific_url = prolific_return_url(annotator, completion.code)
    last = selectors.assignment_previous(annotator=annotator, before=None)
    context = {
        "study": study,
        "annotator": annotator,
        "done_count": done_count,
        "completion_code": completion.code,
        "passed": completion.passed,
        "contact": study.contact, "contact_is_email": bool(EMAIL.fullmatch(study.contact)),
        "prolific_url": prolific_url,
        "back_url": _item_url(annotator, last) if last else "",
    }
    return _render(request, "annotation/done.html", context, study=study)


@require_GET
def prolific(request: HttpRequest, slug: str) -> HttpResponse:
    """Entry from Prolific, for a study whose manager turned it on: one annotator per PROLIFIC_PID, bound to the
    browser and SESSION_ID that first used it (annotation/pages/prolific.py)."""
    study = selectors.study_by_slug(slug)
    if not entry_enabled(study):  # off: answered exactly as a study that does not exist
        study = None
    with interface_language(request, study):
        response = _prolific(request, study) if study is not None else _unknown_link(request)
    return vary_on_language(response, study)


def _bad_entry(request: HttpRequest, study: Any, problem: str) -> HttpResponse:
    return _message(request, status=400, title=_("This entry link is incomplete"), study=study,
                    message=problem + " " + _("Please open the study again from Prolific, or contact the "
                                              "researcher through Prolific."))


def _prolific(request: HttpRequest, study: Any) -> HttpResponse:
    params = {}
    for name in PROLIFIC_PARAMS:
        value = request.GET.get(name, "")
        if not value:
            return _bad_entry(request, study, _("The parameter %(name)s is missing.") % {"name": name})
        if not PROLIFIC_PID.fullmatch(value):
            return _bad_entry(request, study,
                              _("The parameter %(name)s must be 1 to 200 letters and digits.") % {"name": name})
        params[name] = value
    if params["STUDY_ID"] != study.prolific_study_id:
        return _message(request, status=403, title=_("This entry link is for another study"), study=study,
                        message=_("The Prolific study in this link is not the one this study was opened for. "
                                  "Please open the study again from Prolific, or contact the researcher through "
                                  "Prolific."))
    if study.status != Status.OPEN:  # Prolific participants are never pilot annotators
        closed = _("This study is closed") if study.status == Status.CLOSED else _("This study has not started yet")
        return _message(request, title=closed, study=study,
                        message=_("It does not accept answers right now. Please return the study on Prolific; "
                                  "thank you for your interest."))
    pid = params["PROLIFIC_PID"]
    enter = {"study": study, "pid": pid, "session_id": params["SESSION_ID"],
             "browser_pid": browser_participant(request, study)}
    try:
        entry = prolific_enter(**enter)
    except IntegrityError:  # the same participant arrived twice at the same moment
        entry = prolific_enter(**enter)
    if entry.annotator is None:
        return _message(request, status=403, title=_("This participant id is already in use"), study=study,
                        message=_("Someone has already started this study with this Prolific id, in another "
                                  "browser or another Prolific session, so it cannot be opened here. If that was "
                                  "you, please go on in the browser where you started; otherwise contact the "
                                  "researcher through Prolific."))
    # Straight to the token-free start page, with the annotator cookie: the token never appears in an address.
    response = redirect("annotation:cookie-start")
    annotator_cookie_set(request, response, entry.annotator)
    browser_bind(response, study, pid, secure=request.is_secure())
    return response
