"""The document view in headless Chromium: aligned sentence rows, Submit in view, screenshots.

Each case is a document of two blocks; the annotator judges the first (short)
one and lands on the second, whose sentences are laid out row by row beside
the source. Screenshots go to screenshots/document-<n>cand-<m>sent-<width>.png.
"""
from __future__ import annotations

import pytest

from annotation.models import Judgment
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from annotation.items.selectors import ordered_candidates
from studies.importing.study_file import study_import
from tests.document_study import document_study_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1366, "height": 850}
PHONE = {"width": 390, "height": 844}

#: Row tops of every column of the grid: [[source row tops], [candidate A row tops], ...].
ROW_TOPS = """() => Array.from(document.querySelectorAll('.doc-scroll .doc-lines, .doc-scroll .cand-text'))
  .map(col => Array.from(col.querySelectorAll(':scope > .line')).map(l => l.getBoundingClientRect().top))"""
#: Submit's box in the viewport, and how far the window has scrolled.
SUBMIT_BOX = """() => { const b = document.querySelector('.actions button[type=submit]').getBoundingClientRect();
  return {top: b.top, bottom: b.bottom, left: b.left, right: b.right, scrollY: window.scrollY,
          vw: window.innerWidth, vh: window.innerHeight}; }"""


def open_second_block(live_server, chromium_browser, viewport: dict, *, candidates: int, sentences: int):
    slug = f"doc-{candidates}c-{sentences}s-{viewport['width']}"
    study = study_import(status="open", data=document_study_file(slug=slug, candidates=candidates, sentences=sentences))
    annotator = annotators_create(study=study)[0]
    first = assignment_next(annotator=annotator)
    assert first is not None and first.item.position == 1
    cands = ordered_candidates(first)
    judgment_submit(assignment=first, payload={"ranks": {c.public_id: 1 for c in cands}})
    context = chromium_browser.new_context(viewport=viewport)
    page = context.new_page()
    page.goto(f"{live_server.url}/a/{annotator.token}/item/")
    page.locator("[data-item][data-ready]").wait_for()
    return context, page, annotator


def assert_layout(page, *, candidates: int, sentences: int, tolerance: float = 3.0) -> None:
    box = page.evaluate(SUBMIT_BOX)
    assert box["scrollY"] == 0
    assert 0 <= box["top"] and box["bottom"] <= box["vh"], f"Submit is outside the viewport: {box}"
    assert 0 <= box["left"] and box["right"] <= box["vw"], f"Submit is outside the viewport: {box}"
    columns = page.evaluate(ROW_TOPS)
    assert len(columns) == candidates + 1  # the source column and one per candidate
    for col in columns:
        assert len(col) == sentences
    for i in range(sentences):
        tops = [col[i] for col in columns]
        assert max(tops) - min(tops) <= tolerance, f"row {i + 1} is not aligned: {tops}"
    no_overflow = page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert no_overflow, "the page scrolls sideways (only the sentence grid may)"


@pytest.mark.parametrize("viewport_name", ["desktop", "phone"])
@pytest.mark.parametrize("candidates, sentences", [(2, 4), (3, 8), (5, 8), (5, 40)])
def test_document_rows_aligned_and_submit_in_view(live_server, chromium_browser, screenshot_dir,
                                                  viewport_name, candidates, sentences):
    viewport = DESKTOP if viewport_name == "desktop" else PHONE
    context, page, _ = open_second_block(live_server, chromium_browser, viewport,
                                         candidates=candidates, sentences=sentences)
    try:
        assert page.locator(".doc-context h2").inner_text().lower().startswith("block 2 of 2")
        assert_layout(page, candidates=candidates, sentences=sentences)
        assert page.evaluate("document.querySelector('.doc-scroll').scrollTop") == 0  # opens at sentence 1
        page.screenshot(path=str(screenshot_dir / f"document-{candidates}cand-{sentences}sent-{viewport_name}.png"))
        # The last row too, once the grid has scrolled: still aligned, Submit still in view.
        page.locator(".doc-scroll").evaluate("el => { el.scrollTop = el.scrollHeight; }")
        assert_layout(page, candidates=candidates, sentences=sentences)
        rank_box = page.locator(".doc-scroll .card .ranks").first.bounding_box()
        assert rank_box is not None and rank_box["y"] + rank_box["height"] <= viewport["height"]
    finally:
        context.close()


