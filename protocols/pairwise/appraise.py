"""Appraise's pairwise score export read back into pairs (``import_judgments --format appraise-pairwise-csv``).

Appraise (github.com/AppraiseDev/Appraise, read at commit ``612e4b09fc28``) exports the results of
its ``PairwiseAssessmentTask`` and ``PairwiseAssessmentDocumentTask`` with
``ExportSystemScoresToCSV`` (``get_system_data(extended_csv=True)``): no header, and for each result
one row per side, ``target1ID``'s first, then ``target2ID``'s; a side whose identical output several
systems produced (``sysA+sysB``) becomes one row per system with the same score:

* segment tasks: ``user, system, segmentID, itemType, sourceLang, targetLang, score, errors,
  sourceErrors, start, end`` (11 columns);
* document tasks: ``user, system, segmentID, itemType, sourceLang, targetLang, score, documentID,
  isCompleteDocument, start, end`` (11 columns);
* with ``--batch-info`` both add ``batchNo, item id, side`` (14 columns; side 0 = target1, 1 = target2);
* older Appraise versions (read at commit ``040e4662``) write segment rows without ``errors, sourceErrors``
  (9 columns, 12 with batch info): they are read with those two empty.

The rows of one result share user, segment, item type, start and end and follow each other. With
the side column the sides are read from it; without it a result of exactly two rows is side 0 then
side 1, and a result of more rows (identical outputs joined with ``+``) cannot be split and is
refused, naming its lines. Pure Python: no Django.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from datetime import datetime, timezone

ITEM_TYPES = ("TGT", "REF", "BAD", "CHK")
#: Widths of a segment export by Appraise before error spans (read at commit ``040e4662``): 9, or 12 with batch info.
OLD_SEGMENT_WIDTHS = (9, 12)


class AppraisePairwiseError(ValueError):
    """Problems of a file, each ``name, line N: what``; ``problems`` lists them all."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass
class Side:
    systems: list[str]
    score: float
    lines: list[int] = field(default_factory=list)


@dataclass
class PairResult:
    """One Appraise result: an annotator's scores of the two sides of one item."""

    line: int
    annotator: str
    segment: str
    item_type: str
    source_language: str
    target_language: str
    first: Side
    second: Side
    started_at: datetime | None
    submitted_at: datetime | None
    document: str = ""
    complete_document: bool = False
    #: Appraise's own item id (the batch-info column ``item id``; empty without it).
    appraise_item: str = ""


def _epoch(text: str) -> datetime | None:
    try:
        return datetime.fromtimestamp(float(text), tz=timezone.utc)
    except (ValueError, OverflowError, OSError):
        return None


def _result_key(cells: list[str]) -> tuple[str, ...]:
    """What the rows of one result share: user, segment, item type, start, end (and the item id, with batch info)."""
    return (cells[0], cells[2], cells[3], cells[9], cells[10]) + ((cells[11], cells[12]) if len(cells) == 14 else ())


def parse_appraise_pairwise(name: str, content: str, *, document_level: bool | None = None) -> list[PairResult]:
    """Every result of the file, or :class:`AppraisePairwiseError` listing every problem by line.

    ``document_level`` None: read from the rows (column 9 is ``True``/``False`` in document exports).
    """
    problems: list[str] = []
    reader = csv.reader(io.StringIO(content.lstrip("\ufeff")))
    rows: list[tuple[int, list[str]]] = []
    for cells in reader:
        if cells and "".join(cells).strip():
            cells = [c.strip() for c in cells]
            if len(cells) in OLD_SEGMENT_WIDTHS:
                # An older Appraise's segment export has no errors / sourceErrors columns: read them as empty.
                cells = cells[:7] + ["", ""] + cells[7:]
            rows.append((reader.line_num, cells))
    if document_level is None:
        document_level = bool(rows) and all(len(c) in (11, 14) and c[8].lower() in ("true", "false") for _, c in rows)
    groups: list[list[tuple[int, list[str]]]] = []
    last_key: tuple[str, ...] = ()
    for line, cells in rows:
        if len(cells) not in (11, 14):
            problems.append(f"{name}, line {line}: {len(cells)} columns; Appraise's pairwise export has 11 (user, "
                            "system, segment, type, source lang, target lang, score, errors, source errors — or "
                            "documentID, isCompleteDocument —, start, end) or 14 with batch info (batchNo, item id, "
                            "side); older versions 9 or 12, without the two errors columns")
            last_key = ()
            continue
        key = _result_key(cells)
        if groups and key == last_key:
            groups[-1].append((line, cells))
        else:
            groups.append([(line, cells)])
        last_key = key
    results: list[PairResult] = []
    for group in groups:
        result = _result(name, group, document_level, problems)
        if result is not None:
            results.append(result)
    if problems:
        raise AppraisePairwiseError(problems)
    return results


