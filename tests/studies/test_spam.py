"""Spam (control) items: the scrambles of BlonDe App. D and their seeded generation (issue #3)."""
from __future__ import annotations

import random

import pytest

from annotation.handout.services import annotators_create, assignment_next
from studies.models import Candidate, Item
from studies.controls.spam import (SpamError, scramble, scramble_sentences, scramble_with_highlights, scramble_words,
                          spam_count, spam_items_create, split_sentences, words_kept)
from tests.factories import make_study, study_file
from studies.importing.study_file import study_import


def _words(n: int) -> list[str]:
    return [f"w{k}" for k in range(n)]


@pytest.mark.parametrize("n", [3, 4, 5, 7, 9, 10, 11, 13, 19, 21, 29, 31])
def test_first_and_last_ten_percent_stay_and_the_rest_moves(n):
    words = _words(n)
    keep = words_kept(n)
    assert keep >= n * 0.1 and keep >= 1
    for seed in range(25):
        out = scramble_words(" ".join(words), random.Random(seed)).split()
        assert sorted(out) == sorted(words)  # nothing lost, nothing added
        assert out[:keep] == words[:keep]
        assert out[n - keep:] == words[n - keep:]
        if n - 2 * keep >= 2:  # at least two words to move: the order always changes
            assert out[keep:n - keep] != words[keep:n - keep]


def test_keep_counts_round_up():
    assert [words_kept(n) for n in (1, 2, 9, 10, 11, 20, 21, 25)] == [1, 1, 1, 1, 2, 2, 3, 3]


def test_punctuation_stays_with_its_word_and_the_full_stop_stays_last():
    text = "However, the committee, which met on Monday, rejected it; nobody knew why."
    for seed in range(10):
        out = scramble_words(text, random.Random(seed))
        assert out != text
        assert out.startswith("However,")
        assert out.endswith("why.")
        assert sorted(out.split()) == sorted(text.split())
        assert "committee," in out.split() and "it;" in out.split()


def test_one_word_and_two_words_cannot_be_scrambled():
    assert scramble_words("Yes.", random.Random(1)) == "Yes."
    assert scramble_words("Yes indeed.", random.Random(1)) == "Yes indeed."
    assert scramble_words("", random.Random(1)) == ""


def test_three_words_with_one_to_move_stay_as_they_are():
    assert scramble_words("He left early.", random.Random(3)) == "He left early."


def test_identical_middle_words_cannot_change_order():
    assert scramble_words("A no no no B", random.Random(0)) == "A no no no B"


def test_whitespace_is_normalised_to_single_spaces():
    out = scramble_words("One  two\tthree four five", random.Random(2))
    assert "  " not in out and "\t" not in out


def test_document_keeps_first_and_last_sentence_and_shuffles_the_rest():
    sentences = [f"Sentence number {k} is here." for k in range(7)]
    text = " ".join(sentences)
    for seed in range(20):
        out = split_sentences(scramble_sentences(text, random.Random(seed)))
        assert out[0] == sentences[0] and out[-1] == sentences[-1]
        assert sorted(out) == sorted(sentences)
        assert out[1:-1] != sentences[1:-1]


def test_document_with_lines_keeps_lines():
    text = "First line.\nSecond line.\nThird line!\nFourth line?\nLast line."
    out = scramble_sentences(text, random.Random(4))
    lines = out.split("\n")
    assert lines[0] == "First line." and lines[-1] == "Last line."
    assert lines[1:-1] != ["Second line.", "Third line!", "Fourth line?"]
    assert sorted(lines) == sorted(text.split("\n"))


def test_two_sentence_document_and_three_sentence_document_stay_as_they_are():
    assert scramble_sentences("It rained. We left.", random.Random(0)) == "It rained. We left."
    assert scramble_sentences("It rained. We left. Fine.", random.Random(0)) == "It rained. We left. Fine."


def test_four_sentences_swap_the_middle_two():
    out = scramble_sentences("A one. B two. C three. D four.", random.Random(0))
    assert out == "A one. C three. B two. D four."


def test_scramble_dispatches_on_unit():
    text = "Alpha beta gamma delta. Epsilon zeta eta theta. Iota kappa lambda. Mu nu xi omicron."
    sentence_level = scramble(text, "sentence", random.Random(5))
    document_level = scramble(text, "document", random.Random(5))
    assert sorted(split_sentences(document_level)) == sorted(split_sentences(text))
    assert split_sentences(sentence_level) != split_sentences(document_level)


def test_highlights_move_with_their_words():
    text = "Anna said that she would bring it to them on Sunday morning."
    spans = [[text.index("she"), text.index("she") + 3], [text.index("it "), text.index("it ") + 2],
             [text.index("Anna"), text.index("Anna") + 2]]  # a partial word too
    for seed in range(10):
        out, moved = scramble_with_highlights(text, spans, "sentence", random.Random(seed))
        assert out != text
        assert sorted(out[a:b] for a, b in moved) == ["An", "it", "she"]
        assert out == scramble_words(text, random.Random(seed))  # same scramble with or without highlights


def test_highlight_across_words_and_sentences():
    text = "One two three four five six seven."
    out, moved = scramble_with_highlights(text, [[4, 13]], "sentence", random.Random(1))  # "two three"
    assert sorted(out[a:b] for a, b in moved) == ["three", "two"] or [out[a:b] for a, b in moved] == ["two three"]
    doc = "First one.\nSecond has it.\nThird one.\nFourth one.\nLast one."
    start = doc.index("it")
    out, moved = scramble_with_highlights(doc, [[start, start + 2]], "document", random.Random(2))
    assert out != doc and [out[a:b] for a, b in moved] == ["it"]
    assert out.split("\n")[0] == "First one." and out.split("\n")[-1] == "Last one."


