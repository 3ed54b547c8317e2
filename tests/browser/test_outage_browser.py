"""A database outage while an annotator submits: the answer stays on the page, a message says it
was not saved, and submitting again once the database is back stores it (once)."""
from __future__ import annotations

from unittest import mock

import pytest
from django.db import OperationalError
from django.db.backends.base.base import BaseDatabaseWrapper

from annotation.models import Judgment
from studies.importing.study_file import study_import
from tests.browser.test_annotate_browser import choice_file, start, wait_progress

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_submission_during_an_outage_is_kept_on_the_page_and_sent_again(live_server, browser_page, screenshot_dir):
    page = browser_page
    study = study_import(data=choice_file(), status="open")
    annotator, url = start(live_server, study)
    page.goto(url + "item/")
    wait_progress(page, 0, 2)
    page.keyboard.press("b")

    def refuse(self, *args, **kwargs):
        raise OperationalError("connection refused")

    with mock.patch.object(BaseDatabaseWrapper, "ensure_connection", refuse):
        page.keyboard.press("Enter")
        box = page.locator("[data-not-saved]")
        box.wait_for(state="visible")
        text = box.inner_text()
    page.screenshot(path=str(screenshot_dir / "outage-not-saved.png"), full_page=True)
    assert "not saved" in text and "submit it again" in text
    assert page.locator("#choice-B").is_checked()  # the answer is still there
    assert Judgment.objects.count() == 0

    page.keyboard.press("Enter")  # the database is back
    wait_progress(page, 1, 2)
    assert Judgment.objects.filter(assignment__annotator=annotator).count() == 1
