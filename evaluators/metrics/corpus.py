"""The plain-data side of automatic evaluation: a corpus of segments, and what an evaluator returns.

Every automatic evaluator works on a :class:`Corpus` — documents of aligned
segments (source, reference, one hypothesis per system) — and knows nothing of
studies or the database.  A study's candidates and plain files (the ``score``
command) are both turned into a ``Corpus`` first, so the same code scores both.

An evaluator is a :class:`CorpusEvaluator` registered under its name with
:func:`register`; it returns an :class:`EvaluationResult`: one
:class:`SystemScore` per system (the corpus-level figure its paper reports,
with a signature saying exactly what was computed) and, where the metric has
them, per-segment or per-document :class:`SegmentScore` rows for item-level
comparison with human judgments.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from evaluators.metrics.language.base import Backend


@dataclass(frozen=True)
class Segment:
    """One source segment with its reference and each system's hypothesis.

    ``key`` identifies the segment (a study item's external id, or ``"<line>"``
    for files); ``document`` groups segments (``""``: the segment is its own
    document); segments of one document keep their corpus order.
    """

    key: str
    document: str
    reference: str
    hypotheses: dict[str, str]
    source: str | None = None
    #: Every reference of the segment, aligned with ``Corpus.reference_names``, when the corpus has several
    #: (None: this segment lacks that one); empty: ``reference`` is the only one.  Only the evaluators that
    #: take several references (``multi_reference``) read it; ``reference`` is then the first one present.
    references: tuple[str | None, ...] = ()


@dataclass
class Corpus:
    """Aligned segments in document order, and the languages they are in (BCP 47, ``""`` unknown)."""

    segments: list[Segment]
    target_language: str = ""
    source_language: str = ""
    #: True when ``target_language`` was guessed from the text rather than given (reported as a guess).
    target_language_guessed: bool = False
    #: Human annotations of references, by segment key: kind -> phrases of that reference (BlonDe+'s
    #: "ambiguity" / "ellipsis" spans, Jiang et al. 2022 §4.3); empty when there are none.
    annotations: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    #: Target language of each segment, by key, when the corpus mixes directions (a DiaBLa study: each
    #: item's metadata says into which language it was translated); empty: ``target_language`` for all.
    segment_languages: dict[str, str] = field(default_factory=dict)
    #: The systems whose texts are the references (a study's reference candidates), in order; empty: unnamed
    #: (plain files).  Two or more: every segment carries ``references`` and only the evaluators that take
    #: several references (:func:`takes_several_references`) may score the corpus.
    reference_names: list[str] = field(default_factory=list)

    @property
    def several_references(self) -> bool:
        """Whether segments carry several references (``Segment.references``): a corpus only some evaluators score."""
        return any(len(seg.references) > 1 for seg in self.segments)

    @property
    def systems(self) -> list[str]:
        """Every system with at least one hypothesis, in first-seen order."""
        seen: dict[str, None] = {}
        for seg in self.segments:
            for name in seg.hypotheses:
                seen.setdefault(name, None)
        return list(seen)

    def documents(self) -> dict[str, list[Segment]]:
        """Segments grouped by document id, in corpus order (a segment without one is its own document)."""
        docs: dict[str, list[Segment]] = {}
        for seg in self.segments:
            docs.setdefault(seg.document or f"segment:{seg.key}", []).append(seg)
        return docs


@dataclass
class SystemScore:
    """A system's corpus-level score on its paper's scale, and what produced it."""

    system: str
    score: float | None
    signature: str
    #: Per-category breakdown (e.g. BlonDe's entity/tense/pronoun/... P/R/F), JSON-serialisable.
    categories: dict[str, Any] | None = None
    #: Counts behind the score (e.g. lexical consistency: consistent / inconsistent / undetermined).
    counts: dict[str, Any] | None = None
    #: Document-level scores by document id, where the metric has them.
    documents: dict[str, float | None] | None = None
    #: Human-readable notes (undefined values left out of a mean, guessed language, ...).
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SegmentScore:
    """A score for one system's hypothesis of one segment (``document`` set: a document-level score)."""

    key: str
    system: str
    score: float | None
    document: str = ""


@dataclass
class EvaluationResult:
    evaluator: str
    higher_is_better: bool
    systems: list[SystemScore]
    segments: list[SegmentScore] = field(default_factory=list)


#: Called with (done, total) as an evaluator makes progress; total may be 0 when unknown.
ProgressCallback = Callable[[int, int], None]


class CorpusEvaluator(Protocol):
    """What the registry holds: a named, oriented metric over a :class:`Corpus`."""

    name: str
    higher_is_better: bool
    level: str  # "sentence", "document" or "corpus": the unit its segment scores are on
    description: str  # definition and source (paper, section, equation)
    needs_source: bool
    needs_documents: bool

    def evaluate(self, corpus: Corpus, *, nlp: Backend | None = None,
                 progress: ProgressCallback | None = None) -> EvaluationResult: ...


_REGISTRY: dict[str, CorpusEvaluator] = {}


def register(evaluator: CorpusEvaluator) -> CorpusEvaluator:
    """Add ``evaluator`` to the registry under its name (a second one of that name is a bug)."""
    if evaluator.name in _REGISTRY:
        raise ValueError(f"evaluator {evaluator.name!r} is registered twice")
    _REGISTRY[evaluator.name] = evaluator
    return evaluator


def registered() -> dict[str, CorpusEvaluator]:
    """Every registered evaluator by name (modules register on import; see evaluators.metrics)."""
    return dict(_REGISTRY)


def takes_several_references(evaluator: CorpusEvaluator) -> bool:
    """Whether ``evaluator`` scores against several references at once (sacrebleu's BLEU, chrF and TER)."""
    return bool(getattr(evaluator, "multi_reference", False))


def reference_streams(segments: list[Segment]) -> list[list[Any]]:
    """The references of ``segments`` as sacrebleu's reference streams (one list per reference, None = missing).

    Typed ``Any``: sacrebleu takes None for a missing reference although its annotation says ``str``.

    One stream of ``Segment.reference`` unless the segments carry several references (``Segment.references``).
    """
    width = max((len(seg.references) for seg in segments), default=0)
    if width < 2:
        return [[seg.reference for seg in segments]]
    return [[seg.references[k] if k < len(seg.references) else None for seg in segments] for k in range(width)]


def iter_pairs(corpus: Corpus, system: str) -> Iterator[tuple[Segment, str]]:
    """(segment, hypothesis) for every segment that ``system`` translated."""
    for seg in corpus.segments:
        hyp = seg.hypotheses.get(system)
        if hyp is not None:
            yield seg, hyp
