"""Suggested error spans on the ESA item page in headless Chromium: kept, edited and deleted by mouse and by
keyboard at 1280 and 390 px; the fates stored; decoys drawn like any suggestion. Screenshots: prefill-*.png."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from annotation.models import Judgment
from studies.models import Suggestion
from tests.browser.axe import axe_violations, describe
from tests.browser.test_spans_browser import DESKTOP, PHONE, drag_select, open_page
from tests.span_study import span_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def prefilled_study(slug: str, tmp_path: Path) -> Any:
    """Three candidates an item, each with one suggestion on its second word (one of them may be a decoy)."""
    study = span_study(slug=slug, protocol="esa", items=2, candidates=3, prefill_share=1.0, prefill_decoys=0.0)
    rows = []
    for item, system, text in study.items.values_list("external_id", "candidates__system", "candidates__text"):
        first = text.index(" ") + 1
        rows.append({"item": item, "system": system,
                     "spans": [{"start": first, "end": text.index(" ", first), "severity": "minor"}]})
    path = tmp_path / "qe.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    call_command("import_prefill", study.slug, str(path), "--format", "jsonl", "--source", "qe-system",
                 stdout=StringIO())
    return study


def fates_of(annotator: Any) -> dict[str, Any]:
    judgment = Judgment.objects.get(assignment__annotator=annotator)
    return judgment.answer["prefill"]["suggestions"]


def suggestion_of(page: Any, letter: str) -> str:
    return page.eval_on_selector(f"#cand-{letter}-text mark.sugg", "m => m.dataset.sugg")


def tab_to(page: Any, selector: str, limit: int = 30) -> None:
    """Press Tab until the focus is on ``selector`` (a person's way there by keyboard)."""
    for _ in range(limit):
        if page.evaluate("(sel) => document.activeElement.matches(sel)", selector):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {selector}")


@pytest.mark.parametrize("viewport_name", ["desktop", "phone"])
def test_suggestions_kept_edited_deleted_by_mouse_and_keyboard(live_server, chromium_browser, screenshot_dir,
                                                               tmp_path, viewport_name):
    viewport = DESKTOP if viewport_name == "desktop" else PHONE
    study = prefilled_study(f"prefill-{viewport_name}", tmp_path)
    context, page, annotator = open_page(live_server, chromium_browser, viewport, study)
    try:
        # Suggestions are drawn apart from the annotator's own marks and listed apart.
        assert page.locator("mark.sugg").count() == 3 and page.locator("mark.err").count() == 0
        assert page.locator("[data-mark-list] li").count() == 0 and page.locator("[data-sugg-list] li").count() == 3
        page.screenshot(path=str(screenshot_dir / f"prefill-{viewport_name}.png"), full_page=True)
        assert describe(axe_violations(page), f"suggestions ({viewport_name})") == []
        a, b, c = (suggestion_of(page, x) for x in "ABC")
        # --- by mouse: keep A's, delete B's, edit C's (a new stretch and a new severity) ---
        page.locator(f'[data-sugg-keep="{a}"]').click()
        page.locator(f'[data-sugg-delete="{b}"]').click()
        assert page.locator("#cand-B-text mark.sugg").count() == 0
        page.locator(f'[data-sugg-edit="{c}"]').click()
        c_text = page.eval_on_selector("#cand-C-text [data-seg]", "s => s.textContent")
        drag_select(page, "#cand-C-text", 0, c_text.index(" "))
        page.locator("[data-span-panel]").wait_for(state="visible")
        page.screenshot(path=str(screenshot_dir / f"prefill-edit-{viewport_name}.png"))
        page.locator("[data-span-panel] [data-sev=major]").click()
        assert page.locator("#cand-C-text mark.sugg.is-edited").inner_text() == c_text[:c_text.index(" ")]
        for k in range(3):
            page.locator("[data-score-number]").nth(k).fill("60")
        page.locator("button[type=submit]").click()
        page.locator(".progress-text", has_text="1 of 2").wait_for(timeout=10_000)
        fates = fates_of(annotator)
        assert fates[a] == {"candidate": Suggestion.objects.get(public_id=a).candidate_id, "fate": "kept"}
        assert fates[b]["fate"] == "deleted"
        assert fates[c]["fate"] == "edited"
        assert fates[c]["edit"] == {"start": 0, "end": c_text.index(" "), "side": "target", "severity": "major"}
        # --- by keyboard on the next item: Tab to each button, Enter ---
        page.locator("[data-span-cards][data-spans-ready]").wait_for()
        a, b, c = (suggestion_of(page, x) for x in "ABC")
        page.focus("#cand-A-text")
        tab_to(page, f'[data-sugg-keep="{a}"]')
        page.keyboard.press("Enter")
        tab_to(page, f'[data-sugg-delete="{b}"]')
        page.keyboard.press("Enter")
        tab_to(page, f'[data-sugg-edit="{c}"]')
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == "cand-C-text"
        for _ in range(3):
            page.keyboard.press("Shift+ArrowRight")  # three more characters
        page.keyboard.press("Enter")
        page.locator("[data-span-panel]").wait_for(state="visible")
        page.keyboard.press("2")  # major
        original = Suggestion.objects.get(public_id=c)
        for k in range(3):
            page.locator("[data-score-number]").nth(k).fill("40")
        page.screenshot(path=str(screenshot_dir / f"prefill-keyboard-{viewport_name}.png"), full_page=True)
        page.locator("[data-score-number]").nth(2).press("Enter")
        page.wait_for_url("**/done/", timeout=10_000)
        second = Judgment.objects.filter(assignment__annotator=annotator).order_by("-pk")[0].answer
        fates = second["prefill"]["suggestions"]
        assert (fates[a]["fate"], fates[b]["fate"], fates[c]["fate"]) == ("kept", "deleted", "edited")
        assert fates[c]["edit"] == {"start": original.start, "end": original.end + 3, "side": "target",
                                    "severity": "major"}
    finally:
        context.close()


def test_decoys_look_like_any_suggestion_in_page_and_api(live_server, chromium_browser, tmp_path):
    study = span_study(slug="prefill-decoys", protocol="esa", items=4, candidates=2, prefill_share=1.0,
                       prefill_decoys=0.5)
    rows = []
    for k, (item, system, text) in enumerate(study.items.values_list("external_id", "candidates__system",
                                                                     "candidates__text").order_by("pk", "candidates__pk")):
        first = text.index(" ") + 1
        rows.append({"item": item, "system": system, "spans": [] if k % 2 else
                     [{"start": first, "end": text.index(" ", first), "severity": "major", "score": -3.0}]})
    path = tmp_path / "qe.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    call_command("import_prefill", study.slug, str(path), "--format", "jsonl", "--source", "secret-qe",
                 stdout=StringIO())
    decoys = set(Suggestion.objects.filter(is_decoy=True).values_list("public_id", flat=True))
    assert decoys
    context, page, annotator = open_page(live_server, chromium_browser, DESKTOP, study)
    try:
        html = page.content()
        for secret in ("secret-qe", "decoy", "Decoy", "-3.0", "is_decoy"):
            assert secret not in html
        shown = page.eval_on_selector_all("mark.sugg", "ms => ms.map(m => [m.dataset.sugg, m.className])")
        assert any(sid in decoys for sid, _ in shown) and any(sid not in decoys for sid, _ in shown)
        assert len({cls for _, cls in shown}) == 1  # the same classes, decoy or not
        api = page.evaluate("""async (token) => (await fetch('/api/v1/annotate/next',
                                 {headers: {Authorization: 'Token ' + token}})).text()""", annotator.token)
        assert "suggestions" in api
        for secret in ("secret-qe", "decoy", "-3.0"):
            assert secret not in api
    finally:
        context.close()
