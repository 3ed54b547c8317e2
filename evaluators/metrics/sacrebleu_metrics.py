"""Corpus-level BLEU, chrF and TER, as sacrebleu computes them, registered as ``bleu``, ``chrf`` and ``ter``.

Sources: BLEU (Papineni et al. 2002, ACL), chrF (Popović 2015, WMT), TER
(Snover et al. 2006, AMTA), all as implemented by sacrebleu (Post 2018, WMT,
"A Call for Clarity in Reporting BLEU Scores"), version pinned in
requirements.txt.

* **System score** — sacrebleu's *corpus* statistic: the per-segment
  sufficient statistics (n-gram matches and totals and lengths for BLEU,
  character n-gram statistics for chrF, edits and reference lengths for TER)
  are summed over the corpus and the score is computed once from the sums.
  This is what ``sacrebleu REF -i HYP`` prints, and it is *not* a mean of
  sentence scores.  The signature is sacrebleu's own (``BLEU.get_signature()``).
* **Segment scores** — for item-level comparison with human judgments: each
  segment's own score from its own statistics; sentence BLEU uses effective
  order (``BLEU(effective_order=True)``, as sacrebleu's ``sentence_bleu`` and
  ``--sentence-level`` do: without it a sentence lacking a 4-gram match scores 0).
* **Tokenisation follows the target language**: BLEU's tokenizer is ``zh`` for
  Chinese (``zh*``), ``ja-mecab`` for Japanese and ``ko-mecab`` for Korean
  (sacrebleu's own choices when it knows the target language; the MeCab
  packages are in requirements.txt, and without them Japanese falls back to
  ``char`` and Korean to ``intl``, with a note in the result), ``13a``
  otherwise.  TER turns on ``asian_support`` for zh/ja/ko.  chrF is
  language-independent.  Everything else is sacrebleu's default (BLEU: mixed
  case, exp smoothing, 4-grams; chrF: 6 character n-grams, no word n-grams,
  beta 2, whitespace ignored; TER: case-insensitive, punctuation kept, no
  normalisation).
* When the corpus does not say its target language, it is guessed from the
  references (:mod:`evaluators.metrics.langguess`) and the guess is noted in
  every system's result.  A corpus whose segments have different target
  languages (``Corpus.segment_languages``) is scored with one setting when the
  languages share it, and refused when they do not (see
  :meth:`SacrebleuEvaluator.setup`).

All scores are on sacrebleu's 0-100 scale; TER is an edit rate (lower is
better, and it can exceed 100).
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from evaluators.metrics.corpus import (
    Corpus,
    EvaluationResult,
    ProgressCallback,
    SegmentScore,
    SystemScore,
    reference_streams,
    register,
)
from evaluators.metrics import chrf_exact, ter_exact
from evaluators.metrics.langguess import guess_language, primary_subtag

if TYPE_CHECKING:  # sacrebleu is imported on first use (keeps `manage.py` start-up fast)
    from sacrebleu.metrics.base import Metric

    from evaluators.metrics.language.base import Backend

#: The kinds of metric this module wraps, by evaluator name.
KINDS = ("bleu", "chrf", "ter")
#: sacrebleu's own tokenizer for a target language (``BLEU._TOKENIZER_MAP``); others get ``13a``.
BLEU_TOKENIZERS = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}
#: What Japanese and Korean fall back to when their MeCab packages are not installed.
BLEU_FALLBACK = {"ja": "char", "ko": "intl"}
ASIAN = frozenset({"zh", "ja", "ko"})


@dataclass
class MetricSetup:
    """A configured sacrebleu metric, the language it was configured for, and notes about that choice."""

    kind: str
    metric: Metric
    language: str  # primary subtag, "" when unknown
    notes: list[str]


def resolve_language(corpus: Corpus) -> tuple[str, list[str]]:
    """The corpus' target language (primary subtag) and notes; guessed from the references when not given."""
    if corpus.target_language:
        notes = []
        if corpus.target_language_guessed:
            notes.append(f"target language {corpus.target_language!r} was guessed from the references")
        return primary_subtag(corpus.target_language), notes
    guess = guess_language(seg.reference for seg in corpus.segments)
    if guess.language is None:
        return "", [f"target language not given and not guessable ({guess.evidence}): sacrebleu's "
                    "language-independent defaults used (BLEU tokenizer 13a)"]
    return guess.language, [f"target language not given: guessed {guess.language!r} from the references "
                            f"({guess.evidence})"]


