"""Postprocessing hook of the OpenAPI schema: the error responses every API operation can give.

Views declare their own success and validation responses; the errors produced around them
(config/errors.py, config/middleware.py, DRF's authentication) are the same everywhere, so
they are added here once instead of on every view: 400 (a bad parameter or body), 401/403
(authentication), 404 (a path naming something), 413 (a body over DATA_UPLOAD_MAX_MEMORY_SIZE),
429 (rate limit) and 503 (database unreachable, with Retry-After). A response a view already
declares is left as it is, except that an error (4xx, 5xx) is only ever JSON: a view that also
renders CSV (judgments) answers its errors in JSON (research/api.py), and the schema says so.

It also states what the server enforces on parameters (config/queryparams.py checks researcher
requests against this very schema): every string parameter has ``minLength: 1`` (an empty value
is refused), a study slug has Django's slug pattern, and each researcher operation says that
query parameters it does not list are refused with a 400 naming them.
"""
from __future__ import annotations

from typing import Any

ERROR_SCHEMA = {
    "type": "object",
    "description": "`detail` (a message) or `errors` (field name → messages).",
    "properties": {
        "detail": {"type": "string"},
        "errors": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
    },
}

_RETRY_AFTER = {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}}

_DESCRIPTIONS = {
    "400": "Bad parameter or body (the field is named); on researcher endpoints also a query parameter "
           "the operation does not list.",
    "401": "No valid token (`WWW-Authenticate: Token`).",
    "403": "Authenticated but not allowed (a researcher endpoint needs a staff user).",
    "404": "Not found.",
    "413": "Body larger than DATA_UPLOAD_MAX_MEMORY_SIZE.",
    "429": "Too many invalid tokens from this address (Retry-After).",
    "503": "Database unreachable; nothing was saved (Retry-After).",
}


RESEARCHER_PREFIX = "/api/v1/studies/"
UNKNOWN_PARAMETERS = ("Query parameters not listed here are refused with 400 `{\"errors\": {\"<name>\": [\"Unknown "
                      "parameter; …\"]}}`; a listed one whose value does not match its schema (type, enum, range, "
                      "empty) is a 400 naming it.")
SLUG_PATTERN = "^[-a-zA-Z0-9_]+$"  # Django's <slug:…> converter


def _non_empty(schema: dict[str, Any]) -> None:
    if schema.get("type") == "array":
        _non_empty(schema.setdefault("items", {"type": "string"}))
    elif schema.get("type", "string") == "string" and "enum" not in schema:
        schema.setdefault("minLength", 1)


def _parameters_as_enforced(path: str, operation: dict[str, Any]) -> None:
    for parameter in operation.get("parameters", []):
        schema = parameter.setdefault("schema", {"type": "string"})
        _non_empty(schema)
        if parameter["in"] == "path" and parameter["name"] == "slug":
            schema["pattern"] = SLUG_PATTERN
    if path.startswith(RESEARCHER_PREFIX):
        description = operation.get("description", "")
        operation["description"] = f"{description}\n\n{UNKNOWN_PARAMETERS}".strip()


def _errors_in_json(operation: dict[str, Any]) -> None:
    for code, response in operation.get("responses", {}).items():
        content = response.get("content")
        if code[0] in "45" and content and "application/json" in content:
            response["content"] = {"application/json": content["application/json"]}


#: How the operations chain (OpenAPI links): a study's slug from the list to its endpoints, and the
#: assignment handed out by ``next`` to its judgment. Clients and schemathesis' stateful phase follow them.
_LINKS = {
    ("/api/v1/studies/", "get"): {
        "StudyAgreement": {"operationId": "studies_agreement_retrieve", "parameters": {"slug": "$response.body#/0/slug"}},
        "StudyCompare": {"operationId": "studies_compare_retrieve", "parameters": {"slug": "$response.body#/0/slug"}},
        "StudyJudgments": {"operationId": "studies_judgments_list", "parameters": {"slug": "$response.body#/0/slug"}},
    },
    ("/api/v1/annotate/next", "get"): {
        "SubmitJudgment": {"operationId": "annotate_judgment_create",
                           "parameters": {"assignment": "$response.body#/assignment"}},
    },
}


def _add_links(result: dict[str, Any]) -> None:
    ids = {op.get("operationId") for item in result.get("paths", {}).values() for op in item.values()}
    for (path, method), links in _LINKS.items():
        response = result.get("paths", {}).get(path, {}).get(method, {}).get("responses", {}).get("200")
        if response is not None:
            response["links"] = {name: link for name, link in links.items() if link["operationId"] in ids}


def add_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    ref = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, operations in result.get("paths", {}).items():
        for operation in operations.values():
            _parameters_as_enforced(path, operation)
            _errors_in_json(operation)
            codes = ["401", "429", "503"]
            if any("tokenAuth" in s or "cookieAuth" in s for s in operation.get("security", [])):
                codes.append("403")
            if operation.get("parameters") or operation.get("requestBody") or path.startswith(RESEARCHER_PREFIX):
                codes.append("400")
            if "{" in path:
                codes.append("404")
            if operation.get("requestBody"):
                codes.append("413")
            responses = operation.setdefault("responses", {})
            for code in sorted(codes):
                if code not in responses:
                    response: dict[str, Any] = {"description": _DESCRIPTIONS[code], "content": ref}
                    if code in ("429", "503"):
                        response["headers"] = _RETRY_AFTER
                    responses[code] = response
    _add_links(result)
    return result
