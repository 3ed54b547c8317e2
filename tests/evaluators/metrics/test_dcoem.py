"""DCoEM (Tan, Zhang and Zhou 2022, §3 and appendix): hand-computed examples of every part of the definition.

Sentences are built token by token (text/TAG/lemma) so the tags are exactly what the paper's
footnote 1 selects; the evaluator is run end to end on a spaCy pipeline built in code.
"""
from __future__ import annotations

import pytest

from evaluators.metrics import registry
from evaluators.metrics.corpus import Corpus, Segment
from evaluators.metrics.dcoem import (
    CONJUNCTIONS,
    DCOEM,
    PRONOUN_SYNSETS,
    DcoemEvaluator,
    DcoemSettings,
    SentenceSets,
    normalise,
    reference_sets,
    score_document,
    score_sentence,
)
from evaluators.metrics.language import wordnet
from evaluators.metrics.language.base import Sentence, Token
from evaluators.metrics.language.spacy_backend import SpacyBackend
from tests.evaluators.metrics.spacy_pipelines import rule_pipeline


def S(*words: str) -> Sentence:
    """A sentence from ``text/TAG/lemma`` words (TAG default UH: never selected; lemma default: lower-cased text)."""
    tokens = []
    for word in words:
        text, *rest = word.split("/")
        tag = rest[0] if rest else "UH"
        lemma = rest[1] if len(rest) > 1 else text.lower()
        tokens.append(Token(text=text, lemma=lemma, pos="", tag=tag))
    return Sentence(" ".join(w.split("/")[0] for w in words), tuple(tokens))


FILLER = S("Oh")  # no noun, verb, pronoun or conjunction


def lexical_words(sets: SentenceSets) -> list[str]:
    return [m.word for m in sets.lexical]


# --------------------------------------------------------------------------- the tables
def test_appendix_tables_as_printed() -> None:
    assert len(CONJUNCTIONS) == 69 and len(set(CONJUNCTIONS)) == 68  # "nor" twice; the text says 75
    assert CONJUNCTIONS.count("nor") == 2
    assert PRONOUN_SYNSETS["i"] == ("me", "my", "mine", "myself")
    assert PRONOUN_SYNSETS["himself"] == ("him", "his", "her")  # verbatim, "her" included
    assert PRONOUN_SYNSETS["both"] == ()
    assert len(PRONOUN_SYNSETS) == 50


def test_normalise_keeps_acronyms() -> None:
    assert normalise("He") == "he" and normalise("I") == "i"
    assert normalise("US") == "US" and normalise("IT") == "IT"


# --------------------------------------------------------------------------- the sets (§3.1)
def test_reference_set_is_every_listed_pronoun_with_its_synset() -> None:
    [sets] = reference_sets([S("He/PRP", "told/VBD", "them/PRP", "that/IN", "the/DT", "US/NNP", "won/VBD")])
    assert [m.word for m in sets.reference] == ["he", "them", "that"]  # US is an acronym, not "us"
    assert sets.reference[0].exact == {"he"}
    assert sets.reference[0].half == {"him", "his", "himself"}
    assert sets.reference[2].half == {"this", "it", "one"}
    assert sets.lexical == ()  # the first sentence has nothing to look back to


def test_conjunction_set_with_wordnet_synonyms() -> None:
    [sets] = reference_sets([S("Moreover/RB", "and/CC", "so/RB", "then/RB", "nor/CC")])
    assert [m.word for m in sets.conjunction] == ["moreover", "and", "so", "then", "nor"]
    moreover, conj_and = sets.conjunction[0], sets.conjunction[1]
    assert moreover.half == {"furthermore"}  # WordNet's what_is_more is two words
    assert conj_and.half == frozenset()  # "and" is not in WordNet
    assert "thus" in sets.conjunction[2].half


def test_lexical_set_repetition_synonym_hypernym_hyponym() -> None:
    doc = [S("The/DT", "car/NN", "and/CC", "the/DT", "canine/NN"),
           S("The/DT", "cars/NNS/car"),              # repetition (by lemma)
           S("An/DT", "automobile/NN"),              # synonym of car
           S("A/DT", "dog/NN"),                      # hypernym canine is in the look-back
           S("A/DT", "puppy/NN", "slept/VBD/sleep")]  # hypernym dog (one back); sleep ties to nothing
    assert "automobile" in wordnet.synonyms("car", "n")
    assert "canine" in wordnet.hypernyms("dog", "n") and "dog" in wordnet.hypernyms("puppy", "n")
    assert "dog" in wordnet.hyponyms("canine", "n")
    sets = reference_sets(doc)
    assert lexical_words(sets[0]) == []
    [rep] = sets[1].lexical
    assert rep.word == "car" and rep.exact == {"car", "cars"}
    assert {"automobile", "auto"} <= rep.half
    [syn] = sets[2].lexical
    assert syn.exact == {"automobile", "car"}  # the word and the synonym that tied it
    assert "motorcar" in syn.half and "car" not in syn.half
    [hyper] = sets[3].lexical
    assert hyper.exact == {"dog", "canine"}
    [hypo] = sets[4].lexical
    assert hypo.word == "puppy" and hypo.exact == {"puppy", "dog"}
    assert "pup" in hypo.half


