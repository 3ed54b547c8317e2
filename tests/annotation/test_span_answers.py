"""MQM and ESA answers through the JSON API: spans stored as offsets, every bad span a 400 naming it, nothing stored."""
from __future__ import annotations

from typing import Any

import pytest

from annotation.models import Judgment
from annotation.handout.services import annotators_create
from studies.importing.study_file import StudyFileError, study_import
from studies.definition.taxonomy import DEFAULT_MQM_TAXONOMY
from tests.conftest import annotator_client
from tests.factories import study_file

pytestmark = pytest.mark.django_db


def span_study(slug: str, protocol: str = "mqm", n_candidates: int = 2, **settings: Any):
    data = study_file(slug=slug, protocol=protocol, n_items=3, n_candidates=n_candidates,
                      settings={"redundancy": 1, **settings})
    return study_import(status="open", data=data)


def first_item(study):
    client = annotator_client(annotators_create(study=study)[0])
    data = client.get("/api/v1/annotate/next").json()
    return client, data, f"/api/v1/annotate/{data['assignment']}/judgment"


def refused(client, url, payload) -> list[str]:
    before = Judgment.objects.count()
    resp = client.post(url, payload, format="json")
    assert resp.status_code == 400, (payload, resp.content)
    errors = resp.json()["errors"]
    assert Judgment.objects.count() == before
    return [m for messages in errors.values() for m in messages]


def clean(data, **extra) -> dict:
    return {c["id"]: {"spans": [], **extra} for c in data["candidates"]}


def test_default_taxonomy_has_the_mqm_core_and_a_discourse_branch():
    names = [c["name"] for c in DEFAULT_MQM_TAXONOMY]
    for name in ("Accuracy/Mistranslation", "Accuracy/Omission", "Fluency/Punctuation", "Style/Awkward",
                 "Non-translation", "Other", "Discourse/Pronoun reference", "Discourse/Connective",
                 "Discourse/Lexical consistency", "Discourse/Named-entity consistency",
                 "Discourse/Tense consistency", "Discourse/Ellipsis"):
        assert name in names
    assert all(c["description"] for c in DEFAULT_MQM_TAXONOMY)


def test_source_spans_only_where_the_source_is_shown():
    for slug, protocol, extra in (("mqm-hidden-source", "mqm", {}), ("esa-source", "esa", {"show_source": True})):
        study = span_study(slug, protocol=protocol, **extra)
        client, data, url = first_item(study)
        annotations = clean(data, **({"score": 50} if protocol == "esa" else {}))
        span = {"start": 0, "end": 3, "side": "source", "severity": "major"}
        if protocol == "mqm":
            span["category"] = "Accuracy/Omission"
        annotations[data["candidates"][0]["id"]]["spans"] = [span]
        assert any("source spans (omissions) are for MQM" in m for m in refused(client, url, {"annotations": annotations}))


def test_mqm_spans_are_stored_as_offsets_by_candidate():
    study = span_study("mqm-ok", show_source=True)
    client, data, url = first_item(study)
    first, second = data["candidates"]
    payload = {"annotations": {
        first["id"]: {"spans": [
            {"start": 5, "end": 9, "category": "accuracy/mistranslation", "severity": "major"},
            {"start": 0, "end": 4, "category": "Discourse/Pronoun reference", "severity": "minor", "note": "er → sie"},
            {"start": 0, "end": 6, "side": "source", "category": "Accuracy/Omission", "severity": "major"},
        ]},
        second["id"]: {"spans": []},
    }}
    resp = client.post(url, payload, format="json")
    assert resp.status_code == 201, resp.content
    answer = Judgment.objects.get().answer["annotations"]
    pks = {c.public_id: str(c.pk) for c in study.items.get(candidates__public_id=first["id"]).candidates.all()}
    assert list(answer) == sorted(pks.values(), key=int)
    assert answer[pks[first["id"]]]["spans"] == [
        {"start": 0, "end": 4, "side": "target", "severity": "minor", "category": "Discourse/Pronoun reference",
         "note": "er → sie"},
        {"start": 5, "end": 9, "side": "target", "severity": "major", "category": "Accuracy/Mistranslation"},
        {"start": 0, "end": 6, "side": "source", "severity": "major", "category": "Accuracy/Omission"},
    ]
    assert answer[pks[second["id"]]] == {"spans": []}
    assert client.post(url, payload, format="json").status_code == 200  # idempotent


