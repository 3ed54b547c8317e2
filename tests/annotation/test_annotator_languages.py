"""Languages of the annotator's pages and the annotator basics of issue 9 (start page, refusals, titles).

The interface language comes from the study's ``interface_language``, else the
browser's Accept-Language, else English; every text carries its language and
direction; the research title never reaches an annotator.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client, override_settings
from django.urls import reverse

from annotation.pages.interface import language_from_accept
from annotation.models import Judgment
from annotation.pages.screens import time_estimate
from studies.importing.study_file import StudyFileError, parse_study, study_import
from studies.definition.languages import html_lang, language_tag_error, text_direction
from tests.factories import study_file
from tests.annotation.test_views_annotate import HTMX, one_annotator, open_current, rank_data, url

pytestmark = pytest.mark.django_db

SECRET_TITLE = "DiaBLa, reference vs MT (design A3)"
ROOT = Path(__file__).resolve().parents[2]


def study(slug: str = "lang", **settings):
    data = study_file(slug=slug, n_items=4, n_candidates=3, settings={"redundancy": 2, **settings})
    data["title"] = SECRET_TITLE
    return study_import(status="open", data=data)


# --- language tags and direction -----------------------------------------------------

@pytest.mark.parametrize("tag, direction", [
    ("ar", "rtl"), ("ar-EG", "rtl"), ("he", "rtl"), ("fa", "rtl"), ("ur-PK", "rtl"), ("pa-Arab", "rtl"),
    ("fr", "ltr"), ("zh-Hans", "ltr"), ("de-CH", "ltr"), ("az-Latn", "ltr"), ("", "auto"),
])
def test_text_direction_from_language_or_script(tag, direction):
    assert text_direction(tag) == direction


@pytest.mark.parametrize("tag", ["en", "fr-CA", "zh-Hans", "sr-Latn-RS", "es-419", "de-CH-1996", "en-US-x-test"])
def test_well_formed_tags_pass(tag):
    assert language_tag_error(tag) == ""


@pytest.mark.parametrize("tag", ["english", "fr_FR", "e", "zh-", "-ar", "en--US", "a" * 40])
def test_malformed_tags_are_named(tag):
    assert "is not a BCP 47 language tag" in language_tag_error(tag)


def test_study_file_language_settings_are_validated_with_named_errors():
    data = study_file(slug="bad-lang", settings={"source_language": "English", "target_language": "fr_FR",
                                                 "interface_language": "pt"})
    with pytest.raises(StudyFileError) as raised:
        parse_study(data)
    text = "\n".join(raised.value.errors)
    assert "settings.source_language: 'English' is not a BCP 47 language tag" in text
    assert "settings.target_language: 'fr_FR' is not a BCP 47 language tag" in text
    assert "settings.interface_language: 'pt' is not an interface language; available: en, fr, de, es, zh-hans, ar" in text
    data = study_file(slug="bad-type", settings={"public_title": 3})
    with pytest.raises(StudyFileError, match="settings.public_title: must be a string"):
        parse_study(data)


def test_study_file_language_settings_are_stored():
    s = study(source_language="en", target_language="ar", interface_language="fr", public_title="Étude A")
    assert (s.source_language, s.target_language, s.interface_language, s.public_title) == ("en", "ar", "fr", "Étude A")


def test_html_lang_spelling():
    assert html_lang("zh-hans") == "zh-Hans" and html_lang("fr") == "fr" and html_lang("en-us") == "en-US"


@pytest.mark.parametrize("header, code", [
    ("fr-CA,fr;q=0.9,en;q=0.5", "fr"), ("de-DE", "de"), ("zh-CN,zh;q=0.9", "zh-hans"), ("es-419", "es"),
    ("ja,ar;q=0.3", "ar"), ("pt-BR", ""), ("", ""), ("*", ""), ("en;q=0.1,fr;q=0.8", "fr"),
])
def test_accept_language_best_supported_match(header, code):
    assert language_from_accept(header) == code


# --- the interface language on the pages ------------------------------------------------

def test_english_without_setting_or_header():
    annotator = one_annotator(study())
    body = Client().get(url("start", annotator), follow=True).content.decode()
    assert '<html lang="en">' in body and ">Start<" in body


def test_accept_language_chooses_french_and_pages_vary_on_it():
    annotator = one_annotator(study())
    client = Client(headers={"Accept-Language": "fr-FR,fr;q=0.9,en;q=0.5"})
    resp = client.get(url("start", annotator), follow=True)
    body = resp.content.decode()
    assert '<html lang="fr">' in body and ">Commencer<" in body and ">Start<" not in body
    assert "Accept-Language" in resp["Vary"]
    _assignment, body = open_current(client, annotator)
    assert ">Valider <kbd" in body and "Traduction A" in body and "Candidate A" not in body


def test_study_interface_language_wins_over_the_browser():
    annotator = one_annotator(study(interface_language="ar"))
    client = Client(headers={"Accept-Language": "fr"})
    resp = client.get(url("start", annotator), follow=True)
    body = resp.content.decode()
    assert '<html lang="ar" dir="rtl">' in body and ">ابدأ<" in body
    assert "Accept-Language" not in resp.get("Vary", "")
    _assignment, body = open_current(client, annotator)
    assert ">إرسال <kbd" in body


def test_chinese_interface_and_language_is_not_left_active_for_other_requests():
    annotator = one_annotator(study(interface_language="zh-hans"))
    body = Client().get(url("start", annotator), follow=True).content.decode()
    assert '<html lang="zh-Hans">' in body and ">开始<" in body
    from django.utils import translation
    assert translation.get_language() in ("en-us", "en")  # the thread is shared: the override ended


def test_unknown_link_follows_the_browser_language():
    resp = Client(headers={"Accept-Language": "de"}).get("/a/no-such-token/")
    assert resp.status_code == 404 and "Dieser Link funktioniert nicht" in resp.content.decode()


def test_texts_carry_their_language_and_direction():
    annotator = one_annotator(study(show_source=True, source_language="en", target_language="ar"))
    _assignment, body = open_current(Client(), annotator)
    assert '<div class="context-text" lang="en" dir="ltr">' in body
    assert body.count('<div class="cand-text" lang="ar" dir="rtl">') == 3
    assert '<html lang="en">' in body  # the interface stays English


def test_unknown_text_language_is_dir_auto_without_lang():
    annotator = one_annotator(study())
    _assignment, body = open_current(Client(), annotator)
    assert body.count('<div class="cand-text" dir="auto">') == 3
    assert '<div class="context-text" dir="auto">' in body


# --- public title -------------------------------------------------------------------------

def test_research_title_never_reaches_annotators():
    s = study(completion_code="CODE1")
    annotator = one_annotator(s)
    client = Client()
    pages = [client.get(url("start", annotator), follow=True).content.decode()]
    assignment, body = open_current(client, annotator)
    pages.append(body)
    pages.append(client.post(url("item-detail", annotator, assignment.public_id), {}).content.decode())
    pages.append(client.post(url("item-detail", annotator, assignment.public_id), rank_data(assignment),
                             headers=HTMX).content.decode())
    for page in pages:
        assert SECRET_TITLE not in page and "DiaBLa" not in page
        assert "Translation study" in page or 'id="item"' in page
    assert '<span class="brand">Translation study</span>' in pages[0]


def test_public_title_is_shown_when_set_and_translated_default_otherwise():
    annotator = one_annotator(study(public_title="Reading French texts"))
    body = Client().get(url("start", annotator), follow=True).content.decode()
    # The study's own title is study wording: it carries the study's language (en here), not the interface's.
    assert '<h1 lang="en" dir="ltr">Reading French texts</h1>' in body
    assert "<title>Reading French texts · Instructions</title>" in body
    annotator = one_annotator(study("lang-fr", interface_language="fr"))
    body = Client().get(url("start", annotator), follow=True).content.decode()
    assert "<h1>Étude de traduction</h1>" in body


# --- start page: count, estimate, finished --------------------------------------------------

def test_start_page_estimates_time_from_enough_counted_answers_only():
    """The promise is the median of counted answers: first answers to real items, no faster than the study's
    min_seconds, of annotators neither pilot nor excluded — and only once there are 20 of them."""
    from annotation.items.selectors import ESTIMATE_MIN_ANSWERS
    from annotation.handout.services import annotators_create, assignment_next, judgment_submit

    s = study(redundancy=40, spam_rate=0.0)
    annotator = one_annotator(s)
    body = Client().get(url("start", annotator), follow=True).content.decode()
    assert "This study has 4 items for you." in body and "About" not in body  # no durations yet

    def answer(who, ms):
        assignment = assignment_next(annotator=who)
        judgment_submit(assignment=assignment, payload={
            "ranks": {c.public_id: k + 1 for k, c in enumerate(assignment.item.candidates.all())}})
        Judgment.objects.filter(assignment=assignment).update(duration_ms=ms)

    speeder, pilot, excluded = annotators_create(study=s, count=3)
    for who, ms in ((speeder, 400), (pilot, 10_000), (excluded, 10_000)):
        for _ in range(4):
            answer(who, ms)
    type(pilot).objects.filter(pk=pilot.pk).update(is_pilot=True)
    type(excluded).objects.filter(pk=excluded.pk).update(excluded=True)
    workers = annotators_create(study=s, count=ESTIMATE_MIN_ANSWERS)
    for who in workers[:-1]:
        answer(who, 45_000)
    body = Client().get(url("start", annotator), follow=True).content.decode()
    assert "About" not in body and "Less than a minute" not in body  # 19 counted answers: no promise yet
    answer(workers[-1], 45_000)
    body = Client().get(url("start", annotator), follow=True).content.decode()
    # 4 items × 45 s; the speeder's 0.4 s, the pilot's and the excluded annotator's answers are left out.
    assert "About 3 minutes (from the median time of other annotators' answers so far: 20 answers)." in body


def test_time_estimate_wording():
    assert time_estimate(remaining=3, median_ms=None) == ""
    assert time_estimate(remaining=0, median_ms=10_000) == ""
    assert time_estimate(remaining=2, median_ms=20_000) == "Less than a minute"
    assert time_estimate(remaining=10, median_ms=61_000) == "About 11 minutes"


def test_start_page_after_completion_says_so():
    s = study(items_per_annotator=1)
    annotator = one_annotator(s)
    client = Client()
    assignment, _ = open_current(client, annotator)
    client.post(url("item-detail", annotator, assignment.public_id), rank_data(assignment))
    body = client.get(url("start", annotator), follow=True).content.decode()
    assert "You have finished: you answered 1 item. Thank you!" in body
    assert ">Continue<" not in body and ">Start<" not in body
    assert f'href="{reverse("annotation:cookie-done")}"' in body  # the browser has the annotator cookie


# --- refusals name the candidates and mark their cards ---------------------------------------

def test_refusal_names_the_unranked_letter_and_marks_its_card():
    annotator = one_annotator(study())
    client = Client()
    assignment, _ = open_current(client, annotator)
    data = rank_data(assignment)
    last = list(data)[-1]
    del data[last]
    body = client.post(url("item-detail", annotator, assignment.public_id), data).content.decode()
    assert "Every candidate needs a rank; 1 missing. No rank yet: candidate C." in body
    cards = re.findall(r'<article class="card[^"]*"[^>]*>', body)
    assert len(cards) == 3
    assert 'aria-invalid="true"' in cards[2] and 'aria-describedby="cand-C-problem item-errors"' in cards[2]
    assert all("aria-invalid" not in c for c in cards[:2])
    assert 'id="cand-C-problem"' in body and 'id="item-errors"' in body


def test_tie_refusal_names_both_letters_in_french():
    annotator = one_annotator(study(interface_language="fr"))
    client = Client()
    assignment, _ = open_current(client, annotator)
    body = client.post(url("item-detail", annotator, assignment.public_id),
                       rank_data(assignment, [1, 2, 2])).content.decode()
    assert "Deux traductions ont le même rang" in body and "Même rang : traductions B, C." in body
    assert body.count('aria-invalid="true" aria-describedby') == 2


def test_api_refusal_still_names_the_field_and_now_the_ids(api):
    from tests.conftest import annotator_client
    s = study()
    annotator = one_annotator(s)
    client = annotator_client(annotator)
    nxt = client.get(reverse("api-annotate-next")).json()
    ids = [c["id"] for c in nxt["candidates"]]
    resp = client.post(reverse("api-annotate-judgment", args=[nxt["assignment"]]),
                       {"ranks": {ids[0]: 1, ids[1]: 2}}, format="json")
    assert resp.status_code == 400
    assert resp.json()["errors"]["ranks"] == [f"Every candidate needs a rank; 1 missing ({ids[2]})."]


# --- the translation catalogues ----------------------------------------------------------------

def test_every_annotator_string_is_translated_in_every_language(tmp_path, monkeypatch):
    """Regenerate the catalogues from the code (makemessages) into a copy: nothing may be untranslated or fuzzy."""
    if shutil.which("xgettext") is None:
        pytest.fail("GNU gettext (xgettext, msgfmt) is needed: apt-get install gettext")
    for part in ("annotation", "templates/annotation", "locale"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("*.mo", "__pycache__"))
    monkeypatch.chdir(tmp_path)
    languages = ["fr", "de", "es", "zh_Hans", "ar"]
    with override_settings(LOCALE_PATHS=[tmp_path / "locale"]):
        call_command("makemessages", locale=languages, no_location=True, verbosity=0)
    for language in languages:
        po = tmp_path / "locale" / language / "LC_MESSAGES" / "django.po"
        result = subprocess.run(["msgfmt", "--check-format", "--statistics", "-o", "/dev/null", str(po)],
                                capture_output=True, text=True, check=True)
        stats = result.stderr.strip()
        assert re.fullmatch(r"\d+ translated messages\.", stats), f"{language}: {stats}"
        assert "#, fuzzy\nmsgid \"" not in po.read_text(encoding="utf-8").split("\n\n", 1)[1], language


def test_annotate_js_holds_no_annotator_words():
    """Everything an annotator reads is in the (translated) templates; the script only has selectors and keys."""
    source = (ROOT / "static" / "js" / "annotate.js").read_text(encoding="utf-8")
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", source, flags=re.S)
    literals = re.findall(r'"((?:[^"\\]|\\.)*)"', code) + re.findall(r"'((?:[^'\\]|\\.)*)'", code)
    words = [lit for lit in literals if re.search(r"[A-Za-z]{2,} [A-Za-z]{2,}", lit)
             and not re.search(r"[\[\].,=#]", lit) and lit != "use strict"]
    assert words == []
    assert "textContent =" not in code and "innerHTML" not in code


def test_api_assignment_carries_the_text_languages(api):
    from tests.conftest import annotator_client
    annotator = one_annotator(study(source_language="en", target_language="ar"))
    data = annotator_client(annotator).get(reverse("api-annotate-next")).json()
    assert (data["source_language"], data["target_language"]) == ("en", "ar")
    assert SECRET_TITLE not in str(data)
