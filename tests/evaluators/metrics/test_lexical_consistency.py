"""DiP lexical consistency (Jwalapuram et al. 2021, §3.3, Table 6, A.3): hand-computed examples over every branch."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from evaluators.metrics.corpus import Corpus, Segment, SystemScore, registered
from evaluators.metrics.language import get_backend
from evaluators.metrics.language.spacy_backend import SpacyBackend
from evaluators.metrics.lexical_consistency import (
    CONSISTENT,
    INCONSISTENT,
    LEXICAL_CONSISTENCY,
    UNDETERMINED,
    LexicalConsistencyEvaluator,
    blocks,
    judge,
    percentages,
    rank_systems,
)
from tests.evaluators.metrics.spacy_pipelines import LEXICON, rule_pipeline

# One document of four sentences: one block.  Nouns/adjectives occurring twice in the reference: house,
# river, door (nouns) and red (adjective).  "walked" (a verb) and "the" (a determiner) occur twice or more
# too and are no words in focus; "old", "morning" occur once.
REFERENCE = ["The old house stood near the river.", "The house had a red door and we walked.",
             "Every morning the red door opened.", "They walked along the river quickly."]
SYSTEMS = {
    # everything as in the reference: 4 consistent
    "A": REFERENCE,
    # house 1 < 2, river 1 < 2, door 1 < 2: inconsistent; red 0: undetermined ("crimson" may be a synonym)
    "B": ["The old home stood near the river.", "The house had a crimson door and we walked.",
          "Every morning the crimson gate opened.", "They walked along the stream quickly."],
    # house 2 (one plural: the lemma matches), door 2: consistent; river 1: inconsistent; red 0: undetermined
    "C": ["The old house stood near the river.", "The houses had a scarlet door and we walked.",
          "Every morning the scarlet door opened.", "They walked along the stream quickly."],
    # house 3 >= 2, river 2: consistent; red 0, door 0: undetermined
    "D": ["The old house stood near the river by the house.", "The house had a scarlet gate and we walked.",
          "Every morning the scarlet gate opened.", "They walked along the river quickly."],
}


def corpus(reference: Sequence[str], systems: Mapping[str, Sequence[str]], document: str = "d1",
           language: str = "en") -> Corpus:
    segs = [Segment(f"{document}-{i}", document, ref, {name: hyp[i] for name, hyp in systems.items()})
            for i, ref in enumerate(reference)]
    return Corpus(segs, target_language=language)


def by_system(scores: Sequence[SystemScore]) -> dict[str, SystemScore]:
    return {s.system: s for s in scores}


def verdicts(score: SystemScore) -> tuple[int, int, int]:
    assert score.counts is not None
    return score.counts[CONSISTENT], score.counts[INCONSISTENT], score.counts[UNDETERMINED]


def test_judge_and_percentages_follow_the_paper() -> None:
    assert judge(2, 2) == CONSISTENT and judge(2, 5) == CONSISTENT  # at least as often as the reference
    assert judge(3, 1) == INCONSISTENT and judge(3, 2) == INCONSISTENT  # matches, but fewer times
    assert judge(2, 0) == UNDETERMINED  # no translation matches: a synonym may be used consistently
    assert percentages({CONSISTENT: 2, INCONSISTENT: 1, UNDETERMINED: 1}) == pytest.approx((200 / 3, 50.0))
    assert percentages({UNDETERMINED: 3}) == (None, 0.0)
    assert percentages({}) == (None, None)


def test_blocks_of_3_to_5_sentences_at_document_edges() -> None:
    assert blocks(0) == blocks(1) == blocks(2) == []  # shorter than a block: none
    assert blocks(3) == [range(0, 3)] and blocks(5) == [range(0, 5)]
    assert blocks(6) == [range(0, 3), range(3, 6)]  # no last block of 1: 3 + 3
    assert blocks(7) == [range(0, 4), range(4, 7)]  # the last partial block joins the others: 4 + 3
    assert blocks(10) == [range(0, 5), range(5, 10)]
    assert [len(b) for b in blocks(11)] == [4, 4, 3]
    assert all(3 <= len(b) <= 5 for n in range(3, 60) for b in blocks(n))
    assert all(sum(len(b) for b in blocks(n)) == n for n in range(3, 60))
    assert [len(b) for b in blocks(8, 3, 4)] == [4, 4]
    with pytest.raises(ValueError, match="cannot be cut"):
        blocks(5, 3, 4)  # 5 sentences: neither one block of 3-4 nor two
    with pytest.raises(ValueError, match="block sizes"):
        blocks(5, 4, 3)


def test_hand_computed_counts_percentages_and_the_table_6_ranking() -> None:
    result = LEXICAL_CONSISTENCY.evaluate(corpus(REFERENCE, SYSTEMS))
    assert result.evaluator == "lexical-consistency" and result.higher_is_better
    s = by_system(result.systems)
    assert [x.system for x in result.systems] == ["A", "B", "C", "D"]
    assert verdicts(s["A"]) == (4, 0, 0)
    assert verdicts(s["B"]) == (0, 3, 1)
    assert verdicts(s["C"]) == (2, 1, 1)
    assert verdicts(s["D"]) == (2, 0, 2)
    assert s["C"].score == pytest.approx(200 / 3)  # the system score is %Con
    assert s["C"].categories == {"%Con": pytest.approx(200 / 3), "%Full": pytest.approx(50.0)}
    assert (s["A"].score, s["B"].score, s["D"].score) == (100.0, 0.0, 100.0)
    assert s["D"].categories == {"%Con": 100.0, "%Full": 50.0}
    # Table 6: by %Con, then by %Full: A (100, 100), D (100, 50), C (66.7, 50), B (0, 0)
    assert {k: v.counts["rank"] for k, v in s.items() if v.counts} == {"A": 1, "D": 2, "C": 3, "B": 4}
    assert s["A"].counts is not None and s["A"].counts["samples"] == 4 and s["A"].counts["blocks"] == 1
    # one document: its %Con on every one of its segments, as a document-level score
    c_rows = [r for r in result.segments if r.system == "C"]
    assert [r.key for r in c_rows] == ["d1-0", "d1-1", "d1-2", "d1-3"]
    assert {r.document for r in c_rows} == {"d1"} and all(r.score == pytest.approx(200 / 3) for r in c_rows)
    assert s["C"].documents == {"d1": pytest.approx(200 / 3)}


def test_only_nouns_and_adjectives_are_words_in_focus() -> None:
    evaluator = LexicalConsistencyEvaluator()
    c = corpus(REFERENCE, {"A": REFERENCE})
    backend = get_backend("lexicon")
    refs = dict(zip((seg.key for seg in c.segments), backend.analyse(REFERENCE, "en")))
    assert sorted(x.lemma for x in evaluator.samples(c, refs)) == ["door", "house", "red", "river"]
    # "walked" twice as a verb, "the" five times as a determiner: not in focus; a system dropping them
    # changes nothing
    no_verbs = [r.replace("walked", "went").replace("the ", "a ") for r in REFERENCE]
    assert verdicts(LEXICAL_CONSISTENCY.evaluate(corpus(REFERENCE, {"X": no_verbs})).systems[0]) == (4, 0, 0)


def test_words_in_focus_are_nouns_where_they_stand_as_a_tagger_reads_them() -> None:
    """Nouns whose base form is also a frequent verb (report, work, cut) are nouns after a determiner.

    The word-list rules read them as verbs wherever they stood, so these samples were missed.
    """
    reference = ["The report arrived on Friday.", "Their work was hard and the cut was deep.",
                 "She read the report about their work.", "The cut healed slowly."]
    c = corpus(reference, {"A": reference})
    refs = dict(zip((seg.key for seg in c.segments), get_backend("lexicon").analyse(reference, "en")))
    assert sorted(x.lemma for x in LexicalConsistencyEvaluator().samples(c, refs)) == ["cut", "report", "work"]
    # verbs stay out of focus: "reports" twice as a verb is no sample
    verbs = ["She reports the news.", "He reports it too.", "Nobody listens.", "They left early."]
    c = corpus(verbs, {"A": verbs})
    refs = dict(zip((seg.key for seg in c.segments), get_backend("lexicon").analyse(verbs, "en")))
    assert LexicalConsistencyEvaluator().samples(c, refs) == []


def test_documents_shorter_than_a_block_and_the_last_partial_block() -> None:
    short = ["The cat sat.", "The cat slept."]  # cat twice, but two sentences: no block
    seven = ["The lamp was bright.", "A dog barked.", "It rained.", "The lamp fell.",  # block 1: lamp twice
             "The lamp broke.", "The garden was wet.", "The garden dried."]  # block 2 (4 + 3): lamp once, garden twice
    hyp_short = ["The dog sat.", "The cat slept."]
    hyp_seven = ["The light was bright.", "A dog barked.", "It rained.", "The lamp fell.",
                 "The lamp broke.", "The garden was wet.", "The yard dried."]
    segs = corpus(short, {"A": hyp_short}, document="short").segments + \
        corpus(seven, {"A": hyp_seven}, document="seven").segments
    result = LEXICAL_CONSISTENCY.evaluate(Corpus(segs, target_language="en"))
    (a,) = result.systems
    # lamp in block 1: 1 < 2 inconsistent; garden in block 2: 1 < 2 inconsistent; the lamp repeated across the
    # block boundary (sentences 4 and 5) is no sample, nor is the short document's cat
    assert verdicts(a) == (0, 2, 0)
    assert a.counts is not None and a.counts["blocks"] == 2 and a.counts["blocks_with_samples"] == 2
    assert any("1 document(s) shorter than 3 segments have no block" in n for n in a.notes)
    assert a.documents == {"seven": 0.0}
    assert {r.document for r in result.segments} == {"seven"}  # no document score for the short document


def test_french_lemmas_decide_the_matches() -> None:
    ref = ["La maison est grande.", "Les maisons sont belles et il aime le jardin.", "Elle aime la belle maison."]
    hyp = ["La maison est grande.", "Les demeures sont belles et il aime le parc.", "Elle aime la jolie maison."]
    result = LEXICAL_CONSISTENCY.evaluate(corpus(ref, {"A": ref, "B": hyp}, language="fr"))
    a, b = result.systems
    # maison/maisons -> maison (3), belles/belle -> beau (2); aime -> aimer is a verb; grande, jardin: once
    assert verdicts(a) == (2, 0, 0)
    assert verdicts(b) == (0, 2, 0)  # maison 2 < 3, beau 1 < 2


def test_chinese_words_from_jieba() -> None:
    ref = ["我们的老师很好。", "老师在北京工作。", "北京很大。"]
    hyp = ["我们的教师很好。", "老师在北京工作。", "北京很大。"]
    (a,) = LEXICAL_CONSISTENCY.evaluate(corpus(ref, {"A": hyp}, language="zh")).systems
    assert verdicts(a) == (1, 1, 0)  # 北京 2 = 2 consistent; 老师 1 < 2 inconsistent


def test_missing_hypotheses_progress_signature_and_registration() -> None:
    c = corpus(REFERENCE, {"A": REFERENCE})
    c.segments[3] = Segment(c.segments[3].key, "d1", REFERENCE[3], {})  # A did not translate the last sentence
    calls: list[tuple[int, int]] = []
    (a,) = LEXICAL_CONSISTENCY.evaluate(c, progress=lambda done, total: calls.append((done, total))).systems
    assert calls == [(1, 2), (2, 2)]
    assert verdicts(a) == (0, 0, 0) and a.score is None and a.counts is not None and a.counts["left_out"] == 4
    assert any("4 sample(s) left out" in n for n in a.notes) and any("undefined" in n for n in a.notes)
    assert a.signature == ("lexcon|score:%Con|blocks:3-5|min:2|pos:ADJ,NOUN,PROPN|"
                           + get_backend("lexicon").signature() + "|version:1.0")
    ev = registered()["lexical-consistency"]
    assert ev is LEXICAL_CONSISTENCY and ev.level == "document" and ev.needs_documents and not ev.needs_source
    assert "Jwalapuram" in ev.description and "§3.3" in ev.description


def test_no_target_language_is_noted() -> None:
    c = corpus(REFERENCE, {"A": REFERENCE}, language="")
    (a,) = LEXICAL_CONSISTENCY.evaluate(c).systems
    assert verdicts(a) == (4, 0, 0)
    assert any("target language not given for 4 segment(s)" in n and "as English" in n for n in a.notes)


def test_rank_ties_share_a_rank_and_undefined_comes_last() -> None:
    def score(name: str, con: float | None, full: float | None) -> SystemScore:
        return SystemScore(name, con, "sig", categories={"%Con": con, "%Full": full})

    ranks = rank_systems([score("x", 50.0, 20.0), score("y", None, 0.0), score("z", 50.0, 20.0),
                          score("w", 50.0, 30.0)])
    assert ranks == {"w": 1, "x": 2, "z": 2, "y": 4}


def test_spacy_backend_with_a_pipeline_built_in_code_gives_the_same_verdicts() -> None:
    words = {w: ("NN", "NOUN", w) for w in ("house", "river", "door", "morning", "home", "stream", "gate")}
    words.update({"houses": ("NNS", "NOUN", "house"), "red": ("JJ", "ADJ", "red"), "old": ("JJ", "ADJ", "old"),
                  "crimson": ("JJ", "ADJ", "crimson"), "scarlet": ("JJ", "ADJ", "scarlet"),
                  "walked": ("VBD", "VERB", "walk"), "stood": ("VBD", "VERB", "stand"),
                  "opened": ("VBD", "VERB", "open")})
    backend = SpacyBackend(rule_pipeline({**LEXICON, **words}))
    result = LEXICAL_CONSISTENCY.evaluate(corpus(REFERENCE, SYSTEMS), nlp=backend)
    s = by_system(result.systems)
    assert [verdicts(s[k]) for k in "ABCD"] == [(4, 0, 0), (0, 3, 1), (2, 1, 1), (2, 0, 2)]
    assert s["A"].signature.startswith("lexcon|score:%Con|") and "|nlp:spacy:en_rules_test|" in s["A"].signature
    assert "|pipeline:en_rules_test@0.1.0|" in s["A"].signature and "nlp:lexicon" not in s["A"].signature
    # with the rule pipeline, a word outside its lexicon has no part of speech: never in focus
    bare = SpacyBackend(rule_pipeline())
    (a,) = LEXICAL_CONSISTENCY.evaluate(corpus(REFERENCE, {"A": REFERENCE}), nlp=bare).systems
    assert verdicts(a) == (0, 0, 0)


def test_each_segment_is_analysed_in_its_own_target_language() -> None:
    """A study mixing directions (DiaBLa) gives each segment's target language; French lemmas join maison/maisons."""
    french = ["La maison est grande.", "Les maisons sont belles.", "Il part."]
    hyp = ["La maison est grande.", "La maison est belle.", "Il part."]
    mixed = Corpus(corpus(french, {"A": hyp}, document="fr").segments
                   + corpus(REFERENCE, {"A": REFERENCE}, document="en").segments, target_language="en")
    (as_english,) = LEXICAL_CONSISTENCY.evaluate(mixed).systems
    assert verdicts(as_english) == (4, 0, 0)  # in English, maison and maisons are two lemmas: no word in focus
    setattr(mixed, "segment_languages", {seg.key: "fr" for seg in mixed.segments if seg.document == "fr"})
    (a,) = LEXICAL_CONSISTENCY.evaluate(mixed).systems
    assert verdicts(a) == (5, 0, 0)  # + maison: 2 in the reference, 2 in the hypothesis
    assert a.documents == {"fr": 100.0, "en": 100.0}
