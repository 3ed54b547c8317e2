"""``chrf_exact`` against sacrebleu's own chrF: the same segment statistics on random, edge-case and
multi-reference segments, and the same corpus and sentence scores through the ``chrf`` evaluator."""
from __future__ import annotations

import random

import pytest
from sacrebleu.metrics import CHRF

from evaluators.metrics import chrf_exact
from evaluators.metrics.corpus import Corpus, Segment
from evaluators.metrics.sacrebleu_metrics import CHRF_EVALUATOR, segment_statistics

_ALPHABET = "aabbcdeé  ,.-漢字"


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 40)))


@pytest.mark.parametrize("kwargs", [{}, {"lowercase": True}, {"whitespace": True}, {"char_order": 3, "beta": 1}])
def test_random_segments_equal_sacrebleu(kwargs):
    rng = random.Random(26)
    metric = CHRF(**kwargs)
    assert chrf_exact.supports(metric)
    for _ in range(300):
        refs = [[_text(rng)] for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.2:
            refs.append([None])  # a missing reference, as sacrebleu takes it
        cache = metric._cache_references(refs)
        hyp = metric._preprocess_segment(_text(rng))
        expected = metric._compute_segment_statistics(hyp, cache[0])
        assert chrf_exact.segment_statistics(metric, hyp, cache[0]) == expected, (hyp, refs)


def test_edge_cases_equal_sacrebleu():
    metric = CHRF()
    for hyp, ref in [("", ""), ("", "abc"), ("abc", ""), ("a", "a"), ("   ", "x y"), ("aaaaaaa", "aaa"),
                     ("the cat sat", "the cat sat"), ("ab ab ab", "ba ba")]:
        cache = metric._cache_references([[ref]])
        assert chrf_exact.segment_statistics(metric, hyp, cache[0]) == \
            metric._compute_segment_statistics(hyp, cache[0]), (hyp, ref)


def test_chrf_plus_plus_is_left_to_sacrebleu():
    metric = CHRF(word_order=2)
    assert not chrf_exact.supports(metric)
    cache = metric._cache_references([["a small test"]])
    assert segment_statistics(metric, ["a small tst"], cache) == \
        [metric._compute_segment_statistics("a small tst", cache[0])]


def test_evaluator_scores_equal_sacrebleu():
    rng = random.Random(7)
    segments = [Segment(key=str(i), document="", reference=_text(rng),
                        hypotheses={"A": _text(rng), "B": _text(rng)}) for i in range(60)]
    result = CHRF_EVALUATOR.evaluate(Corpus(segments=segments, target_language="en"))
    for system in ("A", "B"):
        hyps = [s.hypotheses[system] for s in segments]
        refs = [[s.reference for s in segments]]
        corpus_score = CHRF().corpus_score(hyps, refs).score
        assert next(s.score for s in result.systems if s.system == system) == corpus_score
        sentence = {s.key: s.score for s in result.segments if s.system == system}
        for seg, hyp in zip(segments, hyps):
            assert sentence[seg.key] == CHRF().sentence_score(hyp, [seg.reference]).score
