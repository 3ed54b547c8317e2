"""The JSON annotation API: INTERFACES.md's contract and issue #2's acceptance."""
from __future__ import annotations

import json
from collections import Counter

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Judgment
from annotation.handout.services import annotators_create
from tests.conftest import annotator_client
from tests.factories import make_study

pytestmark = pytest.mark.django_db

FORBIDDEN = ("reference", "sys1", "sys2", "is_reference", "is_spam", "spam", "system")


def rank_all(client, data, order=None):
    ids = [c["id"] for c in data["candidates"]]
    order = order or ids
    return client.post(f"/api/v1/annotate/{data['assignment']}/judgment",
                       {"ranks": {cid: order.index(cid) + 1 for cid in ids}}, format="json")


def test_three_annotators_redundancy_two_make_twenty_judgments():
    study = make_study(n_items=10, n_candidates=3, settings={"redundancy": 2})
    annotators = annotators_create(study=study, count=3)
    clients = [annotator_client(a) for a in annotators]
    active = list(range(3))
    while active:  # round-robin, as people arriving together would
        for k in list(active):
            resp = clients[k].get("/api/v1/annotate/next")
            if resp.status_code == 204:
                active.remove(k)
                continue
            assert resp.status_code == 200
            assert rank_all(clients[k], resp.json()).status_code == 201
    judgments = Judgment.objects.filter(assignment__item__study=study)
    assert judgments.count() == 20
    per_item = Counter(judgments.values_list("assignment__item_id", flat=True))
    assert set(per_item.values()) == {2}
    for item_id in per_item:
        annot = set(judgments.filter(assignment__item_id=item_id).values_list("assignment__annotator", flat=True))
        assert len(annot) == 2


def test_impossible_client_times_are_a_400_not_a_500():
    """Well-formed but impossible times make parse_datetime raise; they are bad input like any other."""
    study = make_study(n_items=2)
    client = annotator_client(annotators_create(study=study)[0])
    data = client.get("/api/v1/annotate/next").json()
    ranks = {c["id"]: k + 1 for k, c in enumerate(data["candidates"])}
    url = f"/api/v1/annotate/{data['assignment']}/judgment"
    for key, value in (("client_started_at", "2026-02-30T10:00:00Z"), ("client_submitted_at", "2026-01-01T25:00:00"),
                       ("client_started_at", "2026-01-01T10:00:00+99:00")):
        resp = client.post(url, {"ranks": ranks, key: value}, format="json")
        assert resp.status_code == 400, value
        assert list(resp.json()["errors"]) == [key], value
    assert Judgment.objects.count() == 0


def test_next_is_stable_until_judged_and_blind():
    study = make_study(n_items=3)
    client = annotator_client(annotators_create(study=study)[0])
    first = client.get("/api/v1/annotate/next")
    again = client.get("/api/v1/annotate/next")
    assert first.json()["assignment"] == again.json()["assignment"]
    body = first.content.decode()
    for word in FORBIDDEN:
        assert word not in body.lower()
    data = first.json()
    assert data["progress"] == {"done": 0, "total": 3}
    assert data["context"]["target"] == ["TC " + data["context"]["target"][0][3:], data["context"]["target"][1]]
    assert data["source"] is None  # monolingual: no source


def test_bad_payloads_get_400_naming_the_field_and_store_nothing():
    study = make_study(n_items=2, n_candidates=3)
    other = make_study(slug="other", n_items=1)
    client = annotator_client(annotators_create(study=study)[0])
    data = client.get("/api/v1/annotate/next").json()
    ids = [c["id"] for c in data["candidates"]]
    foreign = other.items.first().candidates.first().public_id
    url = f"/api/v1/annotate/{data['assignment']}/judgment"
    cases = {
        "duplicate ranks": {"ranks": {ids[0]: 1, ids[1]: 1, ids[2]: 2}},
        "missing candidate": {"ranks": {ids[0]: 1, ids[1]: 2}},
        "unknown id": {"ranks": {ids[0]: 1, ids[1]: 2, ids[2]: 3, "nope": 3}},
        "foreign id": {"ranks": {ids[0]: 1, ids[1]: 2, foreign: 3}},
        "rank out of range": {"ranks": {ids[0]: 1, ids[1]: 2, ids[2]: 9}},
        "rank not int": {"ranks": {ids[0]: 1, ids[1]: 2, ids[2]: "3"}},
        "ranks not object": {"ranks": [1, 2, 3]},
        "wrong protocol field": {"choice": ids[0]},
        "bad time": {"ranks": {ids[0]: 1, ids[1]: 2, ids[2]: 3}, "client_started_at": "yesterday"},
    }
    for name, payload in cases.items():
        resp = client.post(url, payload, format="json")
        assert resp.status_code == 400, name
        errors = resp.json()["errors"]
        assert errors and all(isinstance(v, list) and v for v in errors.values()), name
    assert set(client.post(url, {"ranks": [1]}, format="json").json()["errors"]) == {"ranks"}
    assert "client_started_at" in client.post(url, cases["bad time"], format="json").json()["errors"]
    malformed = client.post(url, "{not json", content_type="application/json")
    assert malformed.status_code == 400 and "body" in malformed.json()["errors"]
    not_object = client.post(url, json.dumps([1, 2]), content_type="application/json")
    assert not_object.status_code == 400 and "body" in not_object.json()["errors"]
    assert Judgment.objects.count() == 0


