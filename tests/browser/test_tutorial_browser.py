"""Practice (tutorial) items in headless Chromium: from the start page through an MQM practice item marked with
the real span interface by keyboard, the server's feedback, Continue to the real items; axe-core clean at 1280 and
390 px. Screenshots go to screenshots/tutorial-*.png."""
from __future__ import annotations

import pytest

from annotation.models import Judgment
from annotation.handout.services import annotators_create
from studies.importing.study_file import study_import
from tests.browser.axe import axe_violations, describe
from tests.factories import study_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TEXT = "The bench approved the loan yesterday."


def mqm_tutorial_study(slug: str):
    data = study_file(slug=slug, protocol="mqm", n_items=2, n_candidates=1)
    data["tutorial"] = [{
        "id": "p1", "source": "La banque a accordé le prêt hier.",
        "candidates": [{"system": "SYSsecret", "text": TEXT}],
        "gold": {"annotations": {"SYSsecret": {"spans": [{"start": 4, "end": 9, "severity": "major",
                                                          "category": "Accuracy/Mistranslation"}]}}},
        "explanation": "*banque* is a **bank** here, not a bench."}]
    return study_import(data=data, status="open")


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 900}, {"width": 390, "height": 844}],
                         ids=["desktop", "phone"])
def test_mqm_practice_marked_by_keyboard_gets_feedback_then_continues(live_server, chromium_browser,
                                                                      screenshot_dir, viewport):
    study = mqm_tutorial_study(f"tut-{viewport['width']}")
    annotator = annotators_create(study=study)[0]
    context = chromium_browser.new_context(viewport=viewport)
    page = context.new_page()
    problems: list[str] = []
    try:
        page.goto(f"{live_server.url}/a/{annotator.token}/")
        page.locator("[data-start]").click()
        page.locator("[data-span-cards][data-spans-ready]").wait_for()
        assert "SYSsecret" not in page.content() and "bench" not in page.locator("h1").inner_text()
        problems += describe(axe_violations(page), f"practice page {viewport['width']}")
        # Mark "bench" (characters 4..9) by keyboard, as on a real item: category typed, severity by key.
        page.focus("#cand-A-text")
        page.keyboard.press("Home")
        for _ in range(4):
            page.keyboard.press("ArrowRight")
        for _ in range(5):
            page.keyboard.press("Shift+ArrowRight")
        page.keyboard.press("Enter")
        page.locator("[data-span-panel]").wait_for(state="visible")
        page.keyboard.type("mistrans")
        page.keyboard.press("Enter")
        page.keyboard.press("2")  # major
        assert page.locator("#cand-A-text mark.sev-major").inner_text() == "bench"
        page.locator("button[type=submit]").click()
        feedback = page.locator("#tutorial-feedback")
        feedback.wait_for(timeout=10_000)
        assert "matches the expected one" in feedback.inner_text()
        assert "found “bench” (major, Accuracy/Mistranslation)" in feedback.inner_text()
        assert page.locator("#tutorial-explanation strong").inner_text() == "bank"
        assert page.locator(".cand-text mark").inner_text() == "bench"  # the expected error, shown after answering
        page.screenshot(path=str(screenshot_dir / f"tutorial-mqm-{viewport['width']}.png"), full_page=True)
        problems += describe(axe_violations(page), f"practice feedback {viewport['width']}")
        page.locator("#tutorial-continue").click()
        page.wait_for_url("**/item/*/")
        page.locator("[data-span-cards][data-spans-ready]").wait_for()
        assert Judgment.objects.count() == 0  # the practice answer was never stored
    finally:
        context.close()
    assert not problems, "\n".join(problems)
