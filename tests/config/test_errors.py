"""Every API error is JSON: 503 + Retry-After when the database is unreachable (nothing half-written),
413 for oversize bodies, 400 naming the body for deep nesting, JSON 404 for unknown API paths."""
from __future__ import annotations

import json
from contextlib import contextmanager
from unittest import mock

import pytest
from django.db import OperationalError, connection
from django.db.backends.base.base import BaseDatabaseWrapper
from django.test import Client, override_settings
from rest_framework.authtoken.models import Token

from annotation.models import Assignment, Judgment
from annotation.handout import services
from annotation.handout.services import annotators_create
from studies.models import Item
from tests.conftest import annotator_client
from tests.factories import make_study, persona

pytestmark = pytest.mark.django_db


@contextmanager
def database_down():
    """Every new query fails as it does when PostgreSQL is unreachable."""
    def refuse(self, *args, **kwargs):
        raise OperationalError("connection to server at 127.0.0.1, port 5432 failed: Connection refused")
    with mock.patch.object(BaseDatabaseWrapper, "ensure_connection", refuse):
        yield


def assert_503_json(response):
    assert response.status_code == 503
    assert response["Content-Type"].startswith("application/json")
    assert int(response["Retry-After"]) > 0
    assert "unreachable" in response.json()["detail"]


@pytest.fixture
def staff_token():
    user = persona("owner")  # the owner of the studies the tests make (tests/factories.py), not a superuser
    return Token.objects.create(user=user).key


def test_database_down_gives_503_json_on_the_researcher_api(staff_token):
    client = Client(HTTP_AUTHORIZATION=f"Token {staff_token}")
    with database_down():
        assert_503_json(client.get("/api/v1/studies/"))


def test_database_down_gives_503_json_on_the_annotation_api():
    study = make_study(n_items=2)
    annotator = annotators_create(study=study, count=1)[0]
    client = annotator_client(annotator)
    with database_down():
        assert_503_json(client.get("/api/v1/annotate/next"))


def test_database_down_gives_503_page_on_annotator_pages_saying_to_retry():
    study = make_study(n_items=2)
    annotator = annotators_create(study=study, count=1)[0]
    with database_down():
        response = Client().get(f"/a/{annotator.token}/item/")
    assert response.status_code == 503 and int(response["Retry-After"]) > 0
    text = response.content.decode()
    assert "not saved" in text and "send it again" in text


def test_database_failing_mid_judgment_gives_503_and_writes_nothing():
    study = make_study(n_items=2)
    annotator = annotators_create(study=study, count=1)[0]
    client = annotator_client(annotator)
    data = client.get("/api/v1/annotate/next").json()
    ranks = {c["id"]: k + 1 for k, c in enumerate(data["candidates"])}
    n_assigned = list(Item.objects.order_by("pk").values_list("n_assigned", flat=True))

    def fail_after_the_judgment_insert(execute, sql, params, many, context):
        # The judgment row is inserted (on PostgreSQL its assignment marked done in the same statement), then the
        # connection "drops" in the middle of the transaction.
        result = execute(sql, params, many, context)
        if 'INSERT INTO "annotation_judgment"' in sql:
            raise OperationalError("server closed the connection unexpectedly")
        return result

    with connection.execute_wrapper(fail_after_the_judgment_insert):
        response = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", {"ranks": ranks}, format="json")
    assert_503_json(response)
    assert Judgment.objects.count() == 0
    assert Assignment.objects.get(public_id=data["assignment"]).status != "done"
    assert list(Item.objects.order_by("pk").values_list("n_assigned", flat=True)) == n_assigned
    # Sent again once the database is back: stored once.
    again = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", {"ranks": ranks}, format="json")
    assert again.status_code == 201 and Judgment.objects.count() == 1


@pytest.mark.parametrize("path", ["/api/v1/no-such-thing", "/"])
def test_outage_outside_a_view_is_still_503(path):
    """An outage in a middleware after the view (the session being saved) reaches handler500,
    which sees the exception being handled and answers 503, JSON under /api/."""
    def session_save_fails(self, request, response):
        raise OperationalError("the database system is shutting down")
    with mock.patch("django.contrib.sessions.middleware.SessionMiddleware.process_response", session_save_fails):
        response = Client(raise_request_exception=False).get(path)
    assert response.status_code == 503 and int(response["Retry-After"]) > 0
    if path.startswith("/api/"):
        assert_503_json(response)


