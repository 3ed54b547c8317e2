"""Reader and writer of the Google WMT MQM TSV format (``wmt-mqm-human-evaluation``, Marot).

Pure Python (no Django model, no app import): it lives in ``studies``, the
bottom layer of ``.importlinter``, so that both ``annotation`` (the
``import_judgments --format mqm-tsv`` import and the export) and
``evaluators`` (``formats.mqm_tsv`` re-exports it; the
release bench) can use the one parser.

The format (README of google/wmt-mqm-human-evaluation and of
google-research/marot): UTF-8, tab-separated, one row per marked error,

    system  doc  doc_id  seg_id  rater  source  target  category  severity  [comment|metadata|note]

The 3rd and 4th columns are the segment's id within the document and its
global id (Marot calls them ``docSegId`` and ``globalSegId``; the WMT files
``doc_id`` and ``seg_id``); either header spelling is accepted, and a file
without a header line (Marot: the header is optional, recognised by
``system<TAB>doc``) is read by position.  A rating without errors is one
row whose category and/or severity is ``No-error``.  The error's span is
marked ``<v>…</v>`` inside the target (or inside the source, for
omissions).  Fields are not quoted (a ``"`` is an ordinary character).

:func:`read_mqm_tsv` turns that into plain dataclasses -- segments (texts
without the markers), judgments (one per segment and rater) and their
errors with character offsets into the clean text -- and refuses a file with
any bad row, listing every bad row by line number in one
:class:`MqmTsvError`.  :func:`write_mqm_tsv` writes the same format back;
read -> write -> read gives equal data.  See ``docs/mqm.md``.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import re

__all__ = [
    "OPEN",
    "CLOSE",
    "Span",
    "MqmError",
    "Segment",
    "Judgment",
    "MqmData",
    "MqmTsvError",
    "read_mqm_tsv",
    "parse_mqm_tsv",
    "write_mqm_tsv",
    "format_mqm_tsv",
    "strip_markers",
    "NO_ERROR",
    "is_no_error",
]

#: The category/severity of a rating without errors.  Also defined in
#: ``evaluators.stats.mqm`` (the statistics core may import no app, and this
#: module may import no evaluator): the two must stay equal (tested).
NO_ERROR = "No-error"
_SPACES = re.compile(r"[\s_]+")


def is_no_error(value: object) -> bool:
    """True for the ``No-error`` marker of the WMT files (any case, ``no error``/``no_error`` too)."""
    return _SPACES.sub(" ", str(value).strip().lower()).replace("-", " ") == "no error"

OPEN = "<v>"
CLOSE = "</v>"
Side = Literal["target", "source"]
Unclosed = Literal["error", "close_at_end"]

BASE_COLUMNS = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity")
_ALIASES = {2: ("doc_id", "docsegid"), 3: ("seg_id", "globalsegid")}
_EXTRA_NAMES = ("comment", "metadata", "note")
MAX_LISTED = 50


@dataclass(frozen=True)
class Span:
    """Half-open character offsets ``[start, end)`` into the clean target or source."""

    side: Side
    start: int
    end: int


@dataclass(frozen=True)
class MqmError:
    """One marked error: category, severity, its span(s) and the row's last column."""

    category: str
    severity: str
    spans: tuple[Span, ...] = ()
    note: str = ""
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Segment:
    """One system's output for one document segment (texts without markers)."""

    system: str
    doc: str
    doc_seg_id: str
    global_seg_id: str
    source: str
    target: str
    line: int = field(default=0, compare=False)  # first line of the file that gives this segment

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.system, self.doc, self.doc_seg_id, self.global_seg_id)


@dataclass(frozen=True)
class Judgment:
    """A rater's judgment of one segment; no errors = a ``No-error`` row."""

    segment: int  # index into MqmData.segments
    rater: str
    errors: tuple[MqmError, ...] = ()
    note: str = ""  # last column of the No-error row, if any
    line: int = field(default=0, compare=False)  # first line of this rating in the file


