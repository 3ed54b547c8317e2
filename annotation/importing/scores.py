"""Score judgments from elsewhere (``import_judgments --format scores|appraise-csv|mtme``), as a closed DA study.

Every format comes down to rows of (annotator, system, segment, score), with
optional texts, languages, times and a row type. They become an ``esa`` study
with ``esa_spans`` off (direct assessment: a 0–100 score per candidate, no
spans), which the study report ranks the WMT way (docs/import.md):

* one item per segment (its id = the segment id), one candidate per system;
* one annotator per annotator name (the name is their ``external_id``, and
  their code when no one on this server has it and it fits 16 characters);
* one done assignment and one judgment per (annotator, segment), whose answer
  holds only the systems that annotator scored:
  ``{"annotations": {"<candidate pk>": {"spans": [], "score": x}}}``.

Formats:

* ``scores``: a CSV with header ``annotator,system,segment,score`` and the
  optional columns ``document``, ``source``, ``target`` (the system's text),
  ``reference`` (the reference text, kept in the item's metadata).
* ``appraise-csv``: Appraise's ``ExportSystemScoresToCSV`` (no header). Rows
  ``annotator, system, segment, type, source lang, target lang, score``, then
  for document-level campaigns ``documentID, isCompleteDocument, mqm``, then
  ``start, end`` (epoch seconds; absent from exports cut to 7 or 10 columns),
  then with ``--batch-info`` ``batchNo, item id`` (ignored). Document-level
  campaigns number segments within each document, so their items are
  ``<documentID>#<segment>`` (position = the segment number). ``TGT`` rows are
  judgments; ``REF`` rows score the reference (its candidate is flagged
  ``is_reference``); ``BAD`` rows score a degraded copy (a spam item
  ``<segment>~spam`` whose candidate is flagged ``is_spam``); ``CHK`` rows
  score an item a second time (a control copy ``<segment>~chk``, nothing
  scrambled). Whole-document scores (``isCompleteDocument`` True) and the
  ``mqm`` spans of document campaigns are counted and dropped.
* ``mtme``: one mt-metrics-eval human score file ``LP.SCORER.seg.score``
  (``system<TAB>score`` lines, the k-th line of a system = segment k, ``None``
  = not scored): one pseudo-annotator named SCORER.

Scores must lie on 0–100 unless ``--scale LOW:HIGH`` (or ``auto``: the file's
own minimum and maximum) maps them linearly onto it (LOW → 0, HIGH → 100;
LOW > HIGH turns lower-is-better scores round). Every problem is named by
line and nothing is stored unless the whole file is good.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from dataclasses import dataclass, replace
from datetime import datetime, timezone as dt_timezone
from typing import Any, Callable

from django.utils import timezone

from annotation.importing.base import (CHECK_SUFFIX, CONTROL_SUFFIXES, MAX_ERRORS, PLACEHOLDER, SPAM_SUFFIX,
                                             JudgmentImportError, number, record_provenance, study_create)
from annotation.models import Annotator, Assignment, AssignmentStatus, Judgment
from studies.definition import taxonomy as tx
from studies.importing.study_file import EXTERNAL_ID_MAX_LENGTH
from studies.definition.languages import language_tag_error
from studies.models import Candidate, Item, Study

SCORES_COLUMNS = ("annotator", "system", "segment", "score")
SCORES_OPTIONAL = ("document", "source", "target", "reference")
APPRAISE_TYPES = ("TGT", "REF", "BAD", "CHK")
#: Appraise column counts: DA (7 without times, 9 with, 11 with batch info) and document-level (10, 12, 14).
APPRAISE_WIDTHS = {7: (False, False), 9: (False, True), 11: (False, True),
                   10: (True, False), 12: (True, True), 14: (True, True)}
MTME_NAME = re.compile(r"^(?:(?P<lp>[A-Za-z]{2,3}-[A-Za-z]{2,3})\.)?(?P<scorer>[^/]+?)\.(?P<level>seg|sys|domain)"
                       r"\.score$")
_LENGTHS = {"annotator": Annotator._meta.get_field("external_id").max_length,
            "system": Candidate._meta.get_field("system").max_length,
            "document": Item._meta.get_field("document_id").max_length,
            "segment": EXTERNAL_ID_MAX_LENGTH - len(CHECK_SUFFIX)}


@dataclass
class ScoreRow:
    """One score of one annotator for one system's output of one segment."""

    line: int
    annotator: str
    system: str
    segment: str
    score: float
    kind: str = "TGT"  # TGT, REF (the reference), BAD (degraded copy), CHK (repeated item): Appraise's types
    document: str = ""
    source: str = ""
    target: str = ""
    reference: str = ""
    source_language: str = ""
    target_language: str = ""
    started_at: datetime | None = None
    submitted_at: datetime | None = None
    position: int | None = None  # the segment's place in its document, when the format gives it

    @property
    def item_id(self) -> str:
        """The item the row's score belongs to: the segment, or its spam (BAD) or check (CHK) copy."""
        return self.segment + {"BAD": SPAM_SUFFIX, "CHK": CHECK_SUFFIX}.get(self.kind, "")


