"""Issue 12 in headless Chromium: the preview (spam marks, Enter advances), the annotator item page's layout
(a card's note never over its title, 12 rank buttons leave the text a readable width, one h1), the earlier
blocks of a document without a source, and axe on these page states. Screenshots go to screenshots/.
"""
from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from annotation.items.selectors import ordered_candidates
from studies.importing.study_file import study_import
from studies.models import Item, Study
from tests.browser.axe import axe_violations, describe
from tests.document_study import document_study_file
from tests.factories import study_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {"1280": {"width": 1280, "height": 900}, "390": {"width": 390, "height": 844}}


def login(context: Any, live_server) -> None:
    user = get_user_model().objects.create_user("pv", password="pw", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(user)
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME,
                          "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": live_server.url}])


def ready(page) -> None:
    page.locator("[data-item][data-ready]").wait_for()


def box(page, selector: str) -> dict[str, float]:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, selector
    return found


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


def preview_position(study: Study, *, spam: bool) -> int:
    items = list(Item.objects.filter(study=study).order_by("order_key", "position", "pk"))
    return next(k for k, item in enumerate(items, start=1) if item.is_spam == spam)


# --- the preview ---------------------------------------------------------------------------------

def test_preview_marks_the_spam_copy_and_enter_advances_with_the_verdict(live_server, chromium_browser,
                                                                          screenshot_dir):
    study = study_import(status="draft", data=study_file(slug="pvb", n_items=6, n_candidates=3,
                                                         settings={"spam_rate": 0.34}))
    total = study.items.count()
    context = chromium_browser.new_context(viewport=SIZES["1280"])
    login(context, live_server)
    page = context.new_page()
    problems: list[str] = []
    try:
        position = preview_position(study, spam=True)
        base = f"{live_server.url}/studies/{study.slug}/preview/"
        page.goto(f"{base}?item={position}")
        ready(page)
        assert page.locator(".progress-text").inner_text() == f"Item {position} of {total}"
        note = page.locator("[data-preview-spam-note]")
        assert note.is_visible()
        letter = page.evaluate("document.querySelector('[data-preview-spam-note]').textContent"
                               ".match(/candidate ([A-Z])/)[1]")
        card = page.locator(f'[data-card][data-letter="{letter.lower()}"]')
        assert card.evaluate("el => getComputedStyle(el).outlineStyle") == "dashed"  # the scrambled card, outlined
        problems += describe(axe_violations(page), "preview spam item")
        page.screenshot(path=str(screenshot_dir / "preview-spam-1280.png"), full_page=True)
        # Rank the scrambled card first (a failed check) by keyboard, then Enter: the next item, with the verdict.
        cards = page.locator("[data-card]")
        letters = [cards.nth(k).get_attribute("data-letter") for k in range(cards.count())]
        ranks = {ltr: (1 if ltr == letter.lower() else 0) for ltr in letters}
        free = iter(range(2, len(letters) + 1))
        for ltr in letters:
            page.keyboard.press(str(ranks[ltr] or next(free)))
        page.keyboard.press("Enter")
        page.wait_for_url(f"**item={min(position + 1, total)}**")
        ready(page)
        outcome = page.locator("[data-preview-outcome]")
        assert outcome.get_attribute("data-spam-check") == "failed"
        assert "Spam check: failed" in outcome.inner_text()
        problems += describe(axe_violations(page), "preview after an answer")
        page.screenshot(path=str(screenshot_dir / "preview-verdict-1280.png"), full_page=True)
        # A real item: no spam note, and Enter with a valid answer moves on too.
        real = preview_position(study, spam=False)
        page.goto(f"{base}?item={real}")
        ready(page)
        assert page.locator("[data-preview-spam-note]").count() == 0
        for k in range(page.locator("[data-card]").count()):
            page.keyboard.press(str(k + 1))
        page.keyboard.press("Enter")
        page.wait_for_url(f"**item={min(real + 1, total)}**")
        assert page.locator("[data-preview-outcome]").get_attribute("data-spam-check") is None
        # At phone width the spam note and the outlined card are there too, and nothing scrolls sideways.
        page.set_viewport_size(SIZES["390"])
        page.goto(f"{base}?item={position}")
        ready(page)
        assert page.locator("[data-preview-spam-note]").is_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= SIZES["390"]["width"]
        problems += describe(axe_violations(page), "preview spam item (390)")
        page.screenshot(path=str(screenshot_dir / "preview-spam-390.png"), full_page=True)
    finally:
        context.close()
    assert not problems, "\n".join(problems)


# --- the annotator's item page -------------------------------------------------------------------

def refused_page(chromium_browser, live_server, *, size: str, interface: str = "") -> tuple[Any, Any]:
    """An annotator's ranking item refused for missing ranks: every card shows its note."""
    settings_: dict[str, Any] = {"redundancy": 1}
    if interface:
        settings_.update(interface_language=interface, target_language="ar", source_language="en",
                         show_source=True)
    study = study_import(status="open", data=study_file(slug=f"refused-{size}-{interface or 'en'}", n_items=2,
                                                        n_candidates=3, settings=settings_))
    annotator = annotators_create(study=study)[0]
    context = chromium_browser.new_context(viewport=SIZES[size])
    page = context.new_page()
    page.goto(f"{live_server.url}/a/{annotator.token}/item/")
    ready(page)
    page.keyboard.press("Enter")
    page.locator("[data-card-problem]").first.wait_for()
    ready(page)
    return context, page


