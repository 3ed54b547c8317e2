"""The JSON Schema (draft 2020-12) of a study file, served at ``/api/v1/study-file.schema.json``.

It states what a study file's shape can say on its own: fields, types, enums, ranges and
lengths, so an editor can check a file while it is written (docs/study-file.md,
"Checking a file in an editor"). Rules that need several fields or the database (a
judgment study needs labels, distinct systems, an unused slug, sentence alignment) stay
in ``study_file.parse_study``, which a file must still pass.

The built-in settings are the typed fields of ``studies.models.Study``; a protocol's own
settings come from its spec's ``settings_schema`` and are allowed only in a study of that
protocol (``if protocol == name``). The protocol names are the registry's.
"""
from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

from django.db import models
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

from protocols import registry
from studies.definition.languages import interface_languages
from studies.importing.tutorial import TUTORIAL_FIELDS, TUTORIAL_MAX_ITEMS
from studies.lifecycle.invariants import RESERVED_SLUGS, SLUG_PATTERN
from studies.models import CHOICE_OPTIONS, Candidate, Item, Status, Study, Unit

#: The one range of ``redundancy`` (the study file, the import page, the admin form).
REDUNDANCY_MIN, REDUNDANCY_MAX = 1, 100

SETTINGS_FIELDS: dict[str, type | tuple[type, ...]] = {
    "show_source": bool, "allow_ties": bool, "options": list, "labels": list, "multi_label": bool,
    "redundancy": int, "spam_rate": (int, float), "probe_rate": (int, float), "unit": str, "instructions": str, "question": str,
    "items_per_annotator": (int, type(None)), "reservation_minutes": int, "completion_code": str, "min_seconds": (int, float),
    "auto_exclude_share": (int, float, type(None)), "auto_exclude_min_checks": int, "contact": str,
    "screened_out_code": str, "seed": int, "normalise_typography": bool,
    "failed_code": str, "pass_max_failed_share": (int, float, type(None)),
    "public_title": str, "source_language": str, "target_language": str, "interface_language": str,
    "instructions_language": str,
    "taxonomy": list, "severities": list, "allow_overlap": bool, "esa_spans": bool, "mqm_weights": dict,
    "snap_to_words": (bool, type(None)), "allocation": (str, dict),
}
ITEM_FIELDS = {"id", "document_id", "position", "phenomenon", "source_context", "source", "source_sentences",
               "source_context_languages", "target_context_languages",
               "target_context", "candidates", "metadata", "source_language", "target_language"}
CANDIDATE_FIELDS = {"system", "text", "sentences", "is_reference", "highlights"}
SPAM_SUFFIX = "~spam"  # spam copies are stored as "<id>~spam" (studies/controls/spam.py)
_ext_length = Item._meta.get_field("external_id").max_length
assert _ext_length is not None
#: Room is left for the spam suffix (and the "spam:" document id of a spam copy).
EXTERNAL_ID_MAX_LENGTH: int = _ext_length - len(SPAM_SUFFIX)

#: Where the schema is served; also its ``$id``.
SCHEMA_PATH = "/api/v1/study-file.schema.json"

_JSON_TYPES: dict[type, str] = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
                                dict: "object", type(None): "null"}
#: Ranges that are the study file's own rules, beyond the columns' (docs/study-file.md, "settings").
_RANGES: dict[str, tuple[float, float]] = {
    "redundancy": (REDUNDANCY_MIN, REDUNDANCY_MAX), "spam_rate": (0, 0.5), "probe_rate": (0, 0.5), "auto_exclude_share": (0, 1),
    "pass_max_failed_share": (0, 1), "auto_exclude_min_checks": (1, 1000),
}
_NON_BLANK = "\\S"


def _json_type(t: type | tuple[type, ...]) -> str | list[str]:
    types = t if isinstance(t, tuple) else (t,)
    names = [_JSON_TYPES[x] for x in types]
    if "integer" in names and "number" in names:
        names.remove("integer")  # every JSON integer is a number
    return names[0] if len(names) == 1 else names