@dataclass(frozen=True)
class Scale:
    """Linear map of [low, high] onto the study's 0–100 scale (``auto``: the file's own range)."""

    low: float | None = None
    high: float | None = None

    @property
    def is_auto(self) -> bool:
        return self.low is None

    def describe(self) -> str:
        return f"scores mapped linearly from {self.low:g}..{self.high:g} onto 0..100"


#: Score files hold 0–100 scores per candidate without spans: direct assessment, the ``esa`` protocol with
#: ``esa_spans`` off (docs/import.md).
DA_PROTOCOL = "esa"


def parse_scale(text: str | None) -> Scale | None:
    """``--scale``: None (scores are 0–100 already), ``auto``, or ``LOW:HIGH`` with LOW ≠ HIGH."""
    if text is None:
        return None
    if text.strip().lower() == "auto":
        return Scale()
    parts = text.split(":")
    values = [number(p) for p in parts] if len(parts) == 2 else []
    if len(values) != 2 or any(isinstance(v, str) for v in values) or values[0] == values[1]:
        raise JudgmentImportError([f"--scale: {text!r} is not LOW:HIGH (two different numbers, e.g. -25:0) "
                                   "or auto"])
    return Scale(float(values[0]), float(values[1]))


class _Errors:
    """Line-numbered problems of one file, at most MAX_ERRORS of them."""

    def __init__(self, name: str):
        self.name = name
        self.items: list[str] = []

    def add(self, line: int | None, message: str) -> None:
        if len(self.items) < MAX_ERRORS:
            self.items.append(f"{self.name}: line {line}: {message}" if line else f"{self.name}: {message}")
        elif len(self.items) == MAX_ERRORS:
            self.items.append(f"{self.name}: stopped after {MAX_ERRORS} errors")

    def raise_any(self) -> None:
        if self.items:
            raise JudgmentImportError(self.items)


def _check_names(row: dict[str, str], line: int, errors: _Errors) -> bool:
    """Annotator, system and segment present and of a storable length; segment ids not a copy's id."""
    ok = True
    for column in ("annotator", "system", "segment", "document"):
        value = row.get(column, "")
        if column != "document" and not value:
            errors.add(line, f"{column} is empty")
            ok = False
        elif len(value) > (_LENGTHS[column] or 0):
            errors.add(line, f"{column} {value[:40]!r}… is longer than {_LENGTHS[column]} characters")
            ok = False
    if row.get("segment", "").endswith(CONTROL_SUFFIXES):
        errors.add(line, f"segment {row['segment']!r}: ids ending in {' or '.join(CONTROL_SUFFIXES)} are "
                         "reserved for control copies")
        ok = False
    return ok


def _score(value: str, line: int, errors: _Errors) -> float | None:
    parsed = number(value) if value.strip() else "is empty"
    if isinstance(parsed, str):
        errors.add(line, f"score {value!r} is not a number" if value.strip() else "score is empty")
        return None
    return float(parsed)