def test_tie_refused_unless_study_allows_ties():
    study = make_study(slug="ties", n_items=1, settings={"allow_ties": True})
    client = annotator_client(annotators_create(study=study)[0])
    data = client.get("/api/v1/annotate/next").json()
    assert data["allow_ties"] is True
    ids = [c["id"] for c in data["candidates"]]
    resp = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", {"ranks": {ids[0]: 1, ids[1]: 1, ids[2]: 3}},
                       format="json")
    assert resp.status_code == 201


def test_idempotent_resubmission_and_revision_history():
    study = make_study(n_items=2)
    client = annotator_client(annotators_create(study=study)[0])
    data = client.get("/api/v1/annotate/next").json()
    ids = [c["id"] for c in data["candidates"]]
    url = f"/api/v1/annotate/{data['assignment']}/judgment"
    first = client.post(url, {"ranks": {ids[0]: 1, ids[1]: 2, ids[2]: 3}}, format="json")
    again = client.post(url, {"ranks": {ids[0]: 1, ids[1]: 2, ids[2]: 3}}, format="json")
    assert first.status_code == 201 and again.status_code == 200
    assert first.json()["judgment"] == again.json()["judgment"]
    revised = client.post(url, {"ranks": {ids[0]: 3, ids[1]: 2, ids[2]: 1}}, format="json")
    assert revised.status_code == 201 and revised.json()["judgment"] != first.json()["judgment"]
    history = list(Judgment.objects.order_by("revision").values_list("revision", "is_current"))
    assert history == [(1, False), (2, True)]


def test_someone_elses_assignment_is_404_and_no_token_is_401(api):
    study = make_study(n_items=2)
    a, b = annotators_create(study=study, count=2)
    data = annotator_client(a).get("/api/v1/annotate/next").json()
    resp = annotator_client(b).post(f"/api/v1/annotate/{data['assignment']}/judgment", {"ranks": {}}, format="json")
    assert resp.status_code == 404
    assert api.get("/api/v1/annotate/next").status_code == 401
    api.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert api.get("/api/v1/annotate/next").status_code == 401


def test_completion_code_when_nothing_is_left():
    study = make_study(n_items=1, settings={"redundancy": 1, "completion_code": "C0DE"})
    client = annotator_client(annotators_create(study=study)[0])
    assert rank_all(client, client.get("/api/v1/annotate/next").json()).status_code == 201
    resp = client.get("/api/v1/annotate/next")
    assert resp.status_code == 204 and resp["X-Completion-Code"] == "C0DE"


@pytest.mark.parametrize("n_items", [20, 400])
def test_query_counts_do_not_grow_with_study_size(n_items):
    """'next' and 'submit' run a small constant number of SQL queries, whatever the study's size."""
    study = make_study(slug=f"q{n_items}", n_items=n_items)
    client = annotator_client(annotators_create(study=study)[0])
    client.get("/api/v1/annotate/next")  # warm up
    data = client.get("/api/v1/annotate/next").json()
    rank_all(client, data)
    with CaptureQueriesContext(connection) as next_q:
        data = client.get("/api/v1/annotate/next").json()
    with CaptureQueriesContext(connection) as submit_q:
        assert rank_all(client, data).status_code == 201
    assert len(next_q) <= 12, [q["sql"] for q in next_q]
    assert len(submit_q) <= 10, [q["sql"] for q in submit_q]


