"""JSON Schema pieces every protocol's answer schema shares (docs/annotation-api.md)."""
from __future__ import annotations

from typing import Any

#: The client's own clock, optional on every answer (ISO 8601 date-times).
CLIENT_TIMES: dict[str, Any] = {
    "client_started_at": {"type": "string", "format": "date-time"},
    "client_submitted_at": {"type": "string", "format": "date-time"},
}


def answer_body(properties: dict[str, Any], *, required: list[str] | None = None,
                one_of: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An answer body: the protocol's fields plus the client times, nothing else."""
    schema: dict[str, Any] = {"type": "object", "properties": {**properties, **CLIENT_TIMES},
                              "additionalProperties": False}
    if required:
        schema["required"] = required
    if one_of:
        schema["oneOf"] = one_of
    return schema
