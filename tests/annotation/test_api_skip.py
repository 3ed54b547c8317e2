"""``POST /api/v1/annotate/<assignment>/skip``: a skip with a reason is stored, counted in QC, and gives the
item back to the pool — to others, never to the annotator who skipped it."""
from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotation.models import Assignment, AssignmentStatus, Judgment
from annotation.quality.checks import study_quality
from annotation.handout.services import annotators_create, assignments_release_stale
from studies.models import Item
from tests.conftest import annotator_client
from tests.factories import make_study

pytestmark = pytest.mark.django_db

REASON = "The source is in a language I do not read."


def next_item(client) -> dict:
    resp = client.get("/api/v1/annotate/next")
    assert resp.status_code == 200, resp.content
    return resp.json()


def skip(client, assignment: str, body) -> Any:
    return client.post(f"/api/v1/annotate/{assignment}/skip", body, format="json")


def rank(client, data) -> int:
    ranks = {c["id"]: k + 1 for k, c in enumerate(data["candidates"])}
    return client.post(f"/api/v1/annotate/{data['assignment']}/judgment", {"ranks": ranks},
                       format="json").status_code


def item_of(data) -> Item:
    return Item.objects.get(candidates__public_id=data["candidates"][0]["id"])


def test_a_skip_is_stored_with_its_reason_and_next_serves_the_following_item():
    study = make_study(slug="skip", n_items=3, settings={"redundancy": 1})
    client = annotator_client(annotators_create(study=study)[0])
    first = next_item(client)
    resp = skip(client, first["assignment"], {"reason": f"  {REASON}  "})
    assert resp.status_code == 200
    assert resp.json() == {"assignment": first["assignment"], "status": "skipped", "reason": REASON}
    stored = Assignment.objects.get(public_id=first["assignment"])
    assert stored.status == AssignmentStatus.SKIPPED and stored.skip_reason == REASON
    assert stored.skipped_at is not None and stored.skipped_at <= timezone.now()
    assert not Judgment.objects.exists()
    following = next_item(client)
    assert following["assignment"] != first["assignment"]
    assert item_of(following) != item_of(first)
    assert following["progress"]["done"] == 0


@pytest.mark.parametrize("body, field", [
    ({}, "reason"),
    ({"reason": ""}, "reason"),
    ({"reason": "   \n\t "}, "reason"),
    ({"reason": None}, "reason"),
    ({"reason": 42}, "reason"),
    ({"reason": ["too hard"]}, "reason"),
    ({"reason": "x" * 301}, "reason"),
    ({"reason": REASON, "reson": "typo"}, "body"),
    (["a reason"], "body"),
])
def test_a_bad_reason_is_a_400_naming_the_field_and_stores_nothing(body, field):
    study = make_study(slug="bad", n_items=2, settings={"redundancy": 1})
    client = annotator_client(annotators_create(study=study)[0])
    data = next_item(client)
    resp = skip(client, data["assignment"], body)
    assert resp.status_code == 400, resp.content
    errors = resp.json()["errors"]
    assert field in errors and all(isinstance(m, str) and m for m in errors[field])
    stored = Assignment.objects.get(public_id=data["assignment"])
    assert (stored.status, stored.skip_reason, stored.skipped_at) == (AssignmentStatus.PENDING, "", None)
    assert item_of(data).n_assigned == 1
    assert next_item(client)["assignment"] == data["assignment"]  # still theirs


def test_malformed_json_is_a_400_naming_the_body():
    study = make_study(slug="malformed", n_items=1, settings={"redundancy": 1})
    client = annotator_client(annotators_create(study=study)[0])
    data = next_item(client)
    resp = client.post(f"/api/v1/annotate/{data['assignment']}/skip", "{not json", content_type="application/json")
    assert resp.status_code == 400 and "body" in resp.json()["errors"]


