"""Per-item languages (studies that mix directions), the study's wording language, and no spam mark for annotators.

Issue 12, items 5 and 8: ``lang``/``dir`` on every text whose language the item or
study knows; the study's own instructions carry the study's language under a
translated interface; the preview's spam marks never reach an annotator's page.
"""
from __future__ import annotations

import lxml.html  # type: ignore[import-untyped]  # installed with sacrebleu (requirements.txt)
import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Annotator
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from annotation.items.selectors import ordered_candidates
from studies.importing.study_file import StudyFileError, parse_study, read_items_file, study_import
from studies.lifecycle.invariants import study_copy
from studies.models import Item
from tests.conftest import annotator_client
from tests.factories import study_file

pytestmark = pytest.mark.django_db


def mixed_study(slug: str = "mixed", **settings):
    """Items 0, 2 go English → French, items 1, 3 French → English; the study names no languages."""
    data = study_file(slug=slug, n_items=4, n_candidates=2, settings={"redundancy": 2, **settings})
    for k, item in enumerate(data["items"]):
        item["source_language"], item["target_language"] = ("en", "fr") if k % 2 == 0 else ("fr", "en")
    return study_import(status="open", data=data)


def page_of(annotator: Annotator) -> tuple[Item, str]:
    client = Client()
    response = client.get(f"/a/{annotator.token}/item/", follow=True)
    assert response.status_code == 200
    assignment = assignment_next(annotator=annotator)
    assert assignment is not None
    return assignment.item, response.content.decode()


# --- the study file --------------------------------------------------------------------------

def test_per_item_languages_are_validated_with_named_errors():
    data = study_file(slug="badlang", n_items=3)
    data["items"][0]["source_language"] = "english"
    data["items"][1]["target_language"] = 12
    data["items"][2]["target_language"] = "fr-CA"
    with pytest.raises(StudyFileError) as refused:
        parse_study(data)
    errors = refused.value.errors
    assert any(e.startswith("item ext-0.source_language: 'english' is not a BCP 47 language tag") for e in errors)
    assert any(e.startswith("item ext-1.target_language: must be a string") for e in errors)
    assert not any("ext-2" in e for e in errors)
    assert not Item.objects.exists()


def test_per_item_languages_are_stored_copied_to_spam_copies_and_to_a_study_copy():
    study = mixed_study(spam_rate=0.5)
    by_ext = {i.external_id: i for i in study.items.all()}
    assert (by_ext["ext-0"].source_language, by_ext["ext-0"].target_language) == ("en", "fr")
    assert (by_ext["ext-1"].source_language, by_ext["ext-1"].target_language) == ("fr", "en")
    spam = list(study.items.filter(is_spam=True))
    assert spam
    for copy in spam:  # the same marks as its item: nothing in the page source sets a spam copy apart
        assert copy.spam_of is not None
        assert (copy.source_language, copy.target_language) == (copy.spam_of.source_language,
                                                                copy.spam_of.target_language)
    new = study_copy(study=study, slug="mixed-copy")
    assert sorted(new.items.values_list("external_id", "source_language", "target_language")) == \
        sorted(study.items.values_list("external_id", "source_language", "target_language"))


def test_per_item_languages_from_a_csv_items_file():
    content = ("id,system,text,source_language,target_language\n"
               "a,reference,Bonjour tout le monde.,en,fr\na,sys1,Salut le monde.,en,fr\n")
    parsed = parse_study(study_file(slug="csvlang"), read_items_file("items.csv", content))
    assert (parsed.items[0]["source_language"], parsed.items[0]["target_language"]) == ("en", "fr")


def test_study_wording_language_is_validated():
    data = study_file(slug="badwording", settings={"instructions_language": "not a tag"})
    with pytest.raises(StudyFileError) as refused:
        parse_study(data)
    assert any(e.startswith("settings.instructions_language:") for e in refused.value.errors)


# --- the pages -------------------------------------------------------------------------------

def test_each_item_marks_its_texts_with_its_own_languages():
    study = mixed_study(show_source=True)
    seen = set()
    for annotator in annotators_create(study=study, count=2):
        for _ in range(4):
            item, body = page_of(annotator)
            tree = lxml.html.fromstring(body)
            src, tgt = item.source_language, item.target_language
            context = tree.xpath("//div[@class='context-text']")[0]
            assert (context.get("lang"), context.get("dir")) == (src, "ltr")
            cands = tree.xpath("//div[@class='cand-text']")
            assert cands and all(c.get("lang") == tgt for c in cands)
            seen.add((src, tgt))
            assignment = assignment_next(annotator=annotator)
            assert assignment is not None
            judgment_submit(assignment=assignment,
                            payload={"ranks": {c.public_id: k + 1 for k, c in enumerate(ordered_candidates(assignment))}})
    assert seen == {("en", "fr"), ("fr", "en")}


