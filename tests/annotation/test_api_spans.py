"""``GET next`` for span studies (MQM, ESA, DA): the ``spans`` block a client needs, the source, and no leak.

The block states the study's settings (taxonomy, severities, overlap policy,
sides, score scale) so a client can collect the answer that
``annotation.handout.answers._validate_annotations`` accepts; the OpenAPI schema
documents that answer (JudgmentIn.annotations).
"""
from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from annotation.items import selectors
from annotation.models import Judgment
from annotation.handout.services import annotators_create
from studies.importing.study_file import study_import
from studies.definition.taxonomy import DEFAULT_MQM_TAXONOMY
from tests.annotation.test_api_annotate import FORBIDDEN
from tests.conftest import annotator_client
from tests.factories import study_file

pytestmark = pytest.mark.django_db

TAXONOMY = [{"name": "Accuracy/Omission", "description": "Missing content.", "examples": ["'not' dropped"]},
            {"name": "Discourse/Connective", "description": "Wrong discourse relation.", "examples": []}]


def span_study(slug: str, protocol: str, n_items: int = 3, **settings: Any):
    data = study_file(slug=slug, protocol=protocol, n_items=n_items, n_candidates=2,
                      settings={"redundancy": 1, **settings})
    return study_import(status="open", data=data)


def first_next(study) -> tuple[APIClient, dict]:
    client = annotator_client(annotators_create(study=study)[0])
    resp = client.get("/api/v1/annotate/next")
    assert resp.status_code == 200, resp.content
    return client, resp.json()


def assert_no_leak(body: bytes | str, data: dict) -> None:
    """FORBIDDEN (system names, reference and spam flags) nowhere in the body — except inside the study's own
    MQM taxonomy, whose category "Discourse/Pronoun reference" is wording for annotators, checked on its own."""
    text = body.decode() if isinstance(body, bytes) else body
    block = (data.get("spans") or {}) if isinstance(data, dict) else {}
    for category in block.get("taxonomy", []):
        text = text.replace(json.dumps(category, ensure_ascii=False)[1:-1], "")
        for part in (category["name"], category["description"], *category["examples"]):
            text = text.replace(json.dumps(part, ensure_ascii=False), "")
    lowered = text.lower()
    for word in FORBIDDEN:
        assert word not in lowered, word


def test_mqm_next_carries_the_study_taxonomy_severities_overlap_and_source():
    study = span_study("mqm-block", "mqm", taxonomy=TAXONOMY, severities=["neutral", "minor", "major"],
                       allow_overlap=True, show_source=True)
    _, data = first_next(study)
    assert data["protocol"] == "mqm"
    assert data["spans"] == {"spans": True, "taxonomy": TAXONOMY, "severities": ["neutral", "minor", "major"],
                             "allow_overlap": True, "sides": ["target", "source"], "note_max_length": 500,
                             "score": None}
    item = study.items.get(candidates__public_id=data["candidates"][0]["id"])
    assert data["source"] == item.source and item.source  # source spans are offsets into this text
    assert len(data["candidates"]) == 2


def test_mqm_default_taxonomy_with_the_discourse_branch_and_default_severities():
    _, data = first_next(span_study("mqm-default", "mqm"))
    block = data["spans"]
    assert block["taxonomy"] == DEFAULT_MQM_TAXONOMY
    assert any(c["name"].startswith("Discourse/") for c in block["taxonomy"])
    assert all(set(c) == {"name", "description", "examples"} for c in block["taxonomy"])
    assert block["severities"] == ["minor", "major", "critical"]
    assert block["allow_overlap"] is False and block["score"] is None


def test_esa_next_has_the_score_scale_and_no_taxonomy():
    _, data = first_next(span_study("esa-block", "esa", show_source=True))
    assert data["protocol"] == "esa"
    assert data["spans"] == {"spans": True, "taxonomy": [], "severities": ["minor", "major"], "allow_overlap": False,
                             "sides": ["target", "source"], "note_max_length": 500,
                             "score": {"min": 0, "max": 100, "anchors": [0, 33, 66, 100]}}


def test_da_next_switches_spans_off_and_keeps_the_score():
    _, data = first_next(span_study("da-block", "esa", esa_spans=False))
    block = data["spans"]
    assert block["spans"] is False
    assert (block["taxonomy"], block["severities"], block["sides"]) == ([], [], [])
    assert block["score"] == {"min": 0, "max": 100, "anchors": [0, 33, 66, 100]}


