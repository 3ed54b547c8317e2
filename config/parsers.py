"""The API's JSON parser: a bounded body, a bounded nesting depth, then ``json.loads``.

DRF's own JSONParser reads the whole stream (Django's DATA_UPLOAD_MAX_MEMORY_SIZE
only guards ``request.body`` and forms) and lets a body nested ~1,000 deep raise
RecursionError, a 500. Here an oversize body is a 413 and a deep one a 400 naming
the body's line and column, both as JSON. A decoded document holding a NUL character or
a lone surrogate (config/safetext.py) is a 400 naming the field, ``{"errors": {field: [message]}}``.
"""
from __future__ import annotations

import json
from typing import Any, Mapping

from django.conf import settings
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser
from rest_framework.utils.json import strict_constant as json_strict_constant

from config.safetext import json_problem
from formats.jsonlimits import json_depth_error


class RequestTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "request_too_large"


class UnsafeText(APIException):
    """A NUL or a lone surrogate in the body: 400 with the API's ``{"errors": {field: [message]}}``.

    Not a ParseError, so views that turn a ParseError into "Malformed JSON" let it through to DRF's
    handler, which answers with this detail as it is."""
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "unsafe_text"

    def __init__(self, field: str, message: str):
        super().__init__({"errors": {field: [f"{message} Nothing was stored."]}})


def too_large_message() -> str:
    return f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes."


class DepthLimitedJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None,
              parser_context: Mapping[str, Any] | None = None) -> Any:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:  # a chunked body has no Content-Length for the middleware to check
            raise RequestTooLarge(too_large_message())
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            raise ParseError(f"body: not {encoding} text (byte {exc.start}).")
        too_deep = json_depth_error(text)
        if too_deep is not None:
            raise ParseError(f"body: {too_deep}.")
        try:  # NaN / Infinity refused, as DRF's STRICT_JSON does
            data = json.loads(text, parse_constant=json_strict_constant)
        except ValueError as exc:
            raise ParseError(f"body: not valid JSON ({exc}).")
        unsafe = json_problem(data)
        if unsafe is not None:
            raise UnsafeText(*unsafe)
        return data
