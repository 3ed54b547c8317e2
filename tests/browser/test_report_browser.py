"""The report page in headless Chromium: plots render, toggles work, numbers match; screenshot."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from tests.report_study import ranking_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def login(page, live_server) -> None:
    user = get_user_model().objects.create_user("boss", password="pw", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(user)
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME,
                               "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                               "url": live_server.url}])


def test_report_page_in_the_browser(browser_page, live_server, screenshot_dir):
    study = ranking_study("browser-rk", n_items=24, n_annotators=4)
    login(browser_page, live_server)
    page = browser_page
    page.goto(f"{live_server.url}/reports/{study.slug}/")
    assert page.title().startswith("Report:")
    # three server-rendered SVG plots, with visible marks
    assert page.locator("svg.plot").count() == 3
    assert page.locator("svg.plot circle").count() >= 3 + 2  # systems + phenomena
    box = page.locator("svg.plot").first.bounding_box()
    assert box and box["width"] > 300 and box["height"] > 100
    out = StringIO()
    call_command("agreement", study.slug, json=True, stdout=out)
    report = json.loads(out.getvalue())
    shown = page.locator('[data-path="coefficients/gwet_ac1/value"]').get_attribute("data-value")
    assert float(shown) == report["coefficients"]["gwet_ac1"]["value"]
    page.set_viewport_size({"width": 1440, "height": 900})
    page.screenshot(path=str(screenshot_dir / "report.png"), full_page=True)

    # policy toggle through the form: ties dropped
    page.select_option("select[name=ties]", "drop")
    page.click("text=Recompute")
    page.wait_for_url("**ties=drop**")
    assert page.locator('[data-path="with_ties/coefficients/gwet_ac1/value"]').count() == 1
    out = StringIO()
    call_command("agreement", study.slug, ties="drop", json=True, stdout=out)
    dropped = json.loads(out.getvalue())
    shown = page.locator('[data-path="coefficients/gwet_ac1/value"]').get_attribute("data-value")
    assert float(shown) == dropped["coefficients"]["gwet_ac1"]["value"]
    assert page.locator("select[name=ties]").input_value() == "drop"