def test_span_study_without_the_source_offers_target_spans_only():
    _, data = first_next(span_study("mqm-mono", "mqm"))  # show_source is off by default
    assert data["source"] is None
    assert data["spans"]["sides"] == ["target"]


def test_other_protocols_have_no_spans_block():
    data = study_file(slug="rank-block", n_items=2, n_candidates=2)
    _, got = first_next(study_import(status="open", data=data))
    assert got["protocol"] == "ranking" and got["spans"] is None


@pytest.mark.parametrize("protocol, settings", [("mqm", {}), ("esa", {}), ("esa", {"esa_spans": False})])
def test_no_system_names_reference_or_spam_flags_in_any_response(protocol, settings):
    """Every item of the study (spam copies included) through next → answer → next, and a skip."""
    study = span_study(f"leak-{protocol}-{len(settings)}", protocol, n_items=6, spam_rate=0.3, show_source=True,
                       **settings)
    assert study.items.filter(is_spam=True).exists()
    client = annotator_client(annotators_create(study=study)[0])
    seen = 0
    while (resp := client.get("/api/v1/annotate/next")).status_code == 200:
        data = resp.json()
        assert_no_leak(resp.content, data)
        seen += 1
        url = f"/api/v1/annotate/{data['assignment']}"
        if seen == 2:
            skipped = client.post(f"{url}/skip", {"reason": "I do not know this language pair."}, format="json")
            assert skipped.status_code == 200
            assert_no_leak(skipped.content, {})
            continue
        entry: dict[str, Any] = {}
        if data["spans"]["spans"]:
            entry["spans"] = [{"start": 0, "end": 4, "severity": "major",
                               **({"category": "Accuracy/Mistranslation"} if protocol == "mqm" else {})}]
        if data["spans"]["score"]:
            entry["score"] = 40
        answer = client.post(f"{url}/judgment", {"annotations": {c["id"]: entry for c in data["candidates"]}},
                             format="json")
        assert answer.status_code == 201, answer.content
        assert_no_leak(answer.content, {})
        refused = client.post(f"{url}/judgment", {"annotations": {"nope": entry}}, format="json")
        assert refused.status_code == 400
        assert_no_leak(refused.content, {})
    assert resp.status_code == 204
    assert seen == study.items.count()


def test_a_stored_span_answer_comes_back_keyed_by_candidate_ids():
    """The answer pre-filled for a revision names candidates by their opaque ids, never by database pk."""
    study = span_study("prefill", "esa")
    client, data = first_next(study)
    first, second = (c["id"] for c in data["candidates"])
    payload = {first: {"spans": [{"start": 0, "end": 4, "severity": "minor"}], "score": 55},
               second: {"spans": [], "score": 90}}
    assert client.post(f"/api/v1/annotate/{data['assignment']}/judgment", {"annotations": payload},
                       format="json").status_code == 201
    judgment = Judgment.objects.get()
    candidates = list(judgment.assignment.item.candidates.all())
    assert selectors.answer_for_client(judgment, candidates) == {"annotations": {
        first: {"spans": [{"start": 0, "end": 4, "side": "target", "severity": "minor"}], "score": 55},
        second: {"spans": [], "score": 90}}}


def test_the_schema_documents_the_spans_block_and_the_annotations_answer(admin_user):
    staff = APIClient()
    staff.force_authenticate(admin_user)
    schema = staff.get("/api/v1/schema/", {"format": "json"}).json()
    parts = schema["components"]["schemas"]
    out = parts["AssignmentOut"]["properties"]
    assert {"spans", "item_key"} <= set(out)
    assert {"mqm", "esa"} <= set(parts["ProtocolEnum"]["enum"])
    settings = parts["SpanSettingsOut"]["properties"]
    assert {"spans", "taxonomy", "severities", "allow_overlap", "sides", "score"} <= set(settings)
    judgment_in = parts["JudgmentIn"]
    assert {"required": ["annotations"]} in judgment_in["anyOf"]
    per_candidate = judgment_in["properties"]["annotations"]["additionalProperties"]["$ref"].rsplit("/", 1)[1]
    candidate = parts[per_candidate]["properties"]
    assert candidate["score"]["minimum"] == 0 and candidate["score"]["maximum"] == 100
    span = parts[candidate["spans"]["items"]["$ref"].rsplit("/", 1)[1]]
    assert {"start", "end", "side", "category", "severity", "note"} == set(span["properties"])
    assert {"start", "end", "severity"} <= set(span["required"])
