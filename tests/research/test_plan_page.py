"""The planning page reports/<slug>/plan/: the form, the plan of the command, errors at the fields, access."""
from __future__ import annotations

import io
import json
from html.parser import HTMLParser

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from tests.plan_study import JUDGMENT_SECONDS, esa_pilot_study
from tests.report_study import ranking_study

pytestmark = pytest.mark.django_db


class Numbers(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if "data-path" in a and "data-value" in a:
            self.values[a["data-path"]] = a["data-value"] or ""


def numbers(html: str) -> dict[str, str]:
    parser = Numbers()
    parser.feed(html)
    return parser.values


@pytest.fixture
def study():
    return esa_pilot_study("plan-page")


@pytest.fixture
def staff_client(client):
    client.force_login(get_user_model().objects.create_user("boss", password="pw", is_staff=True, is_superuser=True))
    return client


def url(slug: str) -> str:
    return reverse("evaluators:report-plan", args=[slug])


def test_the_form_then_the_commands_plan(staff_client, study) -> None:
    page = staff_client.get(url(study.slug))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="plan-form"' in html and 'id="power-table"' not in html
    assert f"{JUDGMENT_SECONDS / 3:.1f}</span> s per judgment" in html
    assert 'name="items"' in html and 'value="12"' in html  # the pilot's size as the default
    shown = staff_client.get(url(study.slug), {"items": "20", "raters_per_item": "2", "pair_a": "sys1",
                                               "pair_b": "sys2", "power": "0.8"})
    assert shown.status_code == 200
    values = numbers(shown.content.decode())
    out = io.StringIO()
    call_command("plan_study", "--pilot", study.slug, "--items", "20", "--raters-per-item", "2", "--pair", "sys1,sys2",
                 "--json", stdout=out)
    expected = json.loads(out.getvalue())
    assert values["plan/judgments"] == str(expected["plan"]["judgments"]) == str(20 * 3 * 2)
    for p in expected["plan"]["pairs"]:
        assert float(values[f"power/{p['better']}/{p['worse']}"]) == pytest.approx(p["power"])
    for s in expected["plan"]["systems"]:
        assert float(values[f"width/{s['system']}"]) == pytest.approx(s["expected_rank_width"])
    assert values["for_power/items"] == str(expected["for_power"]["items"] or "")
    assert "--pair sys1,sys2" in shown.content.decode()


@pytest.mark.parametrize(("query", "field", "message"), [
    ({"items": "5"}, "items", "greater than or equal to 10"),
    ({"items": "many"}, "items", "Enter a whole number"),
    ({"items": "20", "systems": "9"}, "systems", "less than or equal to 3"),
    ({"items": "20", "pair_a": "sys1"}, "pair_b", "Choose both systems"),
    ({"items": "20", "pair_a": "sys1", "pair_b": "sys1"}, "pair_b", "two different systems"),
    ({"items": "20", "pair_a": "sys1", "pair_b": "nobody"}, "pair_b", "Select a valid choice"),
    ({"raters_per_item": "2"}, "items", "Give the planned number of items"),
    ({"items": "20", "power": "1.5"}, "power", "less than or equal to 0.99"),
])
def test_bad_values_are_shown_at_their_fields(staff_client, study, query, field, message) -> None:
    page = staff_client.get(url(study.slug), query)
    assert page.status_code == 400
    html = page.content.decode()
    errors = html.split(f'id="{field}-errors"', 1)[1].split("</ul>", 1)[0]
    assert message in errors
    assert 'id="power-table"' not in html


def test_a_study_without_segment_scores_says_so(staff_client) -> None:
    ranked = ranking_study("plan-rk", n_items=4)
    page = staff_client.get(url(ranked.slug))
    assert page.status_code == 200
    assert "cannot be a pilot" in page.content.decode() and "no segment scores" in page.content.decode()


def test_an_outsider_gets_404_and_the_report_links_the_page(client, staff_client, study) -> None:
    outsider = get_user_model().objects.create_user("outsider", password="pw", is_staff=True)
    client.force_login(outsider)
    assert client.get(url(study.slug)).status_code == 404
    assert client.get(url("no-such-study")).status_code == 404
    staff_client.force_login(get_user_model().objects.get(username="boss"))
    report = staff_client.get(reverse("evaluators:report", args=[study.slug])).content.decode()
    assert url(study.slug) in report


def test_the_pilot_is_built_once_per_version_of_the_study_s_data(staff_client, study, monkeypatch) -> None:
    from annotation.handout.exclusion import annotator_exclude
    from annotation.models import Annotator
    from evaluators.reports import selectors

    built: list[str] = []
    real = selectors.study_pilot

    def counting(pilot_study):
        built.append(pilot_study.slug)
        return real(pilot_study)

    monkeypatch.setattr(selectors, "study_pilot", counting)
    first = staff_client.get(url(study.slug))
    again = staff_client.get(url(study.slug), {"items": "20", "raters_per_item": "1"})
    assert first.status_code == again.status_code == 200 and built == [study.slug]
    # Excluding an annotator changes the data: the pilot is built again, from one annotator's scores.
    annotator_exclude(annotator=Annotator.objects.filter(study=study).order_by("pk").first(), reason="test")
    after = staff_client.get(url(study.slug))
    assert after.status_code == 200 and built == [study.slug, study.slug]
    assert after.content != first.content
    staff_client.get(url(study.slug))
    assert len(built) == 2
