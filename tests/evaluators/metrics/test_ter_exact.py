"""``ter_exact`` against sacrebleu's own TER: the same edits on random, edge-case and TED document pairs,
and ``doc-ter`` equal to sacrebleu's TER on joined documents."""
from __future__ import annotations

import csv
import random
import re
from collections import defaultdict
from pathlib import Path

import pytest
from sacrebleu.metrics import TER
from sacrebleu.metrics.lib_ter import translation_edit_rate as sacrebleu_ter

from evaluators.metrics import ter_exact
from evaluators.metrics.corpus import Corpus, Segment
from evaluators.metrics.document_metrics import DOC_TER

TED = Path(__file__).resolve().parents[3] / "fixtures" / "wmt-mqm" / "mqm_ted_ende.subset.tsv"
_MARK = re.compile(r"</?v>")


def _same(hyp: list[str], ref: list[str]) -> ter_exact.Search:
    found = ter_exact.search(hyp, ref)
    assert (found.edits, found.ref_length) == sacrebleu_ter(hyp, ref), (hyp, ref)
    return found


def _mutate(rng: random.Random, ref: list[str], vocab: list[str], steps: int, max_block: int) -> list[str]:
    """``ref`` with block moves (the shifts TER looks for), substitutions, insertions and deletions."""
    hyp = list(ref)
    for _ in range(steps):
        op = rng.random()
        if op < 0.4 and len(hyp) > 2:
            a = rng.randrange(len(hyp))
            block = hyp[a:a + rng.randint(1, max_block)]
            del hyp[a:a + len(block)]
            b = rng.randint(0, len(hyp))
            hyp[b:b] = block
        elif op < 0.6 and hyp:
            hyp[rng.randrange(len(hyp))] = rng.choice(vocab + ["oov"])
        elif op < 0.8:
            hyp.insert(rng.randint(0, len(hyp)), rng.choice(vocab))
        elif hyp:
            del hyp[rng.randrange(len(hyp))]
    return hyp


def test_random_pairs_equal_sacrebleu():
    rng = random.Random(26)
    shifted = capped = 0
    for _ in range(400):
        vocab = [f"w{i}" for i in range(rng.randint(1, 15))]  # one word: every position matches
        ref = [rng.choice(vocab) for _ in range(rng.randint(0, 30))]
        if rng.random() < 0.6:
            hyp = _mutate(rng, ref, vocab, rng.randint(0, 8), 12)
        else:
            hyp = [rng.choice(vocab) for _ in range(rng.randint(0, 30))]
        found = _same(hyp, ref)
        shifted += found.shifts > 0
        capped += found.candidates >= ter_exact.MAX_SHIFT_CANDIDATES
    for _ in range(6):  # few word types, many matches: the candidate limit
        vocab = [f"w{i}" for i in range(rng.randint(2, 3))]
        ref = [rng.choice(vocab) for _ in range(rng.randint(50, 80))]
        found = _same([rng.choice(vocab) for _ in range(rng.randint(50, 80))], ref)
        shifted += found.shifts > 0
        capped += found.candidates >= ter_exact.MAX_SHIFT_CANDIDATES
    # both regimes of the search are exercised: shifts applied, and the candidate limit reached
    assert shifted > 200 and capped >= 4