def _column_limits(model: type[models.Model], name: str) -> dict[str, Any]:
    """The length of a text column, or the range of a positive/64-bit integer column."""
    f = model._meta.get_field(name)
    if isinstance(f, models.CharField) and f.max_length:
        return {"maxLength": f.max_length}
    if isinstance(f, (models.PositiveIntegerField, models.PositiveSmallIntegerField)):
        return {"minimum": 0, "maximum": 32767 if isinstance(f, models.PositiveSmallIntegerField) else 2**31 - 1}
    if isinstance(f, models.BigIntegerField):
        return {"minimum": -2**63, "maximum": 2**63 - 1}
    return {}


def _setting_schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": _json_type(SETTINGS_FIELDS[name])}
    try:
        schema.update(_column_limits(Study, name))
    except Exception:  # a setting stored elsewhere than in its own column (taxonomy, severities…)
        pass
    if name in _RANGES:
        schema["minimum"], schema["maximum"] = _RANGES[name]
    if name == "options":
        schema["items"] = {"enum": list(CHOICE_OPTIONS)}
    elif name == "labels":
        schema["items"] = {"type": "string"}
    elif name == "severities":
        schema["items"] = {"enum": ["neutral", "minor", "major", "critical"]}
    elif name == "taxonomy":
        schema["items"] = {"anyOf": [{"type": "string"}, {
            "type": "object", "required": ["name"],
            "properties": {"name": {"type": "string"}, "description": {"type": "string"},
                           "examples": {"type": "array", "items": {"type": "string"}}}}]}
    elif name == "mqm_weights":
        schema["additionalProperties"] = {"type": "number", "minimum": 0, "maximum": 1000}
    elif name == "unit":
        schema["enum"] = list(Unit.values)
    elif name == "interface_language":
        schema["enum"] = ["", *interface_languages()]
    return schema


@functools.cache
def _strict_validator() -> Any:
    """The importer's validator class: types as strict as Python's (``3.0`` is a number, not an integer; JSON
    Schema counts it as both).  Built on first use: importing jsonschema at start-up cost every command (the
    admin imports this module) ~0.05 s."""
    import jsonschema

    return jsonschema.validators.extend(
        jsonschema.Draft202012Validator,
        type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
            "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)))


def builtin_settings_schema() -> dict[str, Any]:
    """``settings`` without a protocol's own: what ``parse_study`` checks a file's settings against."""
    return {"type": "object", "additionalProperties": False,
            "properties": {name: _setting_schema(name) for name in SETTINGS_FIELDS}}


def _type_name(t: type | tuple[type, ...]) -> str:
    types = t if isinstance(t, tuple) else (t,)
    names = {bool: "true/false", int: "an integer", float: "a number", str: "a string", list: "a list",
             type(None): "null"}
    return " or ".join(names.get(x, x.__name__) for x in types)


def settings_problems(settings: dict[str, Any]) -> dict[str, str]:
    """The schema's problems of a file's ``settings``, by setting, in the importer's words.

    A column's length or range is left out: the importer reports it in the database's own words
    (``Ensure this value has at most 64 characters``) when it checks the column.
    """
    validator = _strict_validator()(builtin_settings_schema())
    problems: dict[str, str] = {}
    for error in validator.iter_errors(settings):
        if error.validator == "additionalProperties":
            known = ", ".join(sorted(SETTINGS_FIELDS))
            for key in sorted(set(settings) - set(SETTINGS_FIELDS)):
                problems[key] = f"unknown setting (known: {known})"
            continue
        key = str(error.absolute_path[0])
        value = settings[key]
        if error.validator == "type" and len(error.absolute_path) == 1:
            problems[key] = f"must be {_type_name(SETTINGS_FIELDS[key])}"
        elif error.validator in ("minimum", "maximum") and key in _RANGES:
            low, high = _RANGES[key]
            problems[key] = f"must be between {low} and {high}"
        elif error.validator == "enum" and key == "options":
            bad = [o for o in value if o not in CHOICE_OPTIONS]
            problems[key] = f"unknown option(s) {bad}; allowed: {', '.join(CHOICE_OPTIONS)}"
        elif error.validator == "enum" and key == "unit":
            problems[key] = f"{value!r} is not one of {', '.join(Unit.values)}"
        elif error.validator == "type" and key == "labels":
            problems[key] = "must be a list of strings"
    return problems


def _string_list() -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}}