def parse_scores(name: str, content: str) -> list[ScoreRow]:
    """``scores``: the long CSV, header first."""
    errors = _Errors(name)
    reader = csv.DictReader(io.StringIO(content.lstrip("\ufeff")))
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in SCORES_COLUMNS if c not in header]
    unknown = [c for c in header if c not in SCORES_COLUMNS + SCORES_OPTIONAL]
    if missing or unknown:
        problems = ([f"missing column(s) {', '.join(missing)}"] if missing else []) + \
                   ([f"unknown column(s) {', '.join(unknown)}"] if unknown else [])
        errors.add(1, "; ".join(problems) + f" (columns: {', '.join(SCORES_COLUMNS)}[, "
                   f"{', '.join(SCORES_OPTIONAL)}])")
        errors.raise_any()
    reader.fieldnames = header
    rows = []
    for record in reader:
        line = reader.line_num
        if None in record:
            errors.add(line, f"{len(header) + len(record[None])} cells for {len(header)} columns")
            continue
        cells = {k: (v or "").strip() for k, v in record.items()}
        if not any(cells.values()):
            continue
        score = _score(cells["score"], line, errors)
        if _check_names(cells, line, errors) and score is not None:
            rows.append(ScoreRow(line=line, annotator=cells["annotator"], system=cells["system"],
                                 segment=cells["segment"], score=score, document=cells.get("document", ""),
                                 source=(record.get("source") or ""), target=(record.get("target") or ""),
                                 reference=(record.get("reference") or "")))
    errors.raise_any()
    return rows


def _epoch(value: str, column: str, line: int, errors: _Errors) -> datetime | None:
    parsed = number(value) if value.strip() else "is empty"
    if isinstance(parsed, str) or not 0 <= parsed < 1e11:
        errors.add(line, f"{column} {value!r} is not a time in seconds since 1970")
        return None
    return datetime.fromtimestamp(float(parsed), tz=dt_timezone.utc)


@dataclass
class AppraiseDropped:
    """What an Appraise export holds that the study does not."""

    document_scores: int = 0
    span_rows: int = 0


def parse_appraise(name: str, content: str) -> tuple[list[ScoreRow], AppraiseDropped]:
    """``appraise-csv``: Appraise's ExportSystemScoresToCSV rows (no header), read as its code writes them."""
    errors = _Errors(name)
    dropped = AppraiseDropped()
    rows = []
    reader = csv.reader(io.StringIO(content.lstrip("\ufeff")))
    for cells in reader:
        line = reader.line_num
        if not cells or not "".join(cells).strip():
            continue
        width = APPRAISE_WIDTHS.get(len(cells))
        if width is None:
            errors.add(line, f"{len(cells)} columns; Appraise's export has 9 (annotator, system, segment, type, "
                             "source lang, target lang, score, start, end) or 12 (document-level: documentID, "
                             "isCompleteDocument, mqm before start, end), 7 or 10 without times, 11 or 14 with "
                             "batch info")
            continue
        document_level, timed = width
        cells = [c.strip() for c in cells]
        annotator, system, item_id, kind, src_lang, tgt_lang, score_text = cells[:7]
        document = cells[7] if document_level else ""
        # Document-level campaigns number segments within their document (0, 1, 2, … in every document).
        segment = f"{document}#{item_id}" if document else item_id
        position = int(item_id) if document and item_id.isdigit() else None
        fields = {"annotator": annotator, "system": system, "segment": segment, "document": document}
        ok = _check_names(fields, line, errors)
        if kind.upper() not in APPRAISE_TYPES:
            errors.add(line, f"type {kind!r} is not one of {', '.join(APPRAISE_TYPES)}")
            ok = False
        for column, tag in (("source lang", src_lang), ("target lang", tgt_lang)):
            problem = language_tag_error(tag)
            if problem:
                errors.add(line, f"{column}: {problem}")
                ok = False
        score = _score(score_text, line, errors)
        started = submitted = None
        if timed:
            start_at = 10 if document_level else 7
            started = _epoch(cells[start_at], "start", line, errors)
            submitted = _epoch(cells[start_at + 1], "end", line, errors)
            if started is None or submitted is None:
                ok = False
            elif submitted < started:
                errors.add(line, f"end {cells[start_at + 1]} is before start {cells[start_at]}")
                ok = False
        if document_level:
            complete = cells[8].lower()
            if complete not in ("true", "false"):
                errors.add(line, f"isCompleteDocument {cells[8]!r} is not True or False")
                ok = False
            elif complete == "true":
                dropped.document_scores += ok and score is not None
                continue
            if cells[9] not in ("", "[]", "None"):
                dropped.span_rows += ok and score is not None
        if ok and score is not None:
            rows.append(ScoreRow(line=line, annotator=annotator, system=system, segment=segment, score=score,
                                 kind=kind.upper(), document=document, source_language=src_lang,
                                 target_language=tgt_lang, started_at=started, submitted_at=submitted,
                                 position=position))
    errors.raise_any()
    return rows, dropped


