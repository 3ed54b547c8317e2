"""The comparison page of an MQM study in headless Chromium: MQM human column, meta table, 1280 and 390 px, axe."""
from __future__ import annotations

import pytest

from evaluators.metrics.scores import scores_import
from tests.browser.test_compare_browser import login
from tests.compare_study import score_csv
from tests.evaluators.comparison.test_compare_span import span_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_mqm_compare_page_in_the_browser(browser_page, live_server, screenshot_dir):
    from tests.browser.axe import axe_violations, describe

    study = span_study("mqm", "browser-cmp-mqm")  # oracle and reversed scores imported
    scores_import(study=study, file_name="e.csv", content=score_csv(name="errors", reverse=True, hib="false"))
    login(browser_page, live_server)
    page = browser_page
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/reports/{study.slug}/compare/?bootstrap=100")
        text = page.locator("body").inner_text()
        assert "Human (MQM points, lower is better)" in text
        assert page.locator("select[name=human_score]").count() == 0  # no pairwise score to choose for MQM
        assert page.locator(".plots svg circle").count() == 3 * 4  # 3 evaluators × 4 non-reference systems
        rows = page.locator("section[aria-labelledby=meta-h] table").first.locator("tbody tr")
        by_metric = {rows.nth(k).locator("td").nth(1).inner_text(): rows.nth(k).locator("td").nth(2).inner_text()
                     for k in range(rows.count())}
        # the oracle and the lower-is-better error count agree with MQM; the reversed metric never does
        assert by_metric == {"oracle": "1.000", "errors": "1.000", "reversed": "0.000"}
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        page.screenshot(path=str(screenshot_dir / f"compare-mqm-{width}.png"), full_page=True)
        found = axe_violations(page)
        assert not found, describe(found, f"MQM compare page {width}px")