def candidate_schema() -> dict[str, Any]:
    return {
        "type": "object", "additionalProperties": False, "required": ["system"],
        # The text may be left out (or blank) when the sentences are given: it is then the sentences joined.
        "if": {"not": {"required": ["sentences"]}},
        "then": {"required": ["text"], "properties": {"text": {"pattern": _NON_BLANK}}},
        "properties": {
            "system": {"type": "string", "pattern": _NON_BLANK, **_column_limits(Candidate, "system")},
            "text": {"type": "string"},
            "sentences": _sentence_list(),
            "is_reference": {"type": "boolean"},
            "highlights": {"type": "array", "items": {
                "type": "array", "prefixItems": [{"type": "integer", "minimum": 0}, {"type": "integer", "minimum": 1}],
                "minItems": 2, "maxItems": 2}},
        },
    }


def _sentence_list() -> dict[str, Any]:
    return {"type": "array", "minItems": 1, "items": {"type": "string"}}


def item_schema() -> dict[str, Any]:
    properties: dict[str, Any] = {
        "id": {"anyOf": [{"type": "integer"}, {"type": "string", "pattern": _NON_BLANK,
                                               "maxLength": EXTERNAL_ID_MAX_LENGTH,
                                               "not": {"pattern": f"{SPAM_SUFFIX}$"}}]},
        "document_id": {"type": ["string", "null"], **_column_limits(Item, "document_id")},
        "position": {"type": "integer", "minimum": -2**31, "maximum": 2**31 - 1},
        "phenomenon": {"type": ["string", "null"], **_column_limits(Item, "phenomenon")},
        "source": {"type": ["string", "null"]},
        "source_context": _string_list(), "target_context": _string_list(), "source_sentences": _sentence_list(),
        "source_context_languages": _string_list(), "target_context_languages": _string_list(),
        "metadata": {"type": "object"},
        "source_language": {"type": ["string", "null"], **_column_limits(Item, "source_language")},
        "target_language": {"type": ["string", "null"], **_column_limits(Item, "target_language")},
        "candidates": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/candidate"}},
    }
    assert set(properties) == ITEM_FIELDS, "the schema and ITEM_FIELDS name the same item fields"
    return {"type": "object", "additionalProperties": False, "required": ["id", "candidates"], "properties": properties}


def protocol_item_schema(spec: Any) -> dict[str, Any]:
    """What an item of one protocol adds to :func:`item_schema`: its number of candidates (``candidates_per_item``)."""
    low, high = spec.candidates_per_item
    counts: dict[str, Any] = {"minItems": max(1, low)}
    if high is not None:
        counts["maxItems"] = high
    return {"properties": {"candidates": counts}}


def tutorial_item_schema() -> dict[str, Any]:
    """The shape of a practice item; its ``gold`` answer is checked by the protocol's rules (tutorial.py)."""
    return {"type": "object", "additionalProperties": False, "required": ["id", "candidates", "gold"],
            "properties": {
                "id": {"type": ["string", "integer"]}, "source": {"type": "string"},
                "source_context": _string_list(), "target_context": _string_list(),
                "candidates": {"type": "array", "minItems": 1, "items": {
                    "type": "object", "additionalProperties": False, "required": ["system", "text"],
                    "properties": {"system": {"type": "string"}, "text": {"type": "string"},
                                   "highlights": candidate_schema()["properties"]["highlights"]}}},
                "gold": {"type": "object"}, "explanation": {"type": "string"},
            }}


