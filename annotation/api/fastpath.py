"""The annotation API's two hot endpoints answered without DRF's dispatch and the middleware they do not use.

``GET /api/v1/annotate/next`` and ``POST /api/v1/annotate/<assignment>/judgment`` are what every annotator sends
for every item (docs/load.md, "The annotation API's fast path"). :class:`AnnotationFastPathMiddleware` sits right
after ``config.middleware.ApiGuardMiddleware`` (413, unsafe input, rate limits and 503 still wrap it) and answers
the ordinary request to either endpoint itself: the same service calls as the DRF views
(``annotation.api.views.next_answer`` / ``judgment_answer``), the body rendered by DRF's ``JSONRenderer``, and the
headers those views and the middleware after this one give (``Allow`` and ``Vary: Accept`` from DRF,
``X-Frame-Options`` from Django's clickjacking middleware, ``Content-Length`` from its common middleware).

What it skips, for the requests it takes: URL resolution, DRF's request wrapper, authentication classes,
content negotiation and response finalisation, and the session, common, CSRF, authentication, messages,
clickjacking and htmx middleware. Those are no-ops for such a request: it carries no cookie (so no session,
CSRF token or messages are read or written), the DRF views are CSRF-exempt and check the token themselves,
and its ``Accept`` and ``Content-Type`` leave the renderer and the parser no choice.

Every other request goes down the whole stack to the DRF views unchanged: another method (HEAD, OPTIONS, …),
an ``Accept`` other than none, ``*/*`` or ``application/json`` (the browsable API, ``; indent=``, 406), a cookie,
a body that is not ``application/json`` or is empty, and an unknown token or an assignment that is not the
caller's (401/404: this path only read, so the DRF view reads again and answers, and the rate limit counts it
as before). ``tests/annotation/test_api_fastpath.py`` compares both paths' status, headers and bodies on a
table of requests.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from django.conf import settings
from django.core.handlers.exception import response_for_exception
from django.http import HttpRequest, HttpResponse
from django.core.exceptions import MiddlewareNotUsed
from django.urls import NoReverseMatch, get_script_prefix, reverse
from django.utils.cache import patch_vary_headers
from rest_framework.exceptions import AuthenticationFailed, NotAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation.api.views import (Answer, JudgmentSubmitAPI, NextAssignmentAPI, _token, judgment_answer,
                                  next_answer)
from config.parsers import DepthLimitedJSONParser

#: ``Accept`` values DRF's negotiation answers with the JSON renderer, no media-type parameters.
_JSON_ACCEPT = frozenset({"", "*/*", "application/json"})
_RENDERER = JSONRenderer()
_PARSER = DepthLimitedJSONParser()


def _path(name: str, **kwargs: str) -> str:
    """The URL path (as ``request.path_info`` has it) of a named route."""
    return "/" + reverse(name, kwargs=kwargs).removeprefix(get_script_prefix())


def _default_headers(view_class: type[APIView]) -> dict[str, str]:
    """``Allow`` and ``Vary`` as DRF's ``finalize_response`` sets them for this view."""
    view = view_class()
    view.setup(HttpRequest())
    return dict(view.default_response_headers)


class AnnotationFastPathMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response
        try:
            self.next_path = _path("api-annotate-next")
            marker = "ASSIGNMENT"
            before, _, after = _path("api-annotate-judgment", assignment=marker).partition(marker)
        except NoReverseMatch:
            raise MiddlewareNotUsed("the URL configuration has no annotation API")
        self.judgment_path = re.compile(f"{re.escape(before)}([^/]+){re.escape(after)}")
        self.next_headers = _default_headers(NextAssignmentAPI)
        self.judgment_headers = _default_headers(JudgmentSubmitAPI)
        # What the middleware skipped here would do to such a request beyond no-ops: refuse a user agent,
        # redirect to www. With either set, everything takes the whole stack.
        self.enabled = not settings.DISALLOWED_USER_AGENTS and not settings.PREPEND_WWW

    def __call__(self, request: HttpRequest) -> HttpResponse:
        meta = request.META
        if (not self.enabled or meta.get("HTTP_COOKIE") or meta.get("HTTP_ACCEPT", "") not in _JSON_ACCEPT):
            return self.get_response(request)
        method, path = request.method, request.path_info
        if method == "GET" and path == self.next_path:
            request.get_host()  # ALLOWED_HOSTS, as the common middleware checks it (DisallowedHost: a 400)
            return self._answer(request, self.next_headers, lambda: next_answer(_token(request)))
        if method == "POST" and meta.get("CONTENT_TYPE") == "application/json" and _content_length(request) > 0:
            match = self.judgment_path.fullmatch(path)
            if match is not None:
                request.get_host()
                return self._answer(request, self.judgment_headers, lambda: judgment_answer(
                    _token(request), match[1], lambda: _parse(request)))
        return self.get_response(request)

    def _answer(self, request: HttpRequest, headers: dict[str, str],
                work: Callable[[], Answer | None]) -> HttpResponse:
        try:
            answer = work()
        except Exception as exc:
            # As DRF's handle_exception: the project's handler (503 for an outage, the API's own errors), else
            # Django's answer to an exception raised in a view (handler500: a 500, logged), with the headers of
            # the middleware it would have passed on its way out.
            handler: Callable[[Exception, dict[str, Any]], Response | None]
            handler = api_settings.EXCEPTION_HANDLER  # type: ignore[assignment]  # a dotted path, imported
            handled = handler(exc, {"view": None, "args": (), "kwargs": {}, "request": request})
            if handled is None:
                return _middleware_headers(response_for_exception(request, exc))
            return _render(handled.status_code, handled.data, _exception_headers(exc, handled), headers)
        if answer is None:
            return self.get_response(request)  # 401 / 404: the DRF view reads again and answers
        return _render(answer.status, answer.data, answer.headers, headers)


def _content_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _parse(request: HttpRequest) -> Any:
    """The body as DRF's ``request.data`` decodes it for ``application/json`` (the API's parser)."""
    return _PARSER.parse(request, "application/json", {"encoding": request.encoding or settings.DEFAULT_CHARSET})


def _exception_headers(exc: Exception, handled: Response) -> dict[str, str]:
    found = dict(handled.items())
    found.pop("Content-Type", None)
    if isinstance(exc, (NotAuthenticated, AuthenticationFailed)):
        found["WWW-Authenticate"] = "Token"  # AnnotatorTokenAuthentication.authenticate_header
    return found


def _render(status: int, data: Any, extra: dict[str, str] | None, view_headers: dict[str, str]) -> HttpResponse:
    """The response DRF and the skipped middleware would have made of it."""
    content = _RENDERER.render(data, "application/json")
    response = HttpResponse(content, status=status, content_type="application/json")
    if not content:
        del response["Content-Type"]  # as DRF's Response.rendered_content does for an empty body
    for name, value in (extra or {}).items():
        response[name] = value
    vary = view_headers.get("Vary")
    if vary is not None:
        patch_vary_headers(response, [vary])
    for name, value in view_headers.items():
        if name != "Vary":
            response[name] = value
    return _middleware_headers(response)


def _middleware_headers(response: HttpResponse) -> HttpResponse:
    """What the clickjacking middleware, then the common one, add to the response on its way out."""
    if response.get("X-Frame-Options") is None:
        response["X-Frame-Options"] = getattr(settings, "X_FRAME_OPTIONS", "DENY").upper()
    if not response.streaming and not response.has_header("Content-Length"):
        response["Content-Length"] = str(len(response.content))
    return response