@pytest.mark.parametrize("span, words", [
    ({"start": 0, "end": 999, "category": "Other", "severity": "minor"}, "outside the text"),
    ({"start": 4, "end": 4, "category": "Other", "severity": "minor"}, "empty"),
    ({"start": -1, "end": 3, "category": "Other", "severity": "minor"}, "outside the text"),
    ({"start": "0", "end": 3, "category": "Other", "severity": "minor"}, "whole numbers"),
    ({"start": 0, "end": 3, "category": "Fluency/Smell", "severity": "minor"}, "not a category"),
    ({"start": 0, "end": 3, "severity": "minor"}, "category: required"),
    ({"start": 0, "end": 3, "category": "Other"}, "severity: required"),
    ({"start": 0, "end": 3, "category": "Other", "severity": "catastrophic"}, "not a severity"),
    ({"start": 0, "end": 3, "category": "Other", "severity": "minor", "side": "left"}, "must be target or source"),
    ({"start": 0, "end": 3, "category": "Other", "severity": "minor", "colour": "red"}, "unknown field"),
    ({"start": 0, "end": 3, "category": "Other", "severity": "minor", "note": "x" * 501}, "at most 500"),
])
def test_bad_mqm_spans_are_refused_naming_the_span(span, words):
    study = span_study("mqm-bad")
    client, data, url = first_item(study)
    annotations = clean(data)
    cid = data["candidates"][0]["id"]
    annotations[cid] = {"spans": [span]}
    messages = refused(client, url, {"annotations": annotations})
    assert any(words in m and f"candidate {cid}.spans[0]" in m for m in messages), messages


def test_overlap_policy():
    spans = [{"start": 0, "end": 6, "category": "Other", "severity": "minor"},
             {"start": 4, "end": 9, "category": "Style/Awkward", "severity": "major"}]
    study = span_study("no-overlap")
    client, data, url = first_item(study)
    annotations = clean(data)
    annotations[data["candidates"][0]["id"]] = {"spans": spans}
    assert any("overlap" in m for m in refused(client, url, {"annotations": annotations}))
    study = span_study("overlap", allow_overlap=True)
    client, data, url = first_item(study)
    annotations = clean(data)
    annotations[data["candidates"][0]["id"]] = {"spans": spans}
    assert client.post(url, {"annotations": annotations}, format="json").status_code == 201
    # touching spans ([0, 4) and [4, 9)) never overlap
    study = span_study("touching")
    client, data, url = first_item(study)
    annotations = clean(data)
    annotations[data["candidates"][0]["id"]] = {"spans": [{**spans[0], "end": 4}, spans[1]]}
    assert client.post(url, {"annotations": annotations}, format="json").status_code == 201


def test_every_candidate_needs_an_answer_and_spans_are_required():
    study = span_study("mqm-missing")
    client, data, url = first_item(study)
    first = data["candidates"][0]["id"]
    assert any("1 missing" in m for m in refused(client, url, {"annotations": {first: {"spans": []}}}))
    assert any("spans: required" in m for m in refused(client, url, {"annotations": {**clean(data), first: {}}}))
    assert any("Unknown candidate" in m for m in refused(client, url, {"annotations": {**clean(data), "zzz": {"spans": []}}}))
    assert refused(client, url, {"annotations": []})
    assert any("annotations" in m or "required" in m for m in refused(client, url, {"ranks": {}}))
    # a score is not part of an MQM answer
    assert any("unknown field" in m for m in refused(client, url, {"annotations": clean(data, score=50)}))


@pytest.mark.parametrize("score, ok", [(0, True), (100, True), (66.5, True), (None, False), (-1, False),
                                       (101, False), ("50", False), (True, False)])
