"""Validating and storing a study file.

A study file is rejected whole: every problem is collected, named by item id and
field, and nothing is stored unless there are none.

The shape of settings, items and candidates (fields, types, lengths, required keys, a
protocol's number of candidates) is the JSON Schema's (schema.py, served to editors), its
errors worded by item id and field; this module keeps the rules across fields (duplicate
ids and systems, highlights inside their text, sentence lists, context languages) and the
study-level ones, and collects every error in one pass before anything is stored.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import Any, Iterable

from django.core.exceptions import ValidationError
from django.db import transaction

from config.safetext import json_problems
from formats.jsonlimits import JSONTooDeep, json_loads_limited
from studies.definition.allocation import SCORE_RANGE, allocation_errors, is_adaptive, normalise_allocation, score_range
from studies.definition.languages import interface_language_error, language_tag_error
from studies.definition.ordering import document_indexes, document_order_key
from protocols import registry
from protocols.registry import protocol_named
from studies.models import Candidate, Item, Status, Study
from studies.definition.sentences import check_alignment, check_sentences
from studies.controls.spam import spam_items_create
from studies.importing.schema import (  # the field lists and limits the schema states; importers name them here
    CANDIDATE_FIELDS, EXTERNAL_ID_MAX_LENGTH, ITEM_FIELDS, REDUNDANCY_MAX, REDUNDANCY_MIN, SETTINGS_FIELDS, SPAM_SUFFIX,
    item_label, item_problems, settings_problems,
)

#: Per-item languages (BCP 47), for studies that mix directions; blank falls back to the study's settings.
ITEM_LANGUAGE_FIELDS = ("source_language", "target_language")
#: An imported study starts as a draft (preview only) unless the file or the importer says otherwise.
DEFAULT_IMPORT_STATUS = Status.DRAFT
#: At most this many NUL / surrogate / NaN problems are listed (a file full of them says so in 50 lines).
MAX_LISTED_ERRORS = 50


class StudyFileError(Exception):
    """The study file has problems; ``errors`` lists them, each naming item and field."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass
class ParsedStudy:
    fields: dict[str, Any]
    items: list[dict[str, Any]] = field(default_factory=list)


def _check_model_field(model: Any, name: str, value: Any, where: str, errors: list[str]) -> None:
    """The column's own limits (length, integer range) as a study-file error instead of a database error."""
    if value is None:
        return
    try:
        model._meta.get_field(name).run_validators(value)
    except ValidationError as exc:
        errors.append(f"{where}: {' '.join(exc.messages)}")


