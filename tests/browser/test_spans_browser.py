"""The MQM / ESA / DA item page in headless Chromium: marking by mouse and by keyboard, RTL, the slider,
the nudge, axe-core, and no long main-thread task while selecting. Screenshots go to screenshots/spans-*.png."""
from __future__ import annotations

from typing import Any

import pytest

from annotation.models import Judgment
from annotation.selectors import ordered_candidates
from annotation.services import annotators_create, assignment_next, judgment_submit
from studies.importing import study_import
from tests.browser.axe import axe_violations, describe
from tests.span_study import span_document_file, span_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}

#: Where to press and release the mouse to select characters [a, b) of a column's first segment:
#: the outer edges of the first and last characters (right edges in right-to-left text).
CHAR_EDGES = """([sel, a, b]) => {
  const seg = document.querySelector(sel).querySelector('[data-seg]');
  const node = seg.firstChild;
  const box = (k) => { const r = document.createRange(); r.setStart(node, k); r.setEnd(node, k + 1);
                       return r.getClientRects()[0]; };
  const rtl = getComputedStyle(seg).direction === 'rtl';
  const first = box(a), last = box(b - 1);
  return {x1: rtl ? first.right - 1 : first.left + 1, y1: first.top + first.height / 2,
          x2: rtl ? last.left + 1 : last.right - 1, y2: last.top + last.height / 2};
}"""


def open_page(live_server, browser, viewport: dict[str, int], study) -> tuple[Any, Any, Any]:
    annotator = annotators_create(study=study)[0]
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.goto(f"{live_server.url}/a/{annotator.token}/item/")
    page.locator("[data-span-cards][data-spans-ready]").wait_for()
    return context, page, annotator


def drag_select(page, selector: str, a: int, b: int) -> None:
    """Select characters [a, b) of the column with the mouse, as a person would (press, move, release)."""
    edges = page.evaluate(CHAR_EDGES, [selector, a, b])
    page.mouse.move(edges["x1"], edges["y1"])
    page.mouse.down()
    page.mouse.move((edges["x1"] + edges["x2"]) / 2, edges["y2"], steps=4)
    page.mouse.move(edges["x2"], edges["y2"], steps=4)
    page.mouse.up()


def keyboard_select(page, selector: str, a: int, b: int, *, forward: str = "ArrowRight") -> None:
    page.focus(selector)
    page.keyboard.press("Home")
    for _ in range(a):
        page.keyboard.press(forward)
    for _ in range(b - a):
        page.keyboard.press(f"Shift+{forward}")
    page.keyboard.press("Enter")


def stored(annotator) -> tuple[dict[str, Any], dict[str, str]]:
    """The stored answer's annotations, and candidate public id → pk (as a string)."""
    judgment = Judgment.objects.get(assignment__annotator=annotator)
    pks = {c.public_id: str(c.pk) for c in judgment.assignment.item.candidates.all()}
    return judgment.answer["annotations"], pks


def card_ids(page) -> list[str]:
    return page.eval_on_selector_all("[data-cand]", "cards => cards.map(c => c.dataset.cand)")


def text_of(page, letter: str) -> str:
    return page.eval_on_selector(f"#cand-{letter}-text [data-seg]", "s => s.textContent")


@pytest.mark.parametrize("viewport_name", ["desktop", "phone"])
def test_mqm_marks_by_mouse_and_keyboard_are_stored_as_offsets(live_server, chromium_browser, screenshot_dir,
                                                               viewport_name):
    viewport = DESKTOP if viewport_name == "desktop" else PHONE
    study = span_study(slug=f"mqm-page-{viewport_name}", protocol="mqm", candidates=2)
    context, page, annotator = open_page(live_server, chromium_browser, viewport, study)
    try:
        a_text, b_text = text_of(page, "A"), text_of(page, "B")
        word = a_text.split()[2]  # third word of candidate A, by mouse
        start = a_text.index(word)
        drag_select(page, "#cand-A-text", start, start + len(word))
        panel = page.locator("[data-span-panel]")
        panel.wait_for(state="visible")
        assert page.evaluate("document.activeElement.id") == "span-cat-filter"
        page.keyboard.type("mistrans")
        assert page.locator("[data-cat]:visible").count() == 1
        page.keyboard.press("Enter")
        page.keyboard.press("2")  # major
        assert panel.is_hidden()
        item = page.locator("#cand-A-text mark.sev-major")
        assert item.inner_text() == word
        assert page.locator("[data-cand]").nth(0).locator(".mark-item").count() == 1
        # Candidate B by keyboard: characters 3..8, category typed, severity by letter.
        keyboard_select(page, "#cand-B-text", 3, 8)
        panel.wait_for(state="visible")
        page.keyboard.type("gramm")
        page.keyboard.press("Enter")
        page.keyboard.press("m")  # minor
        assert page.locator("#cand-B-text mark.sev-minor").inner_text() == b_text[3:8]
        # An omission in candidate A's source, by keyboard.
        keyboard_select(page, "#cand-A-source", 4, 7)
        page.keyboard.type("omission")
        page.keyboard.press("Enter")
        page.keyboard.press("3")  # critical
        page.screenshot(path=str(screenshot_dir / f"spans-mqm-{viewport_name}.png"), full_page=True)
        ids = card_ids(page)
        page.locator("button[type=submit]").click()
        page.locator(".progress-text", has_text="1 of 3").wait_for(timeout=10_000)
        answer, pks = stored(annotator)
        assert answer[pks[ids[0]]]["spans"] == [
            {"start": start, "end": start + len(word), "side": "target", "severity": "major",
             "category": "Accuracy/Mistranslation"},
            {"start": 4, "end": 7, "side": "source", "severity": "critical", "category": "Accuracy/Omission"}]
        assert answer[pks[ids[1]]]["spans"] == [
            {"start": 3, "end": 8, "side": "target", "severity": "minor", "category": "Fluency/Grammar"}]
    finally:
        context.close()
