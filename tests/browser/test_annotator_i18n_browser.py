"""Issue 9 in headless Chromium: languages (Arabic right to left, French by Accept-Language) and the
annotator basics (refusals mark cards, rank 10 by keyboard, typed-ahead keys, last rank filled in,
no keyboard legend on touch screens). Screenshots go to screenshots/ (some are copied to docs/img/)."""
from __future__ import annotations

import pytest

from annotation.models import Assignment, Judgment
from annotation.items.selectors import ordered_candidates
from studies.importing.study_file import study_import
from tests.browser.test_annotate_browser import begin, ready, start, wait_progress

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1366, "height": 850}
PHONE = {"width": 390, "height": 844}

ARABIC_ITEMS = [
    {"id": "a1", "source_context": ["Did you see Marie's new car?", "Yes, she bought it last week."],
     "source": "It is really nice, but it uses a lot of fuel.",
     "candidates": [
         {"system": "ref", "text": "إنها جميلة حقًا، لكنها تستهلك الكثير من الوقود.", "is_reference": True,
          "highlights": [[0, 4]]},
         {"system": "mt1", "text": "هو جميل حقًا، لكنه يستهلك الكثير من الوقود.", "highlights": [[0, 2]]},
         {"system": "mt2", "text": "إنه لطيف جدًا، لكن يستخدم وقودًا كثيرًا.", "highlights": [[0, 3]]}]},
    {"id": "a2", "source_context": ["Yes, she bought it last week."], "source": "She says it was a bargain.",
     "candidates": [
         {"system": "ref", "text": "تقول إنها كانت صفقة رابحة.", "is_reference": True},
         {"system": "mt1", "text": "يقول إنها كانت صفقة.", "highlights": [[0, 4]]},
         {"system": "mt2", "text": "هي تقول كانت رخيصة.", "highlights": [[0, 2]]}]},
]


def arabic_file() -> dict:
    return {"slug": "pronouns-ar", "title": "DiaBLa-style pronouns (reference vs MT, design B)", "protocol": "ranking",
            "settings": {"show_source": True, "redundancy": 1, "source_language": "en", "target_language": "ar",
                         "interface_language": "ar", "public_title": "دراسة ترجمة الضمائر",
                         "instructions": "اقرأ النص المصدر، ثم رتّب الترجمات من الأفضل (1) إلى الأسوأ.",
                         "question": "رتّب ترجمات الجملة المكتوبة بالخط العريض (1 = الأفضل)."},
            "items": ARABIC_ITEMS}


def plain_file(slug: str, *, n_items: int = 3, n_candidates: int = 3, **settings) -> dict:
    items = [{"id": f"{slug}-{i}", "target_context": [f"Context sentence {i}."],
              "candidates": [{"system": f"s{k}", "text": f"Item {i}, candidate text number {k}."}
                             for k in range(n_candidates)]} for i in range(n_items)]
    return {"slug": slug, "title": f"Secret design of {slug}", "protocol": "ranking",
            "settings": {"redundancy": 1, "target_language": "en", **settings}, "items": items}