def mtme_scorer(name: str) -> tuple[str, str]:
    """(language pair, scorer) of a human score file name ``en-de.mqm.seg.score``; JudgmentImportError else."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    match = MTME_NAME.match(base)
    if match is None or match.group("level") != "seg":
        raise JudgmentImportError([f"{name}: --format mtme reads one segment-level human score file named "
                                   "LP.SCORER.seg.score (e.g. en-de.mqm.seg.score)"])
    return match.group("lp") or "", match.group("scorer")


def parse_mtme(name: str, content: str) -> list[ScoreRow]:
    """``mtme``: ``system<TAB>score`` lines; a system's k-th line is segment k (1-based); ``None`` = not scored."""
    lp, scorer = mtme_scorer(name)
    source_language, _, target_language = lp.partition("-")
    errors = _Errors(name)
    rows = []
    seen: dict[str, int] = {}
    for line, text in enumerate(content.lstrip("\ufeff").splitlines(), start=1):
        if not text.strip():
            continue
        parts = text.split()
        if len(parts) != 2:
            errors.add(line, f"{len(parts)} fields; a score file line is system<TAB>score")
            continue
        system, value = parts
        seen[system] = seen.get(system, 0) + 1
        if value == "None":
            continue
        segment = str(seen[system])
        score = _score(value, line, errors)
        if _check_names({"annotator": scorer, "system": system, "segment": segment}, line, errors) \
                and score is not None:
            rows.append(ScoreRow(line=line, annotator=scorer, system=system, segment=segment, score=score,
                                 source_language=source_language, target_language=target_language))
    counts = set(seen.values())
    if len(counts) > 1:
        shown = ", ".join(f"{s} {n}" for s, n in list(seen.items())[:6])
        errors.add(None, f"systems have different numbers of lines ({shown}); every system has one line per "
                         "segment ('None' when not scored)")
    errors.raise_any()
    return rows


def apply_scale(name: str, rows: list[ScoreRow], scale: Scale | None) -> tuple[list[ScoreRow], str]:
    """Scores mapped onto 0–100 (or checked to lie there); the mapping's description for the provenance."""
    errors = _Errors(name)
    if scale is not None and scale.is_auto:
        values = [r.score for r in rows]
        if not values or min(values) == max(values):
            raise JudgmentImportError([f"--scale auto: {name} needs at least two different scores"])
        scale = Scale(min(values), max(values))
    mapped = rows
    if scale is not None:
        low, high = scale.low, scale.high
        assert low is not None and high is not None
        mapped = [replace(r, score=round(100.0 * (r.score - low) / (high - low), 10)) for r in rows]
    for original, row in zip(rows, mapped):
        if not tx.SCORE_MIN <= row.score <= tx.SCORE_MAX:
            hint = (f" (mapped from {original.score:g} by --scale)" if scale is not None
                    else "; give --scale LOW:HIGH or --scale auto to map another scale onto it")
            errors.add(original.line, f"score {original.score:g} is outside {tx.SCORE_MIN}–{tx.SCORE_MAX}{hint}")
    errors.raise_any()
    return mapped, (scale.describe() if scale is not None else "scores on 0..100 as given")


