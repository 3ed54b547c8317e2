"""Request bodies sent with ``Transfer-Encoding: chunked`` (no Content-Length) are read, within the limit.

The WSGI server decodes the chunks; Django alone would read such a body as empty (its stream is
bounded by CONTENT_LENGTH), so a valid answer was refused as "ranks: This field is required".
Here the environ is what gunicorn hands Django (decoded bytes in ``wsgi.input``, the
Transfer-Encoding header, no CONTENT_LENGTH); tests/config/test_live_server.py sends the same
through a real gunicorn.
"""
from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.test import Client, override_settings

from annotation.models import Judgment
from annotation.handout.services import annotators_create
from tests.factories import make_study

pytestmark = pytest.mark.django_db


def _chunked_post(client: Client, path: str, body: bytes, content_type: str = "application/json"):
    environ: dict[str, Any] = {"CONTENT_TYPE": content_type, "CONTENT_LENGTH": "", "HTTP_TRANSFER_ENCODING": "chunked",
                               "wsgi.input": io.BytesIO(body)}
    return client.generic("POST", path, b"", **environ)


def _assignment(study_slug: str = "ch") -> tuple[Client, str, dict[str, int]]:
    study = make_study(slug=study_slug, n_items=2)
    annotator = annotators_create(study=study, count=1)[0]
    client = Client(HTTP_AUTHORIZATION=f"Token {annotator.token}")
    data = client.get("/api/v1/annotate/next").json()
    return client, data["assignment"], {c["id"]: k + 1 for k, c in enumerate(data["candidates"])}


def test_a_chunked_valid_submit_is_stored():
    client, assignment, ranks = _assignment()
    response = _chunked_post(client, f"/api/v1/annotate/{assignment}/judgment", json.dumps({"ranks": ranks}).encode())
    assert response.status_code == 201, response.content
    assert Judgment.objects.filter(public_id=response.json()["judgment"]).exists()


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000)
def test_a_chunked_body_over_the_limit_is_a_413_and_nothing_is_stored():
    client, assignment, ranks = _assignment()
    body = json.dumps({"ranks": ranks, "comment": "x" * 2000}).encode()
    response = _chunked_post(client, f"/api/v1/annotate/{assignment}/judgment", body)
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert "1000 bytes" in response.json()["detail"]
    assert not Judgment.objects.exists()


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000)
def test_a_chunked_body_of_exactly_the_limit_is_read():
    client, assignment, ranks = _assignment()
    body = json.dumps({"ranks": ranks}).encode()
    body = body[:-1] + b" " * (1000 - len(body)) + b"}"
    assert len(body) == 1000
    assert _chunked_post(client, f"/api/v1/annotate/{assignment}/judgment", body).status_code == 201


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000)
def test_a_chunked_page_form_over_the_limit_is_a_413_page():
    response = _chunked_post(Client(), "/admin/login/", b"username=" + b"x" * 2000,
                             content_type="application/x-www-form-urlencoded")
    assert response.status_code == 413 and response["Content-Type"].startswith("text/html")


def test_a_chunked_page_form_is_read_like_one_with_a_content_length():
    """The form fields of a chunked body reach the checks after the body is read: a NUL in a field is named."""
    response = _chunked_post(Client(), "/admin/login/", b"username=a%00b&password=x",
                             content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400 and "username" in response.content.decode()
