"""The report page of an MQM and an ESA study in headless Chromium: axe-clean at 1280 and 390 px; screenshots.

Five systems, four annotators, errors in several categories (the Discourse branch among them), so every
block of the span report shows: the WMT ranking with more than one cluster, the errors table and its stacked
bars, span agreement per pair.
"""
from __future__ import annotations

import random
from typing import Any, Callable

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.handout.services import annotators_create
from studies.importing.study_file import study_import
from tests.browser.axe import axe_violations, describe
from tests.conftest import annotator_client
from tests.factories import study_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

#: Per system: (category, severity) errors its candidates tend to get; the reference is mostly clean.
ERRORS = {
    "reference": [("Style/Awkward", "minor")],
    "sys1": [("Discourse/Pronoun reference", "minor"), ("Fluency/Punctuation", "minor")],
    "sys2": [("Discourse/Connective", "major"), ("Fluency/Grammar", "minor")],
    "sys3": [("Accuracy/Mistranslation", "major"), ("Discourse/Lexical consistency", "major")],
    "sys4": [("Accuracy/Omission", "critical"), ("Terminology/Inappropriate for context", "major")],
}
QUALITY = {"reference": 92, "sys1": 80, "sys2": 64, "sys3": 45, "sys4": 30}


def span_plan(protocol: str, seed: int) -> Callable[[int, int, str], dict]:
    rng = random.Random(seed)

    def plan(k: int, item: int, system: str) -> dict:
        spans = []
        for n, (category, severity) in enumerate(ERRORS[system]):
            if rng.random() < (0.25 if system == "reference" else 0.7):
                start = 5 + 12 * n + rng.randint(0, 2)
                span: dict[str, Any] = {"start": start, "end": start + 6 + rng.randint(0, 3),
                                        "severity": severity if protocol == "mqm" or severity != "critical" else "major"}
                if protocol == "mqm":
                    span["category"] = category
                spans.append(span)
        answer: dict[str, Any] = {"spans": spans}
        if protocol == "esa":
            answer["score"] = max(0, min(100, QUALITY[system] + rng.randint(-12, 12) + 3 * k))
        return answer

    return plan


def judged_study(slug: str, protocol: str, n_items: int = 10, n_annotators: int = 4):
    data = study_file(slug=slug, protocol=protocol, n_items=n_items, n_candidates=5,
                      settings={"redundancy": n_annotators})
    study = study_import(status="open", data=data)
    plan = span_plan(protocol, seed=len(slug))
    for k, annotator in enumerate(annotators_create(study=study, count=n_annotators)):
        client = annotator_client(annotator)
        while (resp := client.get("/api/v1/annotate/next")).status_code != 204:
            data = resp.json()
            ids = [c["id"] for c in data["candidates"]]
            cands = {c.public_id: c for c in study.items.get(candidates__public_id=ids[0]).candidates.all()}
            item = int(cands[ids[0]].item.external_id.split("-")[1])
            answers = {cid: plan(k, item, cands[cid].system) for cid in ids}
            posted = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", {"annotations": answers},
                                 format="json")
            assert posted.status_code == 201, posted.content
    return study


def login(page, live_server) -> None:
    user = get_user_model().objects.create_user("boss", password="pw", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(user)
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME,
                               "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                               "url": live_server.url}])


@pytest.mark.parametrize("protocol", ["mqm", "esa"])
def test_span_report_page_is_axe_clean_and_shows_its_blocks(browser_page, live_server, screenshot_dir, protocol):
    study = judged_study(f"browser-{protocol}", protocol)
    login(browser_page, live_server)
    page = browser_page
    problems: list[str] = []
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/reports/{study.slug}/?bootstrap=200")
        assert page.title().startswith("Report:")
        # the ranking table: five systems, a rule between clusters, the reference marked
        rows = page.locator("table.span-ranking tbody tr")
        assert rows.count() == 5
        assert page.locator("table.span-ranking tr.cluster-start").count() >= 1
        assert page.locator("table.span-ranking .ref-tag").count() == 1
        # plots: scores with CIs, errors as stacked bars with a legend in words
        assert page.locator("svg.plot").count() >= 2
        bars = page.locator("svg.plot g.error-bar")
        assert bars.count() >= 5
        if protocol == "mqm":
            assert page.locator("tbody.error-group.discourse").count() == 1
            assert page.locator('svg.plot g.error-bar[data-group="Discourse"]').count() == 3  # sys1, sys2, sys3
        # a plot keeps legible text: on a phone its figure scrolls sideways instead of shrinking the SVG
        box = page.locator("figure.span-plot").first.bounding_box()
        assert box and box["width"] <= width
        assert page.locator("figure.span-plot svg").first.bounding_box()["width"] >= 520
        # the page itself does not scroll sideways (wide tables scroll in their own region)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        problems += describe(axe_violations(page), f"{protocol} report at {width} px")
        page.screenshot(path=str(screenshot_dir / f"report-{protocol}-{width}.png"), full_page=True)
        for section in ("ranking-h", "errors-h", "spanagr-h", "paper-h"):
            page.locator(f"section:has(#{section})").screenshot(
                path=str(screenshot_dir / f"report-{protocol}-{width}-{section[:-2]}.png"))
    assert problems == []
