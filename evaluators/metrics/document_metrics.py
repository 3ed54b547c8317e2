"""Document-level BLEU, chrF and TER: ``doc-bleu``, ``doc-chrf``, ``doc-ter`` (registry evaluators).

A document's segments (corpus order) are joined with a space, per system, on
the segments where the system has a hypothesis; the joined hypothesis is scored
against the joined reference with sacrebleu, configured for the target
language exactly as the corpus-level ``bleu``/``chrf``/``ter`` evaluators are
(:func:`evaluators.metrics.sacrebleu_metrics.make_metric`: the ``zh`` tokenizer
for Chinese, ...); BLEU is the sentence-level statistic with effective order,
as sacrebleu's ``--sentence-level``.  Each document's score is a segment score
with ``document`` set (stored on each of the document's items); the system
score is the **mean over documents** (every document counts once), which is
what the per-study built-ins reported — not a corpus statistic (use ``bleu``,
``chrf``, ``ter`` for those).  A segment without a document is its own
document.

``doc-ter``'s edits are computed by :mod:`evaluators.metrics.ter_exact`, which
returns sacrebleu's TER statistics exactly (same shift search, same tie-breaking)
but skips the work whose result sacrebleu discards: sacrebleu's own takes about a
minute per 2,000-word document.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evaluators.metrics.corpus import (
    Corpus,
    EvaluationResult,
    ProgressCallback,
    SegmentScore,
    SystemScore,
    register,
)
from evaluators.metrics import ter_exact
from evaluators.metrics.sacrebleu_metrics import (
    _sentence_score,
    make_metric,
    resolve_language,
    segment_statistics,
)

if TYPE_CHECKING:
    from evaluators.metrics.language.base import Backend

VERSION = "1.0"


@dataclass
class DocumentSacrebleuEvaluator:
    """``doc-<kind>``: sacrebleu's ``kind`` on each document's joined segments; system score = document mean."""

    name: str
    kind: str  # bleu, chrf, ter
    higher_is_better: bool
    description: str
    level: str = "document"
    needs_source: bool = False
    needs_documents: bool = True
    #: sacrebleu tokenises by itself: no language backend (whose cache the other evaluators of a run share).
    uses_backend: bool = False

    def evaluate(self, corpus: Corpus, *, nlp: Backend | None = None,
                 progress: ProgressCallback | None = None) -> EvaluationResult:
        language, notes = resolve_language(corpus)
        setup = make_metric(self.kind, language)
        notes = notes + setup.notes
        metric = setup.metric
        docs = corpus.documents()
        result = EvaluationResult(evaluator=self.name, higher_is_better=self.higher_is_better, systems=[])
        signature = ""
        systems = corpus.systems
        # The joined references are the same for every system that translated the same segments: their
        # n-grams (BLEU, chrF) or words (TER) are extracted once.
        ref_caches: dict[tuple[str, ...], list[Any]] = {}
        for step, system in enumerate(systems, start=1):
            doc_ids, hyps, refs, keys = [], [], [], []
            for doc, segs in docs.items():
                pairs = [(s, s.hypotheses[system]) for s in segs if s.hypotheses.get(system) is not None]
                if not pairs:
                    continue
                doc_ids.append(doc)
                hyps.append(" ".join(h for _, h in pairs))
                refs.append(" ".join(s.reference for s, _ in pairs))
                keys.append([s.key for s, _ in pairs])
            ref_cache = ref_caches.get(tuple(refs))
            if ref_cache is None:
                ref_cache = ref_caches[tuple(refs)] = metric._cache_references([refs])
            signature = (f"{self.name}|unit:document|join:space|system:mean-of-documents|"
                         f"{metric.get_signature()}|version:{VERSION}")
            if self.kind == "ter":
                # sacrebleu's TER, computed by ter_exact (same edits; sacrebleu's own takes minutes a document)
                stats = [ter_exact.segment_statistics(metric._preprocess_segment(hyp), ref)
                         for hyp, ref in zip(hyps, ref_cache, strict=True)]
            else:
                stats = segment_statistics(metric, hyps, ref_cache)
            scores = [_sentence_score(self.kind, metric, row) for row in stats]
            documents: dict[str, float | None] = {}
            for doc, doc_keys, value in zip(doc_ids, keys, scores):
                documents[doc] = value
                stored_doc = doc if not doc.startswith("segment:") else ""
                for key in doc_keys:
                    result.segments.append(SegmentScore(key=key, system=system, score=value, document=stored_doc))
            mean = sum(scores) / len(scores) if scores else None
            result.systems.append(SystemScore(system=system, score=mean, signature=signature,
                                              counts={"documents": len(scores)}, documents=documents,
                                              notes=list(notes)))
            if progress:
                progress(step, len(systems))
        return result


_SB = ("sacrebleu (Post 2018) on each document's segments joined with a space (tokenizer by target language, "
       "as bleu/chrf/ter); system score = mean over documents")
DOC_BLEU = register(DocumentSacrebleuEvaluator("doc-bleu", "bleu", True, f"Document BLEU (Papineni et al. 2002), {_SB}."))
DOC_CHRF = register(DocumentSacrebleuEvaluator("doc-chrf", "chrf", True, f"Document chrF (Popović 2015), {_SB}."))
DOC_TER = register(DocumentSacrebleuEvaluator(
    "doc-ter", "ter", False, f"Document TER (Snover et al. 2006), lower is better, {_SB}."))
