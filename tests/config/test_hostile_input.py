"""NUL characters and lone surrogates anywhere in a request — path, query, header value, form field,
JSON key or value — give a 400 naming where they were (JSON under /api/, a short page elsewhere) and
store nothing (config/middleware.py, config/parsers.py, config/safetext.py)."""
from __future__ import annotations

import io
import json
from datetime import datetime, timezone

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation.models import Annotator, Assignment, Judgment
from annotation.handout.services import annotators_create
from config.parsers import DepthLimitedJSONParser, UnsafeText
from config.safetext import json_problem, printable, text_problem
from tests.conftest import annotator_client
from tests.factories import make_study, persona

pytestmark = pytest.mark.django_db

STARTED = "2026-11-22T10:15:00.000Z"


def judgment_study():
    return make_study(slug="judge", protocol="judgment", n_items=3, n_candidates=1,
                      settings={"labels": ["correct", "incorrect", "unsure"]})


def api_assignment(annotator: Annotator):
    client = annotator_client(annotator)
    data = client.get("/api/v1/annotate/next").json()
    return client, data["assignment"]


def page_assignment(client: Client, annotator: Annotator) -> str:
    response = client.get(f"/a/{annotator.token}/item/")
    assert response.status_code == 302
    return response["Location"]


def assert_400_json(response, field: str, *words: str) -> str:
    assert response.status_code == 400, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    errors = json.loads(response.content)["errors"]  # valid UTF-8 JSON: the bad character is not echoed
    assert list(errors) == [field], errors
    [message] = errors[field]
    for word in words:
        assert word in message, message
    assert "Nothing was stored" in message
    return message


def assert_400_page(response, *words: str) -> str:
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    text = response.content.decode("utf-8")
    assert "Bad request" in text and "Nothing was stored" in text
    for word in words:
        assert word in text, text
    return text


# --- the annotator API ----------------------------------------------------------------------------

def test_clean_answer_through_the_api_is_stored():
    """The control: the same answer without the bad character is stored, with its client time."""
    annotator = annotators_create(study=judgment_study(), count=1)[0]
    client, assignment = api_assignment(annotator)
    response = client.post(f"/api/v1/annotate/{assignment}/judgment",
                           {"label": "correct", "client_started_at": STARTED}, format="json")
    assert response.status_code == 201
    assert Judgment.objects.get().client_started_at == datetime(2026, 11, 22, 10, 15, tzinfo=timezone.utc)


@pytest.mark.parametrize("body, field, words", [
    ('{"label": "correct", "client_started_at": "2026-11-22T10:15:00.000Z\\u0000"}',
     "client_started_at", ["NUL", "U+0000"]),
    ('{"label": "correct", "\\ud800": 1}', "body", ["field name", "\\ud800", "lone surrogate (U+D800)"]),
    ('{"label": "correct\\udfff"}', "label", ["lone surrogate (U+DFFF)"]),
    ('{"label": "correct", "note": {"a": ["ok", "x\\u0000"]}}', "note.a[1]", ["NUL"]),
    ('{"label": "correct", "note": {"k\\u0000": 1}}', "note", ["field name", "k\\u0000"]),
    ('"\\u0000"', "body", ["The body contains a NUL"]),
], ids=["nul-in-client-started-at", "surrogate-key", "surrogate-value", "nested-nul", "nul-in-nested-key",
        "nul-document"])
def test_bad_characters_in_a_json_body_are_400_naming_the_field(body, field, words):
    annotator = annotators_create(study=judgment_study(), count=1)[0]
    client, assignment = api_assignment(annotator)
    response = client.post(f"/api/v1/annotate/{assignment}/judgment", body, content_type="application/json")
    assert_400_json(response, field, *words)
    assert not Judgment.objects.exists()
    assert Assignment.objects.get(public_id=assignment).status != "done"


def test_an_escaped_surrogate_pair_is_ordinary_text():
    """An escaped pair is one character (U+1F600), not a lone surrogate."""
    parsed = DepthLimitedJSONParser().parse(io.BytesIO(b'{"label": "ok \\ud83d\\ude00"}'))
    assert parsed == {"label": "ok \U0001F600"}


@pytest.mark.parametrize("path", ["/api/v1/annotate/abc%00def/judgment", "/api/v1/annotate/%00/judgment"])
def test_nul_in_the_assignment_id_is_400_naming_the_path(path):
    annotator = annotators_create(study=judgment_study(), count=1)[0]
    client, _ = api_assignment(annotator)
    response = client.post(path, {"label": "correct"}, format="json")
    assert_400_json(response, "path", "URL path", "NUL")
    assert not Judgment.objects.exists()


def test_nul_in_the_query_or_a_header_of_the_annotator_api_is_400():
    annotator = annotators_create(study=judgment_study(), count=1)[0]
    client = annotator_client(annotator)
    assert_400_json(client.get("/api/v1/annotate/next?lang=fr%00"), "lang", "query parameter", "NUL")
    assert_400_json(client.get("/api/v1/annotate/next?x%00=1"), "query", "query parameter name", "x\\u0000")
    assert_400_json(client.get("/api/v1/annotate/next", HTTP_X_CLIENT_NOTE="a\x00b"), "X-Client-Note", "header")
    assert_400_json(client.get("/api/v1/annotate/next", HTTP_X_CLIENT_NOTE="a\ud800"), "X-Client-Note", "U+D800")
    bad_token = Client(HTTP_AUTHORIZATION=f"Token {annotator.token}\x00")
    assert_400_json(bad_token.get("/api/v1/annotate/next"), "Authorization", "header")
    assert not Assignment.objects.exists()  # none of them reached the hand-out


