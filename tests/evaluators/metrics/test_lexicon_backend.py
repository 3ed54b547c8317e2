"""The lexicon language backend: tokens, lemmas, the tagger's tags, the entity heuristic, sentences, Chinese words."""
from __future__ import annotations

import re
from importlib.metadata import version

import pytest

from evaluators.metrics.blonde import BLONDE_LEX, DBLONDE_LEX, sentence_features, BlondeSettings
from evaluators.metrics.corpus import Corpus, Segment
from evaluators.metrics.language import get_backend
from evaluators.metrics.language.base import Backend, Sentence
from evaluators.metrics.language.lexicon_backend import (
    HEURISTIC_ENTITY_LABEL,
    LexiconBackend,
    normalise_language,
    split_sentences,
)


@pytest.fixture(scope="module")
def lexicon() -> LexiconBackend:
    return LexiconBackend()


def analyse(backend: LexiconBackend, text: str, language: str = "en") -> Sentence:
    (sentence,) = backend.analyse([text], language)
    return sentence


def rows(sentence: Sentence) -> list[tuple[str, str, str, str]]:
    return [(t.text, t.lemma, t.pos, t.tag) for t in sentence.tokens]


def test_registered_as_the_default_backend_and_takes_no_argument() -> None:
    backend: Backend = get_backend("lexicon")  # satisfies the Backend protocol (mypy checks this line)
    assert isinstance(backend, LexiconBackend) and backend.name == "lexicon"
    assert get_backend(" lexicon ") is backend  # loaded once per process
    with pytest.raises(ValueError, match="takes no argument"):
        get_backend("lexicon:en")


def test_signature_names_every_package_and_its_installed_version(lexicon: LexiconBackend) -> None:
    sig = lexicon.signature()
    assert sig == (f"nlp:lexicon|simplemma:{version('simplemma')}|lemminflect:{version('lemminflect')}"
                   f"|jieba:{version('jieba')}|tagger:ud-ap-1|rules:2")
    assert re.fullmatch(r"nlp:lexicon\|simplemma:2\.0\.0\|lemminflect:0\.2\.3\|jieba:0\.42\.1\|tagger:ud-ap-1\|rules:2",
                        sig)


def test_without_the_tagger_the_signature_says_so_and_the_rules_alone_decide() -> None:
    rules = LexiconBackend(use_tagger=False)
    assert rules.signature().endswith("|tagger:none|rules:2")
    assert [t.pos for t in analyse(rules, "She runs.").tokens] == ["PRON", "NOUN", "PUNCT"]  # context-free


def test_english_tokens_split_clitics_as_spacy_and_keep_whitespace(lexicon: LexiconBackend) -> None:
    s = analyse(lexicon, "Qiao's friend didn't go, it's well-known.")
    assert [t.text for t in s.tokens] == ["Qiao", "'s", "friend", "did", "n't", "go", ",", "it", "'s",
                                          "well", "-", "known", "."]
    assert [t.whitespace for t in s.tokens] == [False, True, True, False, True, False, True, False, True,
                                                False, False, False, False]
    by_text = {(t.text, i): t for i, t in enumerate(s.tokens)}
    assert (by_text[("'s", 1)].pos, by_text[("'s", 1)].tag) == ("PART", "POS")  # possessive after a name
    assert (by_text[("'s", 8)].pos, by_text[("'s", 8)].tag, by_text[("'s", 8)].lemma) == ("AUX", "VBZ", "be")
    assert (by_text[("n't", 4)].lemma, by_text[("did", 3)].tag) == ("not", "VBD")


