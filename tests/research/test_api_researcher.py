"""The researcher API: /api/v1/studies/ and /api/v1/studies/<slug>/judgments, staff only; the schema."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from annotation.exporting.judgments import COLUMNS, judgment_rows
from tests.factories import make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_api(admin_user) -> APIClient:
    client = APIClient()
    client.force_authenticate(admin_user)
    return client


def judged_study(slug: str = "api"):
    study = make_study(slug=slug, n_items=3, settings={"redundancy": 1})
    annotator = annotators_create(study=study, count=1)[0]
    while (assignment := assignment_next(annotator=annotator)) is not None:
        cands = ordered_candidates(assignment)
        judgment_submit(assignment=assignment, payload={"ranks": {c.public_id: k + 1 for k, c in enumerate(cands)}})
    return study


def test_study_list(staff_api):
    judged_study()
    response = staff_api.get(reverse("api-studies"))
    assert response.status_code == 200
    [row] = response.json()
    assert row["slug"] == "api" and row["protocol"] == "ranking" and row["status"] == "open"
    assert (row["n_items"], row["n_spam"], row["n_annotators"], row["n_done"], row["n_needed"]) == (3, 0, 1, 3, 3)
    assert row["progress"] == 1.0


def test_judgments_json_same_as_export(staff_api):
    study = judged_study()
    response = staff_api.get(reverse("api-study-judgments", args=["api"]))
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    rows = json.loads(b"".join(response.streaming_content))
    assert len(rows) == 9 and list(rows[0]) == COLUMNS
    exported = list(judgment_rows(study))
    assert [(r["item"], r["system"], r["rank"]) for r in rows] == [(r["item"], r["system"], r["rank"]) for r in exported]


def test_judgments_csv(staff_api):
    judged_study()
    response = staff_api.get(reverse("api-study-judgments", args=["api"]) + "?format=csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert len(rows) == 9 and list(rows[0]) == COLUMNS


def test_unknown_slug_404(staff_api):
    assert staff_api.get(reverse("api-study-judgments", args=["nope"])).status_code == 404


def test_anonymous_and_non_staff_refused(django_user_model):
    judged_study()
    anonymous = APIClient()
    assert anonymous.get(reverse("api-studies")).status_code == 401
    assert anonymous.get(reverse("api-study-judgments", args=["api"])).status_code == 401
    user = django_user_model.objects.create_user("u", password="x")
    client = APIClient()
    client.force_authenticate(user)
    assert client.get(reverse("api-studies")).status_code == 403


def test_annotator_token_is_not_a_staff_token():
    study = judged_study()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {study.annotators.get().token}")
    assert client.get(reverse("api-studies")).status_code == 401


def test_staff_token_from_command(admin_user, django_user_model):
    judged_study()
    out = io.StringIO()
    call_command("create_api_token", admin_user.username, stdout=out)
    key = out.getvalue().strip()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get(reverse("api-studies")).status_code == 200
    again = io.StringIO()
    call_command("create_api_token", admin_user.username, stdout=again)
    assert again.getvalue().strip() == key
    django_user_model.objects.create_user("plain", password="x")
    with pytest.raises(CommandError, match="not staff"):
        call_command("create_api_token", "plain")
    with pytest.raises(CommandError, match="no user"):
        call_command("create_api_token", "ghost")


def test_session_auth_works(client, admin_user):
    judged_study()
    client.force_login(admin_user)
    assert client.get(reverse("api-studies")).status_code == 200


def test_schema_generates_and_documents_the_researcher_api(staff_api):
    from drf_spectacular.drainage import GENERATOR_STATS
    from drf_spectacular.generators import SchemaGenerator

    from research.urls import api as api_urls

    GENERATOR_STATS.reset()
    schema = SchemaGenerator(patterns=api_urls.urlpatterns).get_schema(request=None, public=True)
    assert not GENERATOR_STATS._warn_cache and not GENERATOR_STATS._error_cache
    assert {"/studies/", "/studies/{slug}/judgments"} <= set(schema["paths"])
    response = staff_api.get("/api/v1/schema/", {"format": "json"})
    assert response.status_code == 200
    paths = json.loads(response.content)["paths"]
    assert "/api/v1/studies/" in paths and "/api/v1/studies/{slug}/judgments" in paths