# --- the annotator pages --------------------------------------------------------------------------

def test_clean_answer_through_the_page_is_stored():
    annotator = annotators_create(study=judgment_study(), count=1)[0]
    client = Client()
    location = page_assignment(client, annotator)
    response = client.post(location, {"label": "correct", "client_started_at": STARTED})
    assert response.status_code == 303
    assert Judgment.objects.get().client_started_at is not None


@pytest.mark.parametrize("multipart", [True, False], ids=["multipart", "urlencoded"])
def test_nul_in_a_form_field_of_the_page_is_400_and_stores_nothing(multipart):
    annotator = annotators_create(study=judgment_study(), count=1)[0]
    client = Client()
    location = page_assignment(client, annotator)
    data = {"label": "correct", "client_started_at": STARTED + "\x00"}
    if multipart:
        response = client.post(location, data)
    else:
        from urllib.parse import urlencode
        response = client.post(location, urlencode(data), content_type="application/x-www-form-urlencoded")
    assert_400_page(response, "client_started_at", "NUL")
    assert not Judgment.objects.exists()


@pytest.mark.parametrize("multipart", [True, False], ids=["multipart", "urlencoded"])
def test_nul_in_a_form_field_name_is_400(multipart):
    annotator = annotators_create(study=judgment_study(), count=1)[0]
    client = Client()
    location = page_assignment(client, annotator)
    data = {"label": "correct", "x\x00": "1"}
    if multipart:
        response = client.post(location, data)
    else:
        from urllib.parse import urlencode
        response = client.post(location, urlencode(data), content_type="application/x-www-form-urlencoded")
    assert_400_page(response, "form field name", "x\\u0000")
    assert not Judgment.objects.exists()


def test_nul_in_the_path_query_or_header_of_a_page_is_400():
    annotator = annotators_create(study=judgment_study(), count=1)[0]
    assert_400_page(Client().get(f"/a/{annotator.token}/item/%00/"), "URL path")
    assert_400_page(Client().get(f"/a/{annotator.token}%00/item/"), "URL path")
    assert_400_page(Client().get(f"/a/{annotator.token}/item/?next=%00"), "query parameter", "next")
    assert_400_page(Client().get(f"/a/{annotator.token}/item/", HTTP_USER_AGENT="Mozilla\x00"), "User-Agent")
    assert not Assignment.objects.exists()


def test_the_page_escapes_what_it_names():
    annotator = annotators_create(study=judgment_study(), count=1)[0]
    client = Client()
    location = page_assignment(client, annotator)
    text = assert_400_page(client.post(location, {"<b>x</b>": "\x00"}))
    assert "<b>x</b>" not in text and "&lt;b&gt;x&lt;/b&gt;" in text


# --- a researcher endpoint ------------------------------------------------------------------------

@pytest.fixture
def researcher() -> Client:
    user = persona("owner")  # the owner of the studies the tests make (tests/factories.py), not a superuser
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")


def test_nul_on_the_researcher_api_is_400(researcher):
    make_study(slug="s1", n_items=2)
    assert researcher.get("/api/v1/studies/s1/judgments").status_code == 200  # the control
    assert_400_json(researcher.get("/api/v1/studies/s1%00/judgments"), "path", "URL path")
    assert_400_json(researcher.get("/api/v1/studies/s1/judgments?history=1%00"), "history", "NUL")
    assert_400_json(researcher.get("/api/v1/studies/", HTTP_ACCEPT_LANGUAGE="en\x00"), "Accept-Language", "header")


def test_researcher_pages_refuse_nul_in_forms():
    user = persona("owner")  # the owner of the studies the tests make (tests/factories.py), not a superuser
    make_study(slug="s2", n_items=2)
    client = Client()
    client.force_login(user)
    assert_400_page(client.post("/studies/s2/status/", {"status": "closed\x00"}), "status", "NUL")
    from studies.models import Study
    assert Study.objects.get(slug="s2").status == "open"


def test_the_parser_refuses_what_the_api_would_store():
    parser = DepthLimitedJSONParser()
    with pytest.raises(UnsafeText) as raised:
        parser.parse(io.BytesIO(b'{"spans": [{"note": "ok"}, {"note": "\\u0000"}]}'))
    detail = json.loads(json.dumps(raised.value.detail))
    assert detail["errors"]["spans[1].note"][0].startswith("spans[1].note contains a NUL")
    assert parser.parse(io.BytesIO('{"note": "é ✓ 😀"}'.encode())) == {"note": "é ✓ 😀"}


def test_safetext_helpers():
    assert text_problem("plain text, é, 中文, 😀") is None
    assert text_problem("a\x00") == "contains a NUL character (U+0000)"
    assert "U+DC80" in (text_problem("\udc80") or "")
    assert printable("a\x00b\ud800") == "a\\u0000b\\ud800"
    assert json_problem({"a": [1, 2.5, None, True, {"b": "fine"}]}) is None
    assert json_problem({"a": [{"b": "x"}, {"b": "\ud800"}]}) == (
        "a[1].b", "a[1].b contains a lone surrogate (U+D800), which is not valid Unicode text.")