def _first_conflicts(rows: list[ScoreRow], errors: _Errors) -> None:
    """Per segment one document, source, reference and language pair; per (segment, system) one text."""
    first: dict[tuple[str, str], tuple[str, int]] = {}
    checks: list[tuple[str, Callable[[ScoreRow], tuple[str, str]]]] = [
        ("document", lambda r: (r.segment, r.document)),
        ("source", lambda r: (r.segment, r.source)),
        ("reference", lambda r: (r.segment, r.reference)),
        ("source lang", lambda r: (r.segment, r.source_language)),
        ("target lang", lambda r: (r.segment, r.target_language)),
        ("target", lambda r: (f"{r.segment}\x00{r.system}", r.target if r.kind != "BAD" else "")),
    ]
    for row in rows:
        for column, key_value in checks:
            key, value = key_value(row)
            if not value and column in ("source", "reference", "target"):
                continue  # texts may be given on one row of the segment only
            earlier = first.setdefault((column, key), (value, row.line))
            if earlier[0] != value:
                what = f"segment {row.segment!r}" + (f", system {row.system!r}" if column == "target" else "")
                errors.add(row.line, f"{what}: {column} differs from line {earlier[1]}")


def _duplicates(rows: list[ScoreRow], errors: _Errors) -> None:
    """One score per annotator, system and item (a second look at an item is a CHK row, not a repeat)."""
    seen: dict[tuple[str, str, str], int] = {}
    for row in rows:
        key = (row.annotator, row.item_id, row.system)
        if key in seen:
            errors.add(row.line, f"annotator {row.annotator!r} scored system {row.system!r} on "
                                 f"{'segment ' + repr(row.segment) if row.item_id == row.segment else 'copy ' + repr(row.item_id)} "
                                 f"again (line {seen[key]})")
        else:
            seen[key] = row.line


def _study_data(name: str, slug: str, rows: list[ScoreRow], references: set[str]) -> dict[str, Any]:
    """The study file of the import: DA settings, one item per segment with a candidate per system."""
    segments: dict[str, list[ScoreRow]] = {}
    for row in rows:
        segments.setdefault(row.segment, []).append(row)
    pairs = {(r.source_language, r.target_language) for r in rows}
    mixed = len(pairs) > 1
    study_languages = next(iter(pairs)) if not mixed else ("", "")
    items = []
    for segment, seg_rows in segments.items():
        systems: dict[str, str] = {}
        for r in seg_rows:
            if r.kind != "BAD" or r.system not in systems:
                systems[r.system] = systems.get(r.system) or (r.target if r.kind != "BAD" else "")
        item: dict[str, Any] = {
            "id": segment,
            "candidates": [{"system": s, "text": text or PLACEHOLDER, "is_reference": s in references}
                           for s, text in systems.items()]}
        document = next((r.document for r in seg_rows if r.document), "")
        source = next((r.source for r in seg_rows if r.source), "")
        reference = next((r.reference for r in seg_rows if r.reference), "")
        if document:
            item["document_id"] = document
        if seg_rows[0].position is not None:
            item["position"] = seg_rows[0].position
        if source:
            item["source"] = source
        if reference:
            item["metadata"] = {"reference": reference}
        if mixed and seg_rows[0].source_language:  # languages differ between segments: per item
            item["source_language"], item["target_language"] = seg_rows[0].source_language, seg_rows[0].target_language
        items.append(item)
    per_item: dict[str, set[str]] = {}
    for row in rows:
        per_item.setdefault(row.segment, set()).add(row.annotator)
    settings: dict[str, Any] = {
        "esa_spans": False, "spam_rate": 0.0, "show_source": any("source" in i for i in items),
        "redundancy": max(1, min(50, max((len(v) for v in per_item.values()), default=1)))}
    if study_languages[0]:
        settings["source_language"], settings["target_language"] = study_languages
    return {"slug": slug, "title": f"Imported scores: {name}"[:200], "protocol": DA_PROTOCOL,
            "status": "closed", "settings": settings, "items": items}