def parse_study(data: Any, items: Iterable[Any] | None = None) -> ParsedStudy:
    """Validate a decoded study file (and optional separate items); raise StudyFileError listing every problem."""
    errors: list[str] = []
    if not isinstance(data, dict):
        raise StudyFileError(["study file: must be a JSON object"])
    items = list(items) if items is not None else None
    unsafe = unsafe_values(data, items)
    if unsafe:  # before any check reads the values, or a query carries them to the database
        raise StudyFileError(unsafe)
    for key in ("slug", "title", "protocol"):
        if not isinstance(data.get(key), str) or not data.get(key, "").strip():
            errors.append(f"{key}: required, a non-empty string")
    # "$schema" names the schema an editor checks the file with (docs/study-file.md); the importer ignores it.
    unknown = set(data) - {"slug", "title", "protocol", "status", "settings", "items", "description", "tutorial",
                           "$schema"}
    if unknown:
        errors.append(f"study file: unknown field(s) {sorted(unknown)}")
    slug = data.get("slug")
    if isinstance(slug, str) and slug:
        from studies.lifecycle.invariants import slug_error  # the one slug rule and message of every path (admin, copy)
        problem = slug_error(slug)
        if problem:
            errors.append(f"slug: {problem}")
        elif Study.objects.filter(slug=slug).exists():
            errors.append(_existing_slug_error(slug))
    protocol = data.get("protocol")
    if isinstance(protocol, str) and protocol not in registry.names():
        errors.append(f"protocol: {protocol!r} is not one of {', '.join(registry.names())}")
    spec = protocol_named(protocol) if isinstance(protocol, str) and protocol in registry.names() else None
    own_settings = set(spec.settings_schema.get("properties", {})) if spec else set()
    status = data.get("status", DEFAULT_IMPORT_STATUS)
    if status not in Status.values:
        errors.append(f"status: {status!r} is not one of {', '.join(Status.values)}")
    settings = data.get("settings", {})
    fields: dict[str, Any] = {"slug": slug, "title": data.get("title"), "protocol": protocol,
                              "description": data.get("description", ""), "status": status}
    if not isinstance(fields["description"], str):
        errors.append("description: must be a string")
    if not isinstance(settings, dict):
        errors.append("settings: must be an object")
        settings = {}
    # The protocol plug-in's own settings (its settings schema) become the study's protocol_settings.
    protocol_settings = {key: value for key, value in settings.items() if key in own_settings}
    builtin = {key: value for key, value in settings.items() if key not in own_settings}
    # Types, enums and ranges: the schema's (studies/importing/schema.py); what it cannot say follows.
    problems = settings_problems(builtin)
    for key, value in builtin.items():
        if key in problems:
            problem = problems[key]
            if own_settings and problem.startswith("unknown setting"):
                problem = f"unknown setting (known: {', '.join(sorted(set(SETTINGS_FIELDS) | own_settings))})"
            errors.append(f"settings.{key}: {problem}")
        else:
            fields[key] = value
    if spec is not None:
        errors.extend(f"settings.{problem}" if ":" in problem.split(" ")[0] else f"settings: {problem}"
                      for problem in spec.settings_errors(protocol_settings))
        if protocol_settings:
            fields["protocol_settings"] = protocol_settings
    if "labels" in fields and len(set(fields["labels"])) != len(fields["labels"]):
        errors.append("settings.labels: labels must be distinct")
    if spec is not None and "labels" in spec.study_errors(Study(protocol=spec.name, labels=fields.get("labels") or [])):
        errors.append(f"settings.labels: a {spec.name} study needs at least one label")
    from studies.definition import taxonomy as tx
    if "taxonomy" in fields:
        errors.extend(tx.taxonomy_errors(fields["taxonomy"]))
        # Whether the protocol's spans carry categories at all (its default taxonomy, none of the file's yet).
        if spec is None or not spec.taxonomy(Study(protocol=spec.name, protocol_settings=protocol_settings)):
            errors.append("settings.taxonomy: only an mqm study has error categories")
        elif not tx.taxonomy_errors(fields["taxonomy"]):
            fields["taxonomy"] = tx.normalise_taxonomy(fields["taxonomy"])
    if "severities" in fields:
        if spec is None or not spec.allowed_severities:
            errors.append("settings.severities: only span protocols (mqm, esa) have severities")
        else:
            errors.extend(tx.severities_errors(fields["severities"], spec.name))
    if "mqm_weights" in fields:
        errors.extend(tx.weights_errors(fields["mqm_weights"]))
    if "allocation" in fields:
        scale = None
        if spec is not None:
            as_study = Study(protocol=spec.name, protocol_settings=protocol_settings,
                             esa_spans=fields.get("esa_spans", True))
            scale = score_range(uses_score=spec.uses_score(as_study),
                                per_candidate_spans=spec.per_candidate_annotations and spec.uses_spans(as_study),
                                preference=spec.preference_observations)
        allocation_problems = allocation_errors(fields["allocation"], "settings.allocation", scale or SCORE_RANGE)
        errors.extend(allocation_problems)
        if not allocation_problems:
            fields["allocation"] = normalise_allocation(fields["allocation"])
            if is_adaptive(fields["allocation"]) and spec is not None and scale is None:
                errors.append(f"settings.allocation: adaptive allocation needs a score per candidate "
                              f"(esa, pairwise, mqm) or an order of the candidates (ranking, choice); a {spec.name} study has none")
    for key in ("source_language", "target_language", "instructions_language"):
        problem = language_tag_error(fields.get(key, ""))
        if problem:
            errors.append(f"settings.{key}: {problem}")
    problem = interface_language_error(fields.get("interface_language", ""))
    if problem:
        errors.append(f"settings.interface_language: {problem}")
    for key, value in fields.items():
        if key not in ("slug", "protocol", "status", "options", "labels", "taxonomy", "severities", "mqm_weights") \
                and isinstance(value, (str, int)):
            _check_model_field(Study, key, value, key if key in data else f"settings.{key}", errors)

    raw_items = list(items) if items is not None else data.get("items")
    if raw_items is None or not isinstance(raw_items, list) or not raw_items:
        errors.append("items: required, a non-empty list (or pass --items FILE.jsonl)")
        raw_items = []
    seen: set[str] = set()
    parsed_items = []
    for index, raw in enumerate(raw_items):
        parsed = _parse_item(raw, index, spec, seen, errors)
        if parsed is not None:
            parsed_items.append(parsed)
    if "tutorial" in data and spec is not None:
        from studies.importing.tutorial import settings_study, tutorial_errors_and_items
        tutorial_errors, fields["tutorial"] = tutorial_errors_and_items(data["tutorial"], settings_study(spec.name, fields))
        errors.extend(tutorial_errors)
    if errors:
        raise StudyFileError(errors)
    return ParsedStudy(fields=fields, items=parsed_items)


