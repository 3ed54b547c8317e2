"""The study file's JSON Schema: a valid 2020-12 schema, served as built, accepting every worked example and
refusing the broken files of the import tests at the field the importer names."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import jsonschema
import pytest

from protocols import registry
from protocols.spec import ProtocolSpec
from studies.importing.schema import SCHEMA_PATH, study_file_schema
from studies.importing.study_file import StudyFileError, parse_study
from tests.annotation.test_tutorial import tutorial_item
from tests.factories import study_file

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted((ROOT / "fixtures" / "studies").glob("*.json"))


def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(study_file_schema(), format_checker=jsonschema.FormatChecker())


def _error_paths(data: Any) -> list[str]:
    return [".".join(str(p) for p in error.absolute_path) for error in _validator().iter_errors(data)]


def test_the_schema_is_a_valid_draft_2020_12_schema_with_its_url_as_id():
    schema = study_file_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == SCHEMA_PATH
    assert schema["properties"]["protocol"]["enum"] == registry.names()


def test_the_endpoint_serves_the_schema_the_code_builds_publicly_and_cacheably(client):
    response = client.get(SCHEMA_PATH)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/schema+json"
    assert "public" in response["Cache-Control"] and "max-age" in response["Cache-Control"]
    assert json.loads(response.content) == study_file_schema()
    assert client.post(SCHEMA_PATH).status_code == 405


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_every_worked_example_is_valid(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    assert _error_paths(data) == []
    parse_study(data)  # and the importer agrees


def test_the_worked_examples_are_the_demo_study_files():
    # fixtures/studies/ is what load_demo writes (studies/demo/studies.py): every demo is checked above.
    assert len(FIXTURES) >= 7


def test_the_test_factory_file_a_tutorial_and_a_schema_reference_are_valid():
    data = study_file(protocol="judgment", n_candidates=1, settings={"labels": ["ok", "bad"], "seed": 5,
                                                                      "items_per_annotator": None})
    data["$schema"] = "https://example.org" + SCHEMA_PATH
    data["tutorial"] = [tutorial_item(1, {"label": "ok"})]
    data["items"][0].update(id=7, document_id="d1", position=-3, metadata={"any": ["thing"]},
                            source_language="fr", target_language="en")
    assert _error_paths(data) == []
    parse_study(data)


def _set(path: str, value: Any) -> Callable[[dict], None]:
    def change(data: dict) -> None:
        *parents, last = path.split(".")
        target: Any = data
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        target[int(last) if last.isdigit() else last] = value
    return change


def _delete(path: str, key: str) -> Callable[[dict], None]:
    def change(data: dict) -> None:
        target: Any = data
        for part in path.split("."):
            target = target[int(part)] if part.isdigit() else target[part]
        del target[key]
    return change


#: (case, the change to a valid file, the path the schema's error names), from tests/studies/test_import_study_command.py,
#: test_bad_input.py and docs/study-file.md's "Errors".
BROKEN: list[tuple[str, Callable[[dict], None], str]] = [
    ("redundancy a string", _set("settings.redundancy", "three"), "settings.redundancy"),
    ("redundancy out of range", _set("settings.redundancy", 101), "settings.redundancy"),
    ("unknown setting", _set("settings.colour", "blue"), "settings"),
    ("spam_rate over 0.5", _set("settings.spam_rate", 0.7), "settings.spam_rate"),
    ("unknown option", _set("settings.options", ["maybe"]), "settings.options.0"),
    ("unknown unit", _set("settings.unit", "paragraph"), "settings.unit"),
    ("1 is not true", _set("settings.allow_ties", 1), "settings.allow_ties"),
    ("interface language", _set("settings.interface_language", "pt"), "settings.interface_language"),
    ("title too long", _set("title", "t" * 201), "title"),
    ("completion code too long", _set("settings.completion_code", "c" * 65), "settings.completion_code"),
    ("negative minutes", _set("settings.reservation_minutes", -1), "settings.reservation_minutes"),
    ("seed beyond 64 bits", _set("settings.seed", 2**70), "settings.seed"),
    ("auto_exclude_min_checks 0", _set("settings.auto_exclude_min_checks", 0), "settings.auto_exclude_min_checks"),
    ("slug with spaces", _set("slug", "Not A Slug"), "slug"),
    ("reserved slug", _set("slug", "import"), "slug"),
    ("unknown protocol", _set("protocol", "bogus"), "protocol"),
    ("unknown status", _set("status", "archived"), "status"),
    ("unknown top-level field", _set("colour", "blue"), ""),
    ("no items", _set("items", []), "items"),
    ("id too long", _set("items.0.id", "e" * 196), "items.0.id"),
    ("id of a spam copy", _set("items.3.id", "ext-0~spam"), "items.3.id"),
    ("phenomenon too long", _set("items.1.phenomenon", "p" * 101), "items.1.phenomenon"),
    ("system too long", _set("items.1.candidates.1.system", "S" * 101), "items.1.candidates.1.system"),
    ("position beyond 32 bits", _set("items.2.position", 2**31), "items.2.position"),
    ("unknown item field", _set("items.0.colour", "blue"), "items.0"),
    ("no candidates", _set("items.0.candidates", []), "items.0.candidates"),
    ("candidate without system", _delete("items.0.candidates.1", "system"), "items.0.candidates.1"),
    ("highlight not a pair", _set("items.0.candidates.0.highlights", [[5]]), "items.0.candidates.0.highlights.0"),
    ("context not strings", _set("items.0.source_context", ["a", 2]), "items.0.source_context.1"),
    ("is_reference a string", _set("items.0.candidates.0.is_reference", "yes"), "items.0.candidates.0.is_reference"),
    ("metadata a list", _set("items.0.metadata", []), "items.0.metadata"),
]


@pytest.mark.parametrize("change, where", [pytest.param(c, w, id=case) for case, c, w in BROKEN])
def test_broken_files_are_refused_at_the_field_by_the_schema_and_the_importer(change, where):
    data = study_file(slug="broken", n_items=4)
    change(data)
    assert where in _error_paths(data)
    with pytest.raises(StudyFileError):
        parse_study(data)


class _Tuned(ProtocolSpec):
    name = "tuned"
    label = "A protocol with a setting of its own"
    settings_schema: ClassVar[dict[str, Any]] = {
        "type": "object", "properties": {"knobs": {"type": "integer", "minimum": 1}}}


def test_a_registered_protocol_brings_its_name_and_its_own_settings_to_its_files_only(monkeypatch):
    monkeypatch.setitem(registry._REGISTRY, "tuned", _Tuned())
    assert "tuned" in study_file_schema()["properties"]["protocol"]["enum"]
    assert _error_paths(study_file(protocol="tuned", settings={"knobs": 3})) == []
    assert _error_paths(study_file(protocol="tuned", settings={"knobs": 0})) == ["settings.knobs"]
    assert _error_paths(study_file(protocol="ranking", settings={"knobs": 3})) == ["settings"]
    assert "settings" in _error_paths(study_file(protocol="bogus", settings={"knobs": 3}))


def test_the_importer_checks_settings_with_the_served_schema_and_keeps_its_words():
    from studies.importing.schema import builtin_settings_schema
    ranking = next(rule["then"]["properties"]["settings"] for rule in study_file_schema()["allOf"]
                   if rule["if"].get("properties", {}).get("protocol") == {"const": "ranking"})
    assert ranking == builtin_settings_schema()
    data = study_file(slug="words", settings={"redundancy": 3.0, "spam_rate": 0.7, "options": ["maybe", "tie"],
                                              "unit": "paragraph", "colour": "blue", "snap_to_words": "yes"})
    with pytest.raises(StudyFileError) as exc:
        parse_study(data)
    errors = exc.value.errors
    assert "settings.redundancy: must be an integer" in errors  # 3.0 is an integer to JSON Schema, not to the importer
    assert "settings.spam_rate: must be between 0 and 0.5" in errors
    assert "settings.options: unknown option(s) ['maybe']; allowed: neither, tie, invalid" in errors
    assert "settings.unit: 'paragraph' is not one of sentence, document" in errors
    assert "settings.snap_to_words: must be true/false or null" in errors
    assert any(e.startswith("settings.colour: unknown setting (known: allocation, allow_overlap, allow_ties,") for e in errors)