def test_hyponym_tie_the_other_way() -> None:
    sets = reference_sets([S("A/DT", "puppy/NN"), S("The/DT", "dog/NN")])
    [marker] = sets[1].lexical
    assert marker.exact == {"dog", "puppy"}  # puppy is a hyponym of dog


def test_only_footnote_tags_are_selected() -> None:
    sets = reference_sets([S("The/DT", "red/JJ", "car/NN"), S("Red/JJ", "cars/NNS/car", "quickly/RB")])
    assert lexical_words(sets[1]) == ["car"]  # the adjective repeats but is not a noun or verb


def test_look_back_is_five_sentences() -> None:
    six_back = reference_sets([S("A/DT", "cat/NN"), *[FILLER] * 5, S("The/DT", "cat/NN")])
    five_back = reference_sets([S("A/DT", "cat/NN"), *[FILLER] * 4, S("The/DT", "cat/NN")])
    assert lexical_words(six_back[6]) == []
    assert lexical_words(five_back[5]) == ["cat"]
    # a setting, shown in the signature
    two = reference_sets([S("A/DT", "cat/NN"), *[FILLER] * 2, S("The/DT", "cat/NN")], DcoemSettings(lookback=2))
    assert lexical_words(two[3]) == []


def test_look_back_does_not_cross_documents() -> None:
    backend = SpacyBackend(rule_pipeline(LEXICON))
    corpus = Corpus(segments=[Segment("1", "d1", "The cat.", {"A": "The cat."}),
                              Segment("2", "d2", "The cat.", {"A": "The cat."})], target_language="en")
    result = DCOEM.evaluate(corpus, nlp=backend)
    assert result.systems[0].counts is not None
    assert result.systems[0].counts["lexicoh-wordsub"]["markers"] == 0
    assert result.systems[0].score is None  # no marker anywhere: undefined, not 0


# --------------------------------------------------------------------------- scoring (§3.2)
def test_pronoun_synset_scores_half() -> None:
    [sets] = reference_sets([S("He/PRP", "left/VBD")])
    assert score_sentence(sets, S("He/PRP", "left/VBD")).sets["reference"].score == 1.0
    assert score_sentence(sets, S("Him/PRP", "left/VBD")).sets["reference"].score == 0.5
    assert score_sentence(sets, S("She/PRP", "left/VBD")).sets["reference"].score == 0.0
    [himself] = reference_sets([S("himself/PRP")])
    assert score_sentence(himself, S("her/PRP")).sets["reference"].score == 0.5  # Table 5 as printed
    [us] = reference_sets([S("us/PRP")])
    assert score_sentence(us, S("US/NNP")).sets["reference"].score == 0.0


def test_each_marker_is_credited_once() -> None:
    [sets] = reference_sets([S("he/PRP", "him/PRP")])
    # "he he": the first he matches exactly, the second is in him's synset
    match = score_sentence(sets, S("he/PRP", "he/PRP")).sets["reference"]
    assert (match.markers, match.exact, match.half, match.score) == (2, 1, 1, 0.75)
    [one] = reference_sets([S("he/PRP")])
    assert score_sentence(one, S("he/PRP", "he/PRP", "he/PRP")).sets["reference"].score == 1.0


def test_lexical_matches_by_word_relative_and_synonym() -> None:
    sets = reference_sets([S("The/DT", "car/NN"), S("The/DT", "automobile/NN")])
    score = lambda *w: score_sentence(sets[1], S(*w)).sets["lexicoh-wordsub"].score  # noqa: E731
    assert score("The/DT", "automobile/NN") == 1.0
    assert score("The/DT", "car/NN") == 1.0  # the tying synonym is in the set itself
    assert score("The/DT", "automobiles/NNS/automobile") == 1.0  # by lemma
    assert score("The/DT", "motorcar/NN") == 0.5  # in the synset only
    assert score("The/DT", "vehicle/NN") == 0.0


def test_conjunction_synonym_scores_half() -> None:
    [sets] = reference_sets([S("Moreover/RB", "it/PRP", "rained/VBD")])
    result = score_sentence(sets, S("Furthermore/RB", "it/PRP", "rained/VBD"))
    assert result.sets["conjunction"].score == 0.5
    assert result.sets["reference"].score == 1.0


