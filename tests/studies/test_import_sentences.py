"""Study files with sentence lists: source_sentences on the item, sentences on each candidate."""
from __future__ import annotations

import copy

import pytest

from studies.importing.study_file import StudyFileError, read_items_file, study_import
from studies.models import Candidate, Item, Study
from studies.controls.spam import spam_items_create
from tests.document_study import document_study_file

pytestmark = pytest.mark.django_db


def doc_file(**kwargs) -> dict:
    return document_study_file(slug="doc", candidates=3, sentences=5, **kwargs)


def test_sentence_lists_are_stored_and_texts_joined_from_them():
    data = doc_file()
    study = study_import(status="open", data=data)
    raw = data["items"][1]
    item = study.items.get(external_id=raw["id"])
    assert item.source_sentences == raw["source_sentences"]
    assert item.source == "\n".join(raw["source_sentences"])  # source omitted: the sentences, one a line
    for cand, given in zip(item.candidates.order_by("position"), raw["candidates"]):
        assert cand.sentences == given["sentences"]
        assert cand.text == "\n".join(given["sentences"])


def test_text_given_with_sentences_may_join_them_by_spaces_and_keeps_highlights():
    data = doc_file()
    cand = data["items"][0]["candidates"][1]
    cand["text"] = " ".join(cand["sentences"])
    cand["highlights"] = [[0, 2]]
    data["items"][0]["source"] = "\n".join(data["items"][0]["source_sentences"])
    study = study_import(status="open", data=data)
    stored = Candidate.objects.get(item__study=study, item__external_id=data["items"][0]["id"], system=cand["system"])
    assert stored.text == cand["text"] and stored.highlights == [[0, 2]]


def test_items_without_sentence_lists_still_import_with_empty_lists():
    data = doc_file()
    for item in data["items"]:
        item["source"] = "\n".join(item.pop("source_sentences"))
        for cand in item["candidates"]:
            cand["text"] = "\n".join(cand.pop("sentences"))
    study = study_import(status="open", data=data)
    assert all(i.source_sentences == [] for i in study.items.all())
    assert all(c.sentences == [] for c in Candidate.objects.filter(item__study=study))


def _break(data: dict, case: str) -> None:
    item = data["items"][1]
    cands = item["candidates"]
    if case == "not a list":
        cands[1]["sentences"] = "One. Two."
    elif case == "empty list":
        item["source_sentences"] = []
    elif case == "not strings":
        cands[1]["sentences"][2] = 3
    elif case == "all empty":
        cands[1]["sentences"] = [""] * len(cands[1]["sentences"])
    elif case == "line break inside":
        cands[1]["sentences"][0] = "One.\nTwo."
    elif case == "text differs":
        cands[1]["text"] = "\n".join(cands[1]["sentences"][::-1])
    elif case == "source differs":
        item["source"] = "Something else entirely."
    elif case == "fewer than the source":
        cands[2]["sentences"] = cands[2]["sentences"][:-1]
    elif case == "candidates disagree":
        item.pop("source_sentences")
        item["source"] = "A source."
        cands[2]["sentences"] = cands[2]["sentences"] + ["One more."]
    elif case == "no text, no sentences":
        cands[0].pop("sentences")


BAD = {
    "not a list": "item doc-b2.candidates[1].sentences: must be a non-empty list of strings",
    "empty list": "item doc-b2.source_sentences: must be a non-empty list of strings",
    "not strings": "item doc-b2.candidates[1].sentences: must be a non-empty list of strings",
    "all empty": "item doc-b2.candidates[1].sentences: every sentence is empty",
    "line break inside": "item doc-b2.candidates[1].sentences: sentence 1 contains a line break",
    "text differs": "item doc-b2.candidates[1].sentences: does not match text (sentence 1 differs)",
    "source differs": "item doc-b2.source_sentences: does not match source (sentence 1 differs)",
    "fewer than the source": "item doc-b2.candidates[2].sentences: 4 sentences, but source_sentences has 5",
    "candidates disagree": "item doc-b2.candidates[2].sentences: 6 sentences, but candidates[0].sentences has 5",
    "no text, no sentences": "item doc-b2.candidates[0].text: required, a non-empty string (or give sentences)",
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_sentence_lists_are_named_and_nothing_is_stored(case):
    data = copy.deepcopy(doc_file())
    _break(data, case)
    with pytest.raises(StudyFileError) as exc:
        study_import(status="open", data=data)
    assert any(e.startswith(BAD[case]) for e in exc.value.errors), exc.value.errors
    assert not Study.objects.exists() and not Item.objects.exists()


def test_csv_items_take_sentence_columns():
    content = ("id,document_id,position,source_sentences,system,text,sentences\n"
               "b1,d,1,One. ||| Two.,ref,,Un. ||| Deux.\n"
               "b1,d,1,One. ||| Two.,mt,,Une. ||| Deux.\n")
    items = read_items_file("items.csv", content)
    assert items[0]["source_sentences"] == ["One.", "Two."]
    assert items[0]["candidates"][1]["sentences"] == ["Une.", "Deux."]
    study = study_import(status="open", data={"slug": "csvdoc", "title": "t", "protocol": "ranking",
                               "settings": {"unit": "document"}}, items=items)
    assert Candidate.objects.get(item__study=study, system="mt").text == "Une.\nDeux."


def test_spam_copy_of_a_sentence_list_block_keeps_lists_aligned():
    data = document_study_file(slug="spamdoc", candidates=3, sentences=8, blocks=3)
    data["settings"]["spam_rate"] = 0.5
    study = study_import(status="open", data=data)
    spam = list(study.items.filter(is_spam=True).prefetch_related("candidates"))
    assert spam
    for copy_ in spam:
        real = copy_.spam_of
        assert copy_.source_sentences == real.source_sentences
        victim = next(c for c in copy_.candidates.all() if c.is_spam)
        original = real.candidates.get(system=victim.system)
        assert victim.text == "\n".join(victim.sentences)  # still the sentences joined
        assert sorted(victim.sentences) == sorted(original.sentences) and victim.sentences != original.sentences
        assert victim.sentences[0] == original.sentences[0] and victim.sentences[-1] == original.sentences[-1]
    assert len(spam_items_create(study=study)) == len(spam)  # regenerating gives as many (seeded)
