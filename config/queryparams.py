"""The researcher API's query parameters, checked against the OpenAPI schema the API publishes.

The schema (``/api/v1/schema/``) is the one list of what each researcher endpoint
(``/api/v1/studies/…``) takes, so the server checks requests against that same
document instead of a second, hand-kept list that could drift from it:

- a parameter the operation does not declare is a **400** naming it (``{"errors":
  {"limit": ["Unknown parameter; this endpoint takes bootstrap, seed, …"]}}``): a typo'd or
  unsupported option is never silently ignored;
- a declared parameter's value must match its schema — ``type`` (integer, boolean, string,
  array of them), ``enum``, ``minimum``/``maximum``, ``minLength`` — or it is a 400 naming
  it; an empty value is refused (config/schema.py gives every string ``minLength: 1``);
- a parameter given twice is refused unless its schema is an array (``evaluator`` on compare).

The views still check what the schema cannot say (an evaluator without scores in this study).
The annotation API (``/api/v1/annotate/…``) is not checked: annotator clients may add cache
busters. Every researcher view is a :class:`SchemaCheckedAPIView`
(research/api.py, research/api_reports.py, research/views/compare.py;
tests/config/test_queryparams.py checks that every operation of the schema is one): its
``initial()`` runs DRF's (content negotiation, authentication, permissions, throttles) and then
the check, so a 401 or 403 still comes first. DRF picks the renderer from ``?format=`` before
authentication and answers an unknown format 404; its ``get_content_negotiator()``
gives a request whose ``?format=`` the schema refuses a negotiator that reads only the Accept
header, so it too gets the 400 after authentication.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, cast

from drf_spectacular.generators import SchemaGenerator
from rest_framework import status
from rest_framework.exceptions import APIException
from rest_framework.negotiation import BaseContentNegotiation, DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.views import APIView

CHECKED_PREFIX = "/api/v1/studies/"
_INTEGER = re.compile(r"-?[0-9]+")
_BOOLEANS = ("true", "false")


class QueryParameterError(APIException):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "invalid_query"

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__()
        detail: dict[str, Any] = {"errors": errors}
        self.detail = detail  # DRF renders a dict detail as it is


@dataclass(frozen=True)
class Operation:
    path: re.Pattern[str]
    method: str
    query: dict[str, dict[str, Any]]  # parameter name → its schema


_operations: list[Operation] | None = None
_lock = threading.Lock()


def _path_pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[^}]+\})", template)
    return re.compile("".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts) + r"\Z")


def operations() -> list[Operation]:
    """The researcher operations of the published schema (generated once per process)."""
    global _operations
    with _lock:
        if _operations is None:
            schema = SchemaGenerator().get_schema(request=None, public=True)
            _operations = [
                Operation(path=_path_pattern(path), method=method.upper(),
                          query={p["name"]: p.get("schema", {}) for p in op.get("parameters", []) if p["in"] == "query"})
                for path, item in schema.get("paths", {}).items() if path.startswith(CHECKED_PREFIX)
                for method, op in item.items()
            ]
        return _operations


def value_error(value: str, schema: dict[str, Any]) -> str | None:
    """Why ``value`` (one query-string value) does not match ``schema``, or None."""
    kind = schema.get("type", "string")
    if kind == "integer":
        if not _INTEGER.fullmatch(value):
            return f"{value!r} is not a whole number."
        number = int(value)
        low, high = schema.get("minimum"), schema.get("maximum")
        if (low is not None and number < low) or (high is not None and number > high):
            return f"Must be between {low} and {high}."
        return None
    if kind == "boolean":
        return None if value in _BOOLEANS else f"{value!r} is not true or false."
    if "enum" in schema and value not in schema["enum"]:
        return f"{value!r} is not one of {', '.join(map(str, schema['enum']))}."
    if len(value) < schema.get("minLength", 0):
        return "May not be empty." if not value else f"Must be at least {schema['minLength']} characters."
    if "pattern" in schema and not re.search(schema["pattern"], value):
        return f"{value!r} does not match {schema['pattern']}."
    return None


def query_errors(request: Request) -> dict[str, list[str]]:
    """The request's query-parameter errors under the schema of its operation ({} when fine or unchecked)."""
    path = request.path_info
    if not path.startswith(CHECKED_PREFIX):
        return {}
    operation = next((op for op in operations() if op.method == request.method and op.path.match(path)), None)
    if operation is None:
        return {}  # a method the schema does not list (OPTIONS, HEAD): DRF answers it
    errors: dict[str, list[str]] = {}
    takes = ", ".join(sorted(operation.query)) or "no query parameters"
    for name in request.query_params:
        schema = operation.query.get(name)
        if schema is None:
            errors[name] = [f"Unknown parameter; this endpoint takes {takes}."]
            continue
        values = request.query_params.getlist(name)
        if schema.get("type") == "array":
            schema = schema.get("items", {})
        elif len(values) > 1:
            errors[name] = ["Give this parameter once."]
            continue
        problems = [problem for value in values if (problem := value_error(value, schema))]
        if problems:
            errors[name] = problems
    return errors


class AcceptHeaderNegotiation(DefaultContentNegotiation):
    """DRF's negotiation on the Accept header alone: no ``?format=`` override (DRF reads the override's name
    from its ``settings``; None turns it off)."""

    settings = cast(Any, SimpleNamespace(URL_FORMAT_OVERRIDE=None))


class SchemaCheckedAPIView(APIView):
    """The researcher views' base: query parameters the schema does not allow are a 400 (module docstring)."""

    def get_content_negotiator(self) -> BaseContentNegotiation:
        # A ?format= the schema refuses must not pick the renderer (nor be DRF's 404 before authentication).
        # Only the renderer's negotiation is concerned: DRF also asks while wrapping Django's request (for the
        # parsers), and the schema generator asks without a request.
        request = getattr(self, "request", None)
        if isinstance(request, Request) and "format" in query_errors(request):
            return AcceptHeaderNegotiation()
        return super().get_content_negotiator()

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        errors = query_errors(request)
        if errors:
            raise QueryParameterError(errors)
