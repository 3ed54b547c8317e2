"""GET /api/v1/studies/<slug>/agreement: staff only, the same JSON as the command."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse
from rest_framework.authtoken.models import Token

from annotation.models import Judgment
from annotation.handout.services import judgment_submit
from tests.conftest import annotator_client
from tests.report_study import ranking_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    return ranking_study("api-rk", n_items=8)


@pytest.fixture
def staff(owner):
    """The researcher calling the API: the owner persona of the studies these tests make (not a superuser)."""
    return owner


def url(slug: str) -> str:
    return reverse("api-study-agreement", args=[slug])


def command_json(slug: str, **kw) -> dict:
    out = StringIO()
    call_command("agreement", slug, json=True, stdout=out, **kw)
    return json.loads(out.getvalue())


def test_same_json_as_the_command(api, study, staff):
    api.force_login(staff)
    resp = api.get(url(study.slug))
    assert resp.status_code == 200
    assert resp.json() == command_json(study.slug)


def test_query_parameters_are_the_command_options(api, study, staff):
    api.force_login(staff)
    resp = api.get(url(study.slug), {"ties": "drop", "spam": "keep", "seed": "3", "bootstrap": "20"})
    assert resp.status_code == 200
    body = resp.json()
    assert body == command_json(study.slug, ties="drop", spam="keep", seed=3, bootstrap=20)
    assert "tie" not in body["categories"] and body["policies"]["spam"] == "keep"


def test_staff_token_works(api, study, staff):
    token = Token.objects.create(user=staff)
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert api.get(url(study.slug)).status_code == 200


def test_bad_parameters_name_the_field(api, study, staff):
    api.force_login(staff)
    resp = api.get(url(study.slug), {"ties": "sometimes", "seed": "x"})
    assert resp.status_code == 400
    errors = resp.json()["errors"]
    assert set(errors) == {"ties", "seed"}
    assert "drop, keep" in errors["ties"][0]  # the schema's enum, checked by config/queryparams.py


def test_unknown_study_is_404(api, staff):
    api.force_login(staff)
    assert api.get(url("nope")).status_code == 404


def test_anonymous_non_staff_and_annotators_are_refused(api, study):
    assert api.get(url(study.slug)).status_code in (401, 403)
    user = get_user_model().objects.create_user("someone", password="pw")
    api.force_login(user)
    assert api.get(url(study.slug)).status_code == 403
    annotator = study.annotators.first()
    assert annotator_client(annotator).get(url(study.slug)).status_code in (401, 403)


def test_wrong_method(api, study, staff):
    api.force_login(staff)
    assert api.post(url(study.slug), {}).status_code == 405


def test_a_new_judgment_shows_at_once(api, study, staff):
    """The cached report must not outlive a change of the data."""
    api.force_login(staff)
    first = api.get(url(study.slug)).json()
    # a real item on which the reference was ranked first, alone
    def reference_first(j: Judgment) -> bool:
        ranks = dict(j.answer["ranks"])
        ref = ranks.pop(str(j.assignment.item.candidates.get(is_reference=True).pk))
        return ref < min(ranks.values())

    judgment = next(j for j in Judgment.objects.filter(assignment__annotator__study=study, is_current=True,
                                                      assignment__item__is_spam=False) if reference_first(j))
    assignment = judgment.assignment
    cands = list(assignment.item.candidates.order_by("position"))  # the reference first
    judgment_submit(assignment=assignment, payload={"ranks": {c.public_id: len(cands) - k for k, c in enumerate(cands)}})
    second = api.get(url(study.slug)).json()
    assert second == command_json(study.slug)
    wins = {s["system"]: s["wins"] for s in first["ranking"]["systems"]}
    wins_after = {s["system"]: s["wins"] for s in second["ranking"]["systems"]}
    assert wins_after["reference"] < wins["reference"]
