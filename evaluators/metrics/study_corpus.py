"""A study's candidates as a :class:`~evaluators.metrics.corpus.Corpus`, so registry evaluators score studies.

What goes in (docs/evaluators.md, "Built-in evaluators"):

* every **real** item (``Item.is_spam`` False) that has a reference candidate,
  in document order (``document_id``, then ``position``); an item without a
  reference is skipped and counted in a note;
* segment ``key`` = the item's external id (the id of the study file), so
  segment scores map back to items; ``document`` = its ``document_id``
  (``""``: the item is its own document); ``source`` = the item's source;
* ``reference`` = the reference candidate's text; ``hypotheses`` = every other
  non-spam candidate's text by system, systems in the order of the study file
  (candidate ``position``), so the *first system* (the paired tests' baseline,
  as in sacrebleu) is the first non-reference system of the study file;
* references are chosen, never guessed (:func:`build_study_corpus`): items with
  several reference candidates give every segment all of them
  (``Segment.references``) unless one is named, and then the others are scored
  like systems, after the machine ones.

The target language is the study's ``target_language``; else the items' own
(``Item.target_language`` where the model has it, else ``metadata.target_lang``,
``tgt_lang`` or ``target_language``, language names such as DiaBLa's
``"french"`` read as codes), the most frequent one for the corpus; else a
guess from the reference texts (:mod:`evaluators.metrics.langguess`), flagged
``target_language_guessed`` and said in a note.  When nothing decides, the
language stays unknown (``""``) and a note says so: there is no silent English
fallback.  A study whose items give different target languages (DiaBLa mixes
both directions) also gets ``Corpus.segment_languages``, for the evaluators
that can score each segment in its own language.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from studies.models import Candidate, Item, Study

from evaluators.metrics.corpus import Corpus, Segment
from evaluators.metrics.langguess import guess_language

_META_KEYS = ("target_lang", "tgt_lang", "target_language")


def guess_target_language(texts: Iterable[str]) -> str:
    """The language :func:`evaluators.metrics.langguess.guess_language` sees in ``texts``, ``""`` if undecidable."""
    return guess_language(texts).language or ""


@dataclass
class StudyCorpus:
    """A study's corpus, the item of each segment key, and what the conversion left out or guessed."""

    corpus: Corpus
    items: dict[str, Item]
    notes: list[str] = field(default_factory=list)
    n_skipped_no_reference: int = 0


#: Language names some study files give in their metadata (DiaBLa: "english", "french"), as codes.
LANGUAGE_NAMES = {"english": "en", "french": "fr", "chinese": "zh", "german": "de", "spanish": "es",
                  "italian": "it", "portuguese": "pt", "dutch": "nl", "japanese": "ja", "korean": "ko",
                  "russian": "ru", "arabic": "ar", "français": "fr", "anglais": "en"}


def normalise_language(value: str) -> str:
    """A language code from a BCP 47 tag or an English language name (``"french"`` → ``fr``)."""
    value = value.strip()
    return LANGUAGE_NAMES.get(value.casefold(), value)


def _item_language(item: Item) -> str:
    own = str(getattr(item, "target_language", "") or "").strip()  # an item of a study mixing directions
    if own:
        return own
    meta = item.metadata if isinstance(item.metadata, dict) else {}
    for key in _META_KEYS:
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            return normalise_language(value)
    return ""


class ReferenceChoiceError(ValueError):
    """The reference asked for is not one of the study's reference candidates; the message lists them."""


def study_references(study: Study) -> list[str]:
    """The systems of the study's reference candidates (real items), in study-file order (candidate position)."""
    rows = (Candidate.objects.filter(item__study=study, item__is_spam=False, is_reference=True)
            .values_list("system", "position").order_by("position", "system"))
    return list(dict.fromkeys(system for system, _ in rows))


def references_text(names: list[str]) -> str:
    """``'ref', 'refB'`` for messages; ``none`` when there is none."""
    return ", ".join(repr(n) for n in names) or "none"


