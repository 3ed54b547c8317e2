"""The pairwise protocol's answers and settings (protocols/pairwise/protocol.py)."""
from __future__ import annotations

import jsonschema
import pytest

from protocols import registry
from protocols.pairwise.protocol import Pairwise
from studies.models import Candidate, Study


@pytest.fixture
def spec(monkeypatch):
    pairwise = Pairwise()
    monkeypatch.setitem(registry._REGISTRY, "pairwise", pairwise)  # until its app is installed
    return pairwise


def candidates() -> dict[str, Candidate]:
    return {"a1": Candidate(pk=11, text="Le chat dort."), "b2": Candidate(pk=12, text="Un chat dort.")}


def check(spec, settings, payload):
    study = Study(protocol="pairwise", protocol_settings=settings)
    errors: dict[str, list[str]] = {}
    answer = spec.validate_answer(study, item_source="The cat sleeps.", candidates=candidates(), payload=payload,
                                  errors=errors)
    return answer, errors


def test_scores_and_a_preference_are_stored_by_candidate_pk(spec):
    answer, errors = check(spec, {}, {"annotations": {"a1": {"score": 80}, "b2": {"score": 40}}, "preference": "a1"})
    assert errors == {}
    assert answer == {"annotations": {"11": {"spans": [], "score": 80}, "12": {"spans": [], "score": 40}},
                      "choice": {"candidate": 11}}


def test_a_tie_needs_ties_allowed(spec):
    answer, _ = check(spec, {}, {"annotations": {"a1": {"score": 50}, "b2": {"score": 50}}, "preference": "tie"})
    assert answer["choice"] == {"option": "tie"}
    answer, errors = check(spec, {"ties": False},
                           {"annotations": {"a1": {"score": 50}, "b2": {"score": 50}}, "preference": "tie"})
    assert answer is None and errors["preference"] == ["This study does not allow ties: choose one of the two candidates."]


def test_preference_required_off_and_unknown(spec):
    scores = {"a1": {"score": 50}, "b2": {"score": 60}}
    assert check(spec, {"preference": "required"}, {"annotations": scores})[1]["preference"][0].startswith("Required")
    assert check(spec, {"preference": "off"}, {"annotations": scores, "preference": "a1"})[1] == {
        "preference": ["This study does not ask for a preference."]}
    assert "'zz' is neither a candidate" in check(spec, {}, {"annotations": scores, "preference": "zz"})[1]["preference"][0]
    answer, errors = check(spec, {}, {"annotations": scores})
    assert errors == {} and "choice" not in answer


def test_both_scores_are_required_and_spans_follow_the_setting(spec):
    _, errors = check(spec, {}, {"annotations": {"a1": {"score": 50}, "b2": {}}, "preference": "a1"})
    assert errors["annotations"] == ["candidate b2.score: required, a number from 0 to 100."]
    _, errors = check(spec, {}, {"annotations": {"a1": {"score": 50, "spans": []}, "b2": {"score": 5}}})
    assert "candidate a1: unknown field(s) spans (this study takes score)." in errors["annotations"]
    answer, errors = check(spec, {"spans": "esa"}, {"annotations": {
        "a1": {"score": 50, "spans": [{"start": 0, "end": 2, "severity": "major"}]}, "b2": {"score": 5, "spans": []}}})
    assert errors == {}
    assert answer["annotations"]["11"]["spans"][0]["severity"] == "major"


def test_settings_schema_refuses_unknown_and_wrong_values_naming_them(spec):
    assert spec.settings_errors({"spans": "mqm", "preference": "required", "ties": False}) == []
    problems = spec.settings_errors({"spans": "da", "colour": 1})
    assert any("colour" in p and "settings of pairwise: preference, spans, ties" in p for p in problems)
    assert any(p.startswith("spans: 'da' is not one of") for p in problems)


def test_answer_schema_is_valid_and_describes_the_preference(spec):
    jsonschema.Draft202012Validator.check_schema(spec.answer_schema)
    validator = jsonschema.Draft202012Validator(spec.answer_schema)
    assert not list(validator.iter_errors({"annotations": {"a1": {"score": 3}}, "preference": "tie"}))
    assert list(validator.iter_errors({"annotations": {"a1": {"score": 300}}}))