def test_english_lemmas_and_tags_from_lemminflect(lexicon: LexiconBackend) -> None:
    s = analyse(lexicon, "The boxes were better than the old building and he runs.")
    assert analyse(lexicon, "She was looking.").tokens[2].tag == "VBG"  # an -ing form is VBG unless a listed noun
    assert rows(s) == [
        ("The", "the", "DET", "DT"), ("boxes", "box", "NOUN", "NNS"), ("were", "be", "AUX", "VBD"),
        ("better", "good", "ADJ", "JJR"), ("than", "than", "ADP", "IN"), ("the", "the", "DET", "DT"),
        ("old", "old", "ADJ", "JJ"), ("building", "building", "NOUN", "NN"), ("and", "and", "CCONJ", "CC"),
        ("he", "he", "PRON", "PRP"), ("runs", "run", "VERB", "VBZ"), (".", ".", "PUNCT", "."),
    ]
    verbs = analyse(lexicon, "She will go; they were meeting him and saw it.")
    tags = {t.text: (t.pos, t.tag, t.lemma) for t in verbs.tokens}
    assert tags["will"] == ("AUX", "MD", "will") and tags["go"] == ("VERB", "VBP", "go")
    assert tags["were"] == ("AUX", "VBD", "be") and tags["saw"] == ("VERB", "VBD", "see")
    assert tags["him"] == ("PRON", "PRP", "he")
    looked = analyse(lexicon, "They looked.").tokens[1]
    assert looked.morph == "Tense=Past|VerbForm=Fin"  # UD features from the Penn tag (BlonDe reads tags)


def test_parts_of_speech_come_from_the_tagger_in_context(lexicon: LexiconBackend) -> None:
    """The tagger reads the context: a word's part of speech depends on where it stands (DiP's test case)."""
    s = analyse(lexicon, "Both reports arrived on Friday.")
    assert [(t.text, t.pos) for t in s.tokens] == [
        ("Both", "DET"), ("reports", "NOUN"), ("arrived", "VERB"), ("on", "ADP"), ("Friday", "PROPN"), (".", "PUNCT")]
    assert (s.tokens[1].lemma, s.tokens[1].tag, s.tokens[4].tag) == ("report", "NNS", "NNP")
    c, d = lexicon.analyse(["The runs were long.", "She runs."], "en")
    assert (c.tokens[1].pos, c.tokens[1].tag) == ("NOUN", "NNS") and (d.tokens[1].pos, d.tokens[1].tag) == ("VERB", "VBZ")
    # the Penn tag of a verb form still comes from lemminflect's table, whatever stands before it
    a, b = lexicon.analyse(["They looked.", "They had looked."], "en")
    assert a.tokens[1].tag == b.tokens[2].tag == "VBD"


def test_unknown_words_are_tagged_from_their_ending_and_context(lexicon: LexiconBackend) -> None:
    s = analyse(lexicon, "They were zorbling and flimmed it blorfly, and the glarps")
    assert [(t.pos, t.tag) for t in s.tokens[2:7]] == [
        ("VERB", "VBG"), ("CCONJ", "CC"), ("VERB", "VBD"), ("PRON", "PRP"), ("ADV", "RB")]
    assert (s.tokens[-1].pos, s.tokens[-1].tag) == ("NOUN", "NNS")


def test_named_entities_are_capitalised_runs_not_common_sentence_starts(lexicon: LexiconBackend) -> None:
    s = analyse(lexicon, "Yesterday Joe met Mary Smith in New York, and I saw the US team.")
    assert [(e.text, e.label) for e in s.entities] == [
        ("Joe", HEURISTIC_ENTITY_LABEL), ("Mary Smith", HEURISTIC_ENTITY_LABEL),
        ("New York", HEURISTIC_ENTITY_LABEL), ("US", HEURISTIC_ENTITY_LABEL)]
    joe = s.entities[0]
    assert (joe.start, joe.end) == (1, 2) and s.tokens[1].pos == "PROPN"
    # a sentence-initial name the lexicon does not know is one; a known word there is not
    assert [e.text for e in analyse(lexicon, "Qiao looked at the photo.").entities] == ["Qiao"]
    assert analyse(lexicon, "Yesterday it rained.").entities == ()
    # a title-cased line has none
    assert analyse(lexicon, "The Lord Of The Rings Returns Tonight").entities == ()