def test_item_languages_override_the_studys_and_blank_falls_back():
    data = study_file(slug="fallback", n_items=2, n_candidates=2,
                      settings={"source_language": "de", "target_language": "ar", "show_source": False})
    data["items"][0]["target_language"] = "he"
    study = study_import(status="open", data=data)
    annotator = annotators_create(study=study)[0]
    targets = {}
    for _ in range(2):
        item, body = page_of(annotator)
        cand = lxml.html.fromstring(body).xpath("//div[@class='cand-text']")[0]
        context = lxml.html.fromstring(body).xpath("//div[@class='context-text']")[0]
        targets[item.external_id] = (cand.get("lang"), cand.get("dir"), context.get("lang"))
        assignment = assignment_next(annotator=annotator)
        assert assignment is not None
        judgment_submit(assignment=assignment,
                        payload={"ranks": {c.public_id: k + 1 for k, c in enumerate(ordered_candidates(assignment))}})
    assert targets == {"ext-0": ("he", "rtl", "he"), "ext-1": ("ar", "rtl", "ar")}


def test_the_api_gives_the_items_own_languages():
    study = mixed_study()
    annotator = annotators_create(study=study)[0]
    data = annotator_client(annotator).get(reverse("api-annotate-next")).json()
    item = assignment_next(annotator=annotator)
    assert item is not None
    assert (data["source_language"], data["target_language"]) == (item.item.source_language,
                                                                 item.item.target_language)


def test_study_wording_carries_the_study_language_under_a_translated_interface():
    data = study_file(slug="wording", n_items=2, protocol="judgment", n_candidates=1,
                      settings={"labels": ["good", "bad"], "question": "Is the highlighted word right?",
                                "instructions": "Read the sentence, then judge the highlighted word.",
                                "public_title": "Reading texts"})
    study = study_import(status="open", data=data)
    annotator = annotators_create(study=study)[0]
    start = Client(HTTP_ACCEPT_LANGUAGE="fr").get(f"/a/{annotator.token}/", follow=True).content.decode()
    tree = lxml.html.fromstring(start)
    assert tree.get("lang") == "fr"
    assert tree.xpath("//div[@id='instructions']")[0].get("lang") == "en"
    assert tree.xpath("//h1")[0].get("lang") == "en"
    body = Client(HTTP_ACCEPT_LANGUAGE="fr").get(f"/a/{annotator.token}/item/", follow=True).content.decode()
    tree = lxml.html.fromstring(body)
    assert tree.xpath("//h2[@id='question']")[0].get("lang") == "en"
    assert tree.xpath("//div[@class='drawer-body']/div[@class='prose']")[0].get("lang") == "en"
    label_spans = tree.xpath("//fieldset[@class='labels']//label/span[@lang]")
    assert [s.text_content() for s in label_spans] == ["good", "bad"] and {s.get("lang") for s in label_spans} == {"en"}
    # The interface's own words stay French (no lang of their own).
    assert tree.xpath("//h1[@id='item-heading']")[0].get("lang") is None
    assert tree.xpath("//h1[@id='item-heading']")[0].text_content() == "Évaluez cet élément"


def test_a_default_question_is_interface_wording_and_an_explicit_wording_language_wins():
    data = study_file(slug="wording2", n_items=2, settings={"question": "", "instructions_language": "de",
                                                            "instructions": "Lesen Sie die Sätze."})
    study = study_import(status="open", data=data)
    annotator = annotators_create(study=study)[0]
    body = Client(HTTP_ACCEPT_LANGUAGE="es").get(f"/a/{annotator.token}/item/", follow=True).content.decode()
    tree = lxml.html.fromstring(body)
    assert tree.xpath("//h2[@id='question']")[0].get("lang") is None  # the translated default question
    assert tree.xpath("//div[@class='drawer-body']/div[@class='prose']")[0].get("lang") == "de"


def test_the_item_page_has_one_h1():
    study = mixed_study()
    annotator = annotators_create(study=study)[0]
    _item, body = page_of(annotator)
    tree = lxml.html.fromstring(body)
    assert len(tree.xpath("//h1")) == 1 and tree.xpath("//h1")[0].text_content() == "Judge this item"


# --- no spam mark on an annotator's page (the preview's marks are the preview's own) --------------

SPAM_MARKS = ("spam", "scrambled", "control", "data-preview", "preview-")


def test_the_annotator_page_source_has_no_spam_mark():
    data = study_file(slug="nomark", n_items=4, n_candidates=3, settings={"spam_rate": 0.5, "redundancy": 1})
    study = study_import(status="open", data=data)
    annotator = annotators_create(study=study)[0]
    spam_pages = 0
    while True:
        assignment = assignment_next(annotator=annotator)
        if assignment is None:
            break
        body = Client().get(f"/a/{annotator.token}/item/", follow=True).content.decode().lower()
        for mark in SPAM_MARKS:
            assert mark not in body, (mark, assignment.item.is_spam)
        spam_pages += assignment.item.is_spam
        judgment_submit(assignment=assignment,
                        payload={"ranks": {c.public_id: k + 1 for k, c in enumerate(ordered_candidates(assignment))}})
    assert spam_pages >= 1
