"""Judgments collected elsewhere, loaded as a closed study (``import_judgments``).

Format ``export``: this tool's own export (CSV or JSON Lines, with or without
``--history``; docs/export.md), for instance from another server. The rows
give items, candidates (system, reference flag, spam flags), annotators
(their codes, pilot and exclusion flags), every judgment with its answer,
revision, screen order and times. Texts and study settings are not in an
export: pass the original study file (``--study-file``) to get them back,
otherwise candidates carry a placeholder text and the settings are inferred
(ties allowed when a judgment has tied ranks; the choice options and labels
that were used).

MQM and ESA/DA exports carry two more columns, ``score`` (the candidate's
0–100 ESA/DA score) and ``spans`` (its error spans, JSON text): a candidate
whose two cells are empty was not rated in that judgment. Without
``--study-file`` the span settings are inferred too (``esa_spans`` on when a
span was marked; severities and MQM categories beyond the defaults added).

Formats ``scores``, ``appraise-csv`` and ``mtme`` (score files from elsewhere)
live in ``annotation.importing.scores``; this module dispatches to it.

The study is created **closed** (nothing is handed out), with its
provenance (file name, format, SHA-256, import time) on the study. Every
problem is named by line, and nothing is stored unless the whole file is
good. Export → import → report gives the same numbers (tested).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from annotation.importing.scores import scores_import
from annotation.models import Annotator, Assignment, AssignmentStatus, Judgment
from annotation.importing.base import (CHECK_SUFFIX, CONTROL_SUFFIXES, MAX_ERRORS, PLACEHOLDER, SPAM_SUFFIX,
                                             JudgmentImportError, number, record_provenance, study_create,
                                             unsafe_input, unsafe_json)
from studies.definition import taxonomy as tx
from formats.csvcells import ESCAPE, unescape_cell
from studies.importing.span_checks import STORED_SPAN_FIELDS, sorted_spans
from protocols import registry
from protocols.registry import protocol_named
from studies.models import Candidate, Item, Status, Study
from studies.controls.spam import CONTROL_ERROR_KEY

#: The built-in formats; the protocols add their own (``TransferRules.import_formats``, :func:`all_formats`).
FORMATS = ("export", "scores", "appraise-csv", "mtme", "mqm-tsv")
SUPPORTED = ("export", "scores", "appraise-csv", "mtme")
#: Formats read by ``annotation.importing.scores`` (one score per annotator, system and segment).
SCORE_FORMATS = ("scores", "appraise-csv", "mtme")
__all__ = ["FORMATS", "SUPPORTED", "SCORE_FORMATS", "JudgmentImportError", "judgments_import", "read_study_file",
           "parse_export", "parse_records", "all_formats", "protocol_formats", "PLACEHOLDER", "MAX_ERRORS", "SPAM_SUFFIX", "CHECK_SUFFIX", "CONTROL_SUFFIXES", "number",
           "record_provenance", "study_create"]


def protocol_formats() -> dict[str, Any]:
    """The formats the registered protocols read (``TransferRules.import_formats``): name → the protocol's spec."""
    return {fmt: spec for spec in registry.registered() for fmt in spec.import_formats}


def all_formats() -> tuple[str, ...]:
    return FORMATS + tuple(protocol_formats())


REQUIRED = ("item", "document", "annotator", "system", "is_reference", "is_spam", "rank", "choice", "label",
            "screen_position", "started_at", "submitted_at", "duration_ms")


@dataclass
class _Row:
    line: int
    item: str
    document: str
    annotator: str
    system: str
    is_reference: bool
    is_spam: bool
    is_spam_candidate: bool
    rank: int | None
    choice: str
    label: str
    screen_position: int
    started_at: datetime
    submitted_at: datetime
    duration_ms: int | None
    client_duration_ms: int | None
    judgment: str
    revision: int
    is_current: bool
    phenomenon: str
    protocol: str
    excluded: bool
    pilot: bool
    score: int | float | None = None
    spans: list[dict[str, Any]] | None = None
    control_error: dict[str, Any] | None = None