@pytest.mark.parametrize("size,interface", [("1280", ""), ("390", ""), ("390", "ar"), ("1280", "ar")])
def test_a_cards_note_is_never_drawn_over_its_title(live_server, chromium_browser, screenshot_dir, size, interface):
    context, page = refused_page(chromium_browser, live_server, size=size, interface=interface)
    try:
        count = page.locator("[data-card]").count()
        assert count == 3
        for k in range(count):
            card = page.locator("[data-card]").nth(k)
            title = card.locator(".card-title").bounding_box()
            note = card.locator("[data-card-problem]").bounding_box()
            text = card.locator(".cand-text").bounding_box()
            assert title and note and text
            assert not overlap(title, note), (k, title, note)
            assert not overlap(note, text), (k, note, text)
        if interface == "ar":
            assert page.evaluate("document.documentElement.dir") == "rtl"
        problems = describe(axe_violations(page), f"refused item {size} {interface}")
        page.screenshot(path=str(screenshot_dir / f"item-refused-{size}{'-' + interface if interface else ''}.png"),
                        full_page=True)
    finally:
        context.close()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("size", ["1280", "390"])
def test_twelve_rank_buttons_leave_the_text_a_readable_width(live_server, chromium_browser, screenshot_dir, size):
    data = study_file(slug=f"twelve-{size}", n_items=1, n_candidates=12, settings={"redundancy": 1})
    for k, cand in enumerate(data["items"][0]["candidates"]):  # long enough to wrap: ~280 characters
        cand["text"] = (f"Version {k}: the committee said that it would meet again next week, although several "
                        "members had already explained that they could not attend, because the date had been "
                        "chosen without asking them and the room was also booked for another event that day.")
        cand["highlights"] = []
    study = study_import(status="open", data=data)
    annotator = annotators_create(study=study)[0]
    context = chromium_browser.new_context(viewport=SIZES[size])
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/a/{annotator.token}/item/")
        ready(page)
        card = page.locator("[data-card]").first
        card_box, text_box = card.bounding_box(), card.locator(".cand-text").bounding_box()
        ranks_box = card.locator(".ranks").bounding_box()
        assert card_box and text_box and ranks_box
        # The text takes the card's whole inner width; the buttons sit under it, wrapped if need be.
        assert text_box["width"] >= 0.85 * card_box["width"] - 48, (text_box, card_box)
        assert ranks_box["y"] >= text_box["y"] + text_box["height"] - 1
        assert ranks_box["x"] + ranks_box["width"] <= card_box["x"] + card_box["width"] + 1  # nothing sticks out
        if size == "1280":
            assert text_box["width"] >= 600
            # A line of about 60 characters or more: the text is not squeezed to a few words a line.
            per_line = page.evaluate("""() => {
                const p = document.querySelector('[data-card] .cand-text .line');
                const style = getComputedStyle(p);
                const lines = Math.round(p.getBoundingClientRect().height / parseFloat(style.lineHeight));
                return p.textContent.length / Math.max(lines, 1);
            }""")
            assert per_line >= 50, per_line
        assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]
        assert page.locator("h1").count() == 1
        problems = describe(axe_violations(page), f"12 candidates {size}")
        page.screenshot(path=str(screenshot_dir / f"item-12-candidates-{size}.png"), full_page=True)
    finally:
        context.close()
    assert not problems, "\n".join(problems)


def test_a_document_without_a_source_shows_the_earlier_blocks(live_server, chromium_browser, screenshot_dir):
    study = study_import(status="open", data=document_study_file(slug="nosrc", candidates=2, sentences=4, blocks=3,
                                                                 show_source=False))
    annotator = annotators_create(study=study)[0]
    first = assignment_next(annotator=annotator)
    assert first is not None
    judgment_submit(assignment=first, payload={"ranks": {c.public_id: k + 1
                                                         for k, c in enumerate(ordered_candidates(first))}})
    problems: list[str] = []
    for size in SIZES:
        context = chromium_browser.new_context(viewport=SIZES[size])
        page = context.new_page()
        try:
            page.goto(f"{live_server.url}/a/{annotator.token}/item/")
            ready(page)
            earlier = page.locator("details[data-doc-earlier]")
            assert earlier.evaluate("el => el.open")  # one short earlier block: open
            columns = earlier.locator(".doc-block-column")
            assert columns.count() == 2 and all(columns.nth(k).locator("p").count() == 4 for k in range(2))
            assert columns.nth(0).is_visible()
            problems += describe(axe_violations(page), f"document earlier blocks {size}")
            page.screenshot(path=str(screenshot_dir / f"document-earlier-blocks-{size}.png"), full_page=True)
        finally:
            context.close()
    assert not problems, "\n".join(problems)
