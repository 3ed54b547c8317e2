"""One middleware guarding every request before the views: body size, rate limits, outages.

- An API request announcing a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` gets 413 JSON
  before anything reads it.
- A body sent with ``Transfer-Encoding: chunked`` has no Content-Length, and Django would
  read it as empty (``WSGIRequest`` bounds ``wsgi.input`` by CONTENT_LENGTH, 0 when absent):
  the server (gunicorn) has already decoded the chunks, so the bytes are read here from
  ``request.META["wsgi.input"]``, at most ``DATA_UPLOAD_MAX_MEMORY_SIZE`` + 1 of them; over the
  limit → 413, else the views get a new request built from the same environ with those bytes as
  its input and their length as CONTENT_LENGTH, as if the client had sent one (the request Django
  built first has already bounded its body to 0 bytes; no public API changes that).
- Token failures (a 401, or a 404 of an invitation link ``a/<token>/…``) are counted per
  client address against ``RATELIMIT_INVALID_TOKENS``. Once an address is over it, its
  requests that carry a token are still answered when the token (or a session) is valid —
  annotators and researchers behind one NAT keep working — and get 429 when it is not
  (instead of the 401/404, which keeps counting). Prolific entries (``p/<slug>/``) count
  every request against ``RATELIMIT_PROLIFIC``. Answers are JSON under ``/api/``, a short
  page elsewhere.
- A NUL character or a lone surrogate (config/safetext.py) in the path, the query string, a
  header value or a form field (name, value, file name) gives 400 naming where it was, before
  any view runs: ``{"errors": {field: [message]}}`` under ``/api/``, a short page elsewhere.
  JSON bodies are checked once decoded, by the API's parser (config/parsers.py).
- A view that finds the database unreachable gives 503 with Retry-After
  (config/errors.py) instead of a 500.
"""
from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.urls import Resolver404, resolve
from django.utils.html import escape

from config import ratelimit
from config.errors import bad_request, db_unavailable_response, is_api, is_db_outage, json_error
from config.parsers import too_large_message
from config.safetext import printable, text_problem

TOO_MANY = "Too many requests from your address; retry in {seconds} seconds."


def _too_many(request: HttpRequest, seconds: int) -> HttpResponse:
    message = TOO_MANY.format(seconds=seconds)
    if is_api(request):
        return json_error(429, message, {"Retry-After": str(seconds)})
    response = HttpResponse(f"<!doctype html><title>Too many requests</title><h1>Too many requests</h1>"
                            f"<p>{message}</p>", status=429)
    response["Retry-After"] = str(seconds)
    return response


#: Where the only views this middleware tells apart live: invitation links (a/<token>/…) and the
#: Prolific entry (p/<slug>/). Other paths skip the URL resolver (Django resolves them once, later).
_ROUTED_PREFIXES = ("/a/", "/p/")


def _route(request: HttpRequest) -> tuple[str, bool]:
    """(view name, takes a token in its URL) of the request's path."""
    if not request.path_info.startswith(_ROUTED_PREFIXES):
        return "", False
    try:
        match = resolve(request.path_info)
    except Resolver404:
        return "", False
    return match.view_name, "token" in match.kwargs


def _is_chunked(request: HttpRequest) -> bool:
    return ("chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower()
            and not request.META.get("CONTENT_LENGTH"))


def _read_chunked_body(request: HttpRequest) -> bytes | None:
    """A chunked body (already de-chunked by the server), read from the WSGI input: at most the limit + 1 bytes.

    None when it is over ``DATA_UPLOAD_MAX_MEMORY_SIZE``.
    """
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    stream = request.META.get("wsgi.input")
    parts: list[bytes] = []
    size = 0
    while stream is not None and size <= limit:  # bounded: stops at EOF or one byte past the limit
        part = stream.read(limit + 1 - size)
        if not part:
            break
        parts.append(part)
        size += len(part)
    if size > limit:
        return None
    return b"".join(parts)


def _request_with_body(request: HttpRequest, body: bytes) -> HttpRequest:
    """The request as if the client had sent ``body`` with a Content-Length: a WSGIRequest built again from
    its environ, whose input is now those bytes (nothing has read the first request's body or set anything
    on it yet: this middleware runs before the session, CSRF and authentication middleware)."""
    environ = request.META
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    return WSGIRequest(environ)