def _result(name: str, group: list[tuple[int, list[str]]], document_level: bool,
            problems: list[str]) -> PairResult | None:
    first_line, cells = group[0]
    lines = ", ".join(str(line) for line, _ in group)
    where = f"{name}, line {first_line}"
    ok = True
    item_type = cells[3].upper()
    if item_type not in ITEM_TYPES:
        problems.append(f"{where}: type {cells[3]!r} is not one of {', '.join(ITEM_TYPES)}")
        ok = False
    sides: dict[int, Side] = {}
    with_side = len(cells) == 14
    if not with_side and len(group) != 2:
        problems.append(f"{name}, lines {lines}: one result with {len(group)} rows; without the batch-info columns "
                        "(--batch-info: batchNo, item id, side) the two sides of a result with identical outputs "
                        "joined by '+' cannot be told apart")
        return None
    for k, (line, row) in enumerate(group):
        try:
            score = float(row[6])
        except ValueError:
            problems.append(f"{name}, line {line}: score {row[6]!r} is not a number")
            ok = False
            continue
        if not 0 <= score <= 100:
            problems.append(f"{name}, line {line}: score {row[6]} is outside 0–100")
            ok = False
        side = k if not with_side else (int(row[13]) if row[13] in ("0", "1") else -1)
        if side not in (0, 1):
            problems.append(f"{name}, line {line}: side {row[13]!r} is not 0 or 1")
            ok = False
            continue
        if side in sides and sides[side].score != score:
            problems.append(f"{name}, line {line}: two scores ({sides[side].score:g} and {score:g}) for one side")
            ok = False
        entry = sides.setdefault(side, Side(systems=[], score=score))
        entry.systems.append(row[1])
        entry.lines.append(line)
    if ok and len(sides) != 2:
        problems.append(f"{name}, lines {lines}: a pairwise result needs both sides; found only side {list(sides)[0]}")
        ok = False
    if ok and set(sides[0].systems) & set(sides[1].systems):
        problems.append(f"{name}, lines {lines}: system {sorted(set(sides[0].systems) & set(sides[1].systems))[0]!r} "
                        "is on both sides")
        ok = False
    started, submitted = _epoch(cells[9]), _epoch(cells[10])
    if started is None or submitted is None:
        problems.append(f"{where}: start {cells[9]!r} and end {cells[10]!r} must be Unix times")
        ok = False
    elif submitted < started:
        problems.append(f"{where}: end {cells[10]} is before start {cells[9]}")
        ok = False
    complete = False
    if document_level:
        if cells[8].lower() not in ("true", "false"):
            problems.append(f"{where}: isCompleteDocument {cells[8]!r} is not True or False")
            ok = False
        complete = cells[8].lower() == "true"
    if not ok:
        return None
    return PairResult(line=first_line, annotator=cells[0], segment=cells[2], item_type=item_type,
                      source_language=cells[4], target_language=cells[5], first=sides[0], second=sides[1],
                      started_at=started, submitted_at=submitted, document=cells[7] if document_level else "",
                      complete_document=complete, appraise_item=cells[12] if with_side else "")