#: The importer's words for a field whose value has the wrong type or shape (``item_problems``), by field.
_ITEM_WORDS: dict[str, str] = {
    "id": "required, a non-empty string",
    "source": "must be a string", "phenomenon": "must be a string", "document_id": "must be a string",
    "source_context": "must be a list of strings", "target_context": "must be a list of strings",
    "position": "must be an integer",
    "metadata": "must be an object",
    "source_language": "must be a string (a BCP 47 tag such as en, fr, zh-Hans, ar)",
    "target_language": "must be a string (a BCP 47 tag such as en, fr, zh-Hans, ar)",
    "source_context_languages": "must be a list of language tags (BCP 47, \"\" for the side's language)",
    "target_context_languages": "must be a list of language tags (BCP 47, \"\" for the side's language)",
    "source_sentences": "must be a non-empty list of strings",
    "candidates": "required, a non-empty list",
    "system": "required, a non-empty string",
    "text": "required, a non-empty string (or give sentences)",
    "sentences": "must be a non-empty list of strings",
    "is_reference": "must be true or false",
    "highlights": "must be a list of [start, end] pairs",
}


def item_label(raw: Any, index: int) -> str:
    """How messages name an item: by its id when it has a usable one, else by its place in the file."""
    ext = raw.get("id") if isinstance(raw, dict) else None
    if isinstance(ext, int) and not isinstance(ext, bool):
        return f"item {ext}"
    return f"item {ext}" if isinstance(ext, str) and ext.strip() else f"items[{index}]"


def _item_validator(spec: Any) -> Any:
    return _cached_item_validator(*(spec.candidates_per_item if spec else (1, None)))


@functools.lru_cache(maxsize=16)
def _cached_item_validator(low: int, high: int | None) -> Any:
    # Built once per number of candidates: building it for every item made a 5000-item file 7 times slower.
    # One flat schema (the candidate's inlined, the counts merged): resolving a $ref and an allOf per item cost more.
    schema = item_schema()
    schema["properties"]["candidates"] = {
        **schema["properties"]["candidates"], "items": candidate_schema(),
        **protocol_item_schema(SimpleNamespace(candidates_per_item=(low, high)))["properties"]["candidates"]}
    return _strict_validator()(schema)


def _item_message(error: Any, raw: dict[str, Any], spec: Any) -> tuple[str, str] | None:
    """(field path, message) of one schema error of an item, in the importer's words (None: said elsewhere)."""
    path = list(error.absolute_path)
    if error.validator == "required":  # reported at the object that misses the key: name the key
        missing = next(k for k in error.validator_value if k not in error.instance)
        path.append(missing)
    if error.validator == "additionalProperties":
        known = CANDIDATE_FIELDS if path else ITEM_FIELDS
        return _dotted(path), f"unknown field(s) {sorted(set(error.instance) - known)}"
    if path[:1] == ["candidates"] and len(path) >= 2:
        field, rest = (str(path[2]) if len(path) > 2 else ""), path[3:]
        where = f"candidates[{path[1]}]" + (f".{field}" if field else "")
        if not field:
            return where, "must be an object"
        if field == "highlights" and rest:
            if error.validator == "minimum":
                return None  # a pair outside the text: the importer says so with the text's length
            return f"{where}[{rest[0]}]", "must be a pair of integers [start, end]"
        if error.validator == "maxLength" and field == "system":
            return where, _too_long(error)
        return where, _ITEM_WORDS.get(field, error.message)
    field = str(path[0]) if path else ""
    if not field:
        return "", "must be an object"
    if field == "id" and isinstance(error.instance, str) and error.instance.strip():
        value = error.instance
        if len(value) > EXTERNAL_ID_MAX_LENGTH:
            return field, f"at most {EXTERNAL_ID_MAX_LENGTH} characters ({len(value)} given)"
        if value.endswith(SPAM_SUFFIX):
            return field, f"ids ending in {SPAM_SUFFIX!r} are reserved for generated spam items"
    if field == "candidates" and error.validator in ("minItems", "maxItems") and error.instance and spec:
        low, high = spec.candidates_per_item
        return field, (f"a {spec.name} item needs at least {low} candidates" if error.validator == "minItems"
                       else f"a {spec.name} item has at most {high} candidates")
    if error.validator in ("minimum", "maximum") and field == "position":
        return field, f"must be between {-2**31} and {2**31 - 1}"  # the column on every backend
    if error.validator == "maxLength":
        return field, _too_long(error)
    return field, _ITEM_WORDS.get(field, error.message)


