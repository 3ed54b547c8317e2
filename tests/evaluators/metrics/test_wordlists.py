"""Pronoun and connective evaluators (registry): undefined values, case, Chinese lists over jieba, pooling."""
from __future__ import annotations

import pytest

from evaluators.metrics.corpus import Corpus, Segment
from evaluators.metrics.registry import evaluators
from evaluators.metrics.wordlists import connective_accuracy, connective_tokens, pronoun_prf, pronoun_tokens


def test_undefined_precision_and_recall_are_none_not_zero():
    assert pronoun_prf("A dog barked.", "He left.") == (None, 0.0, 0.0)  # P = 0/0
    assert pronoun_prf("He left.", "A dog barked.") == (0.0, None, 0.0)  # R = 0/0
    assert pronoun_prf("A dog.", "A cat.") is None  # nothing to evaluate
    prf = pronoun_prf("She gave it to him.", "He gave it to her, it said.")
    assert prf is not None
    p, r, f = prf
    assert p == pytest.approx(1 / 3) and r == pytest.approx(1 / 4) and f == pytest.approx(2 * 1 / (3 + 4))


def test_us_the_country_is_not_the_pronoun_us():
    assert pronoun_tokens("The US told us to wait.") == {"us": 1}
    assert pronoun_tokens("They called US.") == {"they": 1}
    assert pronoun_tokens("THEY TOLD US TO WAIT.") == {"they": 1, "us": 1}  # all capitals: case says nothing
    assert pronoun_tokens("We said IT ITSELF.") == {"we": 1, "it": 1, "itself": 1}  # emphasis still counts


def test_chinese_pronouns_are_jieba_words_of_the_suite_categories():
    # seed 004's pronoun example: 你们 (you, plural) must not count as 你 (you, singular)
    assert pronoun_tokens("你们富人总以为钱能买到一切。", "zh") == {"你们": 1}
    assert pronoun_tokens("你的书和他们的书，她们和它们。", "zh-Hans") == {"你": 1, "他们": 1, "她们": 1, "它们": 1}
    assert pronoun_prf("他们已经走了。", "她们已经走了。", "zh") == (0.0, 0.0, 0.0)  # gender of "they" wrong: no match


def test_chinese_connectives_including_dang_shihou():
    assert connective_tokens("当他回家的时候，她们已经走了。", "zh") == {"当…时候": 1}
    assert connective_tokens("对于别人却都像儿戏一样。", "zh") == {"却": 1}  # seed 004 Figure 2
    assert connective_tokens("我喜欢茶，而他喜欢咖啡。", "zh") == {"而": 1}
    # "while" rendered as 当…时候 instead of 而 (the suite's example of a wrong sense): accuracy 0
    assert connective_accuracy("当我喜欢茶的时候，他喜欢咖啡。", "我喜欢茶，而他喜欢咖啡。", "zh") == 0.0
    assert connective_accuracy("我喜欢茶，而他喜欢咖啡。", "我喜欢茶，而他喜欢咖啡。", "zh") == 1.0


def test_lists_exist_per_language_and_others_are_refused():
    with pytest.raises(ValueError, match="no connective list for target language 'fr'"):
        connective_tokens("Et alors ?", "fr")
    with pytest.raises(ValueError, match="no pronoun list for target language 'de'"):
        pronoun_tokens("Er kam.", "de")


def _corpus(language: str, rows: list[tuple[str, dict[str, str]]], **kw: object) -> Corpus:
    return Corpus(segments=[Segment(key=f"s{i}", document="", reference=ref, hypotheses=hyps)
                            for i, (ref, hyps) in enumerate(rows)], target_language=language, **kw)  # type: ignore[arg-type]


def test_pronoun_recall_pools_counts_and_counts_undefined_segments():
    corpus = _corpus("en", [
        ("He saw her there.", {"A": "He saw her there.", "B": "She saw him."}),
        ("A dog barked.", {"A": "It barked.", "B": "A dog barked."}),  # reference without pronoun: R undefined
        ("They and we and you left.", {"A": "They left.", "B": "They and we and you left."}),
    ])
    result = evaluators()["pronoun-r"].evaluate(corpus)
    seg = {(s.key, s.system): s.score for s in result.segments}
    assert seg[("s0", "A")] == 1.0 and seg[("s2", "A")] == pytest.approx(1 / 3) and ("s1", "A") not in seg
    a = next(s for s in result.systems if s.system == "A")
    # the mean of defined segment recalls is (1 + 1/3)/2 = 0.667; pooled = 3 matched / 5 reference pronouns
    assert a.score == pytest.approx(3 / 5)
    assert a.counts == {"matched": 3, "hypothesis": 4, "reference": 5, "segments": 3, "undefined": 1}
    assert any("1 of 3 segment(s) have no pronoun in the reference" in n for n in a.notes)
    assert a.signature.startswith("pronoun-r|lang:en|tok:words|case:acronyms-excluded|system:pooled")


def test_chinese_corpus_and_mixed_directions():
    zh = _corpus("zh", [("你们想的太对了。", {"A": "你想的太对了。"}), ("他们来了。", {"A": "他们来了。"})])
    result = evaluators()["pronoun-f"].evaluate(zh)
    assert [s.score for s in result.segments] == [0.0, 1.0]
    assert "jieba:0.42.1" in result.systems[0].signature and "lang:zh" in result.systems[0].signature
    mixed = _corpus("en", [("He said so.", {"A": "He said so."}), ("Il est là et donc il reste.", {"A": "Il est là."})],
                    segment_languages={"s0": "en", "s1": "fr"})
    acc = evaluators()["connective-acc"].evaluate(mixed)
    assert [(s.key, s.score) for s in acc.segments] == [("s0", 1.0)]  # "so"; the French segment has no list
    assert any("1 segment(s) not scored: no connective list" in n and "1 × fr" in n for n in acc.systems[0].notes)
    with pytest.raises(ValueError, match="target language is unknown"):
        evaluators()["pronoun-f"].evaluate(_corpus("", [("He left.", {"A": "He left."})]))
