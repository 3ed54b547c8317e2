"""JSON errors for the API, 503 + Retry-After when the database is unreachable, 500 otherwise.

Every path under ``/api/`` answers errors as JSON (``{"detail": …}`` or the
``{"errors": …}`` of INTERFACES.md), whether the error comes from a DRF view
(:func:`api_exception_handler`), from a plain Django view or URL resolution
(the ``handler404``/``handler500`` … views, set in config/urls.py), or from the
middleware (config/middleware.py). The HTML pages keep Django's templates, but a
database outage is a 503 page with Retry-After that tells the annotator their
answer was not saved and to send it again (templates/503.html).

Only a failure of the connection is "retry later" (:func:`is_db_outage`): PostgreSQL's
connection exceptions (SQLSTATE class 08), its shutdown / starting-up refusals (57P01–57P03), a
connection that could not be made or was lost (psycopg reports those without a SQLSTATE), and
SQLite's "database is locked" once its busy timeout has run out. Every other database error —
a missing column after a missed migration, a statement timeout (57014), a deadlock (40P01)
outside the hand-out's own retry — is a bug or an overload to look at, not to retry: a 500 whose
traceback Django logs (logger ``django.request``, ERROR, with the exception).
"""
from __future__ import annotations

import logging
import re
import sqlite3
import sys
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.views import defaults
from rest_framework.response import Response
from rest_framework.views import exception_handler

DB_UNAVAILABLE = "The database is unreachable. Nothing was saved; please retry in a moment."


def is_api(request: HttpRequest) -> bool:
    """A request answered in JSON: the API, a ``.json`` download, or a client that asks for JSON."""
    return (request.path_info.startswith("/api/") or request.path_info.endswith(".json")
            or "application/json" in request.META.get("HTTP_ACCEPT", ""))


logger = logging.getLogger(__name__)

#: PostgreSQL SQLSTATEs of a server that is going away or not yet there (class 08 is matched by prefix).
OUTAGE_SQLSTATES = frozenset({"57P01", "57P02", "57P03"})  # admin_shutdown, crash_shutdown, cannot_connect_now
SQLITE_BUSY = 5
#: Messages of a database error raised with no driver error behind it (Django's own, or a test's
#: stand-in): libpq's and SQLite's words for a connection that failed.
_OUTAGE_MESSAGE = re.compile(
    r"connection|could not connect|server closed|shutting down|starting up|terminating|database is locked", re.I)


def is_db_outage(exc: BaseException | None) -> bool:
    """The database cannot be reached right now (retry later), as opposed to a query that failed.

    Decided from the driver's error Django wraps (``__cause__``): psycopg's SQLSTATE (class 08,
    57P01–57P03; none at all when the connection itself failed or was lost), SQLite's busy code.
    """
    if not isinstance(exc, (OperationalError, InterfaceError)):
        return False
    cause = exc.__cause__
    if isinstance(cause, sqlite3.Error):
        code = getattr(cause, "sqlite_errorcode", None)
        return isinstance(cause, sqlite3.OperationalError) and (
            "database is locked" in str(cause) or (code is not None and code & 0xFF == SQLITE_BUSY))
    if cause is not None and type(cause).__module__.split(".")[0] in ("psycopg", "psycopg2"):
        sqlstate = getattr(cause, "sqlstate", None) or getattr(cause, "pgcode", None)
        if not sqlstate:
            return True  # psycopg has no SQLSTATE when no server answered: refused, closed, lost
        return sqlstate.startswith("08") or sqlstate in OUTAGE_SQLSTATES
    if cause is None:
        return bool(_OUTAGE_MESSAGE.search(str(exc)))
    return False


def json_error(status: int, detail: str, headers: dict[str, str] | None = None) -> JsonResponse:
    response = JsonResponse({"detail": detail}, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def db_unavailable_response(request: HttpRequest, exc: BaseException | None = None) -> HttpResponse:
    retry = str(settings.DB_UNAVAILABLE_RETRY_AFTER)
    logger.warning("Database unreachable, answered 503 to %s %s: %s", request.method, request.path, exc)
    if is_api(request):
        return json_error(503, DB_UNAVAILABLE, {"Retry-After": retry})
    html = loader.render_to_string("503.html", {"retry_after": retry})
    response = HttpResponse(html, status=503)
    response["Retry-After"] = retry
    return response


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, plus 503 for an unreachable database (DRF would re-raise it as a 500)."""
    if is_db_outage(exc):
        logger.warning("Database unreachable, answered 503 to %s %s: %s", context["request"].method,
                       context["request"].path, exc)
        return Response({"detail": DB_UNAVAILABLE}, status=503,
                        headers={"Retry-After": str(settings.DB_UNAVAILABLE_RETRY_AFTER)})
    return exception_handler(exc, context)


# Django's error views, with a JSON answer under /api/ (config/urls.py sets handler400 …).

def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if isinstance(exception, (RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent)):
        # Django reports a body over its limits as a 400 "suspicious operation"; it is a 413.
        message = f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes or has too many fields."
        if is_api(request):
            return json_error(413, message)
        return HttpResponse(f"<!doctype html><title>Request too large</title><h1>Request too large</h1><p>{message}</p>",
                            status=413)
    if is_api(request):
        return json_error(400, "Bad request.")
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return json_error(403, "You do not have permission to perform this action.")
    return defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return json_error(404, "Not found.")
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    # Called while the exception is being handled, so exc_info names it: an outage that struck
    # outside a view (a session saved after the view, say) is still a 503, not a 500.
    exc = sys.exc_info()[1]
    if is_db_outage(exc):
        return db_unavailable_response(request, exc)
    if is_api(request):
        return json_error(500, "Server error.")
    return defaults.server_error(request)

