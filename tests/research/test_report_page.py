"""The report page reports/<slug>/: staff only, shows the command's numbers, policy toggles."""
from __future__ import annotations

import json
from html.parser import HTMLParser
from io import StringIO
from urllib.parse import unquote

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from tests.report_study import choice_study, ranking_study
from tests.factories import owned_import, persona

pytestmark = pytest.mark.django_db


class NumberParser(HTMLParser):
    """Collects every (data-path, data-value) pair of the page."""

    def __init__(self) -> None:
        super().__init__()
        self.numbers: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if "data-path" in a:
            self.numbers[a["data-path"]] = a.get("data-value", "")


def shown_numbers(html: str) -> dict[str, str]:
    parser = NumberParser()
    parser.feed(html)
    return parser.numbers


def lookup(report: dict, path: str):
    node = report
    for part in path.split("/"):
        part = unquote(part)
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def command_json(slug: str, **kw) -> dict:
    out = StringIO()
    call_command("agreement", slug, json=True, stdout=out, **kw)
    return json.loads(out.getvalue())


@pytest.fixture
def study():
    return ranking_study("page-rk", n_items=8)


@pytest.fixture
def staff_client(client):
    user = persona("owner")  # the owner of the studies the tests make (tests/factories.py), not a superuser
    client.force_login(user)
    return client


def page(client, slug: str, **params):
    return client.get(reverse("evaluators:report", args=[slug]), params)


def assert_page_matches(html: str, report: dict) -> int:
    numbers = shown_numbers(html)
    for path, text in numbers.items():
        expected = lookup(report, path)
        if expected is None:
            assert text == "", path
        elif isinstance(expected, float):
            assert float(text) == expected, path  # repr round-trips exactly
        else:
            assert text == str(expected), path
    return len(numbers)


def test_page_shows_the_commands_numbers(staff_client, study):
    resp = page(staff_client, study.slug)
    assert resp.status_code == 200
    html = resp.content.decode()
    report = command_json(study.slug)
    n = assert_page_matches(html, report)
    paths = shown_numbers(html)
    # every coefficient of both ties variants, per-phenomenon DiP columns, control, ranking
    for key in report["coefficients"]:
        for field in ("value", "se", "ci_low", "ci_high", "p_value"):
            assert f"coefficients/{key}/{field}" in paths
            assert f"without_ties/coefficients/{key}/{field}" in paths
    for phen in report["by_phenomenon"]:
        for col in ("n_reference_won", "n_system_won", "n_tie", "n_invalid"):
            assert f"by_phenomenon/{phen}/{col}" in paths
    assert "control/share" in paths and "ranking/systems/0/expected_wins" in paths
    assert n > 80
    # the rounded display beside the exact value, the method beside each number
    ac1 = report["coefficients"]["gwet_ac1"]["value"]
    assert f"{ac1:.4f}" in html
    assert "Gwet 2008" in html and "Fleiss 1971" in html
    # plots
    assert html.count("<svg") == 3
    assert "expected wins" in html and "Cohen&#x27;s kappa per pair of annotators" in html


def test_policies_from_the_query_string(staff_client, study):
    resp = page(staff_client, study.slug, ties="drop", spam="keep", excluded="keep")
    assert resp.status_code == 200
    html = resp.content.decode()
    report = command_json(study.slug, ties="drop", spam="keep", excluded="keep")
    assert_page_matches(html, report)
    assert "with_ties/coefficients/gwet_ac1/value" in shown_numbers(html)
    # the form shows the current choices, the commands carry the flags
    assert '<option value="drop" selected>' in html
    assert f"python manage.py agreement {study.slug} --ties drop --spam keep --excluded keep --json" in html
    assert f"agreement --judgments {study.slug}.csv --ties drop --spam keep --excluded keep --json" in html
    assert "ties=drop&amp;spam=keep&amp;excluded=keep" in html  # download links keep the policies


def test_the_commands_shown_use_the_commands_flags(staff_client, study):
    """ranking_coding=position is the command's --ranking-coding position (an underscore flag does not exist)."""
    html = page(staff_client, study.slug, ranking_coding="position").content.decode()
    assert f"python manage.py agreement {study.slug} --ranking-coding position --json" in html
    assert "--ranking_coding" not in html
    assert "ranking_coding: label a candidate pair" in html  # the help of the policies this protocol offers


def test_bad_policy_is_a_clear_400(staff_client, study):
    resp = page(staff_client, study.slug, ties="maybe")
    assert resp.status_code == 400
    html = resp.content.decode()
    assert "<code>ties</code>" in html and "&#x27;maybe&#x27; is not one of keep, drop" in html


def test_choice_study_page(staff_client):
    study = choice_study("page-ch")
    resp = page(staff_client, study.slug)
    assert resp.status_code == 200
    html = resp.content.decode()
    assert_page_matches(html, command_json(study.slug))
    assert "Sign test" in html


def test_study_without_judgments(staff_client):
    from tests.factories import make_study

    study = make_study(slug="empty-rk", n_items=3)
    resp = page(staff_client, study.slug)
    assert resp.status_code == 200
    assert "No system ranking" in resp.content.decode()
    assert "shows a hidden reference." in resp.content.decode()  # a ranking study: a reference could be contested


def test_staff_only(client, study):
    resp = page(client, study.slug)
    assert resp.status_code == 302 and "/login" in resp["Location"]
    user = get_user_model().objects.create_user("someone", password="pw")
    client.force_login(user)
    assert page(client, study.slug).status_code == 302


def test_unknown_study(staff_client):
    assert page(staff_client, "nope").status_code == 404


def test_wrong_method(staff_client, study):
    assert staff_client.post(reverse("evaluators:report", args=[study.slug])).status_code == 405


def test_names_are_escaped(staff_client):
    """System and phenomenon names come from study files: they must never become markup."""
    from annotation.handout.services import annotators_create
    from tests.factories import study_file
    from tests.report_study import answer_all

    data = study_file(slug="esc", n_items=6, n_candidates=2, protocol="choice",
                      phenomena=("<script>alert(1)</script>",),
                      settings={"options": ["neither", "tie", "invalid"], "redundancy": 2})
    for item in data["items"]:
        item["candidates"][1]["system"] = "sys1"
    study = owned_import(status="open", data=data)
    answer_all(study, annotators_create(study=study, count=2))
    html = page(staff_client, study.slug).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_judgment_study_page(staff_client):
    from annotation.handout.services import annotators_create
    from tests.factories import make_study
    from tests.report_study import answer_all

    study = make_study(slug="page-jd", protocol="judgment", n_items=10, n_candidates=1, phenomena=("a", "b"),
                       settings={"labels": ["correct", "incorrect"], "redundancy": 2})
    answer_all(study, annotators_create(study=study, count=2))
    resp = page(staff_client, study.slug)
    assert resp.status_code == 200
    html = resp.content.decode()
    report = command_json(study.slug)
    assert_page_matches(html, report)
    assert "no ties in this protocol" in html and "coefficients/cohen_kappa/value" in shown_numbers(html)
    assert report["ranking"] is None and "No system ranking" in html
    assert "No real item of this study shows a hidden reference (judgment protocol)." in html