def _control_items(study: Study, rows: list[ScoreRow], created: dict[str, Item]) -> int:
    """BAD rows' spam copies and CHK rows' check copies, after the real items (like studies.controls.spam's copies)."""
    copies: dict[str, list[ScoreRow]] = {}
    for row in rows:
        if row.kind in ("BAD", "CHK"):
            copies.setdefault(row.item_id, []).append(row)
    n_docs = study.n_documents
    for k, (item_id, copy_rows) in enumerate(copies.items()):
        base = created[copy_rows[0].segment]
        item = Item.objects.create(study=study, external_id=item_id, is_spam=True, spam_of=base,
                                   document_id=f"spam:{base.external_id}", doc_index=n_docs + k, source=base.source,
                                   metadata={}, source_language=base.source_language,
                                   target_language=base.target_language, is_open=False)
        created[item_id] = item
        texts = {c.system: (c.text, c.is_reference) for c in base.candidates.all()}
        systems = list(dict.fromkeys(r.system for r in copy_rows))
        Candidate.objects.bulk_create([
            Candidate(item=item, system=system, position=n, is_spam=copy_rows[0].kind == "BAD",
                      text=PLACEHOLDER if copy_rows[0].kind == "BAD" else texts[system][0],
                      is_reference=texts[system][1])
            for n, system in enumerate(systems)])
    Study.objects.filter(pk=study.pk).update(n_documents=n_docs + len(copies), n_spam_items=len(copies),
                                             n_open_items=0)
    return len(copies)


def _annotators(study: Study, rows: list[ScoreRow]) -> dict[str, Annotator]:
    names = list(dict.fromkeys(r.annotator for r in rows))
    taken = set(Annotator.objects.filter(code__in=names).values_list("code", flat=True))
    out = {}
    for sequence, name in enumerate(names, start=1):
        annotator = Annotator(study=study, external_id=name, sequence=sequence)
        if name not in taken and len(name) <= 16:
            annotator.code = name
        annotator.save()
        out[name] = annotator
    return out


def _times(group: list[ScoreRow], now: datetime) -> tuple[datetime, datetime, int | None]:
    """A judgment's times: the first start, the last end, and the time spent (each Appraise result once)."""
    timed = [(r.started_at, r.submitted_at) for r in group if r.started_at and r.submitted_at]
    if not timed:
        return now, now, None
    distinct = set(timed)
    spent = sum(round((end - start).total_seconds() * 1000) for start, end in distinct)
    return min(s for s, _ in distinct), max(e for _, e in distinct), spent


