"""Issue #3 in headless Chromium: a generated connective-preference item and an error-categorisation item,
completed with the keyboard only; the researcher's quality page. Screenshots go to screenshots/."""
from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

from annotation.models import Assignment, Judgment
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.generators.choice import SourceItem, connective_study, generated_import
from studies.importing.study_file import study_import

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ERROR_LABELS = ["no error", "sentence-level", "document-level", "inconsistency", "ellipsis", "ambiguity", "other"]


def connective_source() -> list[SourceItem]:
    context = ["The forecast had promised sunshine all weekend.", "We packed our swimsuits and left early."]
    texts = [("However, it rained from the moment we arrived.", "However"),
             ("We stayed inside because the beach was closed.", "because")]
    return [SourceItem(where=f"item c{k}", data={
        "id": f"c{k}", "target_context": context,
        "candidates": [{"system": "reference", "text": text, "is_reference": True,
                        "highlights": [[text.index(word), text.index(word) + len(word)]]}]})
        for k, (text, word) in enumerate(texts)]


def wait_progress(page, done: int, total: int) -> None:
    page.locator(".progress-text", has_text=f"{done} of {total}").wait_for(timeout=10_000)


def test_connective_preference_by_keyboard(live_server, browser_page, screenshot_dir):
    page = browser_page
    generated = connective_study(items=connective_source(), slug="connective-kb", redundancy=1, spam_rate=0.0, seed=1)
    study = generated_import(status="open", generated=generated)
    annotator = annotators_create(study=study)[0]
    page.goto(f"{live_server.url}/a/{annotator.token}/")
    page.keyboard.press("Enter")  # the start button has the focus
    wait_progress(page, 0, 2)
    html = page.content()
    for secret in (r"\breference\b", "connective-deleted", "is_spam"):  # "preference" in the title is fine
        assert not re.search(secret, html, re.IGNORECASE), secret
    assert page.locator("mark", has_text="However").count() + page.locator("mark", has_text="because").count() == 1
    first = Assignment.objects.get(annotator=annotator, sequence=1)
    screen = ordered_candidates(first)
    deleted_letter = "a" if screen[0].system == "connective-deleted" else "b"
    page.keyboard.press("i")  # Invalid, then change of mind: the version without the connective
    page.keyboard.press(deleted_letter)
    assert page.locator(f"#choice-{deleted_letter.upper()}").is_checked()
    assert not page.locator("#choice-invalid").is_checked()
    page.locator("main").screenshot(path=str(screenshot_dir / "choice-connective.png"))
    page.keyboard.press("Enter")
    wait_progress(page, 1, 2)
    page.keyboard.press("n")  # Neither
    page.keyboard.press("Enter")
    page.locator("h1", has_text="Thank you").wait_for()
    second = Assignment.objects.get(annotator=annotator, sequence=2)
    deleted = next(c for c in screen if c.system == "connective-deleted")
    assert Judgment.objects.get(assignment=first).answer == {"choice": {"candidate": deleted.pk}}
    assert Judgment.objects.get(assignment=second).answer == {"choice": {"option": "neither"}}
    texts = {c.system: c.text for c in second.item.candidates.all()}
    assert texts["connective-deleted"] in ("It rained from the moment we arrived.",
                                           "We stayed inside the beach was closed.")


def test_error_categorisation_by_keyboard(live_server, browser_page, screenshot_dir):
    page = browser_page
    text = ("Anna called her sister last night.\nShe told him he would come on Saturday.\n"
            "They then talked about the trip for an hour.")
    study = study_import(status="open", data={
        "slug": "blonde-errors", "title": "Error categorisation (BlonDe App. B)", "protocol": "judgment",
        "settings": {"labels": ERROR_LABELS, "multi_label": True, "redundancy": 1, "unit": "document",
                     "question": "Which errors does this translation make? Choose every category that applies.",
                     "instructions": "Label the translation: no error, or the level and kind of every error."},
        "items": [{"id": "doc-1", "source_context": [], "target_context": ["Anna rief gestern Abend ihre Schwester an."],
                   "candidates": [{"system": "mt", "text": text,
                                   "highlights": [[text.index("him"), text.index("him") + 3]]}]}]})
    annotator = annotators_create(study=study)[0]
    page.goto(f"{live_server.url}/a/{annotator.token}/item/")
    wait_progress(page, 0, 1)
    for key in "3477":  # document-level, inconsistency, other on then off again
        page.keyboard.press(key)
    page.keyboard.press("6")  # ambiguity
    for k, on in enumerate([False, False, True, True, False, True, False], start=1):
        assert page.locator(f"#label-{k}").is_checked() is on
    page.locator("main").screenshot(path=str(screenshot_dir / "judgment-error-categories.png"))
    page.keyboard.press("Enter")
    page.locator("h1", has_text="Thank you").wait_for()
    assert Judgment.objects.get().answer == {"labels": ["document-level", "inconsistency", "ambiguity"]}