def make_metric(kind: str, language: str) -> MetricSetup:
    """The sacrebleu metric ``kind`` (bleu, chrf, ter) with this module's defaults for ``language``."""
    # sacrebleu takes ~0.3 s to import; the registry (and so every web process) imports this module.
    from sacrebleu.metrics import BLEU, CHRF, TER

    notes: list[str] = []
    metric: Metric
    if kind == "bleu":
        tokenize = BLEU_TOKENIZERS.get(language, "13a")
        try:
            metric = BLEU(tokenize=tokenize)
        except (RuntimeError, ImportError):  # sacrebleu's MeCab tokenizers raise RuntimeError when not installed
            fallback = BLEU_FALLBACK[language]
            notes.append(f"BLEU tokenizer {tokenize} is not installed here (pip install sacrebleu[{language}]): "
                         f"used {fallback}; not comparable with {tokenize} scores")
            metric = BLEU(tokenize=fallback)
    elif kind == "chrf":
        metric = CHRF()
    elif kind == "ter":
        metric = TER(asian_support=language in ASIAN)
    else:
        raise ValueError(f"unknown sacrebleu metric {kind!r}; known: {', '.join(KINDS)}")
    return MetricSetup(kind, metric, language, notes)


def segment_statistics(metric: Metric, hypotheses: Sequence[str], ref_cache: Sequence[Any],
                       keys: Sequence[Hashable] | None = None,
                       memo: dict[tuple[Hashable, str], list[Any]] | None = None) -> list[Any]:
    """sacrebleu's per-segment sufficient statistics of ``hypotheses`` against cached references.

    With ``keys`` (one per hypothesis, naming its reference entry: the segment's index) and a ``memo`` shared
    by the calls of one metric on one corpus, a hypothesis identical to one already scored against the same
    reference gets a copy of its statistics instead of being scored again (they are a function of the
    two texts): on the TED zh->en release a third of the 7,406 hypotheses repeat another system's on the same
    segment.

    Exactly ``Metric._extract_corpus_statistics`` (the loop sacrebleu's ``corpus_score`` and its paired tests
    run), on a reference cache that may be a subset of the corpus' segments.  TER's statistics come from
    :mod:`evaluators.metrics.ter_exact` (sacrebleu's edits to the last bit, about three times faster on
    sentences) and chrF's from :mod:`evaluators.metrics.chrf_exact` (the same integers, its counting loops in
    C): docs/evaluators.md, "Speed at release scale".
    """
    from sacrebleu.metrics import TER

    compute: Callable[[str, Any], Any]
    if isinstance(metric, TER):
        compute = ter_exact.segment_statistics
    elif chrf_exact.supports(metric):
        compute = partial(chrf_exact.segment_statistics, metric)
    else:
        compute = metric._compute_segment_statistics
    if keys is None or memo is None:
        return [compute(metric._preprocess_segment(hyp), ref) for hyp, ref in zip(hypotheses, ref_cache, strict=True)]
    out: list[Any] = []
    for hyp, ref, key in zip(hypotheses, ref_cache, keys, strict=True):
        stats = memo.get((key, hyp))
        if stats is None:
            stats = memo[(key, hyp)] = compute(metric._preprocess_segment(hyp), ref)
        out.append(list(stats))  # a copy: no two systems share one list
    return out


def _sentence_score(kind: str, metric: Metric, stats: list[Any]) -> float:
    if kind == "bleu":
        bleu: Any = metric
        order = bleu.max_ngram_order
        return float(bleu.compute_bleu(
            correct=list(stats[2:2 + order]), total=list(stats[2 + order:]), sys_len=int(stats[0]), ref_len=int(stats[1]),
            smooth_method=bleu.smooth_method, smooth_value=bleu.smooth_value, effective_order=True,
            max_ngram_order=order).score)
    return float(metric._compute_score_from_stats(stats).score)


def _counts(kind: str, score: Any) -> dict[str, Any]:
    if kind == "bleu":
        return {"correct": [int(c) for c in score.counts], "total": [int(t) for t in score.totals],
                "precisions": [float(p) for p in score.precisions], "bp": float(score.bp),
                "ratio": float(score.ratio), "hyp_len": int(score.sys_len), "ref_len": int(score.ref_len),
                "verbose": score._verbose}
    if kind == "ter":
        return {"num_edits": int(score.num_edits), "ref_length": float(score.ref_length)}
    return {"char_order": int(score.char_order), "word_order": int(score.word_order), "beta": int(score.beta)}