def test_document_ranked_by_keyboard_with_earlier_block_open(live_server, chromium_browser, screenshot_dir):
    context, page, annotator = open_second_block(live_server, chromium_browser, DESKTOP, candidates=5, sentences=40)
    try:
        details = page.locator("[data-doc-earlier]")
        assert details.evaluate("el => el.open") is False  # collapsed until asked for
        page.locator("[data-doc-earlier] summary").click()
        assert page.locator(".doc-block.is-current[aria-current=step]").is_visible()
        assert page.locator(".doc-block").count() == 2  # block 1, then this one marked
        page.screenshot(path=str(screenshot_dir / "document-earlier-blocks-desktop.png"))
        page.locator("[data-doc-earlier] summary").click()
        grid_top = "document.querySelector('.doc-scroll').scrollTop"
        page.locator(".doc-scroll").evaluate("el => { el.scrollTop = 300; }")
        page.wait_for_function(f"{grid_top} === 300")
        page.wait_for_timeout(100)  # the scroll event is delivered on the next frame
        page.locator("#rank-A-1").focus()
        for rank in "31254":  # the keyboard contract: a digit ranks the focused card and moves on
            page.keyboard.press(rank)
        page.wait_for_timeout(100)
        assert page.evaluate(grid_top) == 300  # giving ranks never scrolls the text being read
        summary = [v.strip() for v in page.locator("[data-summary-value]").all_inner_texts()]
        assert summary == ["3", "1", "2", "5", "4"]
        page.screenshot(path=str(screenshot_dir / "document-ranked-desktop.png"))
        page.keyboard.press("Enter")
        page.locator("h1", has_text="Thank you").wait_for()
        judgment = Judgment.objects.get(assignment__annotator=annotator, assignment__sequence=2)
        assert sorted(judgment.answer["ranks"].values()) == [1, 2, 3, 4, 5]
    finally:
        context.close()


def test_demo_coherence_block_without_source(live_server, chromium_browser, screenshot_dir):
    """The DiaBLa coherence demo (show_source false): two candidates' turns side by side, no source column,
    and block 1 above (each candidate's own turns), with the grid and Submit still in the window."""
    import json
    from pathlib import Path

    from django.conf import settings

    data = json.loads((Path(settings.BASE_DIR) / "fixtures/studies/diabla-coherence-blocks.json").read_text())
    data["settings"].update(spam_rate=0.0, redundancy=1)
    study = study_import(status="open", data=data)
    annotator = annotators_create(study=study)[0]
    first = assignment_next(annotator=annotator)
    assert first is not None
    judgment_submit(assignment=first, payload={"ranks": {c.public_id: k + 1
                                                         for k, c in enumerate(ordered_candidates(first))}})
    for name, viewport in (("desktop", {"width": 1280, "height": 800}), ("phone", PHONE)):
        context = chromium_browser.new_context(viewport=viewport)
        page = context.new_page()
        try:
            page.goto(f"{live_server.url}/a/{annotator.token}/item/")
            page.locator("[data-item][data-ready]").wait_for()
            assert page.locator(".doc-source").count() == 0
            # Block 1 is shown (issue 12): each candidate's own earlier turns under its letter, open (short).
            earlier = page.locator("[data-doc-earlier]")
            assert earlier.evaluate("el => el.open")
            earlier_columns = earlier.locator(".doc-block-column")
            assert earlier_columns.count() == 2
            assert [earlier_columns.nth(k).locator(".doc-block-text p").count() for k in range(2)] == [4, 4]
            assert earlier_columns.nth(0).locator(".doc-block-text").get_attribute("lang") == "en"
            columns = page.evaluate(ROW_TOPS)
            assert len(columns) == 2 and len(columns[0]) == len(columns[1]) == 4
            if name == "desktop":  # at phone width the second card is beside the first, scrolled out of view
                for a, b in zip(*columns):
                    assert abs(a - b) <= 3
            box = page.evaluate(SUBMIT_BOX)
            assert box["bottom"] <= box["vh"] and box["scrollY"] == 0
            page.screenshot(path=str(screenshot_dir / f"document-coherence-demo-{name}.png"))
        finally:
            context.close()