def unsafe_values(data: Any, items: list[Any] | None = None) -> list[str]:
    """Each NUL character, lone surrogate, NaN or Infinity in a decoded study file (and items), named by field.

    None is ever part of a real study: PostgreSQL refuses NUL and lone surrogates with a traceback and
    stores NaN in a float column, SQLite stores them all, and a page showing them fails (config/safetext.py).
    """
    found = [f"{field}: {problem}" for field, problem, _ in json_problems(data)]
    if items is not None:
        found += [f"{field}: {problem}" for field, problem, _ in json_problems(items, "items")]
    return found[:MAX_LISTED_ERRORS]


def _existing_slug_error(slug: str) -> str:
    """An import never changes a stored study; say why, and the way out when it already has judgments."""
    from studies.lifecycle.invariants import COPY_HINT, study_has_judgments

    study = Study.objects.get(slug=slug)
    if study_has_judgments(study=study):
        return (f"slug: study {slug!r} already exists and has judgments: an import never replaces it, and its "
                f"protocol, options, labels, ties, unit and candidates can no longer change. {COPY_HINT} "
                "Or import this file under a new slug.")
    return f"slug: a study {slug!r} already exists (an import never replaces a study: choose another slug)"


def _parse_item(raw: Any, index: int, spec: Any, seen: set[str], errors: list[str]) -> dict | None:
    """One item: its shape is the schema's (``item_problems``); the rules across fields and values follow."""
    problems, bad = item_problems(raw, index, spec)
    errors.extend(problems)
    if not isinstance(raw, dict):
        return None
    where = item_label(raw, index)
    ext = str(raw["id"]) if "id" not in bad else f"#{index}"
    if "id" not in bad:
        if ext in seen:
            errors.append(f"{where}.id: duplicate id")
        seen.add(ext)
    for key in ("source_context", "target_context"):
        if f"{key}_languages" not in bad:
            _check_context_languages(raw, key, where, errors)
    languages: dict[str, str] = {}
    for key in ITEM_LANGUAGE_FIELDS:
        value = raw.get(key)
        if value is None or key in bad:
            continue
        problem = language_tag_error(value.strip())
        if problem:
            errors.append(f"{where}.{key}: {problem}")
        else:
            languages[key] = value.strip()
    source_sentences = None
    if "source_sentences" in raw and "source_sentences" not in bad:
        source_sentences = check_sentences(raw["source_sentences"], raw.get("source"), f"{where}.source_sentences",
                                           "source", errors)
    given = raw.get("candidates")
    cands: list[Any] = given if isinstance(given, list) else []
    systems: set[str] = set()
    parsed_cands = []
    cand_sentences: list[tuple[int, list[str] | None]] = []
    for k, cand in enumerate(cands):
        cw = f"{where}.candidates[{k}]"
        if f"candidates[{k}]" in bad:
            continue
        system, text = cand.get("system"), cand.get("text")
        if f"candidates[{k}].system" not in bad:
            if system in systems:
                errors.append(f"{cw}.system: duplicate system {system!r} in this item")
            systems.add(system)
        sentences = None
        if "sentences" in cand and f"candidates[{k}].sentences" not in bad:
            sentences = check_sentences(cand["sentences"], text, f"{cw}.sentences", "text", errors)
            cand_sentences.append((k, sentences))
            if sentences is not None and not text:
                text = "\n".join(sentences)  # text may be omitted when the sentences are given
        text = text if isinstance(text, str) else ""
        highlights = cand.get("highlights", [])
        if not any(field.startswith(f"candidates[{k}].highlights") for field in bad):
            for n, (start, end) in enumerate(highlights):
                if not 0 <= start < end <= len(text):
                    errors.append(f"{cw}.highlights[{n}]: span {[start, end]} is outside the text (length "
                                  f"{len(text)}) or empty")
        parsed_cands.append({"system": system, "text": text, "sentences": sentences or [],
                             "is_reference": cand.get("is_reference") is True, "highlights": highlights,
                             "position": k})
    check_alignment(source_sentences, cand_sentences, where, errors)
    source = raw.get("source") or ("\n".join(source_sentences) if source_sentences else "")
    return {
        "external_id": ext, "document_id": raw.get("document_id") or "", "position": raw.get("position", 0),
        "phenomenon": raw.get("phenomenon") or "", "source_context": raw.get("source_context", []),
        "source": source, "source_sentences": source_sentences or [],
        "target_context": raw.get("target_context", []),
        "context_languages": {key: [tag.strip() for tag in raw[f"{key}_languages"]]
                              for key in ("source_context", "target_context") if raw.get(f"{key}_languages")},
        "metadata": raw.get("metadata", {}), "candidates": parsed_cands,
        "source_language": languages.get("source_language", ""),
        "target_language": languages.get("target_language", ""),
    }