@dataclass
class MqmData:
    """Everything one MQM TSV file holds."""

    segments: list[Segment]
    judgments: list[Judgment]
    extra_column: str | None = None  # "comment", "metadata", "note" or None (9 columns)
    header: bool = True
    warnings: list[str] = field(default_factory=list)

    def item_keys(self) -> list[tuple[str, str, str]]:
        """The distinct (doc, doc_id, seg_id) in order of first appearance: the items all systems share."""
        return list(dict.fromkeys((s.doc, s.doc_seg_id, s.global_seg_id) for s in self.segments))

    def rows(self) -> list[dict[str, object]]:
        """One dict per error (``No-error`` rows included), ready for :mod:`evaluators.stats.mqm`.

        ``segment`` is the index of the segment's (doc, doc_id, seg_id) in
        :meth:`item_keys` -- the same for every system, so the bootstrap can
        pair systems on it -- and ``segment_index`` the index into
        :attr:`segments`.  ``pd.DataFrame(data.rows())`` is the input of
        :func:`evaluators.stats.mqm.mqm_segment_scores`.
        """
        items = {k: i for i, k in enumerate(self.item_keys())}
        out: list[dict[str, object]] = []
        for j in self.judgments:
            seg = self.segments[j.segment]
            base: dict[str, object] = {
                "system": seg.system,
                "doc": seg.doc,
                "segment": items[(seg.doc, seg.doc_seg_id, seg.global_seg_id)],
                "segment_index": j.segment,
                "rater": j.rater,
            }
            if not j.errors:
                out.append({**base, "category": NO_ERROR, "severity": NO_ERROR})
            for e in j.errors:
                out.append({**base, "category": e.category, "severity": e.severity})
        return out


class MqmTsvError(ValueError):
    """A file with bad rows; ``problems`` lists ``(line, message)`` for every one."""

    def __init__(self, source: str, problems: list[tuple[int, str]]):
        self.source = source
        self.problems = problems
        shown = problems[:MAX_LISTED]
        lines = [f"{source}: {len(problems)} bad row(s); nothing was read"]
        lines += [f"  line {ln}: {msg}" for ln, msg in shown]
        if len(problems) > len(shown):
            lines.append(f"  … and {len(problems) - len(shown)} more")
        super().__init__("\n".join(lines))


def strip_markers(text: str, side: Side, *, unclosed: Unclosed = "error") -> tuple[str, list[Span], str | None]:
    """``text`` without ``<v>``/``</v>``, the marked spans, and a problem (or ``None``).

    A ``</v>`` without ``<v>``, a ``<v>`` inside a span or an empty span
    ``<v></v>`` is a problem.  A ``<v>`` never closed is a problem too,
    unless ``unclosed="close_at_end"``: then the span runs to the end of the
    text (one row of the WMT21 TED en-de release, line 6444, has this).
    """
    if "<" not in text:  # most fields: nothing to strip
        return text, [], None
    out: list[str] = []
    spans: list[Span] = []
    pos = 0
    clean_len = 0
    start: int | None = None
    while True:
        i_open = text.find(OPEN, pos)
        i_close = text.find(CLOSE, pos)
        if i_open < 0 and i_close < 0:
            out.append(text[pos:])
            clean_len += len(text) - pos
            break
        if i_close < 0 or (0 <= i_open < i_close):
            piece = text[pos:i_open]
            out.append(piece)
            clean_len += len(piece)
            if start is not None:
                return "", [], f"{side}: <v> inside a marked span"
            start = clean_len
            pos = i_open + len(OPEN)
        else:
            piece = text[pos:i_close]
            out.append(piece)
            clean_len += len(piece)
            if start is None:
                return "", [], f"{side}: </v> without <v>"
            if clean_len == start:
                return "", [], f"{side}: empty span <v></v>"
            spans.append(Span(side, start, clean_len))
            start = None
            pos = i_close + len(CLOSE)
    if start is not None:
        if unclosed == "close_at_end" and clean_len > start:
            spans.append(Span(side, start, clean_len))
        else:
            return "", [], f"{side}: <v> without </v> (pass unclosed='close_at_end' to let the span run to the end)"
    return "".join(out), spans, None


def _header_layout(fields: list[str]) -> tuple[bool, str | None, str | None]:
    """(is a header?, extra column name, problem)."""
    low = [f.strip().lower() for f in fields]
    if len(low) < 2 or low[0] != "system" or low[1] != "doc":
        return False, None, None
    if len(low) not in (9, 10):
        return True, None, f"header has {len(low)} columns, expected 9 or 10 ({' '.join(BASE_COLUMNS)} [comment|metadata])"
    for pos, name in enumerate(BASE_COLUMNS):
        ok = (low[pos] in _ALIASES[pos]) if pos in _ALIASES else (low[pos] == name)
        if not ok:
            want = " or ".join(_ALIASES[pos]) if pos in _ALIASES else name
            return True, None, f"header column {pos + 1} is {fields[pos]!r}, expected {want}"
    extra = None
    if len(low) == 10:
        if low[9] not in _EXTRA_NAMES:
            return True, None, f"header column 10 is {fields[9]!r}, expected one of {', '.join(_EXTRA_NAMES)}"
        extra = low[9]
    return True, extra, None


