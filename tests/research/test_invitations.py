"""Invitation links: the CSV download, the copy-all list and the Prolific URL on the study page."""
from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from annotation.pages.links import PROLIFIC_PARAMS
from annotation.models import Annotator
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from tests.factories import make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    study = make_study(slug="inv", n_items=3, settings={"redundancy": 2, "spam_rate": 0})
    first, _second = annotators_create(study=study, count=2)
    assignment = assignment_next(annotator=first)
    assert assignment is not None
    ranks = {c.public_id: i + 1 for i, c in enumerate(ordered_candidates(assignment))}
    judgment_submit(assignment=assignment, payload={"ranks": ranks})
    return study


def test_links_csv(staff, study):
    response = staff.get(reverse("studies:links-csv", args=["inv"]))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="inv-links.csv"' in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    annotators = list(Annotator.objects.filter(study=study).order_by("sequence"))
    assert [r["annotator"] for r in rows] == [a.code for a in annotators]
    assert rows[0]["link"] == f"http://testserver/a/{annotators[0].token}/"
    assert [r["done"] for r in rows] == ["1", "0"]
    assert rows[0]["created"].startswith(str(annotators[0].created_at.year))
    assert list(rows[0]) == ["annotator", "external_id", "link", "created", "done"]


def test_links_csv_wrong_method_and_unknown_study(staff, study):
    assert staff.post(reverse("studies:links-csv", args=["inv"])).status_code == 405
    assert staff.get(reverse("studies:links-csv", args=["nope"])).status_code == 404


def test_links_csv_is_staff_only(client, django_user_model, study):
    url = reverse("studies:links-csv", args=["inv"])
    response = client.get(url)
    assert response.status_code == 302 and "/login/" in response["Location"]
    client.force_login(django_user_model.objects.create_user("outsider", password="x"))
    response = client.get(url)
    assert response.status_code == 302 and b"/a/" not in response.content


def test_study_page_has_copy_all_links_and_download(staff, study):
    page = staff.get(reverse("studies:detail", args=["inv"])).content.decode()
    assert reverse("studies:links-csv", args=["inv"]) in page and "Copy all links" in page
    tokens = [a.token for a in Annotator.objects.filter(study=study).order_by("sequence")]
    all_links = page.split('id="all-links"', 1)[1].split("</pre>", 1)[0]
    assert all_links.split(">", 1)[1].splitlines() == [f"http://testserver/a/{t}/" for t in tokens]
    # Links are text, not cut-off read-only inputs; every annotator links to their own page.
    assert 'readonly value="http' not in page
    for a in Annotator.objects.filter(study=study):
        assert reverse("studies:annotator", args=["inv", a.code]) in page


def test_study_page_shows_the_prolific_url(staff, study):
    study.prolific_study_id = "s1"
    study.save(update_fields=["prolific_study_id"])
    page = staff.get(reverse("studies:detail", args=["inv"])).content.decode()
    expected = ("http://testserver/p/inv/?PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}"
                "&amp;SESSION_ID={{%SESSION_ID%}}")
    assert expected in page
    assert 'src="/static/js/research.js"' in page


def test_prolific_placeholders_are_the_parameters_the_entry_view_reads():
    from django.test import Client

    study = make_study(slug="params", n_items=2)
    study.prolific_study_id = "s1"
    study.save(update_fields=["prolific_study_id"])
    full = {name: "x1" for name in PROLIFIC_PARAMS} | {"STUDY_ID": "s1"}
    for name in PROLIFIC_PARAMS:  # the view reads each of them: without one, it names the one missing
        query = "&".join(f"{k}={v}" for k, v in full.items() if k != name)
        response = Client().get(f"/p/params/?{query}")
        assert response.status_code == 400 and name in response.content.decode()


def test_prolific_url_enters_the_study(client, study):
    study.status = "open"
    study.prolific_study_id = "s1"
    study.save()
    url = "/p/inv/?PROLIFIC_PID=abc123&STUDY_ID=s1&SESSION_ID=x9"
    response = client.get(url)
    assert response.status_code == 302 and "/a/" in response["Location"]
    assert Annotator.objects.get(study=study, external_id="abc123")


def test_a_manager_turns_the_prolific_entry_on_and_off_on_the_study_page(staff, study):
    page = staff.get(reverse("studies:detail", args=["inv"])).content.decode()
    assert "entry is <strong>off</strong>" in page and "/p/inv/?PROLIFIC_PID" not in page
    action = reverse("studies:prolific", args=["inv"])
    assert f'action="{action}"' in page
    refused = staff.post(action, {"prolific_study_id": "not an id!"}, follow=True).content.decode()
    assert "prolific_study_id: Prolific&#x27;s STUDY_ID is 1 to 200 letters and digits" in refused
    study.refresh_from_db()
    assert study.prolific_study_id == ""
    staff.post(action, {"prolific_study_id": " 5f0a1b2c3d4e "})
    study.refresh_from_db()
    assert study.prolific_study_id == "5f0a1b2c3d4e"
    assert study.audit_events.filter(action="settings_changed", details__fields=["prolific_study_id"]).exists()
    page = staff.get(reverse("studies:detail", args=["inv"])).content.decode()
    assert "entry is <strong>on</strong>" in page and "/p/inv/?PROLIFIC_PID" in page
    staff.post(action, {"prolific_study_id": ""})
    study.refresh_from_db()
    assert study.prolific_study_id == ""


@pytest.mark.parametrize("role", ["viewer", "analyst"])
def test_only_managers_turn_the_prolific_entry_on(client, django_user_model, study, role):
    from studies.models import StudyMembership

    user = django_user_model.objects.create_user("member", password="pw", is_staff=True)
    StudyMembership.objects.create(study=study, user=user, role=role)
    client.force_login(user)
    page = client.get(reverse("studies:detail", args=["inv"])).content.decode()
    assert reverse("studies:prolific", args=["inv"]) not in page
    assert client.post(reverse("studies:prolific", args=["inv"]), {"prolific_study_id": "abc"}).status_code == 403
    study.refresh_from_db()
    assert study.prolific_study_id == ""
