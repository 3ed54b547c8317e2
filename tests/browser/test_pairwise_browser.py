"""The pairwise page in Chromium: by keyboard alone, side by side on a desktop, stacked at 390 px, axe-clean."""
from __future__ import annotations

import pytest

from annotation.handout.services import annotators_create
from annotation.models import Judgment
from protocols.pairwise.demo import build_pairwise_sentences
from studies.importing.study_file import study_import
from tests.browser.axe import axe_violations, describe

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def pairwise_study(slug: str, **settings):
    data = build_pairwise_sentences()
    data = {**data, "slug": slug, "items": data["items"][:2],
            "settings": {**data["settings"], "spam_rate": 0.0, **settings}}
    return study_import(status="open", data=data)


def open_item(live_server, browser, viewport, study):
    annotator = annotators_create(study=study, count=1)[0]
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.goto(f"{live_server.url}/a/{annotator.token}/item/")
    page.locator("[data-span-cards][data-spans-ready]").wait_for()
    return context, page, annotator


def card_boxes(page):
    return page.locator("[data-span-cards] [data-cand]").evaluate_all(
        "cards => cards.map(c => { const r = c.getBoundingClientRect(); return [r.left, r.top, r.width]; })")


def test_pairwise_by_keyboard_alone_stores_both_scores_and_the_preference(live_server, chromium_browser,
                                                                          screenshot_dir):
    study = pairwise_study("pw-keys")
    context, page, annotator = open_item(live_server, chromium_browser, DESKTOP, study)
    try:
        (a_left, a_top, _), (b_left, b_top, _) = card_boxes(page)
        assert b_left > a_left and abs(a_top - b_top) < 2  # side by side
        page.locator("#score-A").focus()
        for _ in range(3):
            page.keyboard.press("PageUp")  # 50 -> 80
        page.locator("#score-B").focus()
        page.keyboard.press("PageDown")  # 50 -> 40
        page.locator("[name=preference][value=tie]").focus()
        page.keyboard.press("ArrowLeft")  # radio group: the previous choice, Candidate A
        checked = page.locator("[name=preference]:checked").get_attribute("value")
        page.screenshot(path=str(screenshot_dir / "pairwise-desktop.png"), full_page=True)
        page.keyboard.press("Enter")
        page.locator(".progress-text", has_text="1 of 2").wait_for(timeout=10_000)
        judgment = Judgment.objects.get(assignment__annotator=annotator)
        scores = sorted(entry["score"] for entry in judgment.answer["annotations"].values())
        assert scores == [40, 80]
        chosen = judgment.answer["choice"]["candidate"]
        assert judgment.assignment.item.candidates.get(pk=chosen).public_id == checked
    finally:
        context.close()


def test_pairwise_at_390_px_stacks_the_cards_without_page_scroll_and_is_axe_clean(live_server, chromium_browser,
                                                                                 screenshot_dir):
    problems: list[str] = []
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        context, page, _ = open_item(live_server, chromium_browser, viewport, pairwise_study(f"pw-axe-{name}"))
        try:
            if name == "phone":
                (a_left, a_top, a_width), (b_left, b_top, _) = card_boxes(page)
                assert b_top > a_top and abs(a_left - b_left) < 2  # stacked
                assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
                page.screenshot(path=str(screenshot_dir / "pairwise-phone.png"), full_page=True)
            problems.extend(describe(axe_violations(page), f"pairwise ({name})"))
            page.locator("button[type=submit]").click()  # nothing answered: the messages beside each candidate
            problems.extend(describe(axe_violations(page), f"pairwise refused ({name})"))
        finally:
            context.close()
    assert problems == []