def parse_mqm_tsv(text: str, *, source: str = "<string>", unclosed: Unclosed = "error") -> MqmData:
    """Parse MQM TSV text; raise :class:`MqmTsvError` listing every bad line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    problems: list[tuple[int, str]] = []
    warnings: list[str] = []
    if not lines:
        raise MqmTsvError(source, [(1, "empty file")])
    first = lines[0].rstrip("\r").split("\t")
    header, extra, hproblem = _header_layout(first)
    if hproblem:
        raise MqmTsvError(source, [(1, hproblem)])
    n_cols = (10 if extra else 9) if header else None
    seg_index: dict[tuple[str, str, str, str], int] = {}
    segments: list[Segment] = []
    seg_line: list[int] = []
    jud_index: dict[tuple[int, str], int] = {}
    jud_errors: list[list[MqmError]] = []
    jud_meta: list[tuple[int, str]] = []
    jud_noerr: list[tuple[int, str] | None] = []
    jud_line: list[int] = []
    start = 1 if header else 0
    for idx in range(start, len(lines)):
        ln = idx + 1
        raw = lines[idx].rstrip("\r")
        if raw.strip() == "":
            problems.append((ln, "empty line"))
            continue
        f = raw.split("\t")
        if n_cols is None:
            if len(f) not in (9, 10):
                problems.append((ln, f"{len(f)} tab-separated fields, expected 9 or 10"))
                continue
            n_cols = len(f)
            extra = "metadata" if n_cols == 10 else None
        if len(f) != n_cols:
            problems.append((ln, f"{len(f)} tab-separated fields, expected {n_cols}"))
            continue
        system, doc, doc_seg, glob_seg, rater, src_m, tgt_m, category, severity = (x.strip() if i < 5 or i > 6 else x for i, x in enumerate(f[:9]))
        category, severity = category.strip(), severity.strip()
        note = f[9] if n_cols == 10 else ""
        missing = [name for name, v in (("system", system), ("doc", doc), ("doc_id", doc_seg), ("seg_id", glob_seg)) if v == ""]
        if missing:
            problems.append((ln, f"empty {', '.join(missing)}"))
            continue
        src, s_spans, p1 = strip_markers(src_m, "source", unclosed=unclosed)
        tgt, t_spans, p2 = strip_markers(tgt_m, "target", unclosed=unclosed)
        if p1 or p2:
            problems.append((ln, "; ".join(p for p in (p1, p2) if p)))
            continue
        if unclosed == "close_at_end" and (src_m.count(OPEN) > src_m.count(CLOSE) or tgt_m.count(OPEN) > tgt_m.count(CLOSE)):
            warnings.append(f"line {ln}: <v> without </v>; the span runs to the end of the text")
        key = (system, doc, doc_seg, glob_seg)
        s_i = seg_index.get(key)
        if s_i is None:
            s_i = len(segments)
            seg_index[key] = s_i
            segments.append(Segment(system, doc, doc_seg, glob_seg, src, tgt, ln))
            seg_line.append(ln)
        else:
            seg = segments[s_i]
            diff = [n for n, a, b in (("source", seg.source, src), ("target", seg.target, tgt)) if a != b]
            if diff:
                problems.append((ln, f"{' and '.join(diff)} differ(s) from line {seg_line[s_i]} for the same system/doc/segment"))
                continue
        if rater == "" and category == "" and severity == "":
            continue  # a segment-only row (Marot: metadata without a rating)
        if rater == "":
            problems.append((ln, "empty rater"))
            continue
        no_err = is_no_error(category) or is_no_error(severity)
        if no_err and (s_spans or t_spans):
            problems.append((ln, "a No-error row with a <v>…</v> span"))
            continue
        if not no_err and (category == "" or severity == ""):
            problems.append((ln, "empty " + " and ".join(n for n, v in (("category", category), ("severity", severity)) if v == "")))
            continue
        j_key = (s_i, rater)
        j_i = jud_index.get(j_key)
        if j_i is None:
            j_i = len(jud_errors)
            jud_index[j_key] = j_i
            jud_errors.append([])
            jud_meta.append(j_key)
            jud_noerr.append(None)
            jud_line.append(ln)
        if no_err:
            if jud_noerr[j_i] is not None:
                problems.append((ln, f"a second No-error row for this segment and rater (first: line {jud_noerr[j_i][0]})"))  # type: ignore[index]
                continue
            jud_noerr[j_i] = (ln, note)
        else:
            jud_errors[j_i].append(MqmError(category, severity, tuple(t_spans + s_spans), note, ln))
    if problems:
        raise MqmTsvError(source, problems)
    judgments: list[Judgment] = []
    for j_i, (s_i, rater) in enumerate(jud_meta):
        ne = jud_noerr[j_i]
        if ne is not None and jud_errors[j_i]:
            warnings.append(
                f"line {ne[0]}: No-error row for a segment and rater who also marked errors; the errors are kept"
            )
        judgments.append(Judgment(s_i, rater, tuple(jud_errors[j_i]), ne[1] if ne is not None and not jud_errors[j_i] else "",
                                  jud_line[j_i]))
    return MqmData(segments, judgments, extra_column=extra, header=header, warnings=warnings)


def read_mqm_tsv(path: str | Path, *, unclosed: Unclosed = "error") -> MqmData:
    """Read an MQM TSV file (UTF-8); bad rows -> :class:`MqmTsvError` naming each line."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise MqmTsvError(str(p), [(text_line_of(p.read_bytes(), exc.start), f"not UTF-8 ({exc.reason})")]) from None
    return parse_mqm_tsv(text, source=str(p), unclosed=unclosed)