def _too_long(error: Any) -> str:
    # Django's own words for a column's length, as the database checks would say it.
    return f"Ensure this value has at most {error.validator_value} characters (it has {len(error.instance)})."


def _dotted(path: list[Any]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def item_problems(raw: Any, index: int, spec: Any) -> tuple[list[str], set[str]]:
    """The item schema's problems of one item, each ``item ID.field: problem`` in the importer's words, and the
    fields they name (``candidates[0].text``…), so the checks across fields skip a value already refused.

    ``spec`` (the study's protocol, or None) adds its number of candidates (:func:`protocol_item_schema`).
    Several errors of one field (a list's bad entries) make one message.
    """
    where = item_label(raw, index)
    found: dict[str, str] = {}
    for error in _item_validator(spec).iter_errors(raw):
        for leaf in (error.context or [error]) if error.validator == "anyOf" else [error]:
            named = _item_message(leaf, raw if isinstance(raw, dict) else {}, spec)
            if named is not None:
                found.setdefault(named[0], named[1])
            break  # one message for the alternatives of an anyOf (the id's)
    messages = [f"{where}.{field}: {message}" if field else f"{where}: {message}" for field, message in found.items()]
    return messages, set(found)


def study_file_schema() -> dict[str, Any]:
    """The schema of a study file, for the protocols registered now."""
    builtin = {name: _setting_schema(name) for name in SETTINGS_FIELDS}
    specs = registry.registered()
    names = [spec.name for spec in specs]

    def settings_for(extra: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": False, "properties": {**builtin, **extra}}

    # One settings shape per protocol: the built-in settings plus that protocol's own.
    per_protocol = [{"if": {"required": ["protocol"], "properties": {"protocol": {"const": spec.name}}},
                     "then": {"properties": {"settings": settings_for((spec.settings_schema or {}).get("properties", {})),
                                             "items": {"items": protocol_item_schema(spec)}}}}
                    for spec in specs]
    per_protocol.append({"if": {"not": {"required": ["protocol"], "properties": {"protocol": {"enum": names}}}},
                         "then": {"properties": {"settings": settings_for({})}}})
    assert set(TUTORIAL_FIELDS) == set(tutorial_item_schema()["properties"])
    assert set(CANDIDATE_FIELDS) == set(candidate_schema()["properties"])
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_PATH,
        "title": "Study file",
        "description": "A study to import (docs/study-file.md). The importer also checks rules across fields "
                       "(a judgment study needs labels, systems distinct within an item, aligned sentence lists…).",
        "type": "object", "additionalProperties": False, "required": ["slug", "title", "protocol"],
        "properties": {
            "$schema": {"type": "string"},
            "slug": {"type": "string", "pattern": f"^{SLUG_PATTERN.pattern}$", "not": {"enum": sorted(RESERVED_SLUGS)},
                     **_column_limits(Study, "slug")},
            "title": {"type": "string", "pattern": _NON_BLANK, **_column_limits(Study, "title")},
            "protocol": {"enum": names},
            "description": {"type": "string"},
            "status": {"enum": list(Status.values)},
            "settings": {"type": "object"},
            "items": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/item"}},
            "tutorial": {"type": "array", "maxItems": TUTORIAL_MAX_ITEMS, "items": {"$ref": "#/$defs/tutorial_item"}},
        },
        "allOf": per_protocol,
        "$defs": {"item": item_schema(), "candidate": candidate_schema(), "tutorial_item": tutorial_item_schema()},
    }


@require_safe
@cache_control(public=True, max_age=3600)
def study_file_schema_view(request: HttpRequest) -> JsonResponse:
    """The schema, public: it says nothing a study file's author does not already read in docs/study-file.md."""
    return JsonResponse(study_file_schema(), content_type="application/schema+json",
                        json_dumps_params={"ensure_ascii": False, "indent": 1})
