"""What a newcomer tripped on in the annotator's pages, in headless Chromium at 1280 and 390 px: the ESA slider's
first click, the "not scored yet" message, word-snapped selections, a drag started outside the text, the marking
popup's focus trap and Esc, practice items on the real interface with the given and expected answers marked, and
no console error (favicon, htmx). Screenshots go to screenshots/newcomer-*.png."""
from __future__ import annotations

from typing import Any

import pytest

from annotation.handout.services import annotators_create
from studies.importing.study_file import study_import
from tests.browser.axe import axe_violations, describe
from tests.browser.test_annotate_browser import ranking_file
from tests.browser.test_spans_browser import DESKTOP, PHONE, drag_select, open_page, text_of
from tests.factories import study_file
from tests.span_study import span_document_file, span_study, span_study_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = {"1280": DESKTOP, "390": PHONE}


def console_errors(page) -> list[str]:
    """Collects console errors and failed requests of ``page`` (the list fills as the page runs)."""
    found: list[str] = []
    page.on("console", lambda m: found.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: found.append(str(e)))
    page.on("response", lambda r: found.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    return found


@pytest.mark.parametrize("width", VIEWPORTS)
def test_esa_first_click_gives_the_value_under_the_pointer_and_the_message_names_what_is_missing(
        live_server, chromium_browser, screenshot_dir, width):
    study = span_study(slug=f"esa-click-{width}", protocol="esa", candidates=2)
    context, page, _ = open_page(live_server, chromium_browser, VIEWPORTS[width], study)
    try:
        number_a = page.locator("[data-cand] [data-score-number]").nth(0)
        slider = page.locator("#score-A")
        slider.scroll_into_view_if_needed()
        box = slider.bounding_box()
        assert box is not None
        # The untouched slider's thumb sits at 50: a click there is a score of 50, not "no score".
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        assert number_a.input_value() == "50"
        assert "is-unset" not in (slider.get_attribute("class") or "")
        # B has no score: the message names it, and goes once it is scored.
        page.locator("button[type=submit]").click()
        summary = page.locator("[data-span-summary]")
        assert summary.is_visible()
        assert "Candidate B" in summary.inner_text() and "Candidate A" not in summary.inner_text()
        assert "every translation" not in summary.inner_text()
        page.screenshot(path=str(screenshot_dir / f"newcomer-esa-missing-{width}.png"), full_page=True)
        assert not (problems := describe(axe_violations(page), f"ESA page {width}")), "\n".join(problems)
        page.locator("#score-B").focus()
        page.keyboard.press("End")
        assert summary.is_hidden()
        assert page.locator("#cand-B-problem").is_hidden()
    finally:
        context.close()


def test_mouse_selections_snap_to_whole_words_unless_the_study_marks_within_words(live_server, chromium_browser,
                                                                                screenshot_dir):
    study = span_study(slug="snap-words", protocol="mqm", candidates=1)
    context, page, _ = open_page(live_server, chromium_browser, DESKTOP, study)
    try:
        text = text_of(page, "A")  # "Le vieux ferry quitte le port …"
        end = text.index("ferry") + 2
        drag_select(page, "#cand-A-text", 0, end)  # "Le vieux fe"
        page.locator("[data-span-panel]").wait_for(state="visible")
        assert page.locator("[data-panel-excerpt]").inner_text() == "Le vieux ferry"
        assert page.evaluate("window.getSelection().toString()") in ("", "Le vieux ferry")
        page.screenshot(path=str(screenshot_dir / "newcomer-snap-1280.png"))
        page.keyboard.press("Escape")
        start = text.index("quitte") + 3
        drag_select(page, "#cand-A-text", start, start + 2)  # inside one word: the word
        page.locator("[data-span-panel]").wait_for(state="visible")
        assert page.locator("[data-panel-excerpt]").inner_text() == "quitte"
    finally:
        context.close()
    within = study_import(status="open", data=span_study_file(slug="snap-off", protocol="mqm", candidates=1,
                                                               snap_to_words=False))
    context, page, _ = open_page(live_server, chromium_browser, DESKTOP, within)
    try:
        text = text_of(page, "A")
        drag_select(page, "#cand-A-text", 0, text.index("ferry") + 2)
        page.locator("[data-span-panel]").wait_for(state="visible")
        assert page.locator("[data-panel-excerpt]").inner_text() == "Le vieux fe"
    finally:
        context.close()


@pytest.mark.parametrize("width", VIEWPORTS)
def test_a_drag_started_outside_the_text_marks_what_it_selected_in_the_text(live_server, chromium_browser,
                                                                             screenshot_dir, width):
    study = study_import(status="open", data=span_document_file(slug=f"drag-gap-{width}", candidates=2))
    context, page, _ = open_page(live_server, chromium_browser, VIEWPORTS[width], study)
    try:
        page.locator("#cand-A-text").scroll_into_view_if_needed()
        geometry = page.evaluate("""() => {
            const segs = document.querySelectorAll('#cand-A-text [data-seg]');
            const last = segs[segs.length - 1], r = last.getBoundingClientRect();
            const col = document.querySelector('#cand-A-text').getBoundingClientRect();
            return {x1: Math.min(r.right + 30, col.right - 2), y1: r.bottom + 12, x2: r.left + 2, y2: r.top + r.height / 2,
                    text: last.textContent};
        }""")
        # From below the last line (the card's margin, where the marks list begins) up to its first character.
        page.mouse.move(geometry["x1"], geometry["y1"])
        page.mouse.down()
        page.mouse.move(geometry["x2"], geometry["y2"], steps=6)
        page.mouse.up()
        panel = page.locator("[data-span-panel]")
        panel.wait_for(state="visible")
        assert page.locator("[data-panel-excerpt]").inner_text() == geometry["text"].strip()
        page.screenshot(path=str(screenshot_dir / f"newcomer-drag-{width}.png"))
    finally:
        context.close()


def test_tab_stays_in_the_open_popup_and_esc_closes_it_from_anywhere(live_server, chromium_browser):
    study = span_study(slug="trap", protocol="mqm", candidates=2)
    context, page, _ = open_page(live_server, chromium_browser, DESKTOP, study)
    try:
        drag_select(page, "#cand-A-text", 0, 2)
        panel = page.locator("[data-span-panel]")
        panel.wait_for(state="visible")
        inside = "document.querySelector('[data-span-panel]').contains(document.activeElement)"
        for key in ["Tab"] * 8 + ["Shift+Tab"] * 8:
            page.keyboard.press(key)
            assert page.evaluate(inside), key
        assert panel.is_visible()
        page.evaluate("document.querySelector('button[type=submit]').focus()")  # focus moved away by a script
        page.keyboard.press("Escape")
        assert panel.is_hidden()
        assert page.evaluate("document.activeElement.id") == "cand-A-text"
    finally:
        context.close()


def practice_study(protocol: str, slug: str):
    texts = ["The bank approved the loan yesterday.", "The bench approved the loan yesterday.",
             "Bank approved loan the yesterday."]
    n = 3 if protocol == "ranking" else 2
    data = study_file(slug=slug, protocol=protocol, n_items=2, n_candidates=n,
                      settings={"options": ["tie"]} if protocol == "choice" else {})
    gold: dict[str, Any] = ({"ranks": {"SYSgood": 1, "SYSbad": 2, "SYSworse": 3}} if protocol == "ranking"
                            else {"choice": "SYSgood"})
    data["tutorial"] = [{"id": "t1", "source": "La banque a accordé le prêt hier.",
                         "candidates": [{"system": s, "text": t} for s, t in
                                        zip(("SYSgood", "SYSbad", "SYSworse")[:n], texts)],
                         "gold": gold, "explanation": "*banque* is a **bank**."}]
    return study_import(data=data, status="open")


@pytest.mark.parametrize("width", VIEWPORTS)
@pytest.mark.parametrize("protocol", ["ranking", "choice"])
def test_practice_items_use_the_real_interface_and_mark_the_given_and_expected_answers(
        live_server, chromium_browser, screenshot_dir, protocol, width):
    study = practice_study(protocol, f"practice-{protocol}-{width}")
    annotator = annotators_create(study=study)[0]
    context = chromium_browser.new_context(viewport=VIEWPORTS[width])
    page = context.new_page()
    errors = console_errors(page)
    problems: list[str] = []
    try:
        page.goto(f"{live_server.url}/a/{annotator.token}/")
        page.locator("[data-start]").click()
        page.locator("[data-item][data-ready]").wait_for()
        assert "SYS" not in page.content()
        # The real items' controls: the focus on the first card's control, the key legend, no native selects.
        assert page.evaluate("document.activeElement.closest('[data-card]') !== null")
        assert page.locator("details.keys").count() == 1
        assert page.locator("select").count() == 0
        problems += describe(axe_violations(page), f"practice {protocol} {width}")
        page.screenshot(path=str(screenshot_dir / f"newcomer-practice-{protocol}-{width}.png"), full_page=True)
        cards = page.eval_on_selector_all("[data-card] .cand-text", "els => els.map(e => e.textContent.trim())")
        if protocol == "ranking":
            # Keys as on a real item: 1, 2 on the focused cards (the last rank fills itself in), Enter.
            page.keyboard.press("1")
            page.keyboard.press("2")
            assert page.locator("[data-card] input[data-rank]:checked").count() == 3
        else:
            bad = "ab"[cards.index("The bench approved the loan yesterday.")]
            page.keyboard.press(bad)  # the wrong candidate, by its letter
            assert page.locator(f"#choice-{bad.upper()}").is_checked()
        page.keyboard.press("Enter")
        page.locator("#tutorial-feedback").wait_for(timeout=10_000)
        marks = page.locator("[data-practice-mark]").all_inner_texts()
        if protocol == "ranking":
            assert len(marks) == 3 and all("expected" in m for m in marks)
            assert page.locator(".toggle.is-expected").count() == 3
        else:
            assert sorted(marks) == ["Expected answer", "Your answer"]
            good = "AB"[cards.index("The bank approved the loan yesterday.")]
            assert page.locator(f"#cand-{good}-title").locator("xpath=..").locator("[data-practice-mark]").inner_text() \
                == "Expected answer"
        assert page.locator("[data-card] input:not([disabled])").count() == 0
        problems += describe(axe_violations(page), f"practice feedback {protocol} {width}")
        page.screenshot(path=str(screenshot_dir / f"newcomer-practice-{protocol}-feedback-{width}.png"),
                        full_page=True)
    finally:
        context.close()
    assert not problems, "\n".join(problems)
    assert errors == []


def test_annotator_pages_log_no_console_error(live_server, chromium_browser):
    """The favicon is served (no 404), and the back link inside the form no longer makes htmx log an error."""
    study = study_import(status="open", data=ranking_file())
    annotator = annotators_create(study=study)[0]
    context = chromium_browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    errors = console_errors(page)
    try:
        page.goto(f"{live_server.url}/a/{annotator.token}/")
        assert page.evaluate("fetch('/favicon.ico').then(r => r.ok)")
        page.locator("[data-start]").click()
        page.locator("[data-item][data-ready]").wait_for()
        for expected in ("1 of 3", "2 of 3"):
            page.keyboard.press("1")
            page.keyboard.press("2")
            page.keyboard.press("Enter")
            page.locator(".progress-text", has_text=expected).wait_for(timeout=10_000)
        page.keyboard.press("u")  # back, by htmx, from a link inside the form
        page.locator(".pill").wait_for(timeout=10_000)
        page.keyboard.press("Enter")
        page.locator(".progress-text", has_text="2 of 3").wait_for(timeout=10_000)
        page.wait_for_timeout(300)
    finally:
        context.close()
    assert errors == []


def test_chinese_targets_mark_within_words_by_default(live_server, chromium_browser):
    data: dict[str, Any] = span_study_file(slug="snap-zh", protocol="mqm", candidates=1)
    data["settings"]["target_language"] = "zh-Hans"
    for item in data["items"]:
        item["candidates"][0]["text"] = "旧渡轮每天早上七点离开港口。"
    study = study_import(status="open", data=data)
    context, page, _ = open_page(live_server, chromium_browser, DESKTOP, study)
    try:
        drag_select(page, "#cand-A-text", 1, 3)
        page.locator("[data-span-panel]").wait_for(state="visible")
        assert page.locator("[data-panel-excerpt]").inner_text() == "渡轮"
    finally:
        context.close()


@pytest.mark.parametrize("width", VIEWPORTS)
def test_skip_button_says_what_it_does_and_moves_to_the_next_item(live_server, chromium_browser, screenshot_dir,
                                                                   width):
    from annotation.models import Assignment, AssignmentStatus
    study = study_import(status="open", data={**ranking_file(), "slug": f"skip-{width}"})
    annotator = annotators_create(study=study)[0]
    context = chromium_browser.new_context(viewport=VIEWPORTS[width])
    page = context.new_page()
    errors = console_errors(page)
    try:
        page.goto(f"{live_server.url}/a/{annotator.token}/item/")
        page.locator("[data-item][data-ready]").wait_for()
        first_url = page.url
        page.locator("[data-skip] summary").click()
        page.locator("#skip-reason").fill("I do not know French well enough")
        assert "will not see it again" in page.locator("#skip-note").inner_text()
        page.screenshot(path=str(screenshot_dir / f"newcomer-skip-{width}.png"), full_page=True)
        assert not (problems := describe(axe_violations(page), f"skip {width}")), "\n".join(problems)
        page.keyboard.press("Enter")  # in the reason field: the skip, not the answer
        page.wait_for_url(lambda url: url != first_url and "/item/" in url)
        page.locator("[data-item][data-ready]").wait_for()
        skipped = Assignment.objects.get(annotator=annotator, status=AssignmentStatus.SKIPPED)
        assert skipped.skip_reason == "I do not know French well enough"
        assert not Assignment.objects.filter(annotator=annotator, status=AssignmentStatus.DONE).exists()
    finally:
        context.close()
    assert errors == []
