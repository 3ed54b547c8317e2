"""Text no request may carry: NUL characters and lone surrogates (and, in JSON, NaN and Infinity).

Neither is ever part of a real answer, name or identifier, and both break what comes after the
view: PostgreSQL refuses a NUL inside a string ("A string literal cannot contain NUL"), and a lone
surrogate (``\\ud800``, which JSON's ``\\u`` escapes can produce but UTF-8 cannot encode) makes any
later ``encode("utf-8")`` — the database driver, the JSON renderer, a log line — raise. Both are
refused at the door with a 400 naming where they were found (config/middleware.py for the path,
query, headers and form fields; config/parsers.py for decoded JSON), before anything is stored.
Python's JSON decoder joins an escaped surrogate *pair* into one character, so every surrogate
left in a decoded string is a lone one. The same checks guard what is not a request: study files
(studies/importing/study_file.py), imported judgments (annotation/importing/base.py) and command-line
arguments (studies/cli.py).
"""
from __future__ import annotations

import math
import re
from typing import Any, Iterator

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
    """(field, message) of the first NUL, lone surrogate or non-finite number in a decoded JSON document, or None.

    The field is the path of the value (``client_started_at``, ``spans[2].note``; ``body`` for the
    document itself); a bad key is reported on the object that holds it.
    """
    for field, _, message in json_problems(value, path):
        return field, message
    return None


def json_problems(value: Any, path: str = "") -> Iterator[tuple[str, str, str]]:
    """Every (field, problem, message) of a decoded JSON document: NUL characters, lone surrogates, NaN, ±Infinity.

    ``problem`` reads after the field ("contains a NUL character (U+0000)"); ``message`` is a sentence.
    NaN and Infinity are not JSON (RFC 8259) although Python's decoder accepts them (and turns
    ``1e999`` into Infinity): no setting, score or offset is ever one, and PostgreSQL's ``jsonb``
    refuses them.
    """
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, node = stack.pop()
        problem = None
        if isinstance(node, str):
            problem = text_problem(node)
        elif isinstance(node, float) and not math.isfinite(node):
            problem = f"is not a finite number ({node!r}: NaN and Infinity are not JSON numbers)"
        elif isinstance(node, dict):
            children = []
            for key, child in node.items():
                key_problem = text_problem(key)
                if key_problem:
                    holder = printable(where or "body")
                    yield (holder, f"has a field name (“{printable(key)}”) that {key_problem}",
                           f"A field name in {holder} (“{printable(key)}”) {key_problem}.")
                else:
                    children.append((f"{where}.{key}" if where else key, child))
            stack.extend(reversed(children))
        elif isinstance(node, list):
            stack.extend(reversed([(f"{where}[{i}]", child) for i, child in enumerate(node)]))
        if problem:
            yield printable(where or "body"), problem, f"{printable(where or 'The body')} {problem}."