def test_seeded_scrambles_are_reproducible():
    text = " ".join(_words(30))
    assert scramble_words(text, random.Random("s:1")) == scramble_words(text, random.Random("s:1"))
    assert scramble_words(text, random.Random("s:1")) != scramble_words(text, random.Random("s:2"))


@pytest.mark.parametrize("n_real,rate,expected", [(0, 0.1, 0), (40, 0.0, 0), (40, 0.1, 4), (10, 0.01, 1),
                                                  (45, 0.1, 5), (44, 0.1, 4), (3, 0.5, 2)])
def test_spam_count(n_real, rate, expected):
    assert spam_count(n_real, rate) == expected


# --- stored spam items ------------------------------------------------------



def _snapshot(study):
    return sorted(
        (i.external_id, i.spam_of.external_id, i.document_id,
         tuple((c.system, c.text, c.is_spam, c.is_reference) for c in i.candidates.all()))
        for i in study.items.filter(is_spam=True).select_related("spam_of").prefetch_related("candidates"))


@pytest.mark.django_db
def test_spam_item_structure():
    study = make_study(n_items=20, n_candidates=3, settings={"spam_rate": 0.1, "seed": 7})
    spam = list(study.items.filter(is_spam=True).prefetch_related("candidates"))
    assert len(spam) == 2
    for item in spam:
        real = item.spam_of
        assert item.external_id == f"{real.external_id}~spam"
        assert (item.source, item.source_context, item.target_context) == (real.source, real.source_context, real.target_context)
        cands = {c.system: c for c in item.candidates.all()}
        originals = {c.system: c for c in real.candidates.all()}
        assert set(cands) == set(originals)
        scrambled = [c for c in cands.values() if c.is_spam]
        assert len(scrambled) == 1
        victim = scrambled[0]
        assert not victim.is_reference  # the reference control stays intact
        assert victim.text != originals[victim.system].text
        assert sorted(victim.text.split()) == sorted(originals[victim.system].text.split())
        original = originals[victim.system]
        # highlights moved with their words: the spam candidate looks like any other
        assert sorted(victim.text[a:b] for a, b in victim.highlights) == sorted(original.text[a:b] for a, b in original.highlights)
        assert victim.highlights
        for system, cand in cands.items():
            if cand is not victim:
                assert cand.text == originals[system].text and not cand.is_spam
        assert not real.is_spam and not originals[victim.system].is_spam
    assert Candidate.objects.filter(item__study=study, item__is_spam=False, is_spam=True).count() == 0


@pytest.mark.django_db
def test_same_seed_same_spam_items_different_seed_different():
    a = make_study(slug="a", n_items=40, n_candidates=3, settings={"spam_rate": 0.1, "seed": 11})
    b = make_study(slug="b", n_items=40, n_candidates=3, settings={"spam_rate": 0.1, "seed": 11})
    c = make_study(slug="c", n_items=40, n_candidates=3, settings={"spam_rate": 0.1, "seed": 12})
    assert len(_snapshot(a)) == 4
    assert _snapshot(a) == _snapshot(b)
    assert _snapshot(a) != _snapshot(c)


@pytest.mark.django_db
def test_judgment_study_scrambles_its_only_candidate():
    data = study_file(slug="j", protocol="judgment", n_items=10, n_candidates=1,
                      settings={"labels": ["correct", "incorrect"], "spam_rate": 0.2, "seed": 3})
    for item in data["items"]:  # a system output, not the reference, is what gets judged
        item["candidates"][0].update(system="mt", is_reference=False)
    study = study_import(status="open", data=data)
    spam = list(study.items.filter(is_spam=True).prefetch_related("candidates"))
    assert len(spam) == 2
    for item in spam:
        (only,) = item.candidates.all()
        assert only.is_spam and only.system == "mt"


@pytest.mark.django_db
def test_document_unit_spam_shuffles_sentences():
    data = study_file(slug="d", n_items=5, n_candidates=2, settings={"spam_rate": 0.2, "seed": 5, "unit": "document"})
    for i, item in enumerate(data["items"]):
        for k, cand in enumerate(item["candidates"]):
            cand["text"] = " ".join(f"Doc {i} cand {k} sentence {s}." for s in range(6))
            cand["highlights"] = []
    study = study_import(status="open", data=data)
    (item,) = study.items.filter(is_spam=True)
    victim = item.candidates.get(is_spam=True)
    original = item.spam_of.candidates.get(system=victim.system).text
    out, orig = split_sentences(victim.text), split_sentences(original)
    assert out[0] == orig[0] and out[-1] == orig[-1] and out[1:-1] != orig[1:-1]
    assert sorted(out) == sorted(orig)


@pytest.mark.django_db
def test_items_too_short_to_scramble_are_skipped():
    data = study_file(slug="short", n_items=6, n_candidates=2, settings={"spam_rate": 0.5, "seed": 1})
    for item in data["items"][:5]:
        for cand in item["candidates"]:
            cand.update(text="Yes.", highlights=[])
    study = study_import(status="open", data=data)
    spam = list(study.items.filter(is_spam=True))
    assert [i.spam_of.external_id for i in spam] == ["ext-5"]  # the only item long enough


@pytest.mark.django_db
def test_regenerating_is_reproducible_before_assignments_and_refused_after():
    study = make_study(n_items=20, n_candidates=3, settings={"spam_rate": 0.2, "seed": 9})
    before = _snapshot(study)
    spam_items_create(study=study)
    assert _snapshot(study) == before
    annotator = annotators_create(study=study)[0]
    assert assignment_next(annotator=annotator) is not None
    with pytest.raises(SpamError, match="already has assignments"):
        spam_items_create(study=study)
    assert _snapshot(study) == before
    assert Item.objects.filter(study=study, is_spam=True).count() == 4
