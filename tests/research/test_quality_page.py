"""The researcher's quality page: staff only, sortable (htmx and plain links), exclude with a reason, put back."""
from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Annotator, Judgment
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from tests.factories import make_study

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def study():
    study = make_study(slug="qp", protocol="choice", n_items=10, n_candidates=2,
                       settings={"spam_rate": 0.2, "seed": 8, "redundancy": 3, "options": ["neither", "tie"]})
    spammer, careful, idle = annotators_create(study=study, count=3)
    for annotator, pick_spam in ((spammer, True), (careful, False)):
        while (assignment := assignment_next(annotator=annotator)) is not None:
            cands = ordered_candidates(assignment)
            pick = next((c for c in cands if c.is_spam == pick_spam), cands[0])
            judgment_submit(assignment=assignment, payload={"choice": pick.public_id})
    return study


def codes_in_order(html: str) -> list[str]:
    return re.findall(r'<tr id="q-(a[0-9a-f]+)"', html)


def test_anonymous_and_non_staff_are_sent_to_login(client, study):
    resp = client.get("/studies/qp/quality/")
    assert resp.status_code == 302 and "login" in resp["Location"]
    user = get_user_model().objects.create_user("annot", password="pw")
    client.force_login(user)
    assert client.get("/studies/qp/quality/").status_code == 302
    code = study.annotators.first().code
    client.post(f"/studies/qp/quality/{code}/exclude/", {"reason": "x"})
    assert not Annotator.objects.get(code=code).excluded


def test_page_shows_every_annotator_with_figures(staff, study):
    resp = staff.get("/studies/qp/quality/")
    assert resp.status_code == 200
    html = resp.content.decode()
    spammer, careful, idle = study.annotators.order_by("sequence")
    assert codes_in_order(html) == [spammer.code, careful.code, idle.code]
    assert "<html" in html and 'id="quality-table"' in html and "css/quality.css" in html
    row = re.search(rf'<tr id="q-{spammer.code}".*?</tr>', html, re.S).group(0)
    assert re.findall(r'<td class="num">(?:<strong class="bad">)?([^<]*)', row)[:4] == ["12", "2", "2", "100%"]
    assert "No automatic exclusion rule" in html
    # sorting links work without JavaScript and with htmx
    assert 'href="?sort=spam_failed&amp;dir=asc"' in html and 'hx-get="?sort=spam_failed&amp;dir=asc"' in html


def test_sorting_full_page_and_htmx_fragment(staff, study):
    spammer, careful, idle = study.annotators.order_by("sequence")
    resp = staff.get("/studies/qp/quality/?sort=spam_failed&dir=desc", **HTMX)
    html = resp.content.decode()
    assert "<html" not in html and html.lstrip().startswith('<section id="quality-table"')
    assert codes_in_order(html) == [spammer.code, careful.code, idle.code]
    assert 'aria-sort="descending"' in html
    html = staff.get("/studies/qp/quality/?sort=spam_failed&dir=asc").content.decode()
    assert codes_in_order(html) == [careful.code, idle.code, spammer.code]  # stable: ties keep arrival order
    assert 'href="?sort=spam_failed&amp;dir=desc"' in html  # the next click reverses
    html = staff.get("/studies/qp/quality/?sort=median_seconds&dir=asc").content.decode()
    assert codes_in_order(html)[-1] == idle.code  # no answers: always last
    assert staff.get("/studies/qp/quality/?sort=pk&dir=sideways").status_code == 200  # unknown: arrival order


def test_exclude_needs_a_reason(staff, study):
    code = study.annotators.order_by("sequence").first().code
    resp = staff.post(f"/studies/qp/quality/{code}/exclude/", {"reason": "  "}, **HTMX)
    assert resp.status_code == 200  # htmx swaps only 2xx: the error comes back in the fragment
    html = resp.content.decode()
    assert "reason: Give a reason for excluding this annotator." in html and 'aria-invalid="true"' in html
    resp = staff.post(f"/studies/qp/quality/{code}/exclude/", {"reason": ""})
    assert resp.status_code == 400 and "reason: Give a reason" in resp.content.decode()
    assert not Annotator.objects.get(code=code).excluded