@dataclass
class _Judgment:
    key: str
    rows: list[_Row] = field(default_factory=list)


def _records(name: str, content: str) -> list[tuple[int, dict[str, Any]]]:
    text = content.lstrip("\ufeff")
    first = text.lstrip()[:1]
    if first == "{":
        records = []
        for line_no, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise JudgmentImportError([f"{name}: line {line_no}: not valid JSON ({exc.msg})"])
            if not isinstance(value, dict):
                raise JudgmentImportError([f"{name}: line {line_no}: not a JSON object"])
            unsafe = unsafe_json(value, f"{name}: line {line_no}")
            if unsafe:
                raise JudgmentImportError(unsafe[:MAX_ERRORS])
            records.append((line_no, value))
        return records
    reader = csv.DictReader(io.StringIO(text))  # cells escaped by the export (formats/csvcells.py) read back as written
    return [(reader.line_num, {k: unescape_cell(v) if isinstance(v, str) and v[:1] == ESCAPE else v
                               for k, v in row.items()}) for row in reader]


def _bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    text = "" if value is None else str(value).strip().lower()
    return {"true": True, "1": True, "false": False, "0": False, "": False}.get(text)


def _int(value: Any, *, allow_empty: bool) -> int | None | str:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None if allow_empty else "is empty"
    if isinstance(value, bool):
        return "is not a whole number"
    try:
        number = int(str(value).strip())
    except ValueError:
        return f"{value!r} is not a whole number"
    return number


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = parse_datetime(value.strip())
    except ValueError:
        return None
    if parsed is not None and timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, timezone=timezone.get_fixed_timezone(0))
    return parsed


def _score_cell(value: Any, problems: list[str]) -> int | float | None:
    """The ``score`` column: empty = not rated; else a number from 0 to 100 (the ESA/DA scale)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    parsed = number(value)
    if isinstance(parsed, str):
        problems.append(f"score {parsed}")
        return None
    if not tx.SCORE_MIN <= parsed <= tx.SCORE_MAX:
        problems.append(f"score {parsed} is outside {tx.SCORE_MIN}–{tx.SCORE_MAX}")
        return None
    return parsed


def _json_cell(value: Any, column: str, problems: list[str]) -> Any:
    """A JSON cell: None when blank (or not valid JSON, with the problem named); JSONL rows hold it decoded already."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        return value
    try:
        decoded = json.loads(value)
    except json.JSONDecodeError as exc:
        problems.append(f"{column}: not valid JSON ({exc.msg})")
        return None
    unsafe = unsafe_json(decoded, column)
    if unsafe:
        problems.extend(unsafe)
        return None
    return decoded


def _spans_cell(value: Any, problems: list[str]) -> list[dict[str, Any]] | None:
    """The ``spans`` column: empty = not rated; else a JSON list of error spans, checked field by field.

    Offsets cannot be checked against the texts (an export has none); everything else is.
    """
    value = _json_cell(value, "spans", problems)
    if value is None:
        return None
    if not isinstance(value, list):
        problems.append("spans: must be a JSON list of error spans")
        return None
    spans = []
    for k, span in enumerate(value):
        where = f"spans[{k}]"
        if not isinstance(span, dict):
            problems.append(f"{where}: must be an object")
            continue
        unknown = sorted(set(span) - STORED_SPAN_FIELDS)
        start, end = span.get("start"), span.get("end")
        if unknown:
            problems.append(f"{where}: unknown field(s) {', '.join(unknown)}")
        elif (isinstance(start, bool) or not isinstance(start, int) or isinstance(end, bool)
              or not isinstance(end, int) or not 0 <= start < end):
            problems.append(f"{where}: start and end must be whole numbers with 0 <= start < end")
        elif span.get("side", "target") not in ("target", "source"):
            problems.append(f"{where}.side: {span.get('side')!r} is not target or source")
        elif span.get("severity") not in tx.ALLOWED_SEVERITIES:
            problems.append(f"{where}.severity: {span.get('severity')!r} is not one of "
                            f"{', '.join(tx.ALLOWED_SEVERITIES)}")
        elif not isinstance(span.get("category", ""), str) or not isinstance(span.get("note", ""), str):
            problems.append(f"{where}: category and note must be strings")
        elif not isinstance(span.get("whole", True), bool):
            problems.append(f"{where}.whole: must be true or false")
        else:
            spans.append({**span, "side": span.get("side", "target")})
    return sorted_spans(spans)


