"""The study page in headless Chromium: the members form's error at the form, readable audit details, and the
status card's pilot count updated when pilots are invited (htmx out-of-band swap); axe clean at 1280 and 390 px."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from studies.models import Study
from tests.browser.axe import axe_violations, describe
from tests.factories import make_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"1280": {"width": 1280, "height": 900}, "390": {"width": 390, "height": 844}}


def _signed_in_page(chromium_browser: Any, live_server: Any, viewport: dict[str, int]) -> tuple[Any, Any]:
    user = get_user_model().objects.create_user(f"boss{viewport['width']}", password="pw", is_staff=True,
                                                is_superuser=True)
    client = Client()
    client.force_login(user)
    context = chromium_browser.new_context(viewport=viewport)
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME,
                          "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": live_server.url}])
    return context, context.new_page()


def _in_viewport(page: Any, selector: str) -> bool:
    return page.evaluate("""(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
        return r.top >= 0 && r.bottom <= window.innerHeight; }""", selector)


@pytest.mark.parametrize("width", WIDTHS)
def test_unknown_member_error_is_shown_and_focused_at_the_form(chromium_browser, live_server, screenshot_dir: Path,
                                                               width):
    make_study(slug=f"members-{width}", n_items=2)
    context, page = _signed_in_page(chromium_browser, live_server, WIDTHS[width])
    try:
        page.goto(f"{live_server.url}/studies/members-{width}/")
        page.fill("#id_member_username", "nobody-here")
        page.select_option("#id_member_role", "analyst")
        page.get_by_role("button", name="Add or change").click()
        notice = page.locator("#members-notice")
        notice.wait_for()
        assert "no user 'nobody-here'" in notice.inner_text() and notice.get_attribute("role") == "alert"
        assert page.locator("ul.messages").count() == 0  # not at the top of the page, 2,500 px away
        assert _in_viewport(page, "#members-notice") and _in_viewport(page, "#id_member_username")
        focused = page.evaluate("document.activeElement.id")
        assert focused == "id_member_username"
        assert page.input_value("#id_member_username") == "nobody-here"  # what was typed is kept
        assert page.get_attribute("#id_member_username", "aria-describedby") == "members-notice"
        assert page.input_value("#id_member_role") == "analyst"
        page.screenshot(path=str(screenshot_dir / f"study-members-error-{width}.png"))
        assert not (v := axe_violations(page)), describe(v, f"members error {width}")
        page.reload()  # shown once: a reload does not repeat it
        assert page.locator("#members-notice").count() == 0
    finally:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_inviting_pilots_updates_the_status_card_and_audit_details_read_as_text(chromium_browser, live_server,
                                                                                  screenshot_dir: Path, width):
    study = make_study(slug=f"pilot-{width}", n_items=2, status="pilot")
    context, page = _signed_in_page(chromium_browser, live_server, WIDTHS[width])
    try:
        page.goto(f"{live_server.url}/studies/{study.slug}/")
        assert "Only pilot annotators (0 invited)" in page.locator("#lifecycle").inner_text()
        page.fill("#id_count", "2")
        page.locator("#annotators input[name=pilot]").check()
        page.get_by_role("button", name="Invite", exact=True).click()
        page.locator("tr.new").nth(1).wait_for(timeout=10_000)
        # no reload: the status card came out of band with the table
        page.wait_for_function("document.querySelector('#lifecycle').innerText.includes('(2 invited)')",
                               timeout=10_000)
        assert page.locator("#lifecycle").count() == 1
        assert Study.objects.get(pk=study.pk).annotators.filter(is_pilot=True).count() == 2
        page.reload()
        details = page.locator("#audit tbody tr").first.locator("td").nth(3).inner_text()
        assert "{" not in details and "'" not in details and "True" not in details
        assert [line.strip() for line in details.splitlines()] == ["count 2", "pilot yes", "via page"]
        page.locator("#lifecycle").scroll_into_view_if_needed()
        page.screenshot(path=str(screenshot_dir / f"study-pilot-invited-{width}.png"))
        page.locator("#audit").scroll_into_view_if_needed()
        page.screenshot(path=str(screenshot_dir / f"study-audit-{width}.png"))
        assert not (v := axe_violations(page)), describe(v, f"study page {width}")
    finally:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_quality_page_marks_pilot_annotators(chromium_browser, live_server, screenshot_dir: Path, width):
    from annotation.handout.services import annotators_create

    study = make_study(slug=f"quality-pilot-{width}", n_items=2, status="pilot")
    regular = annotators_create(study=study, count=2)
    pilots = annotators_create(study=study, count=1, is_pilot=True)
    context, page = _signed_in_page(chromium_browser, live_server, WIDTHS[width])
    try:
        page.goto(f"{live_server.url}/studies/{study.slug}/quality/")
        assert "(3, 1 pilot)" in page.locator("#quality-h").inner_text()
        assert page.locator(f"#q-{pilots[0].code} .badge.pilot").is_visible()
        assert all(page.locator(f"#q-{a.code} .badge.pilot").count() == 0 for a in regular)
        page.screenshot(path=str(screenshot_dir / f"quality-pilot-{width}.png"))
        assert not (v := axe_violations(page)), describe(v, f"quality page {width}")
    finally:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_scatter_labels_do_not_overlap(chromium_browser, live_server, screenshot_dir: Path, width):
    """The TED en-de MQM subset (13 systems) scored with BLEU: labels measured in the page overlap no other label."""
    from io import StringIO

    from django.core.management import call_command

    from annotation.importing.mqm import mqm_tsv_import
    from studies.demo.span import WMT_MQM_FIXTURE

    slug = f"ted-{width}"
    mqm_tsv_import(name=WMT_MQM_FIXTURE.name, content=WMT_MQM_FIXTURE.read_text(encoding="utf-8"), slug=slug,
                   unclosed="close-at-end")
    call_command("evaluate", slug, "--evaluator=bleu", stdout=StringIO())
    context, page = _signed_in_page(chromium_browser, live_server, WIDTHS[width])
    try:
        page.goto(f"{live_server.url}/reports/{slug}/compare/?bootstrap=100")
        svg = page.locator(".plots svg").first
        svg.wait_for()
        n_points = svg.locator("circle").count()
        assert n_points >= 10
        boxes = page.evaluate("""() => Array.from(document.querySelector('.plots svg').querySelectorAll('.pt-label'))
            .map(t => { const b = t.getBBox(); return [t.textContent, b.x, b.y, b.x + b.width, b.y + b.height]; })""")
        for k, a in enumerate(boxes):
            for b in boxes[k + 1:]:
                assert not (a[1] < b[3] and b[1] < a[3] and a[2] < b[4] and b[2] < a[4]), (a[0], b[0])
        caption = page.locator(".plot-figure figcaption").first.inner_text()
        named = {b[0] for b in boxes}
        unnamed = n_points - len(named)
        assert unnamed == 0 or caption.count("(human ") == unnamed  # every unlabelled point is listed with its values
        page.locator(".plots").scroll_into_view_if_needed()
        page.screenshot(path=str(screenshot_dir / f"compare-scatter-{width}.png"))
        assert not (v := axe_violations(page)), describe(v, f"compare page {width}")
    finally:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_esa_report_without_ac1_values_shows_a_sentence_not_an_empty_chart(chromium_browser, live_server,
                                                                           screenshot_dir: Path, width):
    from tests.research.test_report_charts import esa_with_phenomena

    study = esa_with_phenomena(f"esa-{width}", 1)
    context, page = _signed_in_page(chromium_browser, live_server, WIDTHS[width])
    try:
        page.goto(f"{live_server.url}/reports/{study.slug}/?bootstrap=50")
        section = page.locator("section[aria-labelledby=phen-h]")
        assert section.locator("svg").count() == 0
        note = section.locator("#phen-chart-note")
        assert note.is_visible() and note.inner_text().startswith("No AC1 chart: AC1 is undefined for every phenomenon")
        section.scroll_into_view_if_needed()
        page.screenshot(path=str(screenshot_dir / f"esa-report-phenomena-{width}.png"))
        assert not (v := axe_violations(page)), describe(v, f"ESA report {width}")
    finally:
        context.close()