@pytest.mark.parametrize("redundancy", [1, 2])
def test_next_reports_the_progress_a_fresh_count_gives(redundancy):
    """``next`` moves the counts it read with the token by its own claim (the item still open, or now full)
    or gives back the pending item unchanged: the same figures as counting again afterwards."""
    from annotation.items.selectors import progress
    study = make_study(slug=f"progress-delta-{redundancy}", n_items=6, settings={"redundancy": redundancy})
    first, second = annotators_create(study=study, count=2)
    clients = {first: annotator_client(first), second: annotator_client(second)}
    seen = []
    for annotator in (first, second, first, first, second):
        client = clients[annotator]
        data = client.get("/api/v1/annotate/next").json()
        again = client.get("/api/v1/annotate/next").json()  # the pending item given back
        annotator.refresh_from_db()
        assert data["progress"] == again["progress"] == progress(annotator=annotator)
        seen.append(data["progress"])
        assert rank_all(client, data).status_code == 201
    assert [p["done"] for p in seen] == [0, 0, 1, 2, 1]


def test_progress_counts_the_unjudged_item_while_revising_an_earlier_one():
    from annotation.items.selectors import progress
    study = make_study(slug="prog", n_items=4, settings={"redundancy": 1})
    annotator = annotators_create(study=study)[0]
    client = annotator_client(annotator)
    assert rank_all(client, client.get("/api/v1/annotate/next").json()).status_code == 201
    client.get("/api/v1/annotate/next")  # second item handed out, not judged
    assert progress(annotator=annotator) == {"done": 1, "total": 4}


def test_client_times_with_and_without_timezone_are_stored():
    """A naive client time is read as UTC (it once raised and lost the answer)."""
    study = make_study(slug="times", n_items=2, settings={"redundancy": 1})
    client = annotator_client(annotators_create(study=study)[0])
    for started, submitted, expected_ms in (("2026-11-22T10:15:00", "2026-11-22T10:15:07.5", 7500),
                                            ("2026-11-22T10:15:00+01:00", "2026-11-22T09:15:04Z", 4000)):
        data = client.get("/api/v1/annotate/next").json()
        ranks = {c["id"]: k + 1 for k, c in enumerate(data["candidates"])}
        resp = client.post(f"/api/v1/annotate/{data['assignment']}/judgment",
                           {"ranks": ranks, "client_started_at": started, "client_submitted_at": submitted},
                           format="json")
        assert resp.status_code == 201, resp.content
        judgment = Judgment.objects.get(public_id=resp.json()["judgment"])
        assert judgment.client_duration_ms == expected_ms  # the client's figure, kept beside the server's
        assert judgment.duration_ms is not None and judgment.duration_ms < 5000  # served and answered at once
        assert judgment.client_started_at.utcoffset() is not None


def test_durations_longer_than_the_column_holds_are_capped_not_refused():
    """Client clocks 26 years apart once overflowed PostgreSQL's integer column: a 500 and a lost answer."""
    from datetime import timedelta

    from django.utils import timezone

    from annotation.models import Assignment
    from annotation.handout.services import DURATION_MS_MAX

    study = make_study(slug="long", n_items=2, settings={"redundancy": 1, "reservation_minutes": 0})
    client = annotator_client(annotators_create(study=study)[0])
    data = client.get("/api/v1/annotate/next").json()
    ranks = {c["id"]: k + 1 for k, c in enumerate(data["candidates"])}
    resp = client.post(f"/api/v1/annotate/{data['assignment']}/judgment",
                       {"ranks": ranks, "client_started_at": "2000-01-01T00:00:00Z",
                        "client_submitted_at": "2026-11-22T10:15:00Z"}, format="json")
    assert resp.status_code == 201, resp.content
    stored = Judgment.objects.get(public_id=resp.json()["judgment"])
    assert stored.client_duration_ms == DURATION_MS_MAX and stored.duration_ms is not None
    assert stored.duration_ms < 5000  # the server's figure: handed out and answered at once
    # Server clock: an item opened 40 days ago and answered now.
    data = client.get("/api/v1/annotate/next").json()
    Assignment.objects.filter(public_id=data["assignment"]).update(opened_at=timezone.now() - timedelta(days=40))
    ranks = {c["id"]: k + 1 for k, c in enumerate(data["candidates"])}
    resp = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", {"ranks": ranks}, format="json")
    assert resp.status_code == 201, resp.content
    assert Judgment.objects.get(public_id=resp.json()["judgment"]).duration_ms == DURATION_MS_MAX
