"""Lexical consistency (``lexical-consistency``): DiP's reference-based consistency of repeated nouns and adjectives.

Source: P. Jwalapuram, B. Rychalska, S. Joty, D. Basaj (2021). *Can Your
Context-Aware MT System Pass the DiP Benchmark Tests? Evaluation Benchmarks
for Discourse Phenomena in Machine Translation* (ICLR 2021 submission),
§3.3 "Lexical Consistency", Table 6 and appendix A.3.

Definition (see docs/evaluators.md, "Lexical consistency", for every choice):

* each document's segments (its sentences, in order) are cut into consecutive
  **blocks of 3-5 sentences**: a document of ``n >= 3`` segments into
  ``ceil(n / 5)`` blocks of near-equal size (the first ones one longer), so no
  block is shorter than 3 or longer than 5; a document of fewer than 3
  segments has no block;
* a **sample** is a block and a *word in focus*: a lemma (lower-cased) that
  occurs at least twice as a noun, proper noun or adjective in the block's
  reference (§3.3: "the (lemmatized) word we are considering occurs at least
  twice in the reference"; "we limit the errors considered to nouns and
  adjectives"); ``r`` = its occurrences in the reference block, ``h`` = in the
  system's block (any part of speech: the lemma is what is compared);
* per system, a sample is **consistent** when ``h >= r``, **inconsistent**
  when ``0 < h < r`` ("at least one translation of a particular word matches
  the reference translation, but this translated word occurs fewer times
  than in the reference"), **undetermined** when ``h = 0`` ("no translations
  match the reference ... a synonym ... could have been used consistently");
* ``%Con`` = consistent / (consistent + inconsistent) x 100 and ``%Full`` =
  consistent / all samples x 100 (A.3); the system score is ``%Con``, and
  systems rank by ``%Con`` then ``%Full`` (Table 6); both are in
  ``SystemScore.categories``, the counts and the rank in ``counts``.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evaluators.metrics.corpus import (
    Corpus,
    EvaluationResult,
    ProgressCallback,
    SegmentScore,
    SystemScore,
    register,
)
from evaluators.metrics.language import get_backend
from evaluators.metrics.language.spacy_backend import SpacyBackend

if TYPE_CHECKING:
    from evaluators.metrics.language.base import Backend, Sentence

#: This implementation's version, in every signature (bump it when a score can change).
VERSION = "1.0"
#: Universal parts of speech of the words in focus: nouns (proper nouns included) and adjectives.
FOCUS_POS = frozenset({"NOUN", "PROPN", "ADJ"})
#: For a backend that cannot tell open-class words apart (the lexicon backend outside English and
#: Chinese tags them ``X``), ``X`` stands in for "noun or adjective".
UNKNOWN_POS = "X"

CONSISTENT, INCONSISTENT, UNDETERMINED = "consistent", "inconsistent", "undetermined"


def blocks(n: int, smallest: int = 3, largest: int = 5) -> list[range]:
    """Consecutive blocks of ``smallest``..``largest`` of ``n`` sentences, as equal as possible; [] when n < smallest.

    ``ceil(n / largest)`` blocks; the first ``n mod k`` are one sentence longer than the others
    (7 -> 4 + 3, 11 -> 4 + 4 + 3, 6 -> 3 + 3).
    """
    if smallest < 1 or largest < smallest:
        raise ValueError(f"block sizes: need 1 <= smallest <= largest, got {smallest}..{largest}")
    if n < smallest:
        return []
    k = math.ceil(n / largest)
    size, extra = divmod(n, k)
    if size < smallest:  # k is the fewest blocks of at most `largest`: fewer are too long, more too short
        raise ValueError(f"{n} sentences cannot be cut into blocks of {smallest}..{largest}")
    out, start = [], 0
    for i in range(k):
        length = size + (1 if i < extra else 0)
        out.append(range(start, start + length))
        start += length
    return out


def lemma_of(token: Any) -> str:
    """A token's lemma for matching: lower-cased, the token's text when the backend gave none."""
    return str(token.lemma or token.text).lower()


def focus_words(reference: Sequence[Sentence], *, focus_pos: frozenset[str] = FOCUS_POS,
                unknown_as_focus: bool = True, min_count: int = 2) -> dict[str, int]:
    """Words in focus of one reference block: lemma -> its occurrences in the block (any part of speech).

    A lemma is in focus when at least ``min_count`` of its occurrences are tagged with ``focus_pos``
    (``X`` counts as such when ``unknown_as_focus``).
    """
    tagged: Counter[str] = Counter()
    every: Counter[str] = Counter()
    for sentence in reference:
        for t in sentence.tokens:
            lemma = lemma_of(t)
            every[lemma] += 1
            if t.pos in focus_pos or (unknown_as_focus and t.pos == UNKNOWN_POS):
                if any(c.isalpha() for c in t.text):
                    tagged[lemma] += 1
    return {lemma: every[lemma] for lemma, n in tagged.items() if n >= min_count}


def judge(reference_count: int, hypothesis_count: int) -> str:
    """DiP §3.3: consistent (h >= r), inconsistent (0 < h < r) or undetermined (h = 0)."""
    if hypothesis_count == 0:
        return UNDETERMINED
    return INCONSISTENT if hypothesis_count < reference_count else CONSISTENT


def percentages(counts: Mapping[str, int]) -> tuple[float | None, float | None]:
    """(%Con, %Full), 0-100; None where the denominator is 0."""
    con, inc, und = counts.get(CONSISTENT, 0), counts.get(INCONSISTENT, 0), counts.get(UNDETERMINED, 0)
    pct_con = 100.0 * con / (con + inc) if con + inc else None
    pct_full = 100.0 * con / (con + inc + und) if con + inc + und else None
    return pct_con, pct_full


def rank_systems(scores: Sequence[SystemScore]) -> dict[str, int]:
    """Table 6's ranking: by %Con, then %Full, both descending; ties share a rank; undefined %Con last."""
    def key(s: SystemScore) -> tuple[float, float]:
        cats = s.categories or {}
        con, full = cats.get("%Con"), cats.get("%Full")
        return (-(con if con is not None else -1.0), -(full if full is not None else -1.0))

    ordered = sorted(scores, key=key)
    ranks: dict[str, int] = {}
    for i, s in enumerate(ordered):
        ranks[s.system] = ranks[ordered[i - 1].system] if i and key(ordered[i - 1]) == key(s) else i + 1
    return ranks


