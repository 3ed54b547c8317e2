"""Reading human and metric scores for meta-evaluation from plain files (``meta_evaluate``).

Two layouts:

* a long CSV ``system,segment,scorer,score`` (one row per score; an empty
  score is a missing one; ``segment`` identifies the item the systems
  translated, so it groups pairs for segment-level statistics);
* mt-metrics-eval's layout (``--mtme-dir``): files ``<scorer>.seg.score``
  with ``system<TAB>score`` lines, the n-th line of a system being its n-th
  segment, and optional ``<scorer>.sys.score`` with ``system<TAB>score``;
  ``None`` (or nothing) is a missing score. Sub-folders are searched too
  (``human-scores/``, ``metric-scores/<lp>/``).

Every problem is reported with its file and line; nothing is computed from a
file with an error.
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAX_ERRORS = 50
_MISSING = {"", "none", "nan", "na", "null"}


class ScoreTableError(ValueError):
    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


@dataclass
class ScoreTable:
    """Scores by scorer as (n_systems, n_segments) arrays with NaN for missing, plus optional system scores."""

    systems: list[str]
    segments: list[str]
    seg: dict[str, np.ndarray]
    sys: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def scorers(self) -> list[str]:
        return list(self.seg)


def _number(text: str) -> float | None | str:
    """A finite float, None for a missing score, or an error message."""
    value = text.strip()
    if value.lower() in _MISSING:
        return None
    try:
        number = float(value)
    except ValueError:
        return f"score {value!r} is not a number"
    if not math.isfinite(number):
        return f"score {value!r} is not a finite number"
    return number


def read_long_csv(name: str, content: str) -> ScoreTable:
    """Parse ``system,segment,scorer,score`` rows (header required, any column order, extra columns ignored)."""
    errors: list[str] = []
    reader = csv.reader(io.StringIO(content))
    header = next(reader, None)
    if header is None:
        raise ScoreTableError([f"{name}: the file is empty"])
    columns = [h.strip().lower() for h in header]
    missing = [c for c in ("system", "segment", "scorer", "score") if c not in columns]
    if missing:
        raise ScoreTableError([f"{name}: line 1: missing column(s) {', '.join(missing)} "
                               "(expected a header system,segment,scorer,score)"])
    at = {c: columns.index(c) for c in ("system", "segment", "scorer", "score")}
    systems: dict[str, int] = {}
    segments: dict[str, int] = {}
    cells: dict[str, dict[tuple[int, int], float | None]] = {}
    seen: dict[tuple[str, str, str], int] = {}
    for line_no, row in enumerate(reader, start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) < len(columns):
            errors.append(f"{name}: line {line_no}: {len(row)} column(s), the header has {len(columns)}")
            continue
        system, segment, scorer = (row[at[c]].strip() for c in ("system", "segment", "scorer"))
        for column, value in (("system", system), ("segment", segment), ("scorer", scorer)):
            if not value:
                errors.append(f"{name}: line {line_no}: {column} is empty")
        score = _number(row[at["score"]])
        if isinstance(score, str):
            errors.append(f"{name}: line {line_no}: {score}")
        key = (system, segment, scorer)
        if key in seen:
            errors.append(f"{name}: line {line_no}: a second score of scorer {scorer!r} for system {system!r} "
                          f"on segment {segment!r} (first on line {seen[key]})")
        seen.setdefault(key, line_no)
        if len(errors) >= MAX_ERRORS:
            errors.append(f"{name}: stopped after {MAX_ERRORS} errors")
            break
        if errors or not (system and segment and scorer) or isinstance(score, str):
            continue
        i = systems.setdefault(system, len(systems))
        j = segments.setdefault(segment, len(segments))
        cells.setdefault(scorer, {})[(i, j)] = score
    if errors:
        raise ScoreTableError(errors)
    if not cells:
        raise ScoreTableError([f"{name}: no scores"])
    seg: dict[str, np.ndarray] = {}
    for scorer, by_cell in cells.items():
        matrix = np.full((len(systems), len(segments)), np.nan)
        for (i, j), cell in by_cell.items():
            if cell is not None:
                matrix[i, j] = cell
        seg[scorer] = matrix
    return ScoreTable(systems=list(systems), segments=list(segments), seg=seg)


def _read_lines(path: Path, errors: list[str]) -> list[tuple[int, str, float | None]]:
    rows: list[tuple[int, str, float | None]] = []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        bad_line = path.read_bytes()[:exc.start].count(b"\n") + 1
        errors.append(f"{path}: line {bad_line}: not UTF-8")
        return rows
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0].strip():
            errors.append(f"{path}: line {line_no}: expected 'system<TAB>score'")
            continue
        score = _number(parts[1])
        if isinstance(score, str):
            errors.append(f"{path}: line {line_no}: {score}")
            continue
        rows.append((line_no, parts[0].strip(), score))
    if not rows and not any(e.startswith(str(path)) for e in errors):
        errors.append(f"{path}: the file is empty")
    return rows


def read_mtme_dir(directory: Path, human: str) -> ScoreTable:
    """Read ``*.seg.score`` / ``*.sys.score`` files; systems and segment count come from the human file."""
    errors: list[str] = []
    if not directory.is_dir():
        raise ScoreTableError([f"{directory}: no such directory"])
    found: dict[str, dict[str, Path]] = {"seg": {}, "sys": {}}
    for path in sorted(directory.rglob("*.score")):
        for level in ("seg", "sys"):
            suffix = f".{level}.score"
            if path.name.endswith(suffix):
                scorer = path.name[:-len(suffix)]
                if scorer in found[level]:
                    errors.append(f"{path}: scorer {scorer!r} also in {found[level][scorer]}")
                found[level][scorer] = path
    if human not in found["seg"]:
        known = ", ".join(sorted(found["seg"])) or "none"
        raise ScoreTableError(errors + [f"{directory}: no {human}.seg.score (the human scores; --human NAME). "
                                        f"Segment score files found: {known}"])
    by_scorer: dict[str, dict[str, list[float | None]]] = {}
    for scorer, path in found["seg"].items():
        per_system: dict[str, list[float | None]] = {}
        for _line, system, score in _read_lines(path, errors):
            per_system.setdefault(system, []).append(score)
        by_scorer[scorer] = per_system
    if errors:
        raise ScoreTableError(errors[:MAX_ERRORS])
    gold = by_scorer[human]
    systems = list(gold)
    n_seg = max(len(v) for v in gold.values())
    for system, values in gold.items():
        if len(values) != n_seg:
            errors.append(f"{found['seg'][human]}: system {system!r} has {len(values)} segments, others {n_seg}")
    seg: dict[str, np.ndarray] = {}
    for scorer, per_system in by_scorer.items():
        matrix = np.full((len(systems), n_seg), np.nan)
        for i, system in enumerate(systems):
            found_values = per_system.get(system)
            if found_values is None:
                if scorer != human:
                    errors.append(f"{found['seg'][scorer]}: no scores for system {system!r}")
                continue
            if len(found_values) != n_seg:
                errors.append(f"{found['seg'][scorer]}: system {system!r} has {len(found_values)} segments, "
                              f"the human file {n_seg}")
                continue
            matrix[i] = [np.nan if v is None else v for v in found_values]
        seg[scorer] = matrix
    sys_scores: dict[str, np.ndarray] = {}
    for scorer, path in found["sys"].items():
        values_by_system = {system: score for _line, system, score in _read_lines(path, errors)}
        sys_scores[scorer] = np.array([np.nan if values_by_system.get(s) is None else values_by_system[s]
                                       for s in systems], dtype=float)
    if errors:
        raise ScoreTableError(errors[:MAX_ERRORS])
    return ScoreTable(systems=systems, segments=[str(k) for k in range(n_seg)], seg=seg, sys=sys_scores)
