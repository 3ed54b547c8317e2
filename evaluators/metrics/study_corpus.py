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
  as in sacrebleu) is the first non-reference system of the study file.

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

from studies.models import Item, Study

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


def build_study_corpus(study: Study) -> StudyCorpus:
    """The study's real items with a reference as a :class:`Corpus` (see the module docstring)."""
    items = list(Item.objects.filter(study=study, is_spam=False)
                 .prefetch_related("candidates").order_by("document_id", "position", "pk"))
    segments: list[Segment] = []
    by_key: dict[str, Item] = {}
    skipped = 0
    system_order: dict[str, tuple[int, int]] = {}
    for item in items:
        candidates = sorted(item.candidates.all(), key=lambda c: (c.position, c.pk))
        reference = next((c for c in candidates if c.is_reference), None)
        if reference is None:
            skipped += 1
            continue
        hypotheses: dict[str, str] = {}
        for cand in candidates:
            if cand.is_reference or cand.is_spam:
                continue
            hypotheses[cand.system] = cand.text
            system_order.setdefault(cand.system, (cand.position, len(system_order)))
        segments.append(Segment(key=item.external_id, document=item.document_id, reference=reference.text,
                                hypotheses=hypotheses, source=item.source or None))
        by_key[item.external_id] = item
    # Every segment lists its systems in study-file order, so Corpus.systems (first seen) is that order.
    rank = {s: i for i, s in enumerate(sorted(system_order, key=lambda s: system_order[s]))}
    segments = [Segment(key=s.key, document=s.document, reference=s.reference, source=s.source,
                        hypotheses=dict(sorted(s.hypotheses.items(), key=lambda kv: rank[kv[0]])))
                for s in segments]
    notes: list[str] = []
    if skipped:
        notes.append(f"{skipped} item(s) without a reference candidate were skipped (reference-based metrics)")
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
                    segment_languages=segment_languages)
    return StudyCorpus(corpus=corpus, items=by_key, notes=notes, n_skipped_no_reference=skipped)


def study_corpus(study: Study) -> Corpus:
    """The study's real items with a reference as a :class:`Corpus` (segment key = item id)."""
    return build_study_corpus(study).corpus