def _control_error_cell(value: Any, is_spam: bool, problems: list[str]) -> dict[str, Any] | None:
    """The optional ``control_error`` column: where a span study's control item has its generated error.

    JSON ``{"start", "end", "kind"}`` on the rows of a control (spam) item, else empty. Exports that do not
    carry it lose only the kind of error (the report then counts the control as "scrambled").
    """
    value = _json_cell(value, "control_error", problems)
    if value is None:
        return None
    start, end, kind = (value.get(k) for k in ("start", "end", "kind")) if isinstance(value, dict) else (None,) * 3
    if not (isinstance(start, int) and isinstance(end, int) and not isinstance(start, bool)
            and 0 <= start < end and isinstance(kind, str) and kind):
        problems.append("control_error: must be {\"start\": n, \"end\": m, \"kind\": \"…\"} with 0 <= start < end")
        return None
    if not is_spam:
        problems.append("control_error: only a control (spam) item has one")
        return None
    return dict(value)


def parse_export(name: str, content: str) -> list[_Row]:
    """The rows of an export file; JudgmentImportError naming every bad line."""
    return parse_records(name, _records(name, content))


def parse_records(name: str, records: list[tuple[int, dict[str, Any]]]) -> list[_Row]:
    """The rows of export records (line, {column: value}): an export file's, or another tool's file turned into them."""
    if not records:
        raise JudgmentImportError([f"{name}: no rows"])
    missing = [c for c in REQUIRED if c not in records[0][1]]
    if missing:
        raise JudgmentImportError([f"{name}: line 1: missing column(s) {', '.join(missing)} (this tool's export "
                                   "has them: docs/export.md)"])
    errors: list[str] = []
    rows: list[_Row] = []
    for line, rec in records:
        problems: list[str] = []
        text = {k: ("" if rec.get(k) is None else str(rec.get(k))).strip() for k in rec}
        for column in ("item", "annotator", "system"):
            if not text.get(column):
                problems.append(f"{column} is empty")
        flags = {}
        for column in ("is_reference", "is_spam", "is_spam_candidate", "excluded", "pilot"):
            flag = _bool(rec.get(column))
            if flag is None:
                problems.append(f"{column}: {rec.get(column)!r} is not true/false")
            flags[column] = bool(flag)
        current = _bool(rec.get("is_current", True))
        if current is None:
            problems.append(f"is_current: {rec.get('is_current')!r} is not true/false")
        rank = _int(rec.get("rank"), allow_empty=True)
        position = _int(rec.get("screen_position"), allow_empty=False)
        duration = _int(rec.get("duration_ms"), allow_empty=True)
        client_duration = _int(rec.get("client_duration_ms"), allow_empty=True)  # optional (issue 14's column)
        revision = _int(rec.get("revision", 1), allow_empty=True)
        for column, value in (("rank", rank), ("screen_position", position), ("duration_ms", duration),
                              ("client_duration_ms", client_duration), ("revision", revision)):
            if isinstance(value, str):
                problems.append(f"{column} {value}")
            elif isinstance(value, int) and value < (0 if column.endswith("duration_ms") else 1):
                problems.append(f"{column} {value} is out of range")
        started, submitted = _time(rec.get("started_at")), _time(rec.get("submitted_at"))
        if started is None:
            problems.append(f"started_at: {rec.get('started_at')!r} is not an ISO 8601 time")
        if submitted is None:
            problems.append(f"submitted_at: {rec.get('submitted_at')!r} is not an ISO 8601 time")
        protocol = text.get("protocol", "")
        if protocol and protocol not in registry.names():
            problems.append(f"protocol {protocol!r} is not one of {', '.join(registry.names())}")
        if flags["is_spam"] != text.get("item", "").endswith(CONTROL_SUFFIXES):
            problems.append(f"item {text.get('item')!r}: is_spam must be true exactly for ids ending in "
                            f"{' or '.join(CONTROL_SUFFIXES)}")
        score = _score_cell(rec.get("score"), problems)
        spans = _spans_cell(rec.get("spans"), problems)
        control_error = _control_error_cell(rec.get("control_error"), flags["is_spam"], problems)
        if problems:
            errors.extend(f"{name}: line {line}: {p}" for p in problems)
            if len(errors) >= MAX_ERRORS:
                errors.append(f"{name}: stopped after {MAX_ERRORS} errors")
                break
            continue
        assert isinstance(position, int) and started is not None and submitted is not None
        rows.append(_Row(line=line, item=text["item"], document=text.get("document", ""),
                         annotator=text["annotator"], system=text["system"], is_reference=flags["is_reference"],
                         is_spam=flags["is_spam"], is_spam_candidate=flags["is_spam_candidate"],
                         rank=rank if isinstance(rank, int) else None, choice=text.get("choice", ""),
                         label=text.get("label", ""), screen_position=position, started_at=started,
                         submitted_at=submitted, duration_ms=duration if isinstance(duration, int) else None,
                         client_duration_ms=client_duration if isinstance(client_duration, int) else None,
                         judgment=text.get("judgment", ""), revision=revision if isinstance(revision, int) else 1,
                         is_current=bool(current), phenomenon=text.get("phenomenon", ""), protocol=protocol,
                         excluded=flags["excluded"], pilot=flags["pilot"], score=score, spans=spans,
                         control_error=control_error))
    if errors:
        raise JudgmentImportError(errors)
    return rows


