"""The MQM / ESA / DA item page in headless Chromium: marking by mouse and by keyboard, RTL, the slider,
the nudge, axe-core, and a mark redrawing its own candidate only (timings: make spansbench). Screenshots go to screenshots/spans-*.png."""
from __future__ import annotations

from typing import Any

import pytest

from annotation.models import Judgment
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.importing.study_file import study_import
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
    page.locator(selector).scroll_into_view_if_needed()
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
        # The first translation has the focus (not its source, though the source comes first on the row).
        assert page.evaluate("document.activeElement.id") == "cand-A-text"
        word = a_text.split()[2]  # third word of candidate A, by mouse
        start = a_text.index(word)
        drag_select(page, "#cand-A-text", start, start + len(word))
        panel = page.locator("[data-span-panel]")
        panel.wait_for(state="visible")
        assert page.evaluate("document.activeElement.id") == "span-cat-filter"
        page.screenshot(path=str(screenshot_dir / f"spans-mqm-popup-{viewport_name}.png"))
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


def test_esa_slider_by_keyboard_nudge_and_unanswered_focus(live_server, chromium_browser, screenshot_dir):
    study = span_study(slug="esa-page", protocol="esa", candidates=2)
    context, page, annotator = open_page(live_server, chromium_browser, DESKTOP, study)
    try:
        assert page.locator("#span-cat-filter").count() == 0  # ESA: no categories
        assert page.locator("[data-span-panel] [data-sev]").evaluate_all("bs => bs.map(b => b.dataset.sev)") == [
            "minor", "major"]
        anchors = page.locator("#score-A-anchors li").all_inner_texts()
        assert [a.split()[0] for a in anchors] == ["0", "33", "66", "100"]
        assert "No meaning preserved" in anchors[0] and "Perfect meaning and grammar" in anchors[3]
        # Next is not allowed yet: it says why and the focus goes to the first unanswered candidate's slider.
        page.locator("button[type=submit]").click()
        assert page.locator("[data-span-summary]").is_visible()
        assert page.evaluate("document.activeElement.id") == "score-A"
        assert page.locator("#cand-A-problem").is_visible()
        assert Judgment.objects.count() == 0
        # The slider by keyboard: arrows move 1, PageUp/PageDown 10.
        page.keyboard.press("ArrowRight")
        assert page.input_value("[name^=score-]:visible >> nth=0") == "51"
        page.keyboard.press("PageUp")
        page.keyboard.press("PageUp")
        page.keyboard.press("ArrowLeft")
        assert page.locator("#score-A").input_value() == "70"
        for _ in range(6):
            page.keyboard.press("PageDown")
        assert page.locator("#score-A").input_value() == "10"
        assert not page.locator("#cand-A-problem").is_visible()
        # Candidate B: a major error by mouse, and a high score.
        b_text = text_of(page, "B")
        drag_select(page, "#cand-B-text", 0, 2)
        page.locator("[data-span-panel]").wait_for(state="visible")
        page.keyboard.press("M")  # major
        page.locator("#score-B").focus()
        page.keyboard.press("End")
        page.screenshot(path=str(screenshot_dir / "spans-esa-desktop.png"), full_page=True)
        # Low score with no error (A) and a high score with a major error (B): asked once, not blocked.
        page.locator("button[type=submit]").click()
        assert page.locator("[data-cand] [data-nudge]:visible").count() == 2
        assert Judgment.objects.count() == 0
        page.screenshot(path=str(screenshot_dir / "spans-esa-nudge.png"), full_page=True)
        ids = card_ids(page)
        page.locator("button[type=submit]").click()
        page.locator(".progress-text", has_text="1 of 3").wait_for(timeout=10_000)
        answer, pks = stored(annotator)
        assert answer[pks[ids[0]]] == {"spans": [], "score": 10}
        assert answer[pks[ids[1]]] == {"spans": [{"start": 0, "end": 2, "side": "target", "severity": "major"}],
                                       "score": 100}
        assert page.locator("#cand-B-text mark").count() == 0  # the next item
        assert b_text[0:2].strip()
    finally:
        context.close()