def ranks_on_screen(page) -> dict[str, str]:
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('[data-card]')].map(
        c => [c.dataset.letter, (c.querySelector('input[data-rank]:checked') || {}).value || '']))""")


def test_arabic_study_renders_right_to_left_in_arabic(live_server, chromium_browser, screenshot_dir):
    study = study_import(status="open", data=arabic_file())
    annotator, url = start(live_server, study)
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        context = chromium_browser.new_context(viewport=viewport)
        page = context.new_page()
        page.goto(url)
        assert page.evaluate("getComputedStyle(document.documentElement).direction") == "rtl"
        assert page.evaluate("document.documentElement.lang") == "ar"
        assert page.locator("h1").inner_text() == "دراسة ترجمة الضمائر"
        assert "DiaBLa" not in page.content() and "reference vs MT" not in page.content()
        assert page.locator("[data-start]").inner_text() == ("ابدأ" if name == "desktop" else "متابعة")
        page.screenshot(path=str(screenshot_dir / f"arabic-start-{name}.png"), full_page=True)
        page.locator("[data-start]").click()
        ready(page)
        assert page.locator("button[type=submit]").inner_text().startswith("إرسال")
        assert page.locator(".card-title").first.inner_text() in ("الترجمة A", "الترجمة A".upper())
        text = page.locator(".cand-text").first
        assert text.get_attribute("lang") == "ar" and text.get_attribute("dir") == "rtl"
        assert text.evaluate("e => getComputedStyle(e).direction") == "rtl"
        # Right-aligned: the text ends (its full stop) at the card's left edge, starts at the right.
        box = text.evaluate("e => { const r = document.createRange(); r.selectNodeContents(e.querySelector('.line'));"
                            " const t = r.getBoundingClientRect(), c = e.getBoundingClientRect();"
                            " return [t.right, c.right, t.left, c.left]; }")
        assert abs(box[0] - box[1]) < 2, box
        source = page.locator(".context-text")
        assert source.get_attribute("lang") == "en" and source.evaluate("e => getComputedStyle(e).direction") == "ltr"
        # The submit button sits at the inline end: on the left in Arabic.
        submit = page.locator("button[type=submit]").bounding_box()
        actions = page.locator(".actions").bounding_box()
        assert submit and actions and submit["x"] - actions["x"] < 2
        page.keyboard.press("1")
        page.keyboard.press("2")  # the third card gets rank 3 by itself
        page.screenshot(path=str(screenshot_dir / f"arabic-ranking-{name}.png"), full_page=True)
        if name == "desktop":
            page.keyboard.press("Enter")
            page.locator(".progress-text", has_text="أُنجز 1 من 2").wait_for()
            ready(page)
        context.close()
    assert Judgment.objects.count() == 1


def test_french_interface_chosen_by_accept_language(live_server, chromium_browser, screenshot_dir):
    study = study_import(status="open", data=plain_file("fr-by-browser", target_language="fr"))
    annotator, url = start(live_server, study)
    context = chromium_browser.new_context(viewport=DESKTOP, locale="fr-FR",
                                           extra_http_headers={"Accept-Language": "fr-FR,fr;q=0.9,en;q=0.5"})
    page = context.new_page()
    page.goto(url)
    assert page.evaluate("document.documentElement.lang") == "fr"
    assert page.locator("[data-start]").inner_text() == "Commencer"
    assert "Cette étude comporte 3 éléments pour vous." in page.locator("#start-status").inner_text()
    page.screenshot(path=str(screenshot_dir / "french-start-desktop.png"), full_page=True)
    begin(page)
    ready(page)
    assert page.locator(".progress-text").inner_text() == "0 sur 3 faits"
    assert page.locator("button[type=submit]").inner_text().startswith("Valider")
    assert page.locator(".card-title").first.inner_text().lower() == "traduction a"
    context.close()


def test_refusal_marks_the_unranked_cards(live_server, chromium_browser, screenshot_dir):
    study = study_import(status="open", data=plain_file("refusal"))
    annotator, url = start(live_server, study)
    context = chromium_browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.goto(url)
    begin(page)
    ready(page)
    page.keyboard.press("1")  # only A ranked: B and C are left open (two open: nothing filled in)
    page.keyboard.press("Enter")
    alert = page.locator("[role=alert]")
    alert.wait_for()
    ready(page)
    assert "No rank yet: candidates B, C." in alert.inner_text()
    cards = page.locator("[data-card]")
    assert cards.nth(0).get_attribute("aria-invalid") is None
    for k, letter in ((1, "B"), (2, "C")):
        card = cards.nth(k)
        assert card.get_attribute("aria-invalid") == "true"
        described = card.get_attribute("aria-describedby").split()
        assert described == [f"cand-{letter}-problem", "item-errors"]
        assert page.locator(f"#{described[0]}").is_visible() and page.locator("#item-errors").is_visible()
        assert card.evaluate("e => getComputedStyle(e).borderTopColor") == "rgb(192, 57, 43)"
    page.screenshot(path=str(screenshot_dir / "refusal-desktop.png"), full_page=True)
    page.keyboard.press("2")  # focus is on B, the first open card; C gets 3 by itself
    assert cards.nth(1).get_attribute("aria-invalid") is None
    assert cards.nth(2).get_attribute("aria-invalid") is None
    page.keyboard.press("Enter")
    wait_progress(page, 1, 3)
    context.close()


def test_rank_ten_and_two_digit_ranks_by_keyboard(live_server, browser_page):
    page = browser_page
    study = study_import(status="open", data=plain_file("twelve", n_items=1, n_candidates=12))
    annotator, url = start(live_server, study)
    page.goto(url)
    begin(page)
    ready(page)
    page.keyboard.press("0")  # A: rank 10
    page.keyboard.press("1")
    page.keyboard.press("2")  # B: rank 12 (typed quickly)
    page.keyboard.press("1")
    page.wait_for_timeout(900)  # C: a lone 1 becomes rank 1 after the short wait
    page.keyboard.press("1")
    page.keyboard.press("1")  # D: rank 11
    ranks = ranks_on_screen(page)
    assert (ranks["a"], ranks["b"], ranks["c"], ranks["d"]) == ("10", "12", "1", "11"), ranks
    for digit in "23456789":
        page.keyboard.press(digit)  # E…L get 2…9
    # Eleven ranks given by hand, the twelfth card had none left: all 12 ranks are used once.
    ranks = ranks_on_screen(page)
    assert sorted(int(r) for r in ranks.values()) == list(range(1, 13)), ranks
    page.keyboard.press("Enter")
    page.locator("h1", has_text="Thank you").wait_for()
    judgment = Judgment.objects.get()
    screen = ordered_candidates(judgment.assignment)
    assert [judgment.answer["ranks"][str(c.pk)] for c in screen[:4]] == [10, 12, 1, 11]


def test_a_fast_typist_sees_the_pending_digit_and_space_takes_it_alone(live_server, browser_page, screenshot_dir):
    """Typing "1 2" quickly on 12 candidates: the first digit visibly waits ("1…" on the card); Space gives
    rank 1 at once, so "1", Space, "2" ranks two cards 1 and 2 however fast it is typed."""
    page = browser_page
    study = study_import(status="open", data=plain_file("fast", n_items=1, n_candidates=12))
    annotator, url = start(live_server, study)
    page.goto(url)
    begin(page)
    ready(page)
    page.keyboard.press("1")
    badge = page.locator('[data-card][data-letter="a"] [data-pending-digit]')
    assert badge.is_visible() and badge.get_attribute("data-pending-digit") == "1"
    drawn = badge.evaluate("el => getComputedStyle(el, '::after').content")
    assert "1" in drawn and "…" in drawn, drawn  # the card reads "1…"
    assert "Space" in (badge.get_attribute("title") or "")
    page.screenshot(path=str(screenshot_dir / "two-digit-pending.png"), full_page=False)
    page.keyboard.press(" ")
    page.keyboard.press("2")  # well within the two-digit wait: still a rank of its own after Space
    page.wait_for_timeout(50)
    ranks = ranks_on_screen(page)
    assert (ranks["a"], ranks["b"]) == ("1", "2"), ranks
    assert not page.locator("[data-pending-digit]").count()
    # Without Space, the same fast "1 2" is one rank, 12, and the wait was shown on the card meanwhile.
    page.keyboard.press("1")
    assert page.locator('[data-card][data-letter="c"] [data-pending-digit]').is_visible()
    page.keyboard.press("2")
    ranks = ranks_on_screen(page)
    assert ranks["c"] == "12" and not page.locator("[data-pending-digit]").count()
    legend = page.locator("details.keys").text_content()
    assert "Space gives that one-digit rank at once" in legend


def test_keys_typed_while_the_next_item_loads_are_kept(live_server, browser_page):
    """A slow network (answers held back by page.route as long as the test likes): nothing typed is lost."""
    page = browser_page
    study = study_import(status="open", data=plain_file("latency", n_items=3))
    annotator, url = start(live_server, study)
    held = []

    def hold_posts(route):
        if route.request.method == "POST":
            held.append(route)
        else:
            route.continue_()

    page.route("**/item/**", hold_posts)
    page.goto(url)
    begin(page)
    ready(page)
    page.keyboard.press("1")
    page.keyboard.press("2")  # C: 3 by itself
    page.keyboard.press("Enter")
    while not held:
        page.wait_for_timeout(20)
    # The answer to item 1 is on its way; the annotator goes on typing for item 2.
    assert page.locator("[data-loading-note]").is_visible()
    for key in ("2", "1", "Enter"):
        page.keyboard.press(key)
    page.wait_for_timeout(400)  # the "network" is slow
    held.pop().continue_()
    # The next item arrives; the buffered keys rank it (2, 1, and 3 filled in) and Enter sends it.
    while not held:
        page.wait_for_timeout(20)
    held.pop().continue_()
    wait_progress(page, 2, 3)
    assert not page.locator("[role=alert]").count()  # the typed-ahead Enter was not refused
    second = Assignment.objects.get(annotator=annotator, sequence=2)
    judgment = Judgment.objects.get(assignment=second)
    screen = ordered_candidates(second)
    assert [judgment.answer["ranks"][str(c.pk)] for c in screen] == [2, 1, 3]
    assert not page.locator("[data-loading-note]").is_visible()
    page.unroute("**/item/**")


def test_last_rank_is_filled_in_and_can_be_undone(live_server, browser_page):
    page = browser_page
    study = study_import(status="open", data=plain_file("pairs", n_items=2, n_candidates=2))
    annotator, url = start(live_server, study)
    page.goto(url)
    begin(page)
    ready(page)
    page.keyboard.press("2")  # A: 2, so B can only be 1
    assert ranks_on_screen(page) == {"a": "2", "b": "1"}
    note = page.locator("[data-card][data-letter=b] [data-autofill-note]")
    assert note.is_visible()
    note.locator("[data-autofill-undo]").click()  # undo by the button
    assert ranks_on_screen(page) == {"a": "2", "b": ""} and not note.is_visible()
    page.locator("[data-card][data-letter=a] input[data-rank='1']").focus()
    page.keyboard.press("1")  # A: 1, B: 2 filled in
    assert ranks_on_screen(page) == {"a": "1", "b": "2"}
    page.keyboard.press("Backspace")  # undo by the keyboard
    assert ranks_on_screen(page) == {"a": "1", "b": ""}
    page.keyboard.press("2")  # focus went back to B
    page.keyboard.press("Enter")
    wait_progress(page, 1, 2)
    # Two actions for a pair: one rank, then Enter.
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.locator("h1", has_text="Thank you").wait_for()
    assert Judgment.objects.count() == 2


def test_touch_screens_get_no_keyboard_legend(live_server, chromium_browser, screenshot_dir):
    study = study_import(status="open", data=plain_file("touch", n_items=2, n_candidates=2))
    annotator, url = start(live_server, study)
    context = chromium_browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True, device_scale_factor=2)
    page = context.new_page()
    page.goto(url)
    assert page.evaluate("matchMedia('(hover: none) and (pointer: coarse)').matches")
    assert not page.locator(".keys").is_visible() and not page.locator(".keyboard-only").is_visible()
    page.locator("[data-start]").tap()
    ready(page)
    assert not page.locator(".keys").is_visible()
    assert not page.locator("button[type=submit] kbd").is_visible()
    page.locator("label[for='rank-A-1']").tap()
    assert ranks_on_screen(page) == {"a": "1", "b": "2"}
    page.screenshot(path=str(screenshot_dir / "touch-phone.png"), full_page=True)
    page.locator("button[type=submit]").tap()
    wait_progress(page, 1, 2)
    page.goto(f"{live_server.url}/a/{annotator.token}/item/")
    ready(page)
    page.locator("label[for='rank-B-1']").tap()
    page.locator("button[type=submit]").tap()
    page.locator("h1", has_text="Thank you").wait_for()
    assert not page.locator(".kbd-hint").is_visible()
    context.close()
