"""``import_judge``: an LLM judge's answers to a study's items, checked as an annotator's answers are, and stored.

A judge answers in the study's answer shape: the protocol's answer body (``manage.py protocols --json``,
``answer_schema``) with each candidate named by its **system** instead of an opaque id. Two file formats:

* ``jsonl``: one object a line, ``{"item": "<item id of the study file>", <the answer's fields>}``, e.g.
  ``{"item": "ext-1", "ranks": {"reference": 1, "S2S": 2}}`` or ``{"item": "ext-1", "label": "correct"}``;
* ``csv``: a header ``item`` plus the answer's fields as columns, one row per item; a field whose schema is a
  string (``label``, ``choice``) is the cell's text, any other (``ranks``, ``labels``, ``annotations``) the cell's
  JSON text.

Every record goes through the protocol's answer JSON Schema, then the protocol's own ``validate_answer`` (the
rules an annotator's answer meets: every candidate ranked, known labels, spans inside the text, scores 0–100).
Each problem is named by line and field; one problem stores nothing. The answers are stored in the protocol's
stored form (``Judgment.answer``), so the report reads them as it reads an annotator's.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass
from typing import Any

import jsonschema
from django.db import transaction
from django.utils import timezone

from annotation.importing.base import MAX_ERRORS, unsafe_json
from config.safetext import printable, text_problem
from evaluators.models import JudgeAnswer, JudgeFileFormat, LLMJudge
from studies.models import Candidate, Item, Study

FORMATS = tuple(JudgeFileFormat.values)
#: A judge's name: what the report and the exports call it.
MAX_NAME = 100


class JudgeFileError(ValueError):
    """The judge's file cannot be imported; ``errors`` names every problem by line and field."""

    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


@dataclass
class JudgeImport:
    """What an import did: the judge stored, and the one it replaced (None for a new name)."""

    judge: LLMJudge
    replaced: dict[str, Any] | None


def format_of(file_name: str, fmt: str | None) -> str:
    """The file's format: ``fmt`` when given, else from the name's ending (.csv, .jsonl/.json)."""
    if fmt:
        if fmt not in FORMATS:
            raise JudgeFileError([f"--format: {fmt!r} is not one of {', '.join(FORMATS)}"])
        return fmt
    lower = file_name.lower()
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl"
    raise JudgeFileError([f"--format: cannot tell the format of {file_name!r} from its name; give --format csv|jsonl"])


