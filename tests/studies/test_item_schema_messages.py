"""The study file's items are checked by the JSON Schema (studies/importing/schema.py) and its errors worded
by item id and field; only the rules across fields stay in code (study_file._parse_item)."""
from __future__ import annotations

from typing import Any, ClassVar

import jsonschema
import pytest

from protocols import registry
from protocols.spec import ProtocolSpec
from studies.importing.schema import item_problems, study_file_schema
from studies.importing.study_file import StudyFileError, parse_study
from tests.factories import study_file

pytestmark = pytest.mark.django_db


def errors_of(data: dict[str, Any]) -> list[str]:
    with pytest.raises(StudyFileError) as refused:
        parse_study(data)
    return refused.value.errors


def test_every_problem_of_one_item_is_listed_by_id_and_field_in_the_importers_words():
    data = study_file(slug="many", n_items=3)
    data["items"][1].update(position="3", metadata=[], colour="blue", source_context=["a", 2],
                            phenomenon="p" * 101, target_language=7)
    data["items"][1]["candidates"][0].update(is_reference="yes", highlights=[[5], "x"], text="  ")
    data["items"][1]["candidates"][1].update(system="", mood="calm")
    errors = errors_of(data)
    expected = [
        "item ext-1.position: must be an integer",
        "item ext-1.metadata: must be an object",
        "item ext-1: unknown field(s) ['colour']",
        "item ext-1.source_context: must be a list of strings",
        "item ext-1.phenomenon: Ensure this value has at most 100 characters (it has 101).",
        "item ext-1.target_language: must be a string (a BCP 47 tag such as en, fr, zh-Hans, ar)",
        "item ext-1.candidates[0].is_reference: must be true or false",
        "item ext-1.candidates[0].highlights[0]: must be a pair of integers [start, end]",
        "item ext-1.candidates[0].highlights[1]: must be a pair of integers [start, end]",
        "item ext-1.candidates[0].text: required, a non-empty string (or give sentences)",
        "item ext-1.candidates[1].system: required, a non-empty string",
        "item ext-1.candidates[1]: unknown field(s) ['mood']",
    ]
    assert sorted(errors) == sorted(expected)


def test_an_item_without_a_usable_id_is_named_by_its_place_and_a_non_object_says_so():
    data = study_file(slug="places", n_items=3)
    del data["items"][0]["id"]
    data["items"][1]["id"] = "  "
    data["items"][2] = ["not", "an", "item"]
    assert errors_of(data) == ["items[0].id: required, a non-empty string", "items[1].id: required, a non-empty string",
                               "items[2]: must be an object"]


def test_the_rules_across_fields_stay_and_are_not_repeated_for_a_value_the_schema_refused():
    data = study_file(slug="across", n_items=2)
    data["items"][1]["id"] = data["items"][0]["id"]
    cands = data["items"][0]["candidates"]
    cands[1]["system"] = cands[0]["system"]
    cands[0]["highlights"] = [[0, 999]]
    errors = errors_of(data)
    assert "item ext-0.id: duplicate id" in errors
    assert f"item ext-0.candidates[1].system: duplicate system {cands[0]['system']!r} in this item" in errors
    assert any(e.startswith("item ext-0.candidates[0].highlights[0]: span [0, 999] is outside the text") for e in errors)
    data["items"][0]["candidates"][0]["highlights"] = [[-1, 3]]  # the schema's minimum: worded with the text's length
    assert [e for e in errors_of(data) if "highlights" in e] == [
        f"item ext-0.candidates[0].highlights[0]: span [-1, 3] is outside the text (length "
        f"{len(cands[0]['text'])}) or empty"]


class _Triple(ProtocolSpec):
    name = "triple"
    label = "Exactly three candidates"
    candidates_per_item: ClassVar[tuple[int, int | None]] = (3, 3)


def test_a_protocols_number_of_candidates_comes_from_the_registry_into_the_schema_and_the_importer(monkeypatch):
    monkeypatch.setitem(registry._REGISTRY, "triple", _Triple())
    validator = jsonschema.Draft202012Validator(study_file_schema())
    two = study_file(protocol="triple", n_candidates=2, slug="triple")
    four = study_file(protocol="triple", n_candidates=4, slug="triple")
    assert {".".join(map(str, e.absolute_path)) for e in validator.iter_errors(two)} == {
        f"items.{k}.candidates" for k in range(len(two["items"]))}
    assert list(validator.iter_errors(study_file(protocol="triple", n_candidates=3, slug="triple"))) == []
    assert item_problems(two["items"][0], 0, _Triple())[0] == ["item ext-0.candidates: a triple item needs at least 3 "
                                                               "candidates"]
    assert "item ext-0.candidates: a triple item has at most 3 candidates" in errors_of(four)
