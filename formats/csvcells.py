"""CSV cells that a spreadsheet shows as text, never runs as a formula (OWASP's CSV injection rule).

Every CSV the product writes — the judgments export (command, page, admin action, the API's
``?format=csv``), the report's tables (``ratings``, ``errors``, span agreement, quality …), the
invitation links and the audit log — goes through :func:`csv_writer`. A *text* cell starting with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``: Excel, LibreOffice and
Google Sheets show the cell as the text it was (the ``'`` is hidden) instead of evaluating it.

Numbers written as numbers (Python ``int``/``float``, numpy's too: a score of ``-0.5``) are left
alone, so they stay numbers in the sheet and in every reader; only strings are escaped. A text
cell that already starts with ``'`` followed (after any further ``'``) by one of those characters
gets one more ``'``, so :func:`unescape_cell` gives every escaped cell back exactly: the readers of
the product's own files (``import_judgments --format export``, ``agreement --judgments``) undo the
escaping, and an export read back is the export written.

Google's MQM TSV (annotation/exporting/mqm.py) is *not* escaped: it must stay byte-identical with the
WMT releases that other tools read (docs/export.md says how to open it safely). ``--raw`` on the
commands writes every CSV cell as stored, byte for byte.
"""
from __future__ import annotations

import csv
from typing import Any, Iterable, Protocol, Sequence

#: First characters that make a spreadsheet read a cell as a formula (OWASP).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
ESCAPE = "'"
#: First characters that may need a look (the formula starts and the escape itself): one set lookup a cell.
SUSPECT_FIRST = frozenset((*FORMULA_STARTS, ESCAPE))


class RowWriter(Protocol):
    def writerow(self, row: Iterable[Any], /) -> Any: ...

    def writerows(self, rows: Iterable[Iterable[Any]], /) -> None: ...


def _needs_escape(text: str) -> bool:
    return text.lstrip(ESCAPE).startswith(FORMULA_STARTS)


def escape_cell(value: Any) -> Any:
    """``value`` as a spreadsheet-safe cell: a string that could start a formula gets a leading ``'``."""
    if isinstance(value, str) and value[:1] in SUSPECT_FIRST and _needs_escape(value):
        return ESCAPE + value
    return value


def unescape_cell(text: str) -> str:
    """The cell as it was before :func:`escape_cell` (a cell it never changed comes back as it is)."""
    if text.startswith(ESCAPE) and _needs_escape(text[1:]):
        return text[1:]
    return text


def escape_row(row: Iterable[Any]) -> list[Any]:
    """The row's cells through :func:`escape_cell` (the export's hot loop: most cells fail the first test)."""
    return [ESCAPE + value if isinstance(value, str) and value[:1] in SUSPECT_FIRST and _needs_escape(value) else value
            for value in row]


class _EscapingWriter:
    """``csv.writer`` with every row passed through :func:`escape_row`."""

    def __init__(self, writer: Any):
        self._writer = writer

    def writerow(self, row: Iterable[Any], /) -> Any:
        return self._writer.writerow(escape_row(row))

    def writerows(self, rows: Iterable[Iterable[Any]], /) -> None:
        self._writer.writerows(escape_row(row) for row in rows)


def csv_writer(out: Any, *, raw: bool = False, **options: Any) -> RowWriter:
    """A ``csv.writer`` on ``out`` (same ``options``) that escapes formula-like text cells unless ``raw``."""
    writer = csv.writer(out, **options)
    return writer if raw else _EscapingWriter(writer)


def unescape_row(row: Sequence[str]) -> list[str]:
    return [unescape_cell(cell) for cell in row]
