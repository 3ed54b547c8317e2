"""Reading the tables the ``agreement`` command accepts (ratings, exported judgments).

Files are read as text (every cell a string) so that a researcher's labels
are never silently converted: ``"01"`` stays ``"01"`` and an empty cell is a
missing rating, exactly as in Gwet's raw-ratings layout.  Every problem is
raised as :class:`TableFileError` naming the file and, where known, the line
or the column, so a command can show it as is.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd

from formats.csvcells import ESCAPE, unescape_cell


class TableFileError(ValueError):
    """A table file that cannot be used; the message names the file and line/column."""


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".json":
        return "json"
    if suffix == ".tsv":
        return "tsv"
    return "csv"


def _read_jsonl(path: Path) -> pd.DataFrame:
    rows: list[dict] = []
    with path.open(encoding="utf-8-sig") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise TableFileError(f"{path}: line {lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise TableFileError(f"{path}: line {lineno}: expected a JSON object, got {type(row).__name__}")
            rows.append(row)
    return pd.DataFrame(rows)


def _read_json(path: Path) -> pd.DataFrame:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise TableFileError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise TableFileError(f"{path}: expected a JSON array of objects (one per row)")
    return pd.DataFrame(data)


def _read_delimited(path: Path, sep: str) -> pd.DataFrame:
    # A ragged row is an error we can name by line before pandas sees it.
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, delimiter=sep)
        header: list[str] | None = None
        for row in reader:
            if header is None:
                if not any(cell.strip() for cell in row):
                    continue
                header = row
                continue
            if row and len(row) != len(header) and any(cell.strip() for cell in row):
                raise TableFileError(
                    f"{path}: line {reader.line_num}: {len(row)} fields, the header has {len(header)}"
                )
    if header is None:
        raise TableFileError(f"{path}: the file is empty (no header line)")
    dupes = sorted({c for c in header if header.count(c) > 1})
    if dupes:
        raise TableFileError(f"{path}: duplicate column name(s) in the header: {', '.join(dupes)}")
    try:
        frame = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8-sig",
                            skip_blank_lines=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise TableFileError(f"{path}: cannot parse: {exc}") from None
    return _unescaped(frame)


def _unescaped(frame: pd.DataFrame) -> pd.DataFrame:
    """The product's own CSVs escape formula-like text with a leading ' (formats/csvcells.py): read them back
    as they were. Only the cells starting with ' are looked at (a vectorised test per column)."""
    for column in frame.columns:
        quoted = frame[column].str.startswith(ESCAPE, na=False)
        if quoted.any():
            frame.loc[quoted, column] = frame.loc[quoted, column].map(unescape_cell)
    return frame


def read_table(path: str | Path) -> pd.DataFrame:
    """The file as a DataFrame (CSV, TSV, JSON Lines or a JSON array, by extension).

    CSV/TSV cells are strings and blank cells stay ``""`` (a missing rating
    for the agreement functions).  Raises :class:`TableFileError` for a file
    that does not exist, cannot be decoded or parsed, or has no rows.
    """
    path = Path(path)
    if not path.exists():
        raise TableFileError(f"{path}: no such file")
    if not path.is_file():
        raise TableFileError(f"{path}: not a regular file")
    fmt = _format(path)
    try:
        if fmt == "jsonl":
            frame = _read_jsonl(path)
        elif fmt == "json":
            frame = _read_json(path)
        else:
            frame = _read_delimited(path, "\t" if fmt == "tsv" else ",")
    except UnicodeDecodeError as exc:
        raise TableFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise TableFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if frame.empty:
        raise TableFileError(f"{path}: the table has no rows")
    return frame


def require_columns(frame: pd.DataFrame, columns: dict[str, str], *, source: str) -> None:
    """Raise :class:`TableFileError` naming every missing column and its option.

    ``columns`` maps a role (e.g. ``"--item"``) to the column name expected.
    """
    missing = [f"{col!r} ({role})" for role, col in columns.items() if col not in frame.columns]
    if missing:
        raise TableFileError(
            f"{source}: missing column(s) {', '.join(missing)}; the file has: {', '.join(map(str, frame.columns))}"
        )