def test_a_reason_of_exactly_the_limit_is_kept_whole():
    study = make_study(slug="limit", n_items=1, settings={"redundancy": 1})
    client = annotator_client(annotators_create(study=study)[0])
    data = next_item(client)
    assert skip(client, data["assignment"], {"reason": "y" * 300}).status_code == 200
    assert Assignment.objects.get(public_id=data["assignment"]).skip_reason == "y" * 300


def test_the_item_goes_to_another_annotator_and_never_back_to_the_skipper():
    study = make_study(slug="pool", n_items=3, settings={"redundancy": 1})
    a, b = annotators_create(study=study, count=2)
    ca, cb = annotator_client(a), annotator_client(b)
    skipped = next_item(ca)
    item = item_of(skipped)
    assert item.n_assigned == 1 and not item.is_open
    open_before = type(study).objects.get(pk=study.pk).n_open_items
    assert skip(ca, skipped["assignment"], {"reason": REASON}).status_code == 200
    item.refresh_from_db()
    assert item.n_assigned == 0 and item.is_open  # the slot is free again, as after a stale release
    assert type(study).objects.get(pk=study.pk).n_open_items == open_before + 1
    # The skipper works through everything else and never gets the item again (API and page).
    seen_by_a = []
    while (resp := ca.get("/api/v1/annotate/next")).status_code == 200:
        seen_by_a.append(item_of(resp.json()))
        assert rank(ca, resp.json()) == 201
    assert item not in seen_by_a and len(seen_by_a) == 2
    # The other annotator gets it (the only open item left).
    taken = next_item(cb)
    assert item_of(taken) == item
    assert rank(cb, taken) == 201
    item.refresh_from_db()
    assert item.n_assigned == 1
    assert cb.get("/api/v1/annotate/next").status_code == 204


def test_the_page_never_goes_forward_to_a_skipped_item():
    from annotation.items.selectors import assignment_following
    study = make_study(slug="page", n_items=3, settings={"redundancy": 1})
    annotator = annotators_create(study=study)[0]
    client = annotator_client(annotator)
    judged = next_item(client)
    assert rank(client, judged) == 201
    skipped = next_item(client)
    assert skip(client, skipped["assignment"], {"reason": REASON}).status_code == 200
    third = next_item(client)
    first = Assignment.objects.get(public_id=judged["assignment"])
    assert assignment_following(annotator=annotator, after=first).public_id == third["assignment"]


def test_skipping_twice_gives_the_same_200_and_frees_the_slot_once():
    study = make_study(slug="twice", n_items=2, settings={"redundancy": 2})
    a, b = annotators_create(study=study, count=2)
    ca, cb = annotator_client(a), annotator_client(b)
    data = next_item(ca)
    item = item_of(data)
    while item_of(next_item(cb)) != item:  # b works on until they hold the same item: its count is 2
        assert rank(cb, next_item(cb)) == 201
    item.refresh_from_db()
    before = item.n_assigned
    assert before == 2
    first = skip(ca, data["assignment"], {"reason": REASON})
    again = skip(ca, data["assignment"], {"reason": "Another reason."})
    assert first.status_code == again.status_code == 200
    assert first.json() == again.json()  # the first reason is kept
    item.refresh_from_db()
    assert item.n_assigned == before - 1


def test_someone_elses_assignment_is_404_and_no_token_is_401(api):
    study = make_study(slug="owner", n_items=2, settings={"redundancy": 2})
    a, b = annotators_create(study=study, count=2)
    data = next_item(annotator_client(a))
    resp = skip(annotator_client(b), data["assignment"], {"reason": REASON})
    assert resp.status_code == 404 and "assignment" in resp.json()["errors"]
    assert skip(annotator_client(b), "no-such-assignment", {"reason": REASON}).status_code == 404
    assert skip(api, data["assignment"], {"reason": REASON}).status_code == 401
    assert Assignment.objects.get(public_id=data["assignment"]).status == AssignmentStatus.PENDING