def test_french_lemmas_elisions_closed_classes_and_verbs(lexicon: LexiconBackend) -> None:
    s = analyse(lexicon, "L'homme a mangé les pommes rouges avec Marie aujourd'hui.", "fr")
    assert [(t.text, t.lemma, t.pos) for t in s.tokens] == [
        ("L'", "le", "DET"), ("homme", "homme", "NOUN"), ("a", "avoir", "AUX"), ("mangé", "manger", "VERB"),
        ("les", "le", "DET"), ("pommes", "pomme", "NOUN"), ("rouges", "rouge", "ADJ"), ("avec", "avec", "ADP"),
        ("Marie", "Marie", "PROPN"), ("aujourd'hui", "aujourd'hui", "ADV"), (".", ".", "PUNCT")]
    assert [e.text for e in s.entities] == ["Marie"]
    assert all(t.tag == "" for t in s.tokens)  # Penn tags only for English
    # plural and feminine forms of -re/-ir nouns and adjectives are no verbs
    t = {x.text: (x.lemma, x.pos) for x in analyse(lexicon, "Les pères ont une voiture noire.", "fr").tokens}
    assert t["pères"] == ("père", "NOUN") and t["noire"] == ("noir", "ADJ") and t["ont"] == ("avoir", "AUX")
    # a verb's hyphenated clitic pronoun is its own token; infinitives from their ending, with exceptions
    s = analyse(lexicon, "Est-ce qu'il faut manger en hiver ? A-t-il vu la mer, dis-moi ?", "fr")
    assert [x.text for x in s.tokens] == [
        "Est", "-ce", "qu'", "il", "faut", "manger", "en", "hiver", "?", "A", "-t-il", "vu", "la", "mer", ",", "dis",
        "-moi", "?"]
    tags = {x.text: x.pos for x in s.tokens}
    assert [tags[w] for w in ("faut", "manger", "hiver", "vu", "mer", "dis", "-moi")] == [
        "VERB", "VERB", "NOUN", "VERB", "NOUN", "VERB", "PRON"]
    assert [x.text for x in analyse(lexicon, "Quelqu'un a un rendez-vous aujourd'hui.", "fr").tokens] == [
        "Quelqu'un", "a", "un", "rendez-vous", "aujourd'hui", "."]


def test_chinese_is_segmented_by_jieba_tagged_by_the_tagger_and_names_from_jieba(lexicon: LexiconBackend) -> None:
    s = analyse(lexicon, "我们昨天在北京见到了张伟。", "zh-CN")
    assert [t.text for t in s.tokens] == ["我们", "昨天", "在", "北京", "见到", "了", "张伟", "。"]
    tags = {t.text: t.pos for t in s.tokens}
    # UD Chinese-GSD's conventions: the aspect marker 了 is AUX; jieba's names (nr, ns) stay PROPN
    assert [tags[w] for w in ("我们", "昨天", "北京", "见到", "了", "张伟", "。")] == [
        "PRON", "NOUN", "PROPN", "VERB", "AUX", "PROPN", "PUNCT"]
    assert all(t.lemma == t.text and not t.whitespace for t in s.tokens)
    assert [(e.text, e.label, e.start) for e in s.entities] == [("北京", "GPE", 3), ("张伟", "PERSON", 6)]


def test_other_languages_and_language_codes(lexicon: LexiconBackend) -> None:
    assert normalise_language("en_GB") == "en" and normalise_language("zh-Hans") == "zh"
    assert normalise_language("") == ""
    de = analyse(lexicon, "Die Häuser sind groß.", "de")
    assert [(t.lemma, t.pos) for t in de.tokens] == [
        ("der", "DET"), ("Haus", "NOUN"), ("sein", "AUX"), ("groß", "ADJ"), (".", "PUNCT")]
    assert de.entities == ()  # German capitalises nouns: a known noun is no name
    assert [e.text for e in analyse(lexicon, "Gestern traf ich Qiao in der Stadt.", "de").entities] == ["Qiao"]
    # a language simplemma does not know: lower-cased words are their own lemmas
    xx = analyse(lexicon, "Wakamba Ngoma ni nzuri", "kam")
    assert [t.lemma for t in xx.tokens][2:] == ["ni", "nzuri"]
    # no language: English rules
    assert analyse(lexicon, "boxes", "").tokens[0].lemma == "box"