def _protocol(rows: list[_Row]) -> str:
    named = {r.protocol for r in rows if r.protocol}
    if len(named) == 1:
        return named.pop()
    # Exports written before the protocol column existed: the first protocol that recognises its rows.
    return next(spec.name for spec in registry.registered() if spec.claims_unnamed_export(rows))


def _judgments(rows: list[_Row]) -> list[_Judgment]:
    grouped: dict[str, _Judgment] = {}
    for row in rows:
        key = row.judgment or f"{row.annotator}|{row.item}|{row.revision}"
        grouped.setdefault(key, _Judgment(key)).rows.append(row)
    return list(grouped.values())


def _check_consistency(name: str, rows: list[_Row], judgments: list[_Judgment], protocol: str) -> None:
    spec = protocol_named(protocol)
    errors: list[str] = []
    items: dict[str, tuple[str, set[str]]] = {}
    cands: dict[tuple[str, str], tuple[bool, bool, int]] = {}
    for row in rows:
        document, _ = items.setdefault(row.item, (row.document, set()))
        if document != row.document:
            errors.append(f"{name}: line {row.line}: item {row.item!r} is in document {row.document!r} here and "
                          f"{document!r} before")
        items[row.item][1].add(row.system)
        first = cands.setdefault((row.item, row.system), (row.is_reference, row.is_spam_candidate, row.line))
        if first[:2] != (row.is_reference, row.is_spam_candidate):
            errors.append(f"{name}: line {row.line}: system {row.system!r} of item {row.item!r} has other "
                          f"reference/spam flags than on line {first[2]}")
    for judgment in judgments:
        first_row = judgment.rows[0]
        systems = [r.system for r in judgment.rows]
        if len(set(systems)) != len(systems):
            errors.append(f"{name}: line {judgment.rows[1].line}: judgment {judgment.key!r} lists a system twice")
        for row in judgment.rows[1:]:
            if (row.item, row.annotator, row.choice, row.label, row.revision) != (
                    first_row.item, first_row.annotator, first_row.choice, first_row.label, first_row.revision):
                errors.append(f"{name}: line {row.line}: row of judgment {judgment.key!r} disagrees with line "
                              f"{first_row.line} (item, annotator, choice, label and revision are per judgment)")
        errors.extend(f"{name}: {problem}" for problem in spec.import_problems(judgment))
    if errors:
        raise JudgmentImportError(errors[:MAX_ERRORS])