def read_items_file(name: str, content: str) -> list[Any]:
    """Items from JSON Lines (one item a line) or CSV (one candidate a row).

    CSV columns: id, document_id, position, phenomenon, source, source_context,
    target_context, source_sentences and sentences (sentences separated by ' ||| '),
    system, text, is_reference, highlights (JSON list), source_language, target_language.
    Rows with the same id form one item.
    """
    if name.lower().endswith(".csv"):
        return _read_items_csv(content)
    items, errors = [], []
    for lineno, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(json_loads_limited(line))
        except JSONTooDeep as exc:
            errors.append(f"line {lineno}, column {exc.column}: {exc.reason}")
        except json.JSONDecodeError as exc:
            errors.append(f"line {lineno}: not valid JSON ({exc.msg})")
    if errors:
        raise StudyFileError(errors)
    return items


def _read_items_csv(content: str) -> list[Any]:
    reader = csv.DictReader(io.StringIO(content))
    required = {"id", "system", "text"}
    missing = required - set(reader.fieldnames or [])
    if missing:
        raise StudyFileError([f"CSV header: missing column(s) {sorted(missing)}"])
    items: dict[str, dict] = {}
    errors: list[str] = []
    width = len(reader.fieldnames or [])
    for lineno, row in enumerate(reader, start=2):
        if None in row or None in row.values():  # DictReader's marks of a row longer or shorter than the header
            errors.append(f"line {lineno}: {width} columns expected, like the header")
            continue
        ext = row["id"].strip()
        item = items.setdefault(ext, {"id": ext, "candidates": []})
        for key in ("document_id", "phenomenon", "source", *ITEM_LANGUAGE_FIELDS):
            if row.get(key):
                item[key] = row[key]
        if row.get("position"):
            try:
                item["position"] = int(row["position"])
            except ValueError:
                errors.append(f"line {lineno}: position: must be an integer")
        for key in ("source_context", "target_context", "source_sentences"):
            if row.get(key):
                item[key] = [s.strip() for s in row[key].split("|||")]
        cand: dict[str, Any] = {"system": row["system"], "text": row["text"]}
        if row.get("sentences"):
            cand["sentences"] = [s.strip() for s in row["sentences"].split("|||")]
        flag = (row.get("is_reference") or "").strip().lower()
        if flag not in {"", "0", "1", "true", "false", "yes", "no"}:
            errors.append(f"line {lineno}: is_reference: must be true or false")
        cand["is_reference"] = flag in {"1", "true", "yes"}
        if row.get("highlights"):
            try:
                cand["highlights"] = json.loads(row["highlights"])
            except json.JSONDecodeError:
                errors.append(f"line {lineno}: highlights: must be a JSON list of [start, end] pairs")
        item["candidates"].append(cand)
    if errors:
        raise StudyFileError(errors)
    return list(items.values())


