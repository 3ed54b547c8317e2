"""One middleware guarding every request before the views: body size, rate limits, outages.

- An API request announcing a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` gets 413 JSON
  before anything reads it (config/parsers.py catches bodies without Content-Length).
- Requests that authenticate with a token (an ``Authorization`` header, or an invitation
  link ``a/<token>/…``) from an address that has already failed ``RATELIMIT_INVALID_TOKENS``
  times in the window get 429 without being looked up; a failure is a 401, or a 404 of a
  token link. Prolific entries (``p/<slug>/``) count every request against
  ``RATELIMIT_PROLIFIC``. Answers are JSON under ``/api/``, a short page elsewhere.
- A view that finds the database unreachable gives 503 with Retry-After
  (config/errors.py) instead of a 500.
"""
from __future__ import annotations

from typing import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve

from config import ratelimit
from config.errors import db_unavailable_response, is_api, is_db_outage, json_error
from config.parsers import too_large_message

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


class ApiGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if is_api(request) and self._content_length(request) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
            return json_error(413, too_large_message())
        view_name, token_route = _route(request)
        address = ratelimit.client_address(request)
        uses_token = token_route or bool(request.META.get("HTTP_AUTHORIZATION"))
        tokens = ratelimit.Limit.parse(settings.RATELIMIT_INVALID_TOKENS)
        if uses_token and ratelimit.ratelimit_count(bucket="token", address=address, limit=tokens) >= tokens.count:
            return _too_many(request, ratelimit.retry_after(tokens))
        if view_name == "annotation:prolific":
            entries = ratelimit.Limit.parse(settings.RATELIMIT_PROLIFIC)
            if ratelimit.ratelimit_hit(bucket="prolific", address=address, limit=entries) > entries.count:
                return _too_many(request, ratelimit.retry_after(entries))
        response = self.get_response(request)
        if uses_token and (response.status_code == 401 or (token_route and response.status_code == 404)):
            ratelimit.ratelimit_hit(bucket="token", address=address, limit=tokens)
        return response

    @staticmethod
    def _content_length(request: HttpRequest) -> int:
        try:
            return int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return 0

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if is_db_outage(exception):
            return db_unavailable_response(request)
        return None