def _study_fields(name: str, slug: str, protocol: str, rows: list[_Row], judgments: list[_Judgment],
                  study_file: dict[str, Any] | None) -> dict[str, Any]:
    """A study file for the import: the original one's settings and texts when given, else inferred."""
    real_items: dict[str, list[_Row]] = {}
    for row in rows:
        if not row.is_spam:
            real_items.setdefault(row.item, []).append(row)
    given = {i["id"]: i for i in (study_file or {}).get("items", []) if isinstance(i, dict) and "id" in i}
    if given:  # the study file's item order (statistics that lay units end to end depend on it)
        rank = {item_id: k for k, item_id in enumerate(given)}
        real_items = dict(sorted(real_items.items(), key=lambda kv: rank.get(kv[0], len(rank))))
    items = []
    for item_id, item_rows in real_items.items():
        systems: dict[str, bool] = {}
        for r in item_rows:
            systems.setdefault(r.system, r.is_reference)
        original = given.get(item_id, {})
        texts = {c.get("system"): c for c in original.get("candidates", []) if isinstance(c, dict)}
        candidates = []
        for system, is_ref in systems.items():
            cand = {"system": system, "text": texts.get(system, {}).get("text") or PLACEHOLDER, "is_reference": is_ref}
            if texts.get(system, {}).get("highlights"):
                cand["highlights"] = texts[system]["highlights"]
            candidates.append(cand)
        item: dict[str, Any] = {"id": item_id, "candidates": candidates}
        for key in ("source", "source_context", "target_context", "metadata", "source_language",
                    "target_language"):
            if key in original:
                item[key] = original[key]
        if item_rows[0].document:
            item["document_id"] = item_rows[0].document
        if item_rows[0].phenomenon:
            item["phenomenon"] = item_rows[0].phenomenon
        items.append(item)
    settings = dict((study_file or {}).get("settings", {}))
    settings["spam_rate"] = 0.0  # the file's own spam copies are imported as they are
    per_item: dict[str, set[str]] = {}
    for j in judgments:
        per_item.setdefault(j.rows[0].item, set()).add(j.rows[0].annotator)
    settings["redundancy"] = max(1, min(50, max((len(v) for v in per_item.values()), default=1)))
    protocol_named(protocol).import_settings(rows, judgments, settings)
    title = (study_file or {}).get("title") or f"Imported judgments: {name}"
    return {"slug": slug, "title": str(title)[:200], "protocol": protocol, "status": Status.CLOSED,
            "settings": settings, "items": items}