def test_unknown_api_path_is_json_404():
    response = Client().get("/api/v1/no-such-thing")
    assert response.status_code == 404 and response.json() == {"detail": "Not found."}


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000)
def test_oversize_body_gives_413_json_and_stores_nothing():
    study = make_study(n_items=2)
    annotator = annotators_create(study=study, count=1)[0]
    client = annotator_client(annotator)
    data = client.get("/api/v1/annotate/next").json()
    body = json.dumps({"choice": "x" * 2000})
    response = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", body, content_type="application/json")
    assert response.status_code == 413
    assert "1000 bytes" in response.json()["detail"]
    assert Judgment.objects.count() == 0


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000)
def test_oversize_body_without_content_length_is_caught_by_the_parser():
    from config.parsers import DepthLimitedJSONParser, RequestTooLarge
    import io
    with pytest.raises(RequestTooLarge):
        DepthLimitedJSONParser().parse(io.BytesIO(b'{"a": "' + b"x" * 2000 + b'"}'))


def test_deeply_nested_body_gives_400_naming_the_body():
    study = make_study(n_items=2)
    annotator = annotators_create(study=study, count=1)[0]
    client = annotator_client(annotator)
    data = client.get("/api/v1/annotate/next").json()
    body = '{"ranks": ' + "[" * 1000 + "]" * 1000 + "}"
    response = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", body, content_type="application/json")
    assert response.status_code == 400
    [message] = response.json()["errors"]["body"]
    assert "nested deeper than 64 levels" in message and "line 1" in message
    assert Judgment.objects.count() == 0


def test_deep_nesting_on_a_researcher_endpoint_is_400_json(staff_token):
    client = Client(HTTP_AUTHORIZATION=f"Token {staff_token}")
    response = client.post("/api/v1/studies/", "[" * 1000 + "]" * 1000, content_type="application/json")
    # The list endpoint only takes GET: 405, but as JSON, never a RecursionError 500.
    assert response.status_code in (400, 405) and response["Content-Type"].startswith("application/json")


def test_brackets_inside_strings_do_not_count():
    from formats.jsonlimits import json_depth_error, json_loads_limited
    text = json.dumps({"note": "[" * 500 + "{" * 500})
    assert json_depth_error(text) is None
    assert json_loads_limited(text)["note"].startswith("[[[")
    deep = '{"a": "\\"[[[", "b":\n  ' + "[" * 70 + "]" * 70 + "}"
    error = json_depth_error(deep)
    assert error is not None and error.line == 2 and error.column == 66  # the 64th "[" makes depth 65


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000)
def test_oversize_form_post_on_a_page_is_413_not_400():
    study = make_study(n_items=2)
    annotator = annotators_create(study=study, count=1)[0]
    assignment = services.assignment_next(annotator=annotator)
    response = Client().post(f"/a/{annotator.token}/item/{assignment.public_id}/", {"choice": "x" * 2000})
    assert response.status_code == 413 and b"Request too large" in response.content
    assert Judgment.objects.count() == 0


def test_history_flag_is_validated(staff_token):
    make_study(slug="h", n_items=2)
    client = Client(HTTP_AUTHORIZATION=f"Token {staff_token}")
    assert client.get("/api/v1/studies/h/judgments?history=1").status_code == 200
    response = client.get("/api/v1/studies/h/judgments?history=maybe")
    assert response.status_code == 400 and list(response.json()["errors"]) == ["history"]


@pytest.mark.parametrize("seconds", [3, 12])
def test_the_outage_retry_after_follows_the_setting(staff_token, seconds):
    client = Client(HTTP_AUTHORIZATION=f"Token {staff_token}")
    with override_settings(DB_UNAVAILABLE_RETRY_AFTER=seconds), database_down():
        api = client.get("/api/v1/studies/")
        page = Client().get("/a/some-token/item/")
    assert api["Retry-After"] == page["Retry-After"] == str(seconds)


def test_the_outage_retry_after_default_is_the_documented_few_seconds():
    """docs/deploy.md's table and config/settings.py give the same default, a few seconds."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    documented = re.search(r"^\| `DB_UNAVAILABLE_RETRY_AFTER` \| `(\d+)` \|", (root / "docs" / "deploy.md").read_text(), re.M)
    configured = re.search(r'envint\("DB_UNAVAILABLE_RETRY_AFTER", "(\d+)"\)', (root / "config" / "settings.py").read_text())
    assert documented and configured
    assert documented.group(1) == configured.group(1)
    assert 1 <= int(configured.group(1)) <= 10
