"""What an access log may keep of a request's address: the ``X-Log-Path`` response header (docs/deploy.md).

An annotator's invitation link carries their secret token in its path (``/a/<token>/``; its GET sets a
cookie and redirects to the token-free pages ``/a/…``, but older tabs may still ask for ``/a/<token>/item/…``),
and the Prolific entry carries participant and session ids in its query string.
gunicorn's default access log writes the request line whole, so whoever reads the logs could open any
annotator's work. Every response here carries ``X-Log-Path``: the path with an annotator token replaced
by ``<token>`` and without the query string, for the log format in docs/deploy.md
(``%({x-log-path}o)s`` instead of ``%(r)s``). The client already knows its own path, so the header tells
it nothing new.
"""
from __future__ import annotations

import re
from typing import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.encoding import escape_uri_path

#: The annotator pages' token segment: ``/a/<token>/…`` (annotation/urls.py), not the token-free pages'
#: first segment (``/a/item/…``, ``/a/done/``, ``/a/tutorial/…``, whose annotator is in a cookie).
_ANNOTATOR_PATH = re.compile(r"^/a/(?!(?:item|done|tutorial)/)[^/]+/")
LOG_PATH_HEADER = "X-Log-Path"


def log_path(path: str) -> str:
    """``path`` as an access log may keep it: an annotator token replaced by ``<token>``, no query string, and
    percent-encoded as in the request line (a header value takes no control or non-ASCII characters)."""
    path = escape_uri_path(path.split("?", 1)[0])
    return _ANNOTATOR_PATH.sub("/a/<token>/", path, count=1)


class LogPathMiddleware:
    """Adds ``X-Log-Path`` to every response (first in MIDDLEWARE, so static files and refusals get it too)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response[LOG_PATH_HEADER] = log_path(request.path)
        return response
