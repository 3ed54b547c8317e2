"""The annotator's pages in headless Chromium: keyboard-only judging, revisions, screenshots."""
from __future__ import annotations

import re

import pytest

from annotation.models import Annotator, Assignment, Judgment
from annotation.handout.services import annotators_create
from annotation.items.selectors import ordered_candidates
from studies.importing.study_file import study_import

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def spans(text: str, *words: str) -> list[list[int]]:
    """Character spans of every whole-word occurrence of ``words`` (the highlighted phenomenon)."""
    found = []
    for word in words:
        found += [[m.start(), m.end()] for m in re.finditer(rf"(?<!\w){re.escape(word)}(?!\w)", text)]
    return sorted(found)


def cand(system: str, text: str, *words: str, ref: bool = False) -> dict:
    return {"system": system, "text": text, "is_reference": ref, "highlights": spans(text, *words)}


RANKING_ITEMS = [
    {"id": "r1", "document_id": "d1", "position": 0,
     "source_context": ["Did you see Marie's new car?", "Yes, she bought it last week."],
     "source": "It is really nice, but it uses a lot of fuel.",
     "candidates": [
         cand("reference", "Elle est vraiment belle, mais elle consomme beaucoup.", "Elle", "elle", ref=True),
         cand("sys1", "Il est vraiment beau, mais il consomme beaucoup d'essence.", "Il", "il"),
         cand("sys2", "C'est vraiment joli, mais ça consomme beaucoup.", "C'est", "ça")]},
    {"id": "r2", "document_id": "d1", "position": 1,
     "source_context": ["Yes, she bought it last week.", "It is really nice, but it uses a lot of fuel."],
     "source": "She says it was a bargain anyway.",
     "candidates": [
         cand("reference", "Elle dit que c'était une bonne affaire de toute façon.", "Elle"),
         cand("sys1", "Il dit que c'était une affaire de toute façon.", "Il"),
         cand("sys2", "Elle dit que de toute façon, c'était une aubaine.", "Elle")]},
    {"id": "r3", "document_id": "d2", "position": 0,
     "source_context": ["The hotel room was small.", "The bed, however, was comfortable."],
     "source": "It was also very quiet at night.",
     "candidates": [
         cand("reference", "Elle était aussi très calme la nuit.", "Elle", ref=True),
         cand("sys1", "Il était aussi très calme la nuit.", "Il"),
         cand("sys2", "C'était aussi très calme la nuit.", "C'était")]},
]


def ranking_file() -> dict:
    return {"slug": "pronouns-fr", "title": "Pronoun ranking, English → French", "protocol": "ranking",
            "settings": {"show_source": True, "allow_ties": False, "redundancy": 1, "spam_rate": 0.0,
                         "public_title": "Pronoun ranking, English → French",  # shown to annotators
                         "completion_code": "C1A2B3",
                         "question": "Rank the translations of the sentence in bold (1 = best).",
                         "instructions": "Read the **source text**, then rank the three French translations "
                                         "of the bold sentence from best (1) to worst (3). Pay particular "
                                         "attention to the *highlighted pronouns*."},
            "items": RANKING_ITEMS}


def choice_file() -> dict:
    ctx = ["The forecast had promised sunshine all weekend.", "We packed our swimsuits and left early."]
    items = []
    for k, (ref_text, word, plain) in enumerate([
        ("However, it rained from the moment we arrived.", "However,", "It rained from the moment we arrived."),
        ("So we spent the afternoon in a museum instead.", "So", "We spent the afternoon in a museum instead."),
    ]):
        items.append({"id": f"c{k}", "target_context": ctx, "candidates": [
            cand("reference", ref_text, word, ref=True), cand("sys1", plain)]})
    return {"slug": "connectives", "title": "Connective preference", "protocol": "choice",
            "settings": {"options": ["neither", "invalid"], "redundancy": 1,
                         "question": "Which continuation fits the text better?",
                         "instructions": "Choose the continuation that reads best after the preceding text."},
            "items": items}


def judgment_file() -> dict:
    text = ("Anna a appelé sa sœur hier soir.\nElle lui a dit qu'il viendrait samedi.\n"
            "Ils ont ensuite parlé du voyage pendant une heure.")
    return {"slug": "errors", "title": "Error categorisation", "protocol": "judgment",
            "settings": {"labels": ["No error", "Inconsistency", "Ellipsis", "Ambiguity", "Other"],
                         "multi_label": True, "redundancy": 1, "unit": "document",
                         "question": "Which problems do the highlighted words show?",
                         "instructions": "Mark every kind of problem you see in the highlighted words."},
            "items": [{"id": "j1", "target_context": ["Anna called her sister last night."],
                       "candidates": [cand("sys1", text, "Elle", "il", "Ils")]}]}


def start(live_server, study) -> tuple[Annotator, str]:
    annotator = annotators_create(study=study)[0]
    return annotator, f"{live_server.url}/a/{annotator.token}/"