def test_quality_page_exclude_with_keyboard(live_server, browser_page, screenshot_dir, client):
    page = browser_page
    study = study_import(status="open", data={
        "slug": "quality-demo", "title": "Reference vs MT (quality)", "protocol": "choice",
        "settings": {"options": ["neither", "invalid"], "redundancy": 3, "spam_rate": 0.2, "seed": 4},
        "items": [{"id": f"i{k}", "candidates": [
            {"system": "reference", "text": f"The reference sentence number {k} is rather long and fine.", "is_reference": True},
            {"system": "mt", "text": f"The machine sentence number {k} is also rather long and fine."}]}
            for k in range(10)]})
    for annotator, rule in zip(annotators_create(study=study, count=3), ("first", "careful", "spam")):
        while (assignment := assignment_next(annotator=annotator)) is not None:
            cands = ordered_candidates(assignment)
            pick = {"first": cands[0], "careful": next(c for c in cands if not c.is_spam),
                    "spam": next((c for c in cands if c.is_spam), cands[-1])}[rule]
            judgment_submit(assignment=assignment, payload={"choice": pick.public_id})
    user = get_user_model().objects.create_user("researcher", password="pw", is_staff=True, is_superuser=True)
    client.force_login(user)
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                               "url": live_server.url}])
    page.goto(f"{live_server.url}/studies/quality-demo/quality/")
    page.locator("th a", has_text="Spam failed").click()  # htmx sort, ascending
    page.locator("th[aria-sort=ascending]", has_text="Spam failed").wait_for()
    page.locator("th a", has_text="Spam failed").click()  # descending: the spam-picker first
    page.locator("th[aria-sort=descending]", has_text="Spam failed").wait_for()
    # The swapped-in table's forms are wired by htmx once the swap has settled; Enter before that would be a
    # plain form submission (the no-JS fallback), which navigates to the exclude URL.
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')")
    page.wait_for_timeout(100)
    spammer = study.annotators.order_by("sequence")[2]
    assert page.locator("tbody tr").first.get_attribute("id") == f"q-{spammer.code}"
    page.locator(f"#reason-{spammer.code}").focus()
    page.keyboard.press("Enter")  # no reason: refused with a clear error
    page.locator(f"#err-{spammer.code}", has_text="Give a reason").wait_for()
    page.locator(f"#reason-{spammer.code}").focus()
    page.keyboard.type("picked the scrambled sentence every time")
    page.keyboard.press("Enter")
    page.locator(f"#q-{spammer.code} .badge.excluded").wait_for()
    page.locator("main").screenshot(path=str(screenshot_dir / "quality-page.png"))
    spammer.refresh_from_db()
    assert spammer.excluded and spammer.exclusion_reason == "picked the scrambled sentence every time"
    assert "sort=spam_failed" in page.url  # htmx pushed the sort into the address


def test_demo_correctness_item_by_keyboard(live_server, browser_page, screenshot_dir):
    """Seed 004's correct / incorrect judgment on the DiaBLa demo: source shown, pronouns marked."""
    from studies.demo.protocols import build_mt_correctness

    page = browser_page
    study = study_import(status="open", data=build_mt_correctness())
    annotator = annotators_create(study=study)[0]
    page.goto(f"{live_server.url}/a/{annotator.token}/item/")
    page.locator(".progress-text", has_text="0 of").wait_for()
    assert page.locator("mark").count() >= 1
    done = 0
    while Assignment.objects.get(annotator=annotator, sequence=done + 1).item.is_spam:  # screenshot a real item
        page.keyboard.press("2")
        page.keyboard.press("Enter")
        done += 1
        page.locator(".progress-text", has_text=f"{done} of").wait_for()
    page.keyboard.press("2")
    page.keyboard.press("1")  # single label: 1 replaces 2
    assert page.locator("#label-1").is_checked() and not page.locator("#label-2").is_checked()
    page.locator("main").screenshot(path=str(screenshot_dir / "judgment-correctness.png"))
    page.keyboard.press("Enter")
    page.locator(".progress-text", has_text=f"{done + 1} of").wait_for()
    current = Assignment.objects.get(annotator=annotator, sequence=done + 1)
    assert Judgment.objects.get(assignment=current).answer == {"labels": ["correct"]}


def test_demo_preference_item_by_keyboard(live_server, browser_page, screenshot_dir):
    from studies.demo.protocols import build_mt_preference

    page = browser_page
    study = study_import(status="open", data=build_mt_preference())
    annotator = annotators_create(study=study)[0]
    page.goto(f"{live_server.url}/a/{annotator.token}/item/")
    page.locator(".progress-text", has_text="0 of").wait_for()
    assert page.locator(".context, [class*=context]").first.is_visible()
    done = 0
    while Assignment.objects.get(annotator=annotator, sequence=done + 1).item.is_spam:  # screenshot a real item
        page.keyboard.press("i")
        page.keyboard.press("Enter")
        done += 1
        page.locator(".progress-text", has_text=f"{done} of").wait_for()
    page.keyboard.press("a")
    page.locator("main").screenshot(path=str(screenshot_dir / "choice-preference.png"))
    page.keyboard.press("Enter")
    page.locator(".progress-text", has_text=f"{done + 1} of").wait_for()
    current = Assignment.objects.get(annotator=annotator, sequence=done + 1)
    assert Judgment.objects.get(assignment=current).answer == {"choice": {"candidate": ordered_candidates(current)[0].pk}}