def _too_large(request: HttpRequest) -> HttpResponse:
    if is_api(request):
        return json_error(413, too_large_message())
    return HttpResponse(f"<!doctype html><title>Request too large</title><h1>Request too large</h1>"
                        f"<p>{too_large_message()}</p>", status=413)


_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _header_name(meta_key: str) -> str:
    return meta_key.removeprefix("HTTP_").replace("_", "-").title()


def _unsafe_field(fields: Iterable[tuple[str, list[str]]], *, where: str, what: str) -> tuple[str, str] | None:
    """(field, message) of the first NUL or lone surrogate in a name (reported under ``where``) or a value
    (reported under the field's own name) of query parameters or form fields."""
    for name, values in fields:
        problem = text_problem(name)
        if problem:
            return where, f"A {what} name (“{printable(name)}”) {problem}."
        for value in values:
            problem = text_problem(value)
            if problem:
                return printable(name), f"The {what} “{printable(name)}” {problem}."
    return None


def _unsafe_input(request: HttpRequest) -> tuple[str, str] | None:
    """(field, message) of the first NUL or lone surrogate in the path, query, headers or form fields."""
    problem = text_problem(request.path_info)
    if problem:
        return "path", f"The URL path {problem}."
    found = _unsafe_field(request.GET.lists(), where="query", what="query parameter")
    if found:
        return found
    for key, value in request.META.items():
        if (key.startswith("HTTP_") or key == "CONTENT_TYPE") and isinstance(value, str):
            problem = text_problem(value)
            if problem:
                header = _header_name(key)
                return header, f"The header {header} {problem}."
    if request.method == "POST" and request.content_type in _FORM_TYPES:
        found = _unsafe_field(request.POST.lists(), where="body", what="form field")
        if found:
            return found
        for name, uploads in request.FILES.lists():
            for upload in uploads:
                problem = text_problem(name) or text_problem(upload.name or "")
                if problem:
                    return printable(name), f"The file field “{printable(name)}” (its name or file name) {problem}."
    return None


def _unsafe_input_response(request: HttpRequest, field: str, message: str) -> HttpResponse:
    message = f"{message} Nothing was stored."
    if is_api(request):
        return JsonResponse({"errors": {field: [message]}}, status=400)
    return HttpResponse(f"<!doctype html><title>Bad request</title><h1>Bad request</h1><p>{escape(message)}</p>",
                        status=400)


class ApiGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self._content_length(request) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE and is_api(request):
            return json_error(413, too_large_message())
        if _is_chunked(request):
            body = _read_chunked_body(request)
            if body is None:
                return _too_large(request)
            request = _request_with_body(request, body)
        try:
            unsafe = _unsafe_input(request)
        except (RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent, MultiPartParserError) as exc:
            # Reading the form here failed as it would have in the view: the same answer (413, 400).
            return bad_request(request, exc)
        if unsafe is not None:
            return _unsafe_input_response(request, *unsafe)
        view_name, token_route = _route(request)
        address = ratelimit.client_address(request)
        uses_token = token_route or bool(request.META.get("HTTP_AUTHORIZATION"))
        if view_name == "annotation:prolific":
            entries = ratelimit.Limit.parse(settings.RATELIMIT_PROLIFIC)
            if ratelimit.ratelimit_hit(bucket="prolific", address=address, limit=entries) > entries.count:
                return _too_many(request, ratelimit.retry_after(entries))
        # Every request goes to the view, over the limit too: a valid token or session is answered
        # as usual (and never touches the counters); a failure is counted, and past the limit its
        # 401/404 becomes a 429.
        response = self.get_response(request)
        if uses_token and (response.status_code == 401 or (token_route and response.status_code == 404)):
            tokens = ratelimit.Limit.parse(settings.RATELIMIT_INVALID_TOKENS)
            if ratelimit.ratelimit_hit(bucket="token", address=address, limit=tokens) > tokens.count:
                return _too_many(request, ratelimit.retry_after(tokens))
        return response

    @staticmethod
    def _content_length(request: HttpRequest) -> int:
        try:
            return int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return 0

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if is_db_outage(exception):
            return db_unavailable_response(request, exception)
        return None