def begin(page) -> None:
    """Press Enter on the start page once its Start link has taken the focus (autofocus is applied at
    the browser's next rendering step, which can come after the load event on a busy machine)."""
    page.wait_for_function("document.activeElement && document.activeElement.matches('[data-start]')")
    page.keyboard.press("Enter")


def ready(page) -> None:
    """Wait until the item on screen has been wired up by annotate.js (and htmx), as a person would."""
    page.locator("[data-item][data-ready]").wait_for()


def wait_progress(page, done: int, total: int) -> None:
    page.locator(".progress-text", has_text=f"{done} of {total}").wait_for()
    ready(page)


def test_ranking_by_keyboard_with_revision(live_server, browser_page, screenshot_dir):
    page = browser_page
    study = study_import(status="open", data=ranking_file())
    annotator, url = start(live_server, study)
    requested: list[str] = []  # every address the browser asks for: pages, htmx posts, scripts
    page.on("request", lambda request: requested.append(request.url))
    page.goto(url)
    assert page.url == f"{live_server.url}/a/"  # the link set the cookie and left the address bar
    assert page.locator("h1", has_text="Pronoun ranking").is_visible()
    page.wait_for_function("document.activeElement && document.activeElement.matches('[data-start]')")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Start"  # autofocus
    page.screenshot(path=str(screenshot_dir / "start-desktop.png"), full_page=True)
    begin(page)
    wait_progress(page, 0, 3)

    # Item 1: focus starts on candidate A; each digit ranks the focused card and moves on.
    assert page.evaluate("document.activeElement.closest('[data-card]').dataset.letter") == "a"
    page.keyboard.press("2")
    page.keyboard.press("1")
    page.keyboard.press("3")
    page.screenshot(path=str(screenshot_dir / "ranking-desktop.png"), full_page=True)
    page.keyboard.press("Enter")
    wait_progress(page, 1, 3)

    # Item 2: arrows move between cards; a rank already given moves (swaps) instead of clashing.
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")  # candidate C
    page.keyboard.press("1")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")  # candidate A
    page.keyboard.press("1")  # takes rank 1 from C, which is left without a rank
    page.keyboard.press("Enter")  # incomplete: refused, explained, nothing stored
    page.locator("[role=alert]", has_text="Every candidate needs a rank").wait_for()
    ready(page)
    assert Judgment.objects.count() == 1
    page.keyboard.press("2")  # focus is on the first unranked card (B)
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    wait_progress(page, 2, 3)
    assert "/item/" in page.url

    # Item 3 is on screen: go back with `u` and change the answer to item 2.
    second = Assignment.objects.get(annotator=annotator, sequence=2)
    first_answer = Judgment.objects.get(assignment=second).answer
    page.keyboard.press("u")
    page.locator(".pill", has_text="Changing an earlier answer").wait_for()
    ready(page)
    assert page.url.endswith(f"/item/{second.public_id}/")
    page.keyboard.press("3")  # card A: 1 → 3; card C had 3 and takes A's 1
    page.keyboard.press("Enter")
    page.locator(".pill").wait_for(state="detached")
    wait_progress(page, 2, 3)
    third = Assignment.objects.get(annotator=annotator, sequence=3)
    assert page.url.endswith(f"/item/{third.public_id}/")
    focused_card = "document.activeElement.closest('[data-card]').dataset.letter"
    page.keyboard.press("Tab")  # Tab also moves card to card (one stop per card)
    assert page.evaluate(focused_card) == "b"
    page.keyboard.press("Shift+Tab")
    assert page.evaluate(focused_card) == "a"
    page.keyboard.press("1")
    page.keyboard.press("2")
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.locator("h1", has_text="Thank you").wait_for()
    assert page.url.endswith("/a/done/")
    # The token went over the wire in one address only: the invitation link's first request.
    assert [u for u in requested if annotator.token in u] == [url]
    assert annotator.token not in page.content()
    assert page.locator("#completion-code").inner_text() == "C1A2B3"
    page.screenshot(path=str(screenshot_dir / "done-desktop.png"), full_page=True)

    history = list(Judgment.objects.filter(assignment=second).order_by("revision"))
    assert [(j.revision, j.is_current) for j in history] == [(1, False), (2, True)]
    assert history[0].answer == first_answer
    screen = ordered_candidates(second)
    assert history[0].answer["ranks"] == {str(c.pk): r for c, r in zip(screen, [1, 2, 3])}
    assert history[1].answer["ranks"] == {str(c.pk): r for c, r in zip(screen, [3, 2, 1])}
    assert Judgment.objects.filter(is_current=True).count() == 3
    times = [(j.assignment.sequence, j.revision, j.client_started_at, j.client_submitted_at) for j in Judgment.objects.all()]
    assert all(t[2] and t[3] for t in times), times


