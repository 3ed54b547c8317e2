"""Text no request may carry: NUL characters and lone surrogates.

Neither is ever part of a real answer, name or identifier, and both break what comes after the
view: PostgreSQL refuses a NUL inside a string ("A string literal cannot contain NUL"), and a lone
surrogate (``\\ud800``, which JSON's ``\\u`` escapes can produce but UTF-8 cannot encode) makes any
later ``encode("utf-8")`` — the database driver, the JSON renderer, a log line — raise. Both are
refused at the door with a 400 naming where they were found (config/middleware.py for the path,
query, headers and form fields; config/parsers.py for decoded JSON), before anything is stored.
Python's JSON decoder joins an escaped surrogate *pair* into one character, so every surrogate
left in a decoded string is a lone one.
"""
from __future__ import annotations

import re
from typing import Any

_UNSAFE = re.compile("[\x00\ud800-\udfff]")


def text_problem(text: str) -> str | None:
    """What is wrong with ``text`` ("contains a NUL character (U+0000)" …), or None when nothing is."""
    match = _UNSAFE.search(text)
    if match is None:
        return None
    char = match.group()
    if char == "\x00":
        return "contains a NUL character (U+0000)"
    return f"contains a lone surrogate (U+{ord(char):04X}), which is not valid Unicode text"


def printable(text: str) -> str:
    """``text`` with NUL and surrogates written as ``\\uXXXX``: safe to echo in JSON, HTML and logs."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def json_problem(value: Any, path: str = "") -> tuple[str, str] | None:
    """(field, message) of the first NUL or lone surrogate in a decoded JSON document, or None.

    The field is the path of the value (``client_started_at``, ``spans[2].note``; ``body`` for the
    document itself); a bad key is reported on the object that holds it.
    """
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, str):
            problem = text_problem(node)
            if problem:
                return printable(where or "body"), f"{printable(where or 'The body')} {problem}."
        elif isinstance(node, dict):
            children = []
            for key, child in node.items():
                problem = text_problem(key)
                if problem:
                    holder = printable(where or "body")
                    return holder, f"A field name in {holder} (“{printable(key)}”) {problem}."
                children.append((f"{where}.{key}" if where else key, child))
            stack.extend(reversed(children))
        elif isinstance(node, list):
            stack.extend(reversed([(f"{where}[{i}]", child) for i, child in enumerate(node)]))
    return None