def text_line_of(data: bytes, offset: int) -> int:
    """1-based line number of byte ``offset``."""
    return data.count(b"\n", 0, offset) + 1


def _mark(text: str, spans: Iterable[Span]) -> str:
    ordered = sorted(spans, key=lambda s: s.start)
    out: list[str] = []
    pos = 0
    for s in ordered:
        if s.start < pos or s.end <= s.start or s.end > len(text):
            raise ValueError(f"span {s.start}-{s.end} cannot be marked in a {len(text)}-character {s.side} (overlap or out of bounds)")
        out += [text[pos : s.start], OPEN, text[s.start : s.end], CLOSE]
        pos = s.end
    out.append(text[pos:])
    return "".join(out)


def _check_field(value: str, what: str) -> str:
    if "\t" in value or "\n" in value or "\r" in value:
        raise ValueError(f"{what} {value[:40]!r} contains a tab or a line break, which the TSV format cannot hold")
    return value


def format_mqm_tsv(data: MqmData) -> str:
    """The TSV text of ``data`` (same layout: header or not, 9 or 10 columns)."""
    cols = list(BASE_COLUMNS) + ([data.extra_column] if data.extra_column else [])
    out = io.StringIO()
    if data.header:
        out.write("\t".join(cols) + "\n")
    judged = {j.segment for j in data.judgments}
    written = 0  # segments are numbered by first appearance: keep that order

    def segment_only(upto: int) -> None:
        nonlocal written
        while written < upto:
            if written not in judged:
                s = data.segments[written]
                row = [s.system, s.doc, s.doc_seg_id, s.global_seg_id, "", s.source, s.target, "", ""]
                out.write("\t".join(_check_field(v, "field") for v in row + ([""] if data.extra_column else [])) + "\n")
            written += 1

    for j in data.judgments:
        segment_only(j.segment)
        written = max(written, j.segment + 1)
        seg = data.segments[j.segment]
        base = [seg.system, seg.doc, seg.doc_seg_id, seg.global_seg_id, j.rater]
        rows: list[list[str]] = []
        if not j.errors:
            rows.append(base + [seg.source, seg.target, NO_ERROR, NO_ERROR] + ([j.note] if data.extra_column else []))
        for e in j.errors:
            src = _mark(seg.source, [s for s in e.spans if s.side == "source"])
            tgt = _mark(seg.target, [s for s in e.spans if s.side == "target"])
            rows.append(base + [src, tgt, e.category, e.severity] + ([e.note] if data.extra_column else []))
        for r in rows:
            out.write("\t".join(_check_field(v, "field") for v in r) + "\n")
    segment_only(len(data.segments))
    return out.getvalue()


def write_mqm_tsv(data: MqmData, path: str | Path) -> None:
    """Write ``data`` as an MQM TSV file (UTF-8, ``\\n`` line ends)."""
    Path(path).write_text(format_mqm_tsv(data), encoding="utf-8", newline="\n")