def unsaved_study(parsed: ParsedStudy) -> Study:
    """The Study of validated fields, not saved; an absent setting takes its default (the nullable ones stay None)."""
    return Study(**{k: v for k, v in parsed.fields.items()
                    if v is not None or k in ("items_per_annotator", "auto_exclude_share")})


@transaction.atomic
def study_create(*, parsed: ParsedStudy) -> Study:
    """Store a validated study with its items and candidates, then its spam items."""
    study = unsaved_study(parsed)
    try:
        study.full_clean()
    except ValidationError as exc:  # parse_study checks these first; never a traceback for a study file
        raise StudyFileError([f"{name}: {' '.join(messages)}" for name, messages in exc.message_dict.items()]) from None
    study.save()
    items_create(study=study, items=parsed.items)
    spam_items_create(study=study)
    return study


def _check_context_languages(raw: dict[str, Any], key: str, where: str, errors: list[str]) -> None:
    """``<key>_languages``: one BCP 47 tag ("" = the side's language) per sentence of ``key``."""
    field_name = f"{key}_languages"
    tags = raw.get(field_name)
    if tags is None:
        return
    given = raw.get(key)
    context: list[Any] = given if isinstance(given, list) else []
    if len(tags) != len(context):  # the tags' type is the schema's (item_problems)
        errors.append(f"{where}.{field_name}: {len(tags)} tag(s) for {len(context)} sentence(s) of {key}")
    else:
        for n, tag in enumerate(tags):
            problem = language_tag_error(tag.strip()) if tag.strip() else ""
            if problem:
                errors.append(f"{where}.{field_name}[{n}]: {problem}")


def items_create(*, study: Study, items: list[dict[str, Any]]) -> list[Item]:
    objs = []
    docs = [data["document_id"] or f"item:{data['external_id']}" for data in items]
    index = document_indexes(seed=study.seed, documents=docs)
    for data, doc in zip(items, docs):
        objs.append(Item(study=study, external_id=data["external_id"], document_id=data["document_id"],
                         position=data["position"], phenomenon=data["phenomenon"],
                         source_context=data["source_context"], source=data["source"],
                         source_sentences=data.get("source_sentences", []),
                         target_context=data["target_context"], metadata=data["metadata"],
                         context_languages=data.get("context_languages", {}),
                         source_language=data.get("source_language", ""),
                         target_language=data.get("target_language", ""),
                         order_key=document_order_key(study.seed, doc), doc_index=index[doc]))
    study.n_documents, study.n_open_items, study.n_real_items = len(index), len(objs), len(objs)
    Study.objects.filter(pk=study.pk).update(n_documents=study.n_documents, n_open_items=study.n_open_items,
                                             n_real_items=study.n_real_items)
    created = Item.objects.bulk_create(objs, batch_size=2000)
    if any(o.pk is None for o in created):  # backends that do not return pks from bulk_create
        created = list(Item.objects.filter(study=study, is_spam=False).order_by("pk"))
    by_ext = {o.external_id: o for o in created}
    cands = [Candidate(item=by_ext[data["external_id"]], **c) for data in items for c in data["candidates"]]
    Candidate.objects.bulk_create(cands, batch_size=5000)
    return created


def study_import(*, data: Any, items: Iterable[Any] | None = None, status: str | None = None) -> Study:
    """Validate then store; raises StudyFileError (nothing stored) on any problem.

    ``status`` (e.g. the command's ``--open``) overrides the file's ``status``
    (whose default is draft).
    """
    parsed = parse_study(data, items)
    if status is not None:
        parsed.fields["status"] = status
    return study_create(parsed=parsed)