@transaction.atomic
def judgments_import(*, name: str, content: str, fmt: str = "export", slug: str,
                     study_file: dict[str, Any] | None = None, reference_systems: list[str] | None = None,
                     scale: str | None = None, source: str = "") -> Study:
    """Create a closed study holding every judgment of the file; JudgmentImportError (nothing stored) otherwise.

    ``reference_systems`` and ``scale`` are for the score formats (``judgment_import_scores``): the systems
    that are human references, and the ``LOW:HIGH`` (or ``auto``) range mapped linearly onto 0–100.
    ``source`` says where the file came from (recorded in ``Study.provenance``, quoted by the report's facts).
    """
    if fmt not in all_formats():
        raise JudgmentImportError([f"--format: {fmt!r} is not one of {', '.join(all_formats())}"])
    if fmt == "mqm-tsv":
        from annotation.importing.mqm import mqm_tsv_import  # (it imports this module's helpers)

        return mqm_tsv_import(name=name, content=content, slug=slug, reference_systems=reference_systems or (),
                              source=source)
    foreign = protocol_formats().get(fmt)
    if fmt not in SUPPORTED and foreign is None:
        raise JudgmentImportError([f"--format: {fmt!r} is not one of {', '.join(all_formats())}"])
    unsafe_input(name, content, slug=slug, reference_systems=reference_systems or ())
    if Study.objects.filter(slug=slug).exists():
        raise JudgmentImportError([f"--slug: a study {slug!r} exists already"])
    if fmt in SCORE_FORMATS:
        if study_file is not None:
            raise JudgmentImportError(["--study-file: only for --format export (score files carry their texts "
                                       "in their own columns: docs/import.md)"])
        return scores_import(name=name, content=content, fmt=fmt, slug=slug,
                             reference_systems=reference_systems or [], scale=scale, source=source)
    if scale is not None:
        raise JudgmentImportError(["--scale: only for the score formats (scores, appraise-csv, mtme)"])
    summary = ""
    if foreign is not None:  # another tool's file, turned into export records by its protocol
        records, summary = foreign.import_records(fmt, name, content)
        rows = parse_records(name, records)
    else:
        rows = parse_export(name, content)
    if reference_systems:
        named = set(reference_systems)
        rows = [r if r.system not in named else _with_reference(r) for r in rows]
    protocol = _protocol(rows)
    judgments = _judgments(rows)
    _check_consistency(name, rows, judgments, protocol)
    data = _study_fields(name, slug, protocol, rows, judgments, study_file)
    study, created = study_create(name, data)
    _spam_items(study, rows, created)
    candidates = {(c.item_id, c.system): c for c in Candidate.objects.filter(item__study=study)}
    _store_judgments(study, judgments, created, candidates)
    return record_provenance(study, name=name, fmt=fmt, content=content,
                             summary=summary or f"{len(rows)} rows, {len(judgments)} judgments", source=source,
                             format_name=foreign.import_formats[fmt] if foreign is not None else "")


def _with_reference(row: _Row) -> _Row:
    """--reference-system on an export: the named systems are references too (the file's flags are kept)."""
    return replace(row, is_reference=True)


def _spam_items(study: Study, rows: list[_Row], created: dict[str, Item]) -> None:
    spam_rows: dict[str, list[_Row]] = {}
    for row in rows:
        if row.is_spam:
            spam_rows.setdefault(row.item, []).append(row)
    n_docs = study.n_documents
    for k, (item_id, item_rows) in enumerate(spam_rows.items()):
        suffix = next(x for x in CONTROL_SUFFIXES if item_id.endswith(x))
        base = created.get(item_id[:-len(suffix)])
        error = next((r.control_error for r in item_rows if r.control_error), None)
        item = Item.objects.create(study=study, external_id=item_id, is_spam=True, spam_of=base,
                                   metadata={CONTROL_ERROR_KEY: error} if error else {},
                                   document_id=item_rows[0].document, phenomenon=item_rows[0].phenomenon,
                                   doc_index=n_docs + k,
                                   source=base.source if base else "", source_context=base.source_context if base else [],
                                   target_context=base.target_context if base else [])
        created[item_id] = item
        systems: dict[str, _Row] = {}
        for r in item_rows:
            systems.setdefault(r.system, r)
        base_texts = {c.system: c.text for c in base.candidates.all()} if base else {}
        Candidate.objects.bulk_create([
            Candidate(item=item, system=system, text=base_texts.get(system, PLACEHOLDER), is_reference=r.is_reference,
                      is_spam=r.is_spam_candidate, position=n) for n, (system, r) in enumerate(systems.items())])
    Study.objects.filter(pk=study.pk).update(n_documents=n_docs + len(spam_rows), n_spam_items=len(spam_rows),
                                             n_open_items=0)