@dataclass(frozen=True)
class Sample:
    """One block of one document with one word in focus (``count``: its occurrences in the reference)."""

    document: str
    block: int
    keys: tuple[str, ...]  # the segment keys of the block
    lemma: str
    count: int


@dataclass
class LexicalConsistencyEvaluator:
    """The registered ``lexical-consistency`` evaluator (DiP §3.3 / A.3)."""

    name: str = "lexical-consistency"
    description: str = (
        "DiP lexical consistency, %Con (0-100): in blocks of 3-5 sentences, nouns and adjectives whose lemma occurs "
        "at least twice in the reference; a system is consistent on such a word when it uses the lemma at least as "
        "often as the reference, inconsistent when it uses it fewer times (but at least once), undetermined when "
        "never; %Con = consistent / (consistent + inconsistent), %Full = consistent / all; ranked by %Con then "
        "%Full. Jwalapuram et al. 2021 (DiP), §3.3, Table 6, appendix A.3")
    higher_is_better: bool = True
    level: str = "document"
    needs_source: bool = False
    needs_documents: bool = True
    smallest_block: int = 3
    largest_block: int = 5
    min_count: int = 2
    focus_pos: frozenset[str] = field(default_factory=lambda: FOCUS_POS)

    def signature(self, backend: Backend) -> str:
        pos = ",".join(sorted(self.focus_pos))
        return (f"lexcon|score:%Con|blocks:{self.smallest_block}-{self.largest_block}|min:{self.min_count}"
                f"|pos:{pos}|{backend.signature()}|version:{VERSION}")

    def samples(self, corpus: Corpus, references: dict[str, Sentence], *,
                unknown_as_focus: bool = True) -> list[Sample]:
        """Every (block, word in focus) of the corpus, from the analysed references (by segment key).

        ``unknown_as_focus``: a token tagged ``X`` counts as a noun or adjective (the lexicon backend's
        open-class words in languages it has no part-of-speech lexicon for).
        """
        out: list[Sample] = []
        for doc, segments in corpus.documents().items():
            for b, idx in enumerate(blocks(len(segments), self.smallest_block, self.largest_block)):
                block = [segments[i] for i in idx]
                words = focus_words([references[s.key] for s in block], focus_pos=self.focus_pos,
                                    unknown_as_focus=unknown_as_focus, min_count=self.min_count)
                keys = tuple(s.key for s in block)
                out.extend(Sample(doc, b, keys, lemma, n) for lemma, n in sorted(words.items()))
        return out

    def evaluate(self, corpus: Corpus, *, nlp: Backend | None = None,
                 progress: ProgressCallback | None = None) -> EvaluationResult:
        if nlp is None:
            nlp = get_backend("lexicon")
        language = corpus.target_language
        #: a corpus mixing translation directions gives each segment's target language
        by_segment: dict[str, str] = getattr(corpus, "segment_languages", None) or {}
        systems = corpus.systems
        total = len(systems) + 1
        analyse = _analyser(nlp)
        segments = corpus.segments
        langs = [by_segment.get(s.key) or language for s in segments]
        ref_sentences = analyse([s.reference for s in segments], langs)
        references = {s.key: sent for s, sent in zip(segments, ref_sentences)}
        samples = self.samples(corpus, references, unknown_as_focus=nlp.name == "lexicon")
        n_blocks = sum(len(blocks(len(segs), self.smallest_block, self.largest_block))
                       for segs in corpus.documents().values())
        if progress:
            progress(1, total)
        signature = self.signature(nlp)
        notes = []
        if not all(langs):
            as_what = "English" if nlp.name == "lexicon" else "the pipeline's language"
            notes.append(f"target language not given for {langs.count('')} segment(s): analysed by {nlp.name} "
                         f"as {as_what}")
        elif corpus.target_language_guessed:
            notes.append(f"target language {language!r} was guessed")
        short = sum(1 for segs in corpus.documents().values() if len(segs) < self.smallest_block)
        if short:
            notes.append(f"{short} document(s) shorter than {self.smallest_block} segments have no block")
        result = EvaluationResult(evaluator=self.name, higher_is_better=True, systems=[])
        for step, system in enumerate(systems, start=2):
            have = [i for i, s in enumerate(segments) if s.hypotheses.get(system) is not None]
            hyp_sentences = dict(zip((segments[i].key for i in have),
                                     analyse([segments[i].hypotheses[system] for i in have], [langs[i] for i in have])))
            lemma_counts: dict[tuple[str, int], Counter[str]] = {}
            totals: Counter[str] = Counter()
            per_doc: dict[str, Counter[str]] = {}
            missing = 0
            for sample in samples:
                if any(k not in hyp_sentences for k in sample.keys):
                    missing += 1
                    continue
                block_id = (sample.document, sample.block)
                counts = lemma_counts.get(block_id)
                if counts is None:
                    counts = lemma_counts[block_id] = Counter(
                        lemma_of(t) for k in sample.keys for t in hyp_sentences[k].tokens)
                verdict = judge(sample.count, counts[sample.lemma])
                totals[verdict] += 1
                per_doc.setdefault(sample.document, Counter())[verdict] += 1
            pct_con, pct_full = percentages(totals)
            documents = {doc: percentages(c)[0] for doc, c in per_doc.items()}
            system_notes = list(notes)
            if missing:
                system_notes.append(f"{missing} sample(s) left out: the system has no hypothesis for a segment "
                                    "of their block")
            if pct_con is None:
                system_notes.append("%Con undefined: no consistent or inconsistent sample")
            result.systems.append(SystemScore(
                system=system, score=pct_con, signature=signature,
                categories={"%Con": pct_con, "%Full": pct_full},
                counts={CONSISTENT: totals[CONSISTENT], INCONSISTENT: totals[INCONSISTENT],
                        UNDETERMINED: totals[UNDETERMINED], "samples": sum(totals.values()),
                        "blocks": n_blocks, "blocks_with_samples": len({(s.document, s.block) for s in samples}),
                        "left_out": missing},
                documents=documents, notes=system_notes))
            for doc, segs in corpus.documents().items():
                if doc in documents:
                    for seg in segs:
                        if seg.key in hyp_sentences:
                            result.segments.append(SegmentScore(key=seg.key, system=system,
                                                                score=documents[doc], document=doc))
            if progress:
                progress(step, total)
        ranks = rank_systems(result.systems)
        for s in result.systems:
            assert s.counts is not None
            s.counts["rank"] = ranks[s.system]
        return result


def _analyser(backend: Backend) -> Callable[[list[str], list[str]], list[Sentence]]:
    """Analyse (text, language) pairs once each, a batch per language; spaCy runs only what POS and lemmas need."""
    cache: dict[tuple[str, str], Sentence] = {}

    def analyse(texts: list[str], languages: list[str]) -> list[Sentence]:
        pairs = list(zip(texts, languages))
        todo: dict[str, list[str]] = {}
        for text, lang in dict.fromkeys(p for p in pairs if p not in cache):
            todo.setdefault(lang, []).append(text)
        for lang, batch in todo.items():
            if isinstance(backend, SpacyBackend):
                out = backend.analyse(batch, lang, need={"pos", "lemma"})
            else:
                out = backend.analyse(batch, lang)
            cache.update(((text, lang), sentence) for text, sentence in zip(batch, out))
        return [cache[p] for p in pairs]

    return analyse


LEXICAL_CONSISTENCY = LexicalConsistencyEvaluator()
register(LEXICAL_CONSISTENCY)