def test_esa_phone_screenshot_and_da_is_the_slider_alone(live_server, chromium_browser, screenshot_dir):
    study = span_study(slug="esa-phone", protocol="esa", candidates=2)
    context, page, _ = open_page(live_server, chromium_browser, PHONE, study)
    try:
        page.screenshot(path=str(screenshot_dir / "spans-esa-phone.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    finally:
        context.close()
    da = span_study(slug="da-page", protocol="esa", candidates=2, esa_spans=False)
    context, page, annotator = open_page(live_server, chromium_browser, DESKTOP, da)
    try:
        assert page.locator("[data-span-panel]").count() == 0
        assert page.locator("[data-col][tabindex]").count() == 0  # nothing to mark
        ids = card_ids(page)
        page.locator("#score-A").focus()
        page.keyboard.press("Home")
        page.locator(f"[name=score-{ids[1]}]").fill("80")  # the typed score moves the slider too
        assert page.locator("#score-B").input_value() == "80"
        page.locator("button[type=submit]").click()
        page.locator(".progress-text", has_text="1 of 3").wait_for(timeout=10_000)
        answer, pks = stored(annotator)
        assert answer == {pks[ids[0]]: {"spans": [], "score": 0}, pks[ids[1]]: {"spans": [], "score": 80}}
    finally:
        context.close()


def test_rtl_candidate_spans_are_logical_offsets(live_server, chromium_browser, screenshot_dir):
    study = span_study(slug="rtl-page", protocol="mqm", candidates=2, arabic=True)
    context, page, annotator = open_page(live_server, chromium_browser, DESKTOP, study)
    try:
        assert page.locator("#cand-A-text").get_attribute("dir") == "rtl"
        a_text, b_text = text_of(page, "A"), text_of(page, "B")
        first_word = a_text.split()[0]
        drag_select(page, "#cand-A-text", 0, len(first_word))  # by mouse, from its right edge
        page.locator("[data-span-panel]").wait_for(state="visible")
        page.keyboard.type("mistrans")
        page.keyboard.press("Enter")
        page.keyboard.press("1")
        assert page.locator("#cand-A-text mark").inner_text() == first_word
        # Keyboard in right-to-left text: ArrowLeft moves forward (to the next character in reading order).
        second = b_text.split()[1]
        start = b_text.index(second)
        keyboard_select(page, "#cand-B-text", start, start + len(second), forward="ArrowLeft")
        page.locator("[data-span-panel]").wait_for(state="visible")
        page.keyboard.type("spell")
        page.keyboard.press("Enter")
        page.keyboard.press("2")
        assert page.locator("#cand-B-text mark").inner_text() == second
        page.screenshot(path=str(screenshot_dir / "spans-mqm-rtl.png"), full_page=True)
        ids = card_ids(page)
        page.locator("button[type=submit]").click()
        page.locator(".progress-text", has_text="1 of 3").wait_for(timeout=10_000)
        answer, pks = stored(annotator)
        assert answer[pks[ids[0]]]["spans"] == [{"start": 0, "end": len(first_word), "side": "target",
                                                 "severity": "minor", "category": "Accuracy/Mistranslation"}]
        assert answer[pks[ids[1]]]["spans"] == [{"start": start, "end": start + len(second), "side": "target",
                                                 "severity": "major", "category": "Fluency/Spelling"}]
    finally:
        context.close()


@pytest.mark.parametrize("protocol", ["mqm", "esa"])
def test_span_pages_are_axe_clean(live_server, chromium_browser, protocol):
    problems: list[str] = []
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        study = span_study(slug=f"axe-{protocol}-{name}", protocol=protocol, candidates=2)
        context, page, _ = open_page(live_server, chromium_browser, viewport, study)
        try:
            drag_select(page, "#cand-A-text", 0, 2)
            page.locator("[data-span-panel]").wait_for(state="visible")
            problems.extend(describe(axe_violations(page), f"{protocol} popup ({name})"))
            page.keyboard.press("Escape")
            page.locator("button[type=submit]").click()  # nothing answered: the messages beside each candidate
            problems.extend(describe(axe_violations(page), f"{protocol} refused ({name})"))
        finally:
            context.close()
    assert problems == []


def open_long_document(live_server, browser, slug: str) -> tuple[Any, Any]:
    """(context, page) of an MQM document of 10 segments and 5 candidates, its first item answered (the page
    shows the second), ready for marking (also bench/spans_page.py)."""
    study = study_import(status="open", data=span_document_file(slug=slug, protocol="mqm", candidates=5, segments=10))
    annotator = annotators_create(study=study)[0]
    first = assignment_next(annotator=annotator)
    assert first is not None
    judgment_submit(assignment=first, payload={"annotations": {c.public_id: {"spans": []}
                                                               for c in ordered_candidates(first)}})
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.goto(f"{live_server.url}/a/{annotator.token}/item/")
    page.locator("[data-span-cards][data-spans-ready]").wait_for()
    return context, page


#: Every change to a translation's or source's text (marks drawn, words wrapped), by the candidate it is in.
TEXT_CHANGES = """() => { window.__textChanges = [];
  new MutationObserver(list => { for (const m of list) {
      const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
      if (!el || !el.closest('[data-col]')) continue;
      const card = el.closest('[data-cand]');
      window.__textChanges.push(card ? card.querySelector('[data-col]').id.split('-')[1] : '?'); } })
    .observe(document.body, {childList: true, characterData: true, subtree: true}); }"""


def test_selecting_in_a_document_redraws_only_the_candidate_being_marked(
        live_server, chromium_browser, screenshot_dir):
    """What keeps selecting in a 10-segment, 5-candidate document free of long main-thread tasks: a mark redraws
    its own candidate's text only, and extending a selection by keyboard changes no text at all (the shading is
    CSS highlights). How long the tasks take is measured by ``make spansbench``, not here."""
    context, page = open_long_document(live_server, chromium_browser, "perf-doc")
    try:
        assert page.locator("#cand-E-text [data-seg]").count() == 10
        assert page.locator("#cand-E-source [data-seg]").count() == 10
        page.evaluate(TEXT_CHANGES)
        for letter in "ABCDE":  # mouse: a selection in each candidate, dragged over a few words
            page.evaluate("window.__textChanges = []")
            drag_select(page, f"#cand-{letter}-text", 0, 12)
            page.locator("[data-span-panel]").wait_for(state="visible")
            assert page.evaluate("window.__textChanges") == [], f"selecting in {letter} changed text"
            page.keyboard.type("pronoun")
            page.keyboard.press("Enter")
            page.keyboard.press("2")
            page.locator(f"#cand-{letter}-text mark.sev-major").first.wait_for()
            changed = set(page.evaluate("window.__textChanges"))
            assert changed == {letter}, f"marking {letter} redrew the text of {sorted(changed)}"
        page.evaluate("window.__textChanges = []")
        page.focus("#cand-C-text")  # keyboard: extend a selection over 40 characters, one key at a time
        for _ in range(40):
            page.keyboard.press("Shift+ArrowRight")
        page.keyboard.press("Escape")
        page.wait_for_timeout(100)
        assert page.evaluate("window.__textChanges") == []
        assert page.locator("mark.sev-major").count() >= 5
        page.screenshot(path=str(screenshot_dir / "spans-mqm-document.png"), full_page=False)
    finally:
        context.close()


SOURCE_SHADE = """() => { const h = CSS.highlights.get('span-source');
  return h ? Array.from(h).map(r => r.toString()) : []; }"""


def test_source_stretch_is_shaded_while_selecting_and_next_item_works(live_server, chromium_browser):
    study = span_study(slug="shade-page", protocol="mqm", candidates=2)
    context, page, _ = open_page(live_server, chromium_browser, DESKTOP, study)
    try:
        a_text = text_of(page, "A")
        start = a_text.index("ferry")
        edges = page.evaluate(CHAR_EDGES, ["#cand-A-text", start, start + len("ferry")])
        page.mouse.move(edges["x1"], edges["y1"])
        page.mouse.down()
        page.mouse.move(edges["x2"], edges["y2"], steps=5)
        page.wait_for_timeout(100)
        assert page.evaluate(SOURCE_SHADE) == ["ferry"]  # while dragging: the same word in the source beside it
        page.mouse.up()
        page.locator("[data-span-panel]").wait_for(state="visible")
        page.wait_for_timeout(100)
        assert page.evaluate(SOURCE_SHADE) == ["ferry"]  # and while the popup is open
        page.keyboard.press("Escape")
        page.evaluate("window.getSelection().removeAllRanges()")
        page.wait_for_timeout(100)
        assert page.evaluate(SOURCE_SHADE) == []
        # By keyboard too: Shift+arrows over "ferry" shade it, before Enter.
        page.focus("#cand-A-text")
        page.keyboard.press("Home")
        for _ in range(start):
            page.keyboard.press("ArrowRight")
        for _ in range(len("ferry")):
            page.keyboard.press("Shift+ArrowRight")
        page.wait_for_timeout(100)
        assert page.evaluate(SOURCE_SHADE) == ["ferry"]
        page.keyboard.press("Escape")
        page.wait_for_timeout(100)
        assert page.evaluate(SOURCE_SHADE) == []
        page.locator("#cand-B-text").focus()
        for letter in "AB":  # "No error" for both, then the next item is ready to mark again
            page.locator(f"#noerror-{letter}").check()
        page.keyboard.press("Enter")
        page.locator(".progress-text", has_text="1 of 3").wait_for(timeout=10_000)
        page.locator("[data-span-cards][data-spans-ready]").wait_for()
        drag_select(page, "#cand-B-text", 0, 2)
        page.locator("[data-span-panel]").wait_for(state="visible")
    finally:
        context.close()


def test_touch_selection_opens_the_popup(live_server, chromium_browser, screenshot_dir):
    study = span_study(slug="touch-page", protocol="esa", candidates=1)
    annotator = annotators_create(study=study)[0]
    context = chromium_browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/a/{annotator.token}/item/")
        page.locator("[data-span-cards][data-spans-ready]").wait_for()
        text = text_of(page, "A")
        box = page.locator("#cand-A-text [data-seg]").bounding_box()
        assert box is not None
        page.touchscreen.tap(box["x"] + 5, box["y"] + 5)
        # A long-press selects a word; the browser's selection is what the page reads.
        page.evaluate("""() => { const n = document.querySelector('#cand-A-text [data-seg]').firstChild;
          const r = document.createRange(); r.setStart(n, 3); r.setEnd(n, 8);
          const s = window.getSelection(); s.removeAllRanges(); s.addRange(r); }""")
        page.locator("[data-span-panel]").wait_for(state="visible", timeout=3_000)
        panel_box = page.locator("[data-span-panel]").bounding_box()
        assert panel_box is not None and panel_box["y"] + panel_box["height"] <= PHONE["height"] + 1  # a bottom sheet
        page.screenshot(path=str(screenshot_dir / "spans-esa-touch-popup.png"))
        page.locator("[data-span-panel] [data-sev=minor]").tap()
        assert page.locator("#cand-A-text mark.sev-minor").inner_text() == text[3:8].strip()
        page.locator("[data-score-number]").fill("55")
        page.locator("button[type=submit]").tap()
        page.locator(".progress-text", has_text="1 of 3").wait_for(timeout=10_000)
        answer, _ = stored(annotator)
        (entry,) = answer.values()
        assert entry == {"spans": [{"start": 3, "end": 8, "side": "target", "severity": "minor"}], "score": 55}
    finally:
        context.close()


def test_marks_are_editable_deletable_and_overlaps_refused_when_not_allowed(live_server, chromium_browser):
    study = span_study(slug="edit-page", protocol="mqm", candidates=1)
    context, page, annotator = open_page(live_server, chromium_browser, DESKTOP, study)
    try:
        text = text_of(page, "A")
        keyboard_select(page, "#cand-A-text", 0, 8)
        page.keyboard.type("awk")
        page.keyboard.press("Enter")
        page.keyboard.press("1")
        assert page.locator("#noerror-A").is_disabled()  # marks and "No error" exclude each other
        # Overlapping the first mark: refused in the popup (the study does not allow overlaps).
        keyboard_select(page, "#cand-A-text", 4, 12)
        page.keyboard.type("other")
        page.keyboard.press("Enter")
        page.keyboard.press("2")
        problem = page.locator("[data-panel-problem]")
        assert problem.is_visible() and "overlaps" in problem.inner_text()
        page.keyboard.press("Escape")
        assert page.locator(".mark-item").count() == 1
        # Edit: another category and severity; the words stay.
        page.locator("[data-edit-mark='0']").click()
        page.keyboard.type("mistrans")
        page.keyboard.press("Enter")
        page.keyboard.press("c")
        assert page.locator(".mark-item").count() == 1
        assert "Accuracy/Mistranslation" in page.locator(".mark-item").inner_text()
        assert page.locator("#cand-A-text mark.sev-critical").inner_text() == text[0:8].strip()
        # A second mark, then deleted.
        keyboard_select(page, "#cand-A-text", 12, 16)
        page.keyboard.type("spell")
        page.keyboard.press("Enter")
        page.keyboard.press("m")
        assert page.locator(".mark-item").count() == 2
        page.locator("[data-delete-mark='1']").click()
        assert page.locator(".mark-item").count() == 1 and page.locator("#cand-A-text mark").count() == 1
        page.locator("button[type=submit]").click()
        page.locator(".progress-text", has_text="1 of 3").wait_for(timeout=10_000)
        answer, _ = stored(annotator)
        (entry,) = answer.values()
        assert entry == {"spans": [{"start": 0, "end": 8, "side": "target", "severity": "critical",
                                    "category": "Accuracy/Mistranslation"}]}
    finally:
        context.close()


def test_document_page_on_a_phone_does_not_scroll_sideways(live_server, chromium_browser, screenshot_dir):
    study = study_import(status="open", data=span_document_file(slug="phone-doc", protocol="esa",
                                                                candidates=2, segments=4))
    annotator = annotators_create(study=study)[0]
    first = assignment_next(annotator=annotator)
    assert first is not None
    judgment_submit(assignment=first, payload={"annotations": {c.public_id: {"spans": [], "score": 50}
                                                               for c in ordered_candidates(first)}})
    context = chromium_browser.new_context(viewport=PHONE)
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/a/{annotator.token}/item/")
        page.locator("[data-span-cards][data-spans-ready]").wait_for()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        keyboard_select(page, "#cand-A-text", 0, 6)
        page.keyboard.press("2")
        assert page.locator("#cand-A-text mark.sev-major").count() == 1
        page.screenshot(path=str(screenshot_dir / "spans-esa-document-phone.png"), full_page=True)
    finally:
        context.close()
