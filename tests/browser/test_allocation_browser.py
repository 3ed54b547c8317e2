"""An adaptive study in headless Chromium: once simulated annotators have settled it, a newcomer's link leads to
the end of the work, and the study page's "Adaptive allocation" card says settled with the decided pairs; axe
clean at 1280 and 390 px."""
from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.handout import services
from annotation.models import Assignment
from studies.importing.study_file import study_import
from tests.annotation.test_adaptive_allocation import _da_file, _run
from tests.browser.axe import axe_violations, describe
from tests.factories import owned

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"1280": {"width": 1280, "height": 900}, "390": {"width": 390, "height": 844}}


def _settled_study(slug: str):
    study = owned(study_import(status="open", data=_da_file(slug, n_items=60, allocation={
        "policy": "adaptive", "warmup": 5, "target": "top"})))
    _run(study, services.annotators_create(study=study, count=3), random.Random(8))
    study.refresh_from_db()
    assert study.allocation_state["settled"] is True
    return study


@pytest.mark.parametrize("width", WIDTHS)
def test_settled_study_sends_a_newcomer_to_the_end_and_says_so_on_its_page(chromium_browser, live_server,
                                                                          screenshot_dir: Path, width):
    study = _settled_study(f"alloc-browser-{width}")
    newcomer = services.annotators_create(study=study)[0]
    context = chromium_browser.new_context(viewport=WIDTHS[width])
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/a/{newcomer.token}/")
        page.goto(f"{live_server.url}/a/{newcomer.token}/item/")
        page.wait_for_url(re.compile(r"/done/?$"))
        assert not Assignment.objects.filter(annotator=newcomer).exists()

        user = get_user_model().objects.create_user(f"researcher{width}", password="pw", is_staff=True,
                                                    is_superuser=True)
        client = Client()
        client.force_login(user)
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME,
                              "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": live_server.url}])
        page.goto(f"{live_server.url}/studies/{study.slug}/")
        card = page.get_by_test_id("allocation")
        card.wait_for()
        assert page.get_by_test_id("allocation-settled").inner_text() == "Settled"
        text = card.inner_text()
        assert "reference vs sys1" in text and "sys1 better" in text
        assert "open — outside the target set" in page.locator("tr", has_text="reference vs sys2").inner_text()
        card.scroll_into_view_if_needed()
        page.screenshot(path=str(screenshot_dir / f"study-allocation-settled-{width}.png"))
        assert not (v := axe_violations(page)), describe(v, f"allocation card {width}")
    finally:
        context.close()


def test_a_study_set_to_close_when_settled_closes_and_its_page_says_so(chromium_browser, live_server,
                                                                       screenshot_dir: Path):
    """A small DA study, simulated annotators through the hand-out: it closes itself once settled, the study page
    says when and on what figures, the study list marks it; axe clean."""
    study = owned(study_import(status="open", data=_da_file("alloc-close-browser", n_items=60, allocation={
        "policy": "adaptive", "warmup": 5, "target": "top", "close_when_settled": True})))
    stored = _run(study, services.annotators_create(study=study, count=3), random.Random(8))
    study.refresh_from_db()
    assert study.status == "closed" and stored < 60
    record = study.provenance["closed_when_settled"]
    context = chromium_browser.new_context(viewport=WIDTHS["1280"])
    try:
        page = context.new_page()
        user = get_user_model().objects.create_user("closer", password="pw", is_staff=True, is_superuser=True)
        client = Client()
        client.force_login(user)
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME,
                              "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": live_server.url}])
        page.goto(f"{live_server.url}/studies/{study.slug}/")
        closed = page.get_by_test_id("allocation-closed")
        closed.wait_for()
        text = closed.inner_text()
        assert "Closed automatically" in text and f"after {record['judgments']} judgments" in text
        assert "out of the top cluster: reference, sys2" in text
        assert page.get_by_test_id("allocation-settled").inner_text() == "Settled"
        closed.scroll_into_view_if_needed()
        page.screenshot(path=str(screenshot_dir / "study-allocation-closed-1280.png"))
        assert not (v := axe_violations(page)), describe(v, "closed when settled")
        page.goto(f"{live_server.url}/studies/")
        assert "closed when settled" in page.locator("tr", has_text=study.slug).inner_text()
    finally:
        context.close()
