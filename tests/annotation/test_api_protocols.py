"""Choice and judgment answers through the JSON API: good answers stored as documented, bad ones refused.

Every bad payload gets a 400 whose errors name the field, and stores nothing.
"""
from __future__ import annotations

import pytest

from annotation.models import Assignment, Judgment
from annotation.handout.services import annotators_create
from studies.importing.study_file import study_import
from tests.conftest import annotator_client
from tests.factories import make_study, study_file

pytestmark = pytest.mark.django_db

ERROR_LABELS = ["no error", "sentence-level", "document-level", "inconsistency", "ellipsis", "ambiguity", "other"]


def judgment_study(slug: str, labels: list[str], multi_label: bool = False):
    data = study_file(slug=slug, protocol="judgment", n_items=3, n_candidates=1,
                      settings={"labels": labels, "multi_label": multi_label})
    for item in data["items"]:
        item["candidates"][0].update(system="mt", is_reference=False)
    return study_import(status="open", data=data)


def first_item(study):
    client = annotator_client(annotators_create(study=study)[0])
    data = client.get("/api/v1/annotate/next").json()
    return client, data, f"/api/v1/annotate/{data['assignment']}/judgment"


def assert_refused(client, url, payload, field):
    before = Judgment.objects.count()
    resp = client.post(url, payload, format="json")
    assert resp.status_code == 400, (payload, resp.content)
    errors = resp.json()["errors"]
    assert field in errors, (payload, errors)
    assert all(isinstance(m, str) and m for m in errors[field])
    assert Judgment.objects.count() == before
    return errors[field]


# --- choice -----------------------------------------------------------------------

def test_choice_answers_are_stored_normalised():
    study = make_study(slug="c", protocol="choice", n_items=2, n_candidates=2, settings={"options": ["neither", "invalid"]})
    client, data, url = first_item(study)
    assert data["protocol"] == "choice" and data["options"] == ["neither", "invalid"]
    pick = data["candidates"][1]["id"]
    assert client.post(url, {"choice": pick}, format="json").status_code == 201
    judgment = Judgment.objects.get()
    assert judgment.answer == {"choice": {"candidate": study.items.get(candidates__public_id=pick).candidates.get(public_id=pick).pk}}
    assert client.post(url, {"choice": pick}, format="json").status_code == 200  # idempotent
    assert client.post(url, {"choice": "neither"}, format="json").status_code == 201  # a revision
    assert Judgment.objects.get(is_current=True).answer == {"choice": {"option": "neither"}}
    assert Judgment.objects.count() == 2


def test_choice_bad_payloads():
    study = make_study(slug="c", protocol="choice", n_items=2, n_candidates=2, settings={"options": ["neither"]})
    other = make_study(slug="o", protocol="choice", n_items=1, n_candidates=2)
    client, data, url = first_item(study)
    foreign = other.items.first().candidates.first().public_id
    own_other_item = study.items.exclude(candidates__public_id=data["candidates"][0]["id"]).first().candidates.first().public_id
    for option in ("tie", "invalid"):  # options this study does not offer
        messages = assert_refused(client, url, {"choice": option}, "choice")
        assert "options: neither" in messages[0]
    assert_refused(client, url, {"choice": "maybe"}, "choice")
    assert_refused(client, url, {"choice": foreign}, "choice")  # a candidate of another study
    assert_refused(client, url, {"choice": own_other_item}, "choice")  # a candidate of another item
    for bad in ("", 1, None, [data["candidates"][0]["id"]], {"candidate": data["candidates"][0]["id"]}, True):
        assert_refused(client, url, {"choice": bad}, "choice")
    assert_refused(client, url, {}, "choice")
    assert_refused(client, url, {"label": "correct"}, "body")
    assert_refused(client, url, {"ranks": {c["id"]: k + 1 for k, c in enumerate(data["candidates"])}}, "body")
    assert_refused(client, url, {"choice": data["candidates"][0]["id"], "client_started_at": "yesterday"},
                   "client_started_at")
    assert_refused(client, url, ["neither"], "body")
    assert Assignment.objects.get(public_id=data["assignment"]).status == "pending"


def test_choice_study_without_options_accepts_only_candidates():
    study = make_study(slug="c", protocol="choice", n_items=1, n_candidates=3)
    client, data, url = first_item(study)
    for option in ("neither", "tie", "invalid"):
        messages = assert_refused(client, url, {"choice": option}, "choice")
        assert "options: none" in messages[0]
    assert client.post(url, {"choice": data["candidates"][2]["id"]}, format="json").status_code == 201


# --- judgment ---------------------------------------------------------------------

def test_single_label_judgment():
    study = judgment_study("j", ["correct", "incorrect"])
    client, data, url = first_item(study)
    assert data["labels"] == ["correct", "incorrect"] and data["multi_label"] is False
    assert len(data["candidates"]) == 1
    messages = assert_refused(client, url, {"label": "wrong"}, "label")
    assert "labels: correct, incorrect" in messages[0]
    assert_refused(client, url, {"label": "Correct"}, "label")  # labels are exact
    assert_refused(client, url, {"labels": ["correct"]}, "labels")  # not a multi-label study
    for bad in ("", None, 3, ["correct"]):
        assert_refused(client, url, {"label": bad}, "label")
    assert_refused(client, url, {"choice": "correct"}, "body")
    assert_refused(client, url, {"label": "correct", "labels": ["correct"]}, "body")
    assert client.post(url, {"label": "incorrect"}, format="json").status_code == 201
    assert Judgment.objects.get().answer == {"labels": ["incorrect"]}


def test_multi_label_judgment():
    study = judgment_study("m", ERROR_LABELS, multi_label=True)
    client, data, url = first_item(study)
    assert data["multi_label"] is True
    assert_refused(client, url, {"labels": []}, "labels")
    assert_refused(client, url, {"labels": "ellipsis"}, "labels")
    assert_refused(client, url, {"labels": ["ellipsis", 3]}, "labels")
    messages = assert_refused(client, url, {"labels": ["ellipsis", "typo"]}, "labels")
    assert "typo" in messages[0]
    assert_refused(client, url, {"labels": ["ellipsis", "ellipsis"]}, "labels")
    assert_refused(client, url, {"label": "nonsense"}, "label")
    assert_refused(client, url, {"label": "ellipsis", "labels": ["ellipsis"]}, "body")
    resp = client.post(url, {"labels": ["other", "document-level", "ellipsis"]}, format="json")
    assert resp.status_code == 201
    # stored in the study's label order, whatever order they were sent in
    assert Judgment.objects.get().answer == {"labels": ["document-level", "ellipsis", "other"]}
    again = client.post(url, {"labels": ["ellipsis", "other", "document-level"]}, format="json")
    assert again.status_code == 200 and again.json()["judgment"] == resp.json()["judgment"]
    # one label alone is also accepted in a multi-label study
    assert client.post(url, {"label": "no error"}, format="json").status_code == 201
    assert Judgment.objects.get(is_current=True).answer == {"labels": ["no error"]}


def test_answers_to_someone_elses_assignment_are_not_found():
    study = make_study(slug="c", protocol="choice", n_items=2, n_candidates=2, settings={"redundancy": 2})
    a, b = annotators_create(study=study, count=2)
    data = annotator_client(a).get("/api/v1/annotate/next").json()
    resp = annotator_client(b).post(f"/api/v1/annotate/{data['assignment']}/judgment",
                                    {"choice": data["candidates"][0]["id"]}, format="json")
    assert resp.status_code == 404
    assert Judgment.objects.count() == 0
