"""Legacy home of the per-study built-in evaluators; every evaluator is now a registry evaluator.

The evaluators that lived here (``bleu``, ``chrf``, ``ter``, ``doc-*``,
``pronoun-*``, ``connective-*``) are registered in
:mod:`evaluators.metrics.registry` and run on a study through
:func:`evaluators.metrics.scores.evaluator_run`, which turns the study into a
:class:`~evaluators.metrics.corpus.Corpus` first
(:mod:`evaluators.metrics.study_corpus`): one path for studies and files.
What stays here are the sentence-level sacrebleu helpers (used by tests and
reports) and the word-list functions, re-exported from
:mod:`evaluators.metrics.wordlists`.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # sacrebleu is imported on first use
    from sacrebleu.metrics.base import Metric

# --------------------------------------------------------------------------- sacrebleu
@lru_cache(maxsize=None)
def _metric(kind: str) -> Metric:
    from sacrebleu.metrics import BLEU, CHRF, TER

    # effective_order: sentence BLEU without it is 0 for any sentence lacking a 4-gram match
    # (sacrebleu's own recommendation for sentence-level use; Post 2018).
    makers: dict[str, Callable[[], Metric]] = {"bleu": lambda: BLEU(effective_order=True), "chrf": CHRF, "ter": TER}
    return makers[kind]()


def sentence_bleu(hypothesis: str, reference: str) -> float:
    """sacrebleu sentence BLEU (Papineni et al. 2002; Post 2018), 0–100, exp smoothing, 13a tokens."""
    return float(_metric("bleu").sentence_score(hypothesis, [reference]).score)


def sentence_chrf(hypothesis: str, reference: str) -> float:
    """sacrebleu chrF (Popović 2015), character 6-grams, beta 2, 0–100."""
    return float(_metric("chrf").sentence_score(hypothesis, [reference]).score)


def sentence_ter(hypothesis: str, reference: str) -> float:
    """sacrebleu TER (Snover et al. 2006): edits per reference word ×100, LOWER is better."""
    return float(_metric("ter").sentence_score(hypothesis, [reference]).score)


def sacrebleu_signatures() -> dict[str, str]:
    """The sacrebleu signatures (Post 2018) of the three metrics, for reports and docs."""
    out = {}
    for kind, fn in (("bleu", sentence_bleu), ("chrf", sentence_chrf), ("ter", sentence_ter)):
        fn("a b c d", "a b c d")  # sacrebleu only knows nrefs after one evaluation
        out[kind] = str(_metric(kind).get_signature())
    return out


# --------------------------------------------------------------------------- pronouns, connectives
# Registry evaluators (evaluators/metrics/wordlists.py: pronoun-p/r/f, connective-acc/any); the
# functions stay importable from here.
from evaluators.metrics.wordlists import (  # noqa: E402,F401
    CONNECTIVES_EN, PRONOUNS_EN, PRONOUNS_FR, connective_accuracy, connective_any, connective_tokens,
    pronoun_prf, pronoun_tokens,
)