@dataclass
class SacrebleuEvaluator:
    """A registered corpus-level sacrebleu metric (``bleu``, ``chrf`` or ``ter``)."""

    name: str
    higher_is_better: bool
    description: str
    level: str = "sentence"
    needs_source: bool = False
    needs_documents: bool = False
    #: sacrebleu tokenises by itself: no language backend (whose cache the other evaluators of a run share).
    uses_backend: bool = False
    #: sacrebleu scores against several references at once (its ``nrefs``): a corpus with several is scored
    #: against all of them (``Corpus.reference_names``, ``Segment.references``).
    multi_reference: bool = True

    def setup(self, corpus: Corpus) -> MetricSetup:
        """The metric configured for ``corpus``' target language, with notes on the language and tokenizer.

        A corpus that mixes target languages (``Corpus.segment_languages``, e.g. a DiaBLa study with both
        directions) is scored with one configuration when its languages share it (en and fr: BLEU ``13a``, TER
        without ``asian_support``; chrF always); languages that need different ones (zh and en for BLEU or TER)
        are a ``ValueError``: a corpus statistic has one tokenizer, so score each direction on its own.
        """
        language, notes = resolve_language(corpus)
        mixed = sorted({primary_subtag(code) for code in corpus.segment_languages.values() if code} | {language})
        if len(mixed) > 1:
            configs = {lang: self._config(lang) for lang in mixed}
            if len(set(configs.values())) > 1:
                raise ValueError(
                    f"{self.name}: the segments' target languages ({', '.join(mixed)}) need different sacrebleu "
                    "settings (" + "; ".join(f"{lang}: {cfg}" for lang, cfg in configs.items()) + "); a corpus "
                    "score has one, so score each target language separately")
            notes.append(f"the segments' target languages ({', '.join(mixed)}) share one sacrebleu setting: "
                         f"{configs[language]}")
        setup = make_metric(self.name, language)
        setup.notes[:0] = notes
        return setup

    def _config(self, language: str) -> str:
        """What ``language`` changes in this metric's settings (the BLEU tokenizer, TER's asian_support)."""
        if self.name == "bleu":
            return f"tokenizer {BLEU_TOKENIZERS.get(language, '13a')}"
        if self.name == "ter":
            return f"asian_support {'yes' if language in ASIAN else 'no'}"
        return "language-independent"

    def evaluate(self, corpus: Corpus, *, nlp: Backend | None = None,
                 progress: ProgressCallback | None = None) -> EvaluationResult:
        """Corpus score per system (sacrebleu's statistic and signature) and one score per segment.

        ``nlp`` is ignored: sacrebleu tokenises by itself.
        """
        setup = self.setup(corpus)
        metric = setup.metric
        segments = corpus.segments
        ref_cache = metric._cache_references(reference_streams(segments))
        signature = str(metric.get_signature())  # nrefs is known once references are cached
        result = EvaluationResult(evaluator=self.name, higher_is_better=self.higher_is_better, systems=[])
        systems = corpus.systems
        memo: dict[tuple[Hashable, str], list[Any]] = {}  # systems' identical hypotheses scored once
        for step, system in enumerate(systems, start=1):
            idx = [i for i, seg in enumerate(segments) if seg.hypotheses.get(system) is not None]
            stats = segment_statistics(metric, [segments[i].hypotheses[system] for i in idx],
                                       [ref_cache[i] for i in idx], keys=idx, memo=memo)
            score = metric._aggregate_and_compute(stats)
            notes = list(setup.notes)
            if len(idx) < len(segments):
                notes.append(f"{system} has a hypothesis for {len(idx)} of {len(segments)} segments: "
                             "scored on those only")
            result.systems.append(SystemScore(system=system, score=float(score.score), signature=signature,
                                              counts=_counts(self.name, score), notes=notes))
            for i, row in zip(idx, stats):
                result.segments.append(SegmentScore(key=segments[i].key, system=system,
                                                    score=_sentence_score(self.name, metric, row)))
            if progress:
                progress(step, len(systems))
        return result


_SB = ("sacrebleu (Post 2018) corpus statistic with sacrebleu's signature; segment scores are sentence-level "
       "scores for item-level comparison. Tokenizer by target language (zh, ja-mecab, ko-mecab, else 13a).")
BLEU_EVALUATOR = SacrebleuEvaluator(
    name="bleu", higher_is_better=True,
    description=f"Corpus BLEU (Papineni et al. 2002), 0-100; sentence BLEU with effective order per segment. {_SB}")
CHRF_EVALUATOR = SacrebleuEvaluator(
    name="chrf", higher_is_better=True,
    description=f"Corpus chrF (Popović 2015): character 6-grams, beta 2, 0-100. {_SB}")
TER_EVALUATOR = SacrebleuEvaluator(
    name="ter", higher_is_better=False,
    description=("Corpus TER (Snover et al. 2006): edits per reference word x100, LOWER is better; "
                 f"asian_support for zh/ja/ko. {_SB}"))
for _evaluator in (BLEU_EVALUATOR, CHRF_EVALUATOR, TER_EVALUATOR):
    register(_evaluator)
