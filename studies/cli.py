"""Command-line arguments the management commands share: text that can be stored, files that can be read.

An argument holding a byte that is not UTF-8 reaches Python as a lone surrogate (``$'\\xff'`` becomes
``"\\udcff"``: PEP 383); a NUL cannot come from a shell but can from ``call_command``. Either, once it
reaches a query, is a traceback (SQLite cannot encode it, PostgreSQL refuses it). Every slug, user
name and file argument is checked here first, and a file that is missing, a directory, unreadable or
not UTF-8 is one line naming the argument — never a traceback (config/safetext.py).
"""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from config.safetext import printable, text_problem
from config.textfiles import TextFileError, read_utf8


def argument_problem(value: str) -> str | None:
    """What makes ``value`` unusable as text ("holds the byte 0xFF, which is not UTF-8" …), or None."""
    problem = text_problem(value)
    if problem is None:
        return None
    undecodable = [ch for ch in value if 0xDC80 <= ord(ch) <= 0xDCFF]  # bytes Python could not decode
    if undecodable:
        return f"holds the byte 0x{ord(undecodable[0]) - 0xDC00:02X}, which is not UTF-8 text"
    return problem


def text_argument(value: str, name: str, *, returncode: int = 1) -> str:
    """``value`` when it is text that can be stored; CommandError naming the argument otherwise."""
    problem = argument_problem(value)
    if problem:
        raise CommandError(f"{name}: “{printable(value)}” {problem}; nothing done", returncode=returncode)
    return value


def read_text_file(value: str, name: str = "", *, returncode: int = 1, directory_hint: str = "") -> str:
    """The UTF-8 text of the file ``value`` (argument ``name``, e.g. ``--ids``; blank for the positional FILE).

    Each way it can fail is one CommandError naming the argument and the file: an undecodable or NUL
    name, no such file, a directory, no permission, another OS error, bytes that are not UTF-8 (by line;
    config/textfiles.py). Line ends are read as Python's text mode reads them: ``\\r\\n`` and ``\\r`` become ``\\n``.
    """
    prefix = f"{name}: " if name else ""
    problem = argument_problem(value)
    if problem:
        raise CommandError(f"{prefix}the file name “{printable(value)}” {problem}; nothing done",
                           returncode=returncode)
    path = Path(value)
    try:
        text = read_utf8(path, f"{prefix}{path}", directory_hint=directory_hint)
    except TextFileError as exc:
        raise CommandError(str(exc), returncode=returncode) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")