def test_esa_score_is_required_and_in_range(score, ok):
    study = span_study(f"esa-{abs(hash(str(score)))}", protocol="esa")
    client, data, url = first_item(study)
    annotations = {c["id"]: {"spans": [], "score": score} for c in data["candidates"]}
    if score is None:
        for entry in annotations.values():
            del entry["score"]
    if ok:
        assert client.post(url, {"annotations": annotations}, format="json").status_code == 201
        stored = Judgment.objects.get().answer["annotations"]
        assert {entry["score"] for entry in stored.values()} == {score}
    else:
        assert any(".score:" in m for m in refused(client, url, {"annotations": annotations}))


def test_esa_spans_have_severities_minor_major_and_no_category():
    study = span_study("esa-spans", protocol="esa")
    client, data, url = first_item(study)
    annotations = {c["id"]: {"spans": [], "score": 80} for c in data["candidates"]}
    cid = data["candidates"][0]["id"]
    annotations[cid]["spans"] = [{"start": 0, "end": 3, "severity": "critical"}]
    assert any("not a severity" in m for m in refused(client, url, {"annotations": annotations}))
    annotations[cid]["spans"] = [{"start": 0, "end": 3, "severity": "major", "category": "Other"}]
    assert any("no category" in m for m in refused(client, url, {"annotations": annotations}))
    annotations[cid]["spans"] = [{"start": 0, "end": 3, "severity": "major"}]
    assert client.post(url, {"annotations": annotations}, format="json").status_code == 201


def test_da_is_esa_without_spans():
    study = span_study("da", protocol="esa", esa_spans=False)
    client, data, url = first_item(study)
    with_spans = {c["id"]: {"spans": [], "score": 40} for c in data["candidates"]}
    assert any("unknown field(s) spans" in m for m in refused(client, url, {"annotations": with_spans}))
    scores = {c["id"]: {"score": 40} for c in data["candidates"]}
    assert client.post(url, {"annotations": scores}, format="json").status_code == 201
    assert all(e == {"spans": [], "score": 40} for e in Judgment.objects.get().answer["annotations"].values())


def test_study_file_checks_taxonomy_and_severities():
    def errors(protocol: str, **settings: Any) -> list[str]:
        with pytest.raises(StudyFileError) as exc:
            study_import(data=study_file(slug="bad-tax", protocol=protocol, n_candidates=1, settings=settings))
        return exc.value.errors
    assert any("settings.taxonomy" in e for e in errors("mqm", taxonomy=[]))
    assert any("duplicate category" in e for e in errors("mqm", taxonomy=["A", "a"]))
    assert any("settings.taxonomy[0].name" in e for e in errors("mqm", taxonomy=[{"description": "x"}]))
    assert any("only an mqm study" in e for e in errors("esa", taxonomy=["A"]))
    assert any("critical" in e for e in errors("esa", severities=["minor", "critical"]))
    assert any("unknown severity" in e for e in errors("mqm", severities=["minor", "huge"]))
    assert any("settings.mqm_weights.major" in e for e in errors("mqm", mqm_weights={"major": -1}))
    study = study_import(data=study_file(slug="own-tax", protocol="mqm", n_candidates=1, settings={
        "taxonomy": ["Accuracy", {"name": "Discourse/Pronoun", "description": "d", "examples": ["e"]}],
        "severities": ["neutral", "minor", "major"]}))
    assert study.effective_taxonomy() == [{"name": "Accuracy", "description": "", "examples": []},
                                          {"name": "Discourse/Pronoun", "description": "d", "examples": ["e"]}]
    assert study.effective_severities() == ["neutral", "minor", "major"]


def test_export_carries_scores_and_spans():
    from annotation.exporting.judgments import judgments_frame

    study = span_study("esa-export", protocol="esa")
    client, data, url = first_item(study)
    annotations = {c["id"]: {"spans": [], "score": 70} for c in data["candidates"]}
    annotations[data["candidates"][0]["id"]] = {"spans": [{"start": 1, "end": 3, "severity": "minor"}], "score": 55}
    assert client.post(url, {"annotations": annotations}, format="json").status_code == 201
    frame = judgments_frame(study)
    assert sorted(frame["score"]) == [55.0, 70.0]
    assert set(frame["spans"]) == {"[]", '[{"start":1,"end":3,"side":"target","severity":"minor"}]'}