def test_a_judged_assignment_is_a_409_with_a_clear_message():
    study = make_study(slug="judged", n_items=2, settings={"redundancy": 1})
    client = annotator_client(annotators_create(study=study)[0])
    data = next_item(client)
    assert rank(client, data) == 201
    resp = skip(client, data["assignment"], {"reason": REASON})
    assert resp.status_code == 409
    assert "answer" in resp.json()["detail"]
    stored = Assignment.objects.get(public_id=data["assignment"])
    assert stored.status == AssignmentStatus.DONE and stored.skip_reason == ""
    assert item_of(data).n_assigned == 1


def test_skipping_a_released_assignment_frees_nothing_more():
    """A stale reservation already gave the slot back; the skip must not give it back twice."""
    study = make_study(slug="stale", n_items=2, settings={"redundancy": 1, "reservation_minutes": 30})
    client = annotator_client(annotators_create(study=study)[0])
    data = next_item(client)
    Assignment.objects.filter(public_id=data["assignment"]).update(opened_at=timezone.now() - timedelta(hours=1))
    assert assignments_release_stale(study=study) == 1
    assert item_of(data).n_assigned == 0
    assert skip(client, data["assignment"], {"reason": REASON}).status_code == 200
    assert item_of(data).n_assigned == 0
    assert item_of(next_item(client)) != item_of(data)  # and the release is not reclaimed: it was skipped


def test_an_answer_sent_for_a_skipped_item_anyway_is_kept_and_counts_again():
    study = make_study(slug="late", n_items=2, settings={"redundancy": 1})
    client = annotator_client(annotators_create(study=study)[0])
    data = next_item(client)
    assert skip(client, data["assignment"], {"reason": REASON}).status_code == 200
    assert rank(client, data) == 201
    stored = Assignment.objects.get(public_id=data["assignment"])
    assert stored.status == AssignmentStatus.DONE and stored.skip_reason == REASON
    assert item_of(data).n_assigned == 1


def test_skipped_items_do_not_use_up_the_quota():
    study = make_study(slug="quota", n_items=5, settings={"redundancy": 1, "items_per_annotator": 2})
    client = annotator_client(annotators_create(study=study)[0])
    assert skip(client, next_item(client)["assignment"], {"reason": REASON}).status_code == 200
    judged = 0
    while (resp := client.get("/api/v1/annotate/next")).status_code == 200:
        assert rank(client, resp.json()) == 201
        judged += 1
    assert judged == 2


def test_skips_are_counted_per_annotator_in_the_quality_json(capsys):
    study = make_study(slug="qc", n_items=4, settings={"redundancy": 2})
    a, b = annotators_create(study=study, count=2)
    ca = annotator_client(a)
    for _ in range(2):
        assert skip(ca, next_item(ca)["assignment"], {"reason": REASON}).status_code == 200
    assert rank(ca, next_item(ca)) == 201
    call_command("quality", "qc", "--json")
    rows = {row["annotator"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows[a.code]["n_skipped"] == 2 and rows[a.code]["n_judgments"] == 1
    assert rows[b.code]["n_skipped"] == 0
    # The same figure for one annotator alone (its own query).
    assert [q.n_skipped for q in study_quality(study=study, annotators=[a])] == [2]


def test_an_excluded_annotators_skip_is_stored_but_frees_no_slot_and_reinclusion_does_not_count_it():
    """Their pending assignment stopped counting when they were excluded: the skip must not free it again."""
    from annotation.handout.exclusion import annotator_exclude, annotator_include
    study = make_study(slug="excl", n_items=2, settings={"redundancy": 1})
    annotator = annotators_create(study=study)[0]
    client = annotator_client(annotator)
    data = next_item(client)
    annotator_exclude(annotator=annotator, reason="Failed every check.")
    assert item_of(data).n_assigned == 0
    assert skip(client, data["assignment"], {"reason": REASON}).status_code == 200
    assert Assignment.objects.get(public_id=data["assignment"]).status == AssignmentStatus.SKIPPED
    assert item_of(data).n_assigned == 0
    annotator.refresh_from_db()
    annotator_include(annotator=annotator)
    assert item_of(data).n_assigned == 0  # a skipped assignment holds no slot, excluded or not
