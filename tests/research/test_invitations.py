"""Invitation links: the CSV download, the copy-all list and the Prolific URL on the study page."""
from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from annotation.links import PROLIFIC_PARAMS
from annotation.models import Annotator
from annotation.selectors import ordered_candidates
from annotation.services import annotators_create, assignment_next, judgment_submit
from annotation.views import PROLIFIC_SESSION_PARAMS
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
    page = staff.get(reverse("studies:detail", args=["inv"])).content.decode()
    expected = ("http://testserver/p/inv/?PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}"
                "&amp;SESSION_ID={{%SESSION_ID%}}")
    assert expected in page
    assert 'src="/static/js/research.js"' in page


def test_prolific_placeholders_are_the_parameters_the_entry_view_reads():
    assert set(PROLIFIC_PARAMS) == {"PROLIFIC_PID", *PROLIFIC_SESSION_PARAMS}


def test_prolific_url_enters_the_study(client, study):
    study.status = "open"
    study.save()
    url = "/p/inv/?PROLIFIC_PID=abc123&STUDY_ID=s1&SESSION_ID=x9"
    response = client.get(url)
    assert response.status_code == 302 and "/a/" in response["Location"]
    assert Annotator.objects.get(study=study, external_id="abc123")
