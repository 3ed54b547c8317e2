"""The researcher API checks its query parameters against its own OpenAPI schema (config/queryparams.py).

Unknown parameters are a 400 naming them (never silently ignored), values must match the
declared type, enum and range (an empty value included), errors are JSON even when CSV was
asked for, and the schema says all of this.
"""
from __future__ import annotations

import json

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation.handout.services import annotators_create
from tests.factories import make_study, persona

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client() -> Client:
    user = persona("owner")  # the owner of the studies the tests make (tests/factories.py), not a superuser
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")


@pytest.fixture
def study():
    return make_study(slug="qp", n_items=2)


@pytest.mark.parametrize("path", ["/api/v1/studies/", "/api/v1/studies/qp/judgments",
                                  "/api/v1/studies/qp/agreement", "/api/v1/studies/qp/compare"])
def test_unknown_parameters_are_a_400_naming_each(staff_client, study, path):
    response = staff_client.get(path, {"limit": "-1", "page": "-1", "alpha": "2"})
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    errors = response.json()["errors"]
    assert set(errors) == {"limit", "page", "alpha"}
    assert "Unknown parameter" in errors["alpha"][0]


@pytest.mark.parametrize("query, field, message", [
    ("ties=", "ties", "is not one of drop, keep"),
    ("weights=", "weights", "is not one of"),
    ("seed=1.5", "seed", "not a whole number"),
    ("seed=%205", "seed", "not a whole number"),
    ("bootstrap=0", "bootstrap", "between 1 and 100000"),
    ("ties=keep&ties=drop", "ties", "once"),
])
def test_agreement_values_must_match_the_schema(staff_client, study, query, field, message):
    response = staff_client.get(f"/api/v1/studies/qp/agreement?{query}")
    assert response.status_code == 400
    assert message in response.json()["errors"][field][0]


def test_an_empty_evaluator_name_on_compare_is_refused_by_name(staff_client, study):
    response = staff_client.get("/api/v1/studies/qp/compare?evaluator=")
    assert response.status_code == 400
    assert response.json()["errors"] == {"evaluator": ["May not be empty."]}


def test_judgment_errors_are_json_even_when_csv_was_asked_for(staff_client, study):
    response = staff_client.get("/api/v1/studies/qp/judgments?format=csv&history=null")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert "history" in json.loads(response.content)["errors"]
    missing = staff_client.get("/api/v1/studies/no-such-study/judgments?format=csv")
    assert missing.status_code == 404 and missing["Content-Type"] == "application/json"
    assert staff_client.get("/api/v1/studies/qp/judgments?format=csv&history=1")["Content-Type"].startswith("text/csv")


def test_an_unknown_format_is_a_400_not_a_404(staff_client, study):
    response = staff_client.get("/api/v1/studies/qp/judgments?format=xml")
    assert response.status_code == 400 and "format" in response.json()["errors"]
    listing = staff_client.get("/api/v1/studies/?format=api")
    assert listing.status_code == 400 and listing["Content-Type"] == "application/json"


def test_authentication_comes_before_the_parameter_check(study):
    assert Client().get("/api/v1/studies/qp/agreement?alpha=2").status_code == 401


def test_valid_parameters_are_accepted(staff_client, study):
    assert staff_client.get("/api/v1/studies/qp/judgments?format=json&history=false").status_code == 200
    assert staff_client.get("/api/v1/studies/qp/agreement?ties=drop&seed=7&bootstrap=10").status_code == 200


def test_the_annotation_api_is_not_checked():
    """Annotator clients may add cache busters; the annotation endpoints take no query parameters."""
    annotator = annotators_create(study=make_study(slug="qp2", n_items=2), count=1)[0]
    client = Client(HTTP_AUTHORIZATION=f"Token {annotator.token}")
    assert client.get("/api/v1/annotate/next?_=1732400000").status_code == 200


def test_the_schema_says_what_is_enforced(staff_client):
    schema = staff_client.get("/api/v1/schema/?format=json").json()
    for path, operations in schema["paths"].items():
        for operation in operations.values():
            for code, response in operation["responses"].items():
                if code[0] in "45":
                    assert list(response["content"]) == ["application/json"], (path, code)
            for parameter in operation.get("parameters", []):
                kind = parameter["schema"]
                kind = kind.get("items", kind) if kind.get("type") == "array" else kind
                if kind.get("type", "string") == "string":
                    assert "enum" in kind or kind.get("minLength") == 1, (path, parameter["name"])
            if path.startswith("/api/v1/studies/"):
                assert "not listed here are refused with 400" in operation["description"]
                assert "400" in operation["responses"]
    slug = next(p for p in schema["paths"]["/api/v1/studies/{slug}/agreement"]["get"]["parameters"] if p["name"] == "slug")
    assert slug["schema"]["pattern"] == "^[-a-zA-Z0-9_]+$"


def test_every_researcher_operation_of_the_schema_is_checked(staff_client):
    """The check lives in the researcher views' base class: an endpoint added without it would take any
    parameter silently. Each operation's view, resolved from its path, must be a SchemaCheckedAPIView."""
    from django.urls import resolve

    from config.queryparams import SchemaCheckedAPIView

    schema = staff_client.get("/api/v1/schema/?format=json").json()
    paths = [path for path in schema["paths"] if path.startswith("/api/v1/studies/")]
    assert len(paths) >= 4
    for path in paths:
        view = resolve(path.replace("{slug}", "qp")).func
        assert issubclass(view.cls, SchemaCheckedAPIView), path  # type: ignore[attr-defined]


def test_a_refused_format_is_negotiated_on_the_accept_header_after_authentication(staff_client, study):
    response = staff_client.get("/api/v1/studies/qp/judgments?format=xml", HTTP_ACCEPT="text/csv")
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert "format" in response.json()["errors"]
    assert Client().get("/api/v1/studies/?format=xml").status_code == 401
