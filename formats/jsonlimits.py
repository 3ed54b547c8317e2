"""JSON with a bounded nesting depth, checked before parsing.

``json.loads`` recurses once per nesting level, so a body or study file nested
about a thousand deep raises ``RecursionError`` (a 500) instead of a clear
error. :func:`json_depth_error` scans the text first — only brackets outside
strings count, so ``"[[["`` inside a string is harmless — and names the line
and column where the limit is passed. Used by the API's JSON parser
(config/parsers.py), the study-file import page and ``import_study``.
"""
from __future__ import annotations

import json
import re
from typing import Any

#: Deepest nesting accepted. A study file needs about 6 levels (items → candidates →
#: highlights → span); 64 leaves room for metadata and stays far below Python's recursion limit.
MAX_JSON_DEPTH = 64

# A whole JSON string (escapes included) or one bracket; strings are skipped as units so
# brackets inside them never count. One-character alternatives: linear, no backtracking blow-up.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


class JSONTooDeep(ValueError):
    def __init__(self, *, line: int, column: int, limit: int):
        self.line, self.column, self.limit = line, column, limit
        self.reason = f"nested deeper than {limit} levels"
        super().__init__(f"line {line}, column {column}: {self.reason}")


def json_depth_error(text: str, *, limit: int = MAX_JSON_DEPTH) -> JSONTooDeep | None:
    """The first place where ``text`` nests deeper than ``limit``, or None."""
    if text.count("[") + text.count("{") <= limit:  # cannot be too deep: skip the scan
        return None
    depth = 0
    for match in _TOKEN.finditer(text):
        char = match.group()
        if char in "[{":
            depth += 1
            if depth > limit:
                pos = match.start()
                line = text.count("\n", 0, pos) + 1
                return JSONTooDeep(line=line, column=pos - text.rfind("\n", 0, pos), limit=limit)
        elif char in "]}":
            depth -= 1
    return None


def json_loads_limited(text: str, *, limit: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` after the depth check; raises :class:`JSONTooDeep` or ``json.JSONDecodeError``."""
    error = json_depth_error(text, limit=limit)
    if error is not None:
        raise error
    return json.loads(text)