def test_sentence_equation_3_and_document_equation_4() -> None:
    sets = reference_sets([
        S("The/DT", "car/NN"),
        S("So/RB", "he/PRP", "and/CC", "she/PRP", "took/VBD/take", "the/DT", "car/NN"),
        FILLER,
        S("It/PRP", "stopped/VBD/stop")])
    s1 = sets[1]
    assert (len(s1.lexical), len(s1.reference), len(s1.conjunction)) == (1, 2, 2)
    hyp = S("So/RB", "him/PRP", "drove/VBD/drive", "the/DT", "car/NN")
    result = score_sentence(s1, hyp)
    # lw: car 1/1; r: he -> him 0.5, she -> 0; c: so 1, and 0
    assert result.sets["lexicoh-wordsub"].score == 1.0
    assert result.sets["reference"].score == 0.25
    assert result.sets["conjunction"].score == 0.5
    assert result.score == pytest.approx((1 + 0.5 + 0 + 1 + 0) / 5)  # Eq. 3: 0.5
    doc = score_document(sets, [S("A/DT", "car/NN"), hyp, FILLER, S("They/PRP", "stopped/VBD/stop")])
    assert doc.sentences[0] is not None and doc.sentences[0].score is None  # no marker: left out
    assert doc.sentences[2] is not None and doc.sentences[2].score is None
    assert doc.sentences[3] is not None and doc.sentences[3].score == 0.0
    assert doc.score == pytest.approx((0.5 + 0.0) / 2)  # Eq. 4 over the scored sentences
    assert doc.set_score("reference") == pytest.approx((0.25 + 0.0) / 2)
    assert doc.set_score("lexicoh-wordsub") == 1.0
    with pytest.raises(ValueError, match="3 translation sentences for 4 reference sentences"):
        score_document(sets, [hyp, hyp, hyp])


def test_identical_translation_scores_100_percent() -> None:
    doc = [S("The/DT", "car/NN"), S("Then/RB", "he/PRP", "sold/VBD/sell", "the/DT", "automobile/NN"),
           S("She/PRP", "bought/VBD/buy", "a/DT", "dog/NN", "and/CC", "a/DT", "puppy/NN")]
    sets = reference_sets(doc)
    assert score_document(sets, doc).score == 1.0


# --------------------------------------------------------------------------- the evaluator
LEXICON = {
    "the": ("DT", "DET", "the"), "a": ("DT", "DET", "a"), "car": ("NN", "NOUN", "car"),
    "automobile": ("NN", "NOUN", "automobile"), "auto": ("NN", "NOUN", "auto"), "dog": ("NN", "NOUN", "dog"),
    "puppy": ("NN", "NOUN", "puppy"), "cat": ("NN", "NOUN", "cat"), "he": ("PRP", "PRON", "he"),
    "him": ("PRP", "PRON", "he"), "she": ("PRP", "PRON", "she"), "then": ("RB", "ADV", "then"),
    "now": ("RB", "ADV", "now"), "and": ("CC", "CCONJ", "and"), ".": (".", "PUNCT", "."),
    ",": (",", "PUNCT", ","),
}

#: Two documents, two systems.  d1: r0 has no marker; r1 has lw [automobile (+car)], r [he], c [then].
#: d2: the look-back example, only s6 has markers: lw [puppy (+dog, 5 back)] and c [and]; cat is 6 back.
DOCS = [
    ("d1", "The car stopped.", {"A": "The car stopped.", "B": "A car stopped."}),
    ("d1", "Then he saw the automobile.", {"A": "Then he saw the car.", "B": "Now him saw the auto."}),
    ("d2", "The cat.", {"A": "The cat.", "B": "The cat."}),
    ("d2", "The dog.", {"A": "The dog.", "B": "The dog."}),
    *[("d2", "Oh.", {"A": "Oh.", "B": "Oh."})] * 4,
    ("d2", "The cat and the puppy.", {"A": "The cat and the puppy.", "B": "The cat, the dog."}),
]


def corpus(language: str = "en") -> Corpus:
    return Corpus(segments=[Segment(str(i), doc, ref, hyps) for i, (doc, ref, hyps) in enumerate(DOCS)],
                  target_language=language)