def test_sentence_splitting() -> None:
    text = 'Mr. Smith met J. Doe at 3 p.m. in town. "Hello!" he said. Then... nothing\nNew line? yes'
    assert split_sentences(text, "en") == [
        "Mr. Smith met J. Doe at 3 p.m. in town.", '"Hello!" he said.', "Then... nothing", "New line? yes"]
    assert split_sentences("M. Dupont est là. Il part.", "fr") == ["M. Dupont est là.", "Il part."]
    assert split_sentences("你好。我很好！你呢？好", "zh") == ["你好。", "我很好！", "你呢？", "好"]
    assert LexiconBackend().split_sentences("One. Two.", "en") == ["One.", "Two."]


def test_one_sentence_per_segment_and_identical_segments_share_an_analysis(lexicon: LexiconBackend) -> None:
    out = lexicon.analyse(["Dogs bark. Cats sleep.", "Dogs bark. Cats sleep.", ""], "en")
    assert len(out) == 3 and out[0] is out[1]
    assert [t.text for t in out[0].tokens] == ["Dogs", "bark", ".", "Cats", "sleep", "."]
    assert out[0].tokens[3].pos == "NOUN"  # "Cats" after "." starts a sentence: a known word, no entity
    assert out[0].entities == () and out[2].tokens == ()


def test_blonde_lex_runs_on_the_lexicon_backend() -> None:
    """BlonDe's lexicon variant reads the Penn tags and entities of this backend through the same interface."""
    backend = get_backend("lexicon")
    (sent,) = backend.analyse(["Qiao looked at the photo and recalled that he was there."], "en")
    feats = sentence_features(sent, BlondeSettings())
    assert feats["tense"] == (3, 0, 0, 0, 0, 0, 0)  # looked, recalled, was: VBD
    assert feats["pronoun"] == (1, 0, 0, 0)  # he
    assert feats["entity"][0] == {} and feats["entity"][1] == {}  # MISC entities: neither feature of BlonDe
    segs = [Segment("1", "d", "Qiao looked at the photo.", {"A": "Qiao looked at the photo.", "B": "Qiao sees it."}),
            Segment("2", "d", "He was there.", {"A": "He was there.", "B": "She is here."})]
    result = BLONDE_LEX.evaluate(Corpus(segs, target_language="en"))
    a, b = result.systems
    assert a.signature.startswith("blonde-lex|nrefs:1|") and backend.signature() in a.signature
    assert a.score == pytest.approx(100.0)
    assert b.score is not None and b.score < 50.0
    assert b.categories is not None and b.categories["tense"]["recall"] == pytest.approx(0.0)  # VBZ vs VBD
    assert a.categories is not None and "entity" not in a.categories  # no PERSON/GPE/...: the category is absent
    assert result.evaluator == "blonde-lex"
    note = ("blonde-lex is an approximation of BlonDe on the lexicon backend, not BlonDe: categories computed: "
            "tense, pronoun, dm, 1-gram, 2-gram, 3-gram, 4-gram; not computed, left out of the means: entity (the "
            "backend recognises no PERSON or other named entities)")
    assert note in a.notes and note in b.notes
    d = DBLONDE_LEX.evaluate(Corpus(segs[:1], target_language="en")).systems[0]
    assert d.signature.startswith("dblonde-lex|") and any(
        "categories computed: tense, pronoun, dm; not computed, left out of the means: entity" in n for n in d.notes)
