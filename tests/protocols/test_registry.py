"""The protocol registry: what is registered, how a study reaches its protocol, what ``manage.py protocols`` prints."""
from __future__ import annotations

import ast
import io
import json
from pathlib import Path

import jsonschema
import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from protocols import registry
from protocols.spec import ProtocolSpec
from studies.models import Study

ROOT = Path(__file__).resolve().parents[2]
BUILTIN = ["ranking", "choice", "judgment", "mqm", "esa"]


def test_the_builtin_protocols_are_registered_in_installed_apps_order():
    assert registry.names()[:len(BUILTIN)] == BUILTIN
    assert all(isinstance(spec, ProtocolSpec) for spec in registry.registered())


def test_an_unknown_name_is_refused_with_the_registered_names():
    with pytest.raises(registry.UnknownProtocol, match="'nope' is not one of ranking, choice"):
        registry.protocol_named("nope")


def test_a_study_with_an_unregistered_protocol_fails_validation_on_that_field():
    study = Study(slug="x", title="x", protocol="nope")
    with pytest.raises(ValidationError) as refused:
        study.full_clean(exclude=["slug"])
    assert "protocol" in refused.value.message_dict
    assert "'nope' is not a registered protocol" in refused.value.message_dict["protocol"][0]


def test_two_protocols_may_not_share_a_name():
    class Other(ProtocolSpec):
        name = "ranking"
    with pytest.raises(ValueError, match="Two protocols are named 'ranking'"):
        registry.register(Other())
    assert type(registry.protocol_named("ranking")).__name__ == "Ranking"


def test_a_study_reaches_its_protocol_through_the_registry():
    assert Study(protocol="esa", esa_spans=False).uses_spans is False
    assert Study(protocol="esa", esa_spans=True).uses_spans is True
    assert Study(protocol="esa").uses_score is True
    assert Study(protocol="mqm").uses_score is False
    assert Study(protocol="mqm").effective_severities() == Study(protocol="mqm", severities=[]).effective_severities()
    assert Study(protocol="mqm", severities=["major"]).effective_severities() == ["major"]
    assert Study(protocol="ranking").effective_taxonomy() == []
    assert Study(protocol="mqm").effective_taxonomy()


def test_protocols_json_lists_every_protocol_with_valid_schemas():
    out = io.StringIO()
    call_command("protocols", "--json", stdout=out)
    listed = {p["name"]: p for p in json.loads(out.getvalue())["protocols"]}
    assert list(listed)[:len(BUILTIN)] == BUILTIN
    for name, entry in listed.items():
        jsonschema.Draft202012Validator.check_schema(entry["answer_schema"])
        assert entry["answer_fields"], name
        assert set(entry["answer_fields"]) <= set(entry["answer_schema"]["properties"]), name


@pytest.mark.parametrize(("name", "good", "bad"), [
    ("ranking", {"ranks": {"a": 1, "b": 2}}, {"ranks": {"a": 0}}),
    ("choice", {"choice": "tie"}, {"choice": ""}),
    ("judgment", {"labels": ["x", "y"]}, {"label": "x", "extra": 1}),
    ("mqm", {"annotations": {"a": {"spans": [{"start": 0, "end": 3, "severity": "major", "category": "x"}]}}},
     {"annotations": {"a": {"spans": [{"start": 0}]}}}),
    ("esa", {"annotations": {"a": {"spans": [], "score": 40}}}, {"annotations": {"a": {"score": 140}}}),
])
def test_answer_schemas_accept_an_answer_and_refuse_a_broken_one(name, good, bad):
    validator = jsonschema.Draft202012Validator(registry.protocol_named(name).answer_schema)
    assert not list(validator.iter_errors(good))
    assert list(validator.iter_errors(bad))


def test_the_plain_listing_names_each_protocol_and_its_answer_fields():
    out = io.StringIO()
    call_command("protocols", stdout=out)
    text = out.getvalue()
    for name in BUILTIN:
        assert f"\n{name} " in "\n" + text
    assert "answer: label | labels" in text


def test_no_app_imports_a_protocol_plug_in_directly():
    """Apps reach a protocol through protocols.registry (or the shared spec), never a plug-in package."""
    shared = {"protocols", "protocols.registry", "protocols.spec", "protocols.answers"}
    offenders = []
    for app in ("studies", "annotation", "evaluators", "research", "config", "formats"):
        for path in (ROOT / app).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("protocols"):
                    modules = [node.module] if node.module != "protocols" else [f"protocols.{a.name}" for a in node.names]
                elif isinstance(node, ast.Import):
                    modules = [a.name for a in node.names if a.name.startswith("protocols")]
                else:
                    continue
                offenders += [f"{path.relative_to(ROOT)}: {m}" for m in modules
                              if m not in shared and not m.startswith("protocols.parts")]
    assert offenders == []


def test_protocol_settings_are_checked_against_the_protocols_schema():
    study = Study(slug="x", title="x", protocol="ranking", protocol_settings={"colour": "red"})
    with pytest.raises(ValidationError) as refused:
        study.full_clean(exclude=["slug"])
    assert refused.value.message_dict["protocol_settings"] == [
        "the ranking protocol has no settings of its own (got colour)."]
    Study(slug="x", title="x", protocol="ranking", protocol_settings={}).full_clean(exclude=["slug"])