def build_study_corpus(study: Study, reference: str | None = None) -> StudyCorpus:
    """The study's real items with a reference as a :class:`Corpus` (see the module docstring).

    References (docs/evaluators.md, "References"): ``reference`` names the reference system to score against;
    the study's other reference candidates are then scored like systems (human translations, after the
    machine ones).  Without it a study with one reference system uses it, and a study with several gives
    every segment all of them (``Segment.references``, ``Corpus.reference_names``): only the evaluators that
    take several references may score that corpus (:func:`evaluators.metrics.scores.evaluator_run` refuses
    the others, listing the references).  A ``reference`` that is not a reference candidate of the study is
    a :class:`ReferenceChoiceError`.
    """
    available = study_references(study)
    if reference is not None and reference not in available:
        raise ReferenceChoiceError(f"reference {reference!r} is not a reference of study {study.slug!r}; "
                                   f"its references: {references_text(available)}")
    items = list(Item.objects.filter(study=study, is_spam=False)
                 .prefetch_related("candidates").order_by("document_id", "position", "pk"))
    listed = [sorted(item.candidates.all(), key=lambda c: (c.position, c.pk)) for item in items]
    # Several references to choose from: some item has two or more (one per item under different names is none).
    several = reference is None and any(sum(c.is_reference and not c.is_spam for c in cands) > 1 for cands in listed)
    names = [reference] if reference is not None else available
    segments: list[Segment] = []
    by_key: dict[str, Item] = {}
    skipped = 0
    system_order: dict[str, tuple[int, int, int]] = {}
    for item, candidates in zip(items, listed):
        texts = {c.system: c.text for c in candidates
                 if c.is_reference and not c.is_spam and (reference is None or c.system == reference)}
        if not texts:
            skipped += 1
            continue
        hypotheses: dict[str, str] = {}
        for cand in candidates:
            if cand.is_spam or cand.system in texts or (cand.is_reference and reference is None):
                continue
            hypotheses[cand.system] = cand.text
            # machine systems first, the other references (scored like systems) after them
            system_order.setdefault(cand.system, (int(cand.is_reference), cand.position, len(system_order)))
        segments.append(Segment(key=item.external_id, document=item.document_id, reference=next(iter(texts.values())),
                                hypotheses=hypotheses, source=item.source or None,
                                references=tuple(texts.get(n) for n in names) if several else ()))
        by_key[item.external_id] = item
    # Every segment lists its systems in study-file order, so Corpus.systems (first seen) is that order.
    rank = {s: i for i, s in enumerate(sorted(system_order, key=lambda s: system_order[s]))}
    segments = [Segment(key=s.key, document=s.document, reference=s.reference, source=s.source,
                        references=s.references,
                        hypotheses=dict(sorted(s.hypotheses.items(), key=lambda kv: rank[kv[0]])))
                for s in segments]
    notes: list[str] = []
    if skipped:
        which = f"a {reference!r} candidate" if reference is not None else "a reference candidate"
        notes.append(f"{skipped} item(s) without {which} were skipped (reference-based metrics)")
    others = [n for n in available if n not in names]
    if reference is not None and others:
        notes.append(f"reference {reference!r} (chosen); the study's other reference(s) {references_text(others)} "
                     "scored like systems")
    language, guessed = study.target_language.strip(), False
    per_item = {key: lang for key, item in by_key.items() if (lang := _item_language(item))}
    found = Counter(per_item.values())
    if not language and found:
        language = found.most_common(1)[0][0]
        if len(found) == 1:
            notes.append(f"target language {language!r} from the items (the study sets none)")
        missing = len(by_key) - len(per_item)
        if missing:
            notes.append(f"{missing} item(s) give no target language: scored as {language!r}, the most frequent")
    segment_languages: dict[str, str] = {}
    if any(lang != language for lang in found):  # the study mixes directions: each segment keeps its own
        segment_languages = per_item
        notes.append("the items give " + ", ".join(f"{n} × {lang!r}" for lang, n in found.most_common())
                     + " as target languages: each item is scored in its own where the evaluator allows it, "
                     f"else in {language!r}")
    if not language:
        guess = guess_language(s.reference for s in segments)
        if guess.language:
            language, guessed = guess.language, True
            notes.append(f"target language {language!r} was guessed from the reference texts ({guess.evidence}); "
                         "the study sets none: set its target language to be sure")
        else:
            notes.append(f"target language unknown: the study sets none and the reference texts do not tell "
                         f"({guess.evidence}); language-specific evaluators refuse to guess")
    corpus = Corpus(segments=segments, target_language=normalise_language(language),
                    source_language=study.source_language.strip(), target_language_guessed=guessed,
                    segment_languages=segment_languages, reference_names=names)
    return StudyCorpus(corpus=corpus, items=by_key, notes=notes, n_skipped_no_reference=skipped)


def study_corpus(study: Study, reference: str | None = None) -> Corpus:
    """The study's real items with a reference as a :class:`Corpus` (segment key = item id)."""
    return build_study_corpus(study, reference).corpus