def test_ranking_page_at_phone_width(live_server, chromium_browser, screenshot_dir):
    study = study_import(status="open", data=ranking_file())
    annotator, url = start(live_server, study)
    context = chromium_browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2,
                                           is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        page.goto(url + "item/")
        wait_progress(page, 0, 3)
        page.locator("label[for=rank-B-1]").tap()
        no_overflow = page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        assert no_overflow, "the item page scrolls sideways at phone width"
        boxes = [page.locator(f"article[data-letter={x}]").bounding_box() for x in "abc"]
        assert boxes[0]["y"] + boxes[0]["height"] <= boxes[1]["y"]  # cards stack
        rank = page.locator("label[for=rank-A-1]").bounding_box()
        assert rank["width"] >= 44 and rank["height"] >= 44  # touch-sized
        page.screenshot(path=str(screenshot_dir / "ranking-phone.png"), full_page=True)
    finally:
        context.close()


def test_choice_by_keyboard(live_server, browser_page, screenshot_dir):
    page = browser_page
    study = study_import(status="open", data=choice_file())
    annotator, url = start(live_server, study)
    page.goto(url + "item/")
    wait_progress(page, 0, 2)
    page.keyboard.press("b")
    assert page.locator("#choice-B").is_checked()
    page.screenshot(path=str(screenshot_dir / "choice-desktop.png"), full_page=True)
    page.keyboard.press("Enter")
    wait_progress(page, 1, 2)
    page.keyboard.press("a")
    page.keyboard.press("n")  # changed my mind: Neither
    assert page.locator("#choice-neither").is_checked() and not page.locator("#choice-A").is_checked()
    page.keyboard.press("Enter")
    page.locator("h1", has_text="Thank you").wait_for()
    first, second = Assignment.objects.filter(annotator=annotator).order_by("sequence")
    assert Judgment.objects.get(assignment=first).answer == {"choice": {"candidate": ordered_candidates(first)[1].pk}}
    assert Judgment.objects.get(assignment=second).answer == {"choice": {"option": "neither"}}


def test_multi_label_judgment_by_keyboard(live_server, browser_page, screenshot_dir):
    page = browser_page
    study = study_import(status="open", data=judgment_file())
    annotator, url = start(live_server, study)
    page.goto(url + "item/")
    wait_progress(page, 0, 1)
    assert page.locator(".cand-text .line").count() == 3  # a document block: one sentence a line
    assert page.locator(".cand-text mark").count() == 3
    page.keyboard.press("Enter")  # nothing chosen yet: refused
    page.locator("[role=alert]", has_text="Choose a label").wait_for()
    ready(page)
    for key in "233":  # Inconsistency on; Ellipsis on, then off again
        page.keyboard.press(key)
    page.keyboard.press("4")
    assert page.locator("#label-2").is_checked() and page.locator("#label-4").is_checked()
    assert not page.locator("#label-3").is_checked()
    page.screenshot(path=str(screenshot_dir / "judgment-desktop.png"), full_page=True)
    page.keyboard.press("Enter")
    page.locator("h1", has_text="Thank you").wait_for()
    assert Judgment.objects.get().answer == {"labels": ["Inconsistency", "Ambiguity"]}


def test_an_admin_login_in_another_tab_does_not_break_the_annotator_tab(live_server, browser_page):
    """A researcher piloting their own study logs in to the admin in a second tab of the same browser:
    Django rotates the CSRF token, and the annotator tab's next answers must still be stored."""
    from django.contrib.auth import get_user_model

    page = browser_page
    study = study_import(status="open", data=ranking_file())
    annotator, url = start(live_server, study)
    page.goto(url)
    begin(page)
    wait_progress(page, 0, 3)
    get_user_model().objects.create_superuser("pilot", password="pilot-pw")
    admin = page.context.new_page()
    admin.goto(f"{live_server.url}/admin/login/")
    admin.fill("#id_username", "pilot")
    admin.fill("#id_password", "pilot-pw")
    with admin.expect_navigation():
        admin.click("input[type=submit]")
    assert "/admin/" in admin.url and "login" not in admin.url
    for done in (1, 2):  # back in the annotator's tab, without reloading it
        page.bring_to_front()
        for key in "123":
            page.keyboard.press(key)
        page.keyboard.press("Enter")
        wait_progress(page, done, 3)
    assert Judgment.objects.filter(assignment__annotator=annotator).count() == 2
    assert not page.locator("[data-not-saved]:not([hidden])").count()
    # And logging out again changes nothing either.
    admin.evaluate("fetch('/admin/logout/', {method: 'POST', headers: "
                   "{'X-CSRFToken': document.cookie.replace(/.*csrftoken=([^;]*).*/, '$1')}})")
    page.bring_to_front()
    for key in "123":
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/done/?$"))
    assert Judgment.objects.filter(assignment__annotator=annotator).count() == 3
