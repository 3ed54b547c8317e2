"""Postprocessing hook of the OpenAPI schema: the error responses every API operation can give.

Views declare their own success and validation responses; the errors produced around them
(config/errors.py, config/middleware.py, DRF's authentication) are the same everywhere, so
they are added here once instead of on every view: 400 (a bad parameter or body), 401/403
(authentication), 404 (a path naming something), 413 (a body over DATA_UPLOAD_MAX_MEMORY_SIZE),
429 (rate limit) and 503 (database unreachable, with Retry-After). A response a view already
declares is left as it is.
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
    "400": "Bad parameter or body (the field is named).",
    "401": "No valid token (`WWW-Authenticate: Token`).",
    "403": "Authenticated but not allowed (a researcher endpoint needs a staff user).",
    "404": "Not found.",
    "413": "Body larger than DATA_UPLOAD_MAX_MEMORY_SIZE.",
    "429": "Too many invalid tokens from this address (Retry-After).",
    "503": "Database unreachable; nothing was saved (Retry-After).",
}


def add_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    ref = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, operations in result.get("paths", {}).items():
        for operation in operations.values():
            codes = ["401", "429", "503"]
            if any("tokenAuth" in s or "cookieAuth" in s for s in operation.get("security", [])):
                codes.append("403")
            if operation.get("parameters") or operation.get("requestBody"):
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
    return result