def test_evaluator_end_to_end_hand_computed() -> None:
    assert "now" not in wordnet.synonyms("then") and "then" not in wordnet.synonyms("now")
    assert "auto" in wordnet.synonyms("automobile", "n")
    backend = SpacyBackend(rule_pipeline(LEXICON))
    result = DCOEM.evaluate(corpus(), nlp=backend)
    assert result.evaluator == "dcoem" and result.higher_is_better
    a, b = result.systems
    assert (a.system, b.system) == ("A", "B")
    # A: d1 = r1 3/3, d2 = s6 2/2 -> 100
    assert a.score == pytest.approx(100.0)
    # B: d1 r1 = (auto 0.5 + him 0.5 + then 0) / 3; d2 s6 = (dog 1 + and 0) / 2; system = mean of documents
    assert b.documents == pytest.approx({"d1": 100 / 3, "d2": 50.0})
    assert b.score == pytest.approx((100 / 3 + 50.0) / 2)
    assert b.categories is not None and b.counts is not None
    assert b.categories["lexicoh-wordsub"]["score"] == pytest.approx((50.0 + 100.0) / 2)
    assert b.categories["reference"]["score"] == pytest.approx(50.0)  # d2 has no pronoun: left out
    assert b.categories["conjunction"]["score"] == pytest.approx(0.0)
    assert b.counts["lexicoh-wordsub"] == {"markers": 2, "exact": 1, "synset": 1}
    assert b.counts["reference"] == {"markers": 1, "exact": 0, "synset": 1}
    assert b.counts["conjunction"] == {"markers": 2, "exact": 0, "synset": 0}
    assert (b.counts["sentences"], b.counts["sentences_undefined"]) == (9, 7)
    assert any("7 sentence(s) without any cohesive marker" in n for n in b.notes)
    # document-level segment scores: every segment of a document carries its Eq. 4 score
    seg_b = {s.key: s for s in result.segments if s.system == "B"}
    assert len(seg_b) == 9
    assert seg_b["0"].document == "d1" and seg_b["0"].score == pytest.approx(100 / 3)
    assert seg_b["8"].document == "d2" and seg_b["8"].score == pytest.approx(50.0)
    sig = a.signature
    assert sig.startswith("dcoem|nrefs:1|lookback:5|depth:1|")
    assert "nlp:spacy:" in sig and "|wordnet:3.0|wn:0.0.23|" in sig and sig.endswith("version:1.0")


def test_sentence_level_segment_scores_and_missing_hypotheses() -> None:
    backend = SpacyBackend(rule_pipeline(LEXICON))
    segs = corpus().segments
    segs[1] = Segment("1", "d1", segs[1].reference, {"A": "Then he saw the car."})  # B did not translate r1
    result = DcoemEvaluator(level="sentence").evaluate(Corpus(segments=segs, target_language="en"), nlp=backend)
    seg_b = {s.key: s for s in result.segments if s.system == "B"}
    assert "1" not in seg_b and seg_b["0"].score is None and seg_b["0"].document == ""
    assert seg_b["8"].score == pytest.approx(50.0)
    b = result.systems[1]
    assert b.documents == {"d1": None, "d2": pytest.approx(50.0)}
    assert b.score == pytest.approx(50.0)
    assert b.counts is not None and b.counts["sentences_missing"] == 1
    assert any("not translated" in n for n in b.notes)


def test_english_targets_only() -> None:
    backend = SpacyBackend(rule_pipeline(LEXICON))
    with pytest.raises(ValueError, match="English targets.*'fr'"):
        DCOEM.evaluate(corpus("fr"), nlp=backend)
    unknown = DCOEM.evaluate(corpus(""), nlp=backend)
    assert any("target language not given" in n for n in unknown.systems[0].notes)


def test_registered_and_settings_checked() -> None:
    assert registry.evaluators()["dcoem"] is DCOEM
    assert DCOEM.level == "document" and DCOEM.needs_documents and not DCOEM.needs_source
    with pytest.raises(ValueError, match="lookback"):
        DcoemSettings(lookback=0)
    with pytest.raises(ValueError, match="level"):
        DcoemEvaluator(level="corpus")


def test_default_lexicon_backend() -> None:
    segs = [Segment("1", "d", "The car stopped.", {"A": "The car stopped."}),
            Segment("2", "d", "Then he saw the automobile.", {"A": "Then him saw the auto."})]
    [a] = DCOEM.evaluate(Corpus(segments=segs, target_language="en")).systems
    # r1: lw [automobile (+car)] -> auto 0.5; r [he] -> him 0.5; c [then] -> 1; r0 has no marker
    assert a.score == pytest.approx(100 * (0.5 + 0.5 + 1) / 3)
    assert a.counts is not None and a.counts["sentences_undefined"] == 1
    assert a.signature.startswith("dcoem|nrefs:1|lookback:5|depth:1|case:lc-keep-acronyms|nlp:lexicon|")


def test_corpus_without_documents_is_noted() -> None:
    backend = SpacyBackend(rule_pipeline(LEXICON))
    segs = [Segment("1", "", "The car.", {"A": "The car."}), Segment("2", "", "The car and he.", {"A": "he"})]
    [a] = DCOEM.evaluate(Corpus(segments=segs, target_language="en"), nlp=backend).systems
    assert any("no document has more than one segment" in n for n in a.notes)
    assert a.counts is not None and a.counts["lexicoh-wordsub"]["markers"] == 0
    assert a.documents == {"segment:1": None, "segment:2": pytest.approx(50.0)}  # and 0 + he 1 over 2