def test_exclude_and_put_back_keep_every_judgment(staff, study):
    a = study.annotators.order_by("sequence").first()
    n = Judgment.objects.filter(assignment__annotator=a).count()
    resp = staff.post(f"/studies/qp/quality/{a.code}/exclude/", {"reason": "picked every spam", "sort": "spam_failed",
                                                                 "dir": "desc"})
    assert resp.status_code == 302 and resp["Location"].endswith("/studies/qp/quality/?sort=spam_failed&dir=desc")
    a.refresh_from_db()
    assert a.excluded and a.exclusion_reason == "picked every spam"
    html = staff.get("/studies/qp/quality/").content.decode()
    assert "picked every spam" in html and "Put back" in html and "1 excluded" in html
    resp = staff.post(f"/studies/qp/quality/{a.code}/include/", **HTMX)
    assert resp.status_code == 200 and "<html" not in resp.content.decode()
    a.refresh_from_db()
    assert not a.excluded and a.exclusion_reason == ""
    assert Judgment.objects.filter(assignment__annotator=a).count() == n


def test_apply_rule_button(staff, study):
    spammer = study.annotators.order_by("sequence").first()
    study.auto_exclude_share = 0.5
    study.auto_exclude_min_checks = 2  # the spammer has answered two spam checks (the default waits for 3)
    study.save()
    html = staff.get("/studies/qp/quality/").content.decode()
    assert "Automatic exclusion above <strong>50%</strong>" in html and "Apply rule now" in html
    resp = staff.post("/studies/qp/quality/apply-rule/", **HTMX)
    assert resp.status_code == 200
    spammer.refresh_from_db()
    assert spammer.excluded and spammer.exclusion_reason == "auto: failed 2 of 2 spam checks"
    assert "auto: failed 2 of 2 spam checks" in resp.content.decode()
    assert Annotator.objects.filter(study=study, excluded=True).count() == 1


def test_wrong_method_unknown_study_and_annotator(staff, study):
    code = study.annotators.first().code
    assert staff.get(f"/studies/qp/quality/{code}/exclude/").status_code == 405
    assert staff.post("/studies/qp/quality/").status_code == 405
    assert staff.get("/studies/nope/quality/").status_code == 404
    assert staff.post("/studies/qp/quality/a00000000/exclude/", {"reason": "x"}).status_code == 404
    other = make_study(slug="other", n_items=1)
    stranger = annotators_create(study=other)[0]
    assert staff.post(f"/studies/qp/quality/{stranger.code}/exclude/", {"reason": "x"}).status_code == 404


def test_no_system_names_needed_and_constant_queries(staff, study):
    with CaptureQueriesContext(connection) as few:
        staff.get("/studies/qp/quality/")
    annotators_create(study=study, count=5)
    with CaptureQueriesContext(connection) as many:
        staff.get("/studies/qp/quality/")
    assert len(few) == len(many)


def test_pilot_annotators_are_marked(staff, study):
    """The quality page listed pilot annotators like everyone else, with nothing to tell them apart."""
    pilot = annotators_create(study=study, count=1, is_pilot=True)[0]
    page = staff.get(f"/studies/{study.slug}/quality/").content.decode()
    assert "(4, 1 pilot)" in page and 'id="pilot-note"' in page
    rows = {code: re.search(rf'<tr id="q-{code}".*?</tr>', page, re.S).group(0)
            for code in study.annotators.values_list("code", flat=True)}
    assert 'class="badge pilot"' in rows[pilot.code]
    assert all('class="badge pilot"' not in row for code, row in rows.items() if code != pilot.code)
