"""The study page's Copy buttons in headless Chromium: shown with JavaScript, and they copy the links."""
from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.handout.services import annotators_create
from tests.factories import make_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_copy_all_links_and_prolific_url(chromium_browser, live_server):
    study = make_study(slug="copy-links", n_items=2)
    study.prolific_study_id = "s1"  # the study page shows the Prolific URL once the entry is on
    study.save(update_fields=["prolific_study_id"])
    annotators = annotators_create(study=study, count=3)
    user = get_user_model().objects.create_user("copier", password="pw", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(user)
    context = chromium_browser.new_context(viewport={"width": 1366, "height": 850})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME,
                          "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": live_server.url}])
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/studies/copy-links/")
        copy_all = page.get_by_role("button", name="Copy all links")
        assert copy_all.is_visible()  # hidden without JavaScript, shown by research.js
        copy_all.click()
        page.get_by_role("button", name="Copied").wait_for(timeout=5_000)
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied.splitlines() == [f"{live_server.url}/a/{a.token}/" for a in annotators]
        page.locator("#prolific-h ~ .copy-row button").click()
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied == (f"{live_server.url}/p/copy-links/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
                          "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
        # One link's own button.
        page.get_by_role("button", name=f"Copy the link of {annotators[1].code}").click()
        assert page.evaluate("navigator.clipboard.readText()") == f"{live_server.url}/a/{annotators[1].token}/"
        # Inviting swaps the table in with htmx: the new rows' Copy buttons are shown too.
        page.fill("#id_count", "2")
        page.get_by_role("button", name="Invite", exact=True).click()
        page.locator("tr.new").nth(1).wait_for(timeout=10_000)
        assert page.locator("#annotators .js-copy:visible").count() == 5 + 1  # one per link, plus Copy all links
    finally:
        context.close()