def test_long_pairs_equal_sacrebleu():
    """Beyond the band (2×25) and the shift distance (50): a few hundred words, shifts far and near."""
    rng = random.Random(9)
    shifted = capped = 0
    for n in (60, 120, 250):
        for _ in range(2):
            vocab = [f"w{i}" for i in range(rng.randint(20, 200))]
            ref = [rng.choice(vocab) for _ in range(n)]
            found = _same(_mutate(rng, ref, vocab, n // 10, 14), ref)
            shifted += found.shifts > 0
            capped += found.candidates >= ter_exact.MAX_SHIFT_CANDIDATES
    assert shifted >= 4 and capped >= 1


def test_edge_cases_equal_sacrebleu():
    words = [f"t{i}" for i in range(80)]
    cases = [
        ([], []), (["a"], []), ([], ["a"]), (["a", "b"], ["a", "b"]), (["a"] * 30, ["a"] * 30),
        (["a"] * 30, ["a"] * 7), (["a"] * 3, ["a"] * 200),  # length ratio > 50: sacrebleu widens the beam
        (["x"] * 5 + ["a"] * 40, ["a"] * 40 + ["x"] * 5),
        (["b", "a"] * 20, ["a", "b"] * 20),
        (words[::-1], words),
    ]
    # a block of 10 (MAX_SHIFT_SIZE) and of 11 words, moved 49, 50, 51 and 52 positions
    for size in (9, 10, 11):
        for dist in (49, 50, 51, 52):
            block, rest = words[:size], words[size:size + dist]
            cases.append((rest + block + words[size + dist:], words))
            cases.append((words, rest + block + words[size + dist:]))
    for hyp, ref in cases:
        _same(hyp, ref)
    # a moved block of ten is one shift; of eleven, more
    ten = ter_exact.search(words[10:30] + words[:10] + words[30:], words)
    assert (ten.edits, ten.shifts) == (1, 1)


@pytest.mark.parametrize("options", [
    {}, {"case_sensitive": True}, {"normalized": True}, {"no_punct": True},
    {"normalized": True, "asian_support": True}, {"no_punct": True, "asian_support": True},
])
def test_tokenizer_options_equal_sacrebleu(options):
    metric = TER(**options)
    pairs = [
        ("The Cat sat, on the MAT. It was & &amp; \"fine\"!", "the cat sat on the mat, it was fine."),
        ("我们 今天 去 公园。 天气 很好!", "今天 我们 去 公园, 天气 很 好。"),
        ("Hello  world\n again", "again hello World"),
    ]
    for hyp, ref in pairs:
        cache = metric._cache_references([[ref]])[0]
        hyp_pre = metric._preprocess_segment(hyp)
        assert ter_exact.segment_statistics(hyp_pre, cache) == metric._compute_segment_statistics(hyp_pre, cache)
    multi = metric._cache_references([["the cat sat", "a cat sat down"]])[0]
    assert (ter_exact.segment_statistics("cat the sat down", multi)
            == metric._compute_segment_statistics("cat the sat down", multi))


def _ted() -> dict[str, dict[tuple[str, int], str]]:
    outputs: dict[str, dict[tuple[str, int], str]] = defaultdict(dict)
    with open(TED, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            outputs[row["system"]][(row["doc"], int(row["seg_id"]))] = _MARK.sub("", row["target"]).strip()
    return outputs


def test_ted_documents_equal_sacrebleu():
    """The TED subset's talks, every system against the human reference ``ref``.

    sacrebleu's own TER takes 8-20 s per whole talk here (400-640 words), so every system is compared on
    the first 6 segments of each talk and one system on the whole of the shortest talk (the whole release
    is compared by bench/doc_ter_speed.py).
    """
    outputs = _ted()
    metric = TER()
    keys = sorted(set.intersection(*(set(o) for o in outputs.values())))
    talks: dict[str, list[int]] = defaultdict(list)
    for doc, seg in keys:
        talks[doc].append(seg)
    assert len(talks) == 3
    shifted = 0
    for system in sorted(s for s in outputs if s != "ref"):
        for doc, segs in sorted(talks.items()):
            head = segs[:6]
            hyp = metric._preprocess_segment(" ".join(outputs[system][(doc, s)] for s in head))
            ref = metric._cache_references([[" ".join(outputs["ref"][(doc, s)] for s in head)]])[0]
            assert len(hyp.split()) > 50
            shifted += ter_exact.search(hyp.split(), ref["ref_words"][0]).shifts > 0
            assert ter_exact.segment_statistics(hyp, ref) == metric._compute_segment_statistics(hyp, ref)
    assert shifted > 10
    shortest = min(talks, key=lambda d: len(talks[d]))
    hyp = metric._preprocess_segment(" ".join(outputs["Nemo"][(shortest, s)] for s in talks[shortest]))
    ref = metric._cache_references([[" ".join(outputs["ref"][(shortest, s)] for s in talks[shortest])]])[0]
    assert ter_exact.segment_statistics(hyp, ref) == metric._compute_segment_statistics(hyp, ref)


def test_doc_ter_is_sacrebleu_ter_of_joined_documents():
    rng = random.Random(3)
    vocab = "the a cat dog sat on mat and then it was fine , .".split()
    segments = []
    for d in range(4):
        for k in range(rng.randint(1, 6)):
            ref = [rng.choice(vocab) for _ in range(rng.randint(3, 15))]
            hyps = {"A": " ".join(_mutate(rng, ref, vocab, 3, 5)), "B": " ".join(_mutate(rng, ref, vocab, 6, 8))}
            segments.append(Segment(f"d{d}:{k}", f"d{d}", " ".join(ref), hyps))
    result = DOC_TER.evaluate(Corpus(segments, target_language="en"))
    metric = TER()
    for system_score in result.systems:
        expected = {}
        for d in range(4):
            segs = [s for s in segments if s.document == f"d{d}"]
            hyp = " ".join(s.hypotheses[system_score.system] for s in segs)
            expected[f"d{d}"] = metric.sentence_score(hyp, [" ".join(s.reference for s in segs)]).score
        assert system_score.documents == pytest.approx(expected, abs=1e-9, rel=0)
        assert system_score.score == pytest.approx(sum(expected.values()) / 4, abs=1e-9, rel=0)
