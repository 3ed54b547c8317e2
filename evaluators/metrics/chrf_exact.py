"""sacrebleu's chrF segment statistics (Popović 2015), the same integers, with the counting loops in C.

``CHRF._compute_segment_statistics`` (version pinned in requirements.txt) counts each character n-gram order
of the hypothesis into a ``Counter`` and then walks the hypothesis' n-grams in Python to add up the
hypothesis count and the clipped matches (``_get_match_statistics``); on the TED release's 7,406 sentences
and 70 documents that walk was about half of chrF's time.  :func:`segment_statistics` returns the same list
of integers: the n-grams are counted as sacrebleu counts them (``extract_all_char_ngrams``), and the sums
``Σ count``, ``Σ ref count`` and ``Σ min(count, ref count)`` are taken with ``sum``/``map`` over the
counters' values (exact integer sums, so the order of addition changes nothing).  The best reference is
chosen as sacrebleu chooses it (the first with the strictly highest F-score).  Word n-grams (chrF++,
``word_order > 0``) are sacrebleu's own code: :func:`supports` says when this module applies.
``tests/evaluators/metrics/test_chrf_exact.py`` compares the statistics with sacrebleu's.
"""
from __future__ import annotations

from collections import Counter
from itertools import repeat
from typing import Any


def supports(metric: Any) -> bool:
    """Whether ``metric`` is a sacrebleu ``CHRF`` whose statistics this module computes (character n-grams only)."""
    from sacrebleu.metrics import CHRF

    return isinstance(metric, CHRF) and metric.word_order == 0


def char_ngrams(line: str, max_order: int, include_whitespace: bool = False) -> list[Counter[str]]:
    """Character n-gram counts of orders 1..``max_order``: sacrebleu's ``extract_all_char_ngrams``."""
    if not include_whitespace:
        line = "".join(line.split())
    size = len(line)
    return [Counter([line[i:i + n] for i in range(size - n + 1)]) for n in range(1, max_order + 1)]


def match_statistics(hyp: Counter[str], ref: Counter[str]) -> tuple[int, int, int]:
    """(hypothesis n-grams, reference n-grams, clipped matches): sacrebleu's ``CHRF._get_match_statistics``."""
    match = sum(map(min, hyp.values(), map(ref.get, hyp, repeat(0))))
    return (sum(hyp.values()) if ref else 0), sum(ref.values()), match


def segment_statistics(metric: Any, hypothesis: str, ref_kwargs: dict[str, Any]) -> list[int]:
    """``CHRF._compute_segment_statistics`` of a preprocessed hypothesis against cached references."""
    hyp_ngrams = char_ngrams(hypothesis, metric.char_order, metric.whitespace)
    best_stats: list[int] = []
    best_f_score = -1.0
    for ref_ngrams in ref_kwargs["ref_ngrams"]:
        stats: list[int] = []
        for h, r in zip(hyp_ngrams, ref_ngrams):
            stats.extend(match_statistics(h, r))
        f_score = metric._compute_f_score(stats)
        if f_score > best_f_score:
            best_f_score = f_score
            best_stats = stats
    return best_stats