def _records(content: str, fmt: str, schema: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """The file's records as ``(line, {"item": …, answer fields…})``; problems of the file's own syntax raise."""
    text = content.lstrip("\ufeff")
    errors: list[str] = []
    records: list[tuple[int, dict[str, Any]]] = []
    if fmt == "jsonl":
        for line, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except json.JSONDecodeError as exc:
                errors.append(f"line {line}: not valid JSON ({exc.msg})")
                continue
            if not isinstance(value, dict):
                errors.append(f"line {line}: not a JSON object")
                continue
            problems = unsafe_json(value, f"line {line}")
            if problems:
                errors.extend(problems)
                continue
            records.append((line, value))
    else:
        reader = csv.DictReader(io.StringIO(text))
        header = [h.strip() for h in (reader.fieldnames or [])]
        fields = schema.get("properties", {})
        unknown = [h for h in header if h != "item" and h not in fields]
        if "item" not in header or unknown:
            parts = ([] if "item" in header else ["missing column 'item'"]) + \
                    [f"unknown column {h!r}" for h in unknown]
            raise JudgeFileError([f"line 1: {'; '.join(parts)} (columns: item, "
                                  f"{', '.join(f for f in fields if not f.startswith('client_'))})"])
        for row in reader:
            line = reader.line_num
            record: dict[str, Any] = {}
            for key, cell in row.items():
                if key is None:
                    errors.append(f"line {line}: more cells than columns")
                    continue
                key, cell = key.strip(), (cell or "").strip()
                if not cell:
                    continue
                if key == "item" or _is_text(fields.get(key, {})):
                    record[key] = cell
                    continue
                try:
                    record[key] = json.loads(cell)
                except json.JSONDecodeError as exc:
                    errors.append(f"line {line}: {key}: not valid JSON ({exc.msg})")
                    continue
                errors.extend(unsafe_json(record[key], f"line {line}: {key}"))
            records.append((line, record))
    if errors:
        raise JudgeFileError(errors[:MAX_ERRORS])
    if not records:
        raise JudgeFileError(["no answers: the file has no records" + (" after its header" if fmt == "csv" else "")])
    return records


def _is_text(field_schema: dict[str, Any]) -> bool:
    """Whether a field's schema is a string (its CSV cell is text, not JSON)."""
    kind = field_schema.get("type")
    return kind == "string" or (isinstance(kind, list) and "string" in kind and "object" not in kind
                                and "array" not in kind)


def _schema_problems(validator: jsonschema.Draft202012Validator, body: dict[str, Any], line: int) -> list[str]:
    problems = []
    for error in sorted(validator.iter_errors(body), key=lambda e: [str(p) for p in e.absolute_path]):
        where = ".".join(str(p) for p in error.absolute_path) or "answer"
        problems.append(f"line {line}: {where}: {error.message}")
    return problems


def _answers(study: Study, records: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, Item, dict[str, Any]]]:
    """Every record checked as an annotator's answer: ``(line, item, stored answer)``; problems raise."""
    spec = study.spec
    validator = jsonschema.Draft202012Validator(spec.answer_schema)
    items = {item.external_id: item for item in Item.objects.filter(study=study)}
    candidates: dict[int, dict[str, Candidate]] = {}
    for candidate in Candidate.objects.filter(item__study=study).order_by("item_id", "position", "pk"):
        candidates.setdefault(candidate.item_id, {})[candidate.system] = candidate
    errors: list[str] = []
    seen: dict[str, int] = {}
    answers: list[tuple[int, Item, dict[str, Any]]] = []
    for line, record in records:
        if len(errors) >= MAX_ERRORS:
            break
        external = record.get("item")
        if not isinstance(external, str) or not external.strip():
            errors.append(f"line {line}: item: required, the item's id in the study file")
            continue
        item = items.get(external)
        if item is None:
            errors.append(f"line {line}: item: no item {printable(external)!r} in study {study.slug}")
            continue
        if external in seen:
            errors.append(f"line {line}: item: a second answer for item {external!r} (first on line {seen[external]})")
            continue
        seen[external] = line
        body = {k: v for k, v in record.items() if k != "item"}
        problems = _schema_problems(validator, body, line)
        if not any(k in body for k in spec.answer_fields):
            problems.append(f"line {line}: answer: none of the fields {', '.join(spec.answer_fields)} "
                            f"(a {study.protocol} answer)")
        if problems:
            errors.extend(problems)
            continue
        field_errors: dict[str, list[str]] = {}
        stored = spec.validate_answer(study, item_source=item.source, candidates=candidates.get(item.pk, {}),
                                      payload=body, errors=field_errors)
        if stored is None or field_errors:
            errors.extend(f"line {line}: {field}: {message}" for field, messages in field_errors.items()
                          for message in messages)
            continue
        answers.append((line, item, stored))
    if errors:
        raise JudgeFileError(errors[:MAX_ERRORS])
    return answers


def judge_import(*, study: Study, name: str, file_name: str, content: str, fmt: str | None = None,
                 description: str = "", imported_by: str = "") -> JudgeImport:
    """Check the judge's file whole, then store it in one transaction (a judge of that name is replaced).

    Raises :class:`JudgeFileError` naming every problem (by line and field); nothing is stored then.
    """
    name = name.strip() if isinstance(name, str) else ""
    problem = text_problem(name) if name else None
    if not name or problem or len(name) > MAX_NAME:
        raise JudgeFileError([f"--name: {problem or f'a non-empty name of at most {MAX_NAME} characters'}"])
    problem = text_problem(description)
    if problem:
        raise JudgeFileError([f"--description: {problem}"])
    fmt = format_of(file_name, fmt)
    if text_problem(content):
        bad = [f"line {k}: {text_problem(line)}" for k, line in enumerate(content.splitlines(), start=1)
               if text_problem(line)]
        raise JudgeFileError(bad[:MAX_ERRORS])
    answers = _answers(study, _records(content, fmt, study.spec.answer_schema))
    with transaction.atomic():
        previous = LLMJudge.objects.select_for_update().filter(study=study, name=name).first()
        replaced = None
        if previous is not None:
            replaced = {"file_name": previous.file_name, "n_answers": previous.n_answers,
                        "imported_at": previous.imported_at.isoformat(), "sha256": previous.sha256}
            previous.delete()
        judge = LLMJudge.objects.create(
            study=study, name=name, description=description, file_name=file_name, file_format=fmt,
            sha256=hashlib.sha256(content.encode("utf-8")).hexdigest(), n_answers=len(answers),
            imported_at=timezone.now(), imported_by=imported_by)
        JudgeAnswer.objects.bulk_create([JudgeAnswer(judge=judge, item=item, answer=answer, line=line)
                                         for line, item, answer in answers], batch_size=2000)
    return JudgeImport(judge=judge, replaced=replaced)
