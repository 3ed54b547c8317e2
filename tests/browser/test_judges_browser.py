"""The LLM judges' section of the report page in headless Chromium at 1280 and 390 px; screenshots."""
from __future__ import annotations

import json

import pytest

from evaluators.judges.importing import judge_import
from tests.browser.test_report_browser import login
from tests.report_study import ranking_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_judges_section_in_the_browser(browser_page, live_server, screenshot_dir):
    study = ranking_study("browser-jd", n_items=24, n_annotators=3)
    lines = [json.dumps({"item": i.external_id, "ranks": {"reference": 1, "sys1": 2, "sys2": 3}})
             for i in study.items.filter(is_spam=False).order_by("pk")]
    judge_import(study=study, name="gpt-4o", file_name="gpt-4o.jsonl", content="\n".join(lines) + "\n",
                 description="zero-shot, prompt v1")
    login(browser_page, live_server)
    page = browser_page
    page.goto(f"{live_server.url}/reports/{study.slug}/#judges")
    section = page.locator("#judges")
    assert section.is_visible()
    assert section.locator("h3").inner_text().startswith("gpt-4o")
    assert section.locator("table.judge-test tbody tr").count() == 3  # all items and two phenomena
    assert section.locator("table.judge-ranking tbody tr").count() == 3
    section.screenshot(path=str(screenshot_dir / "report-judges-1280.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    # Narrow screens scroll the tables inside their boxes; the page itself never scrolls sideways.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    section.screenshot(path=str(screenshot_dir / "report-judges-390.png"))