def _store(study: Study, rows: list[ScoreRow], items: dict[str, Item]) -> int:
    """One done assignment and one judgment per (annotator, item), holding the systems that annotator scored."""
    annotators = _annotators(study, rows)
    candidates = {(c.item_id, c.system): c.pk for c in Candidate.objects.filter(item__study=study)}
    groups: dict[tuple[str, str], list[ScoreRow]] = {}
    for row in rows:
        groups.setdefault((row.annotator, row.item_id), []).append(row)
    now = timezone.now()
    ordered = sorted(groups.items(), key=lambda kv: (_times(kv[1], now)[0], kv[1][0].line))
    sequences: dict[str, int] = {}
    assignments: list[Assignment] = []
    answers: list[tuple[dict[str, Any], datetime, datetime, int | None]] = []
    for (name, item_id), group in ordered:
        item = items[item_id]
        sequences[name] = sequences.get(name, 0) + 1
        started, submitted, spent = _times(group, now)
        scores = {candidates[(item.pk, r.system)]: r.score for r in group}
        answer: dict[str, Any] = {"annotations": {str(pk): {"spans": [], "score": _plain(score)}
                                  for pk, score in sorted(scores.items())}}
        assignments.append(Assignment(annotator=annotators[name], item=item, sequence=sequences[name],
                                      candidate_order=sorted(scores), status=AssignmentStatus.DONE,
                                      opened_at=started, completed_at=submitted))
        answers.append((answer, started, submitted, spent))
    created = Assignment.objects.bulk_create(assignments, batch_size=2000)
    if any(a.pk is None for a in created):
        by_key = {(a.annotator_id, a.item_id): a for a in Assignment.objects.filter(item__study=study)}
        created = [by_key[(a.annotator.pk, a.item.pk)] for a in assignments]
    judgments = Judgment.objects.bulk_create([
        Judgment(assignment=assignment, revision=1, is_current=True, answer=answer, started_at=started,
                 duration_ms=spent,
                 payload_digest=hashlib.sha256(json.dumps(answer, sort_keys=True).encode()).hexdigest())
        for assignment, (answer, started, _, spent) in zip(created, answers)], batch_size=2000)
    # submitted_at is auto_now_add: the file's times are set afterwards.
    for judgment, (_, _, submitted, _) in zip(judgments, answers):
        judgment.submitted_at = submitted
    if all(j.pk is not None for j in judgments):
        Judgment.objects.bulk_update(judgments, ["submitted_at"], batch_size=2000)
    else:
        for assignment, (_, _, submitted, _) in zip(created, answers):
            Judgment.objects.filter(assignment=assignment).update(submitted_at=submitted)
    counts: dict[int, int] = {}
    for assignment in created:
        counts[assignment.item_id] = counts.get(assignment.item_id, 0) + 1
    for item_pk, n in counts.items():
        Item.objects.filter(pk=item_pk).update(n_assigned=n, is_open=False)
    Item.objects.filter(study=study).exclude(pk__in=counts).update(is_open=False)
    return len(judgments)


def _plain(score: float) -> int | float:
    """Whole scores stored as ints (73, not 73.0), as the annotation API stores them."""
    return int(score) if float(score).is_integer() else score


def scores_import(*, name: str, content: str, fmt: str, slug: str, reference_systems: list[str],
                  scale: str | None, source: str = "") -> Study:
    """Parse, check and store a score file (the caller holds the transaction and has checked the slug)."""
    parsed_scale = parse_scale(scale)
    dropped = AppraiseDropped()
    if fmt == "scores":
        rows = parse_scores(name, content)
    elif fmt == "appraise-csv":
        rows, dropped = parse_appraise(name, content)
    else:
        rows = parse_mtme(name, content)
    if not rows:
        raise JudgmentImportError([f"{name}: no scores"])
    rows, scale_note = apply_scale(name, rows, parsed_scale)
    errors = _Errors(name)
    _first_conflicts(rows, errors)
    _duplicates(rows, errors)
    references = set(reference_systems) | {r.system for r in rows if r.kind == "REF"}
    unknown = sorted(set(reference_systems) - {r.system for r in rows})
    if unknown:
        errors.add(None, f"--reference-system: no row has system(s) {', '.join(map(repr, unknown))}")
    errors.raise_any()
    study, created = study_create(name, _study_data(name, slug, rows, references))
    n_copies = _control_items(study, rows, created)
    n_judgments = _store(study, rows, created)
    notes = [f"{len(rows)} scores, {n_judgments} judgments", scale_note]
    if n_copies:
        notes.append(f"{n_copies} control copies (BAD, CHK)")
    if dropped.document_scores:
        notes.append(f"{dropped.document_scores} whole-document scores dropped")
    if dropped.span_rows:
        notes.append(f"the error spans of {dropped.span_rows} rows dropped (scores kept)")
    return record_provenance(study, name=name, fmt=fmt, content=content, summary="; ".join(notes), source=source)


__all__ = ["ScoreRow", "Scale", "parse_scale", "parse_scores", "parse_appraise", "parse_mtme", "mtme_scorer",
           "apply_scale", "scores_import"]