def _store_judgments(study: Study, judgments: list[_Judgment], items: dict[str, Item],
                     candidates: dict[tuple[int, str], Candidate]) -> None:
    annotators: dict[str, Annotator] = {}
    taken = set(Annotator.objects.filter(code__in={j.rows[0].annotator for j in judgments})
                .values_list("code", flat=True))
    sequence = 0
    for j in judgments:
        code = j.rows[0].annotator
        if code not in annotators:
            sequence += 1
            a = Annotator(study=study, external_id=code, sequence=sequence, is_pilot=j.rows[0].pilot,
                          excluded=j.rows[0].excluded,
                          exclusion_reason="excluded in the imported file" if j.rows[0].excluded else "")
            if code not in taken and len(code) <= 16:
                a.code = code
            a.save()
            annotators[code] = a
    assignments: dict[tuple[str, str], Assignment] = {}
    next_seq: dict[str, int] = {}
    ordered = sorted(judgments, key=lambda j: (j.rows[0].started_at, j.rows[0].line))
    for j in ordered:
        first = j.rows[0]
        key = (first.annotator, first.item)
        if key not in assignments:
            item = items[first.item]
            next_seq[first.annotator] = next_seq.get(first.annotator, 0) + 1
            order = [candidates[(item.pk, r.system)].pk for r in sorted(j.rows, key=lambda r: r.screen_position)]
            assignments[key] = Assignment.objects.create(
                annotator=annotators[first.annotator], item=item, sequence=next_seq[first.annotator],
                candidate_order=order, status=AssignmentStatus.DONE, opened_at=first.started_at,
                completed_at=first.submitted_at)
    judgment_objs = []
    for j in sorted(judgments, key=lambda j: (j.rows[0].annotator, j.rows[0].item, j.rows[0].revision)):
        first = j.rows[0]
        assignment = assignments[(first.annotator, first.item)]
        answer = study.spec.import_answer(j.rows, candidates, assignment.item)
        judgment_objs.append(Judgment(
            assignment=assignment, revision=first.revision, is_current=first.is_current, answer=answer,
            payload_digest=hashlib.sha256(json.dumps(answer, sort_keys=True).encode()).hexdigest(),
            started_at=first.started_at, duration_ms=first.duration_ms, client_duration_ms=first.client_duration_ms))
    created = Judgment.objects.bulk_create(judgment_objs, batch_size=2000)
    # submitted_at is auto_now_add: set the file's times afterwards.
    by_key = {(o.assignment_id, o.revision): o for o in created}
    for j in judgments:
        first = j.rows[0]
        obj = by_key.get((assignments[(first.annotator, first.item)].pk, first.revision))
        if obj is not None:
            obj.submitted_at = first.submitted_at
    if all(o.pk is not None for o in created):
        Judgment.objects.bulk_update(created, ["submitted_at"], batch_size=2000)
    else:  # backends that do not return pks from bulk_create
        for j in judgments:
            first = j.rows[0]
            Judgment.objects.filter(assignment=assignments[(first.annotator, first.item)],
                                    revision=first.revision).update(submitted_at=first.submitted_at)
    counts: dict[int, int] = {}
    for assignment in assignments.values():
        counts[assignment.item_id] = counts.get(assignment.item_id, 0) + 1
    for item_id, n in counts.items():
        Item.objects.filter(pk=item_id).update(n_assigned=n, is_open=False)
    Item.objects.filter(study=study).exclude(pk__in=counts).update(is_open=False)


def read_study_file(text: str) -> dict[str, Any]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise JudgmentImportError(["--study-file: not a JSON object"])
    return value

