"""Spam (control) items, after BlonDe App. D and Kittur et al. (2008).

A spam item is a copy of a real item in which one real candidate is replaced by a
scrambled version of itself: at sentence level every word is shuffled except the
first and last 10%; at document level every sentence is shuffled except the
first and the last. Everything is seeded by the study's seed, so the same study
file and seed always give the same spam items and the same scrambles.

MQM and ESA studies get control items of another kind (``_control_copy``): one
candidate carries one generated error (studies/controls/error_injection.py) instead of a
scramble, and the copy's ``metadata["control_error"]`` records where it is
(offsets into that candidate's text, and the kind of change). Item metadata is
never sent to annotators (page, document view or API); the quality check
(annotation/quality/span_controls.py) reads it to see whether a major error span
overlaps the injected error.
"""
from __future__ import annotations

import math
import random
import re

from django.db import transaction
from django.db.models import Max

from studies.controls import context_probes, error_injection
from studies.definition.ordering import ORDER_KEY_MODULUS, document_indexes
from studies.models import Candidate, Item, Study, Unit
from studies.definition.sentences import joiner_of, sentence_spans

#: Key of a span study's control item metadata holding the injected error (never shown to annotators).
CONTROL_ERROR_KEY = "control_error"
#: Key of a context probe's item metadata: its error, its evidence, the original candidate (never shown to annotators).
PROBE_KEY = "context_probe"
#: A probe copy's external id is "<id>~ctx" (a spam copy's "<id>~spam"), its document "ctx:<id>".
PROBE_SUFFIX = "~ctx"

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


def _order(tokens: list[str], keep: int, rng: random.Random) -> list[int]:
    """Indices of ``tokens`` in scrambled order: the middle (all but ``keep`` at each end) shuffled.

    Whenever at least two distinct tokens can move, the order of the tokens always changes.
    """
    n = len(tokens)
    order = list(range(n))
    if keep * 2 >= n:
        return order
    middle = order[keep:n - keep]
    if len({tokens[i] for i in middle}) < 2:
        return order
    before = [tokens[i] for i in middle]
    shuffled = list(middle)
    for _ in range(20):
        rng.shuffle(shuffled)
        if [tokens[i] for i in shuffled] != before:
            break
    else:  # vanishingly unlikely; rotating a sequence of not-all-equal tokens always changes it
        shuffled = middle[1:] + middle[:1]
    return order[:keep] + shuffled + order[n - keep:]


def _shuffle_middle(tokens: list[str], keep: int, rng: random.Random) -> list[str]:
    """Shuffle tokens[keep:-keep]; when at least two distinct tokens can move, the order always changes."""
    return [tokens[i] for i in _order(tokens, keep, rng)]


def words_kept(n_words: int) -> int:
    """Words kept in place at each end: 10% rounded up, at least one.

    Rounding up means at least the first and last 10% never move (BlonDe App. D
    keeps "10% at the beginning and end"); one word at each end keeps the
    capitalised first word and the sentence-final punctuation where a reader
    expects them, so the candidate is not spotted by its edges alone.
    """
    return max(1, math.ceil(n_words * 0.1))


def split_sentences(text: str) -> list[str]:
    """Sentences of a document block: one a line when the text has line breaks, else split after . ! ? …"""
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) > 1:
        return lines
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def _units(text: str, unit: str) -> tuple[list[tuple[int, int]], int, str]:
    """Character spans of the units to move (words or sentences), how many stay at each end, and the joiner."""
    if unit == Unit.DOCUMENT:
        spans, pos = [], 0
        for sentence in split_sentences(text):
            start = text.index(sentence, pos)
            spans.append((start, start + len(sentence)))
            pos = start + len(sentence)
        return spans, 1, "\n" if "\n" in text.strip() else " "
    spans = [m.span() for m in re.finditer(r"\S+", text)]
    return spans, words_kept(len(spans)), " "


def scramble_with_highlights(text: str, highlights: list[list[int]], unit: str,
                             rng: random.Random) -> tuple[str, list[list[int]]]:
    """Scramble ``text`` (words, or sentences for document units) and move its highlight spans with their words.

    A spam candidate keeps its highlights on the same words, so it looks like
    every other candidate: nothing but its nonsense sets it apart.
    """
    spans, keep, joiner = _units(text, unit)
    scrambled, moved, _ = _scramble(text, highlights, spans, keep, joiner, rng)
    return scrambled, moved


def scramble_sentence_list(text: str, highlights: list[list[int]], sentences: list[str],
                           rng: random.Random) -> tuple[str, list[list[int]], list[str]]:
    """A document block given as a sentence list, scrambled like any block (first and last sentence kept).

    The spam candidate's sentence list is the same sentences in the new order,
    and its text is them joined the way a sentence list's text is, so it stays aligned with the source.
    """
    spans = sentence_spans(text, sentences)
    if spans is None:  # not the sentences joined (never after a study-file import): scramble the text alone
        scrambled, moved = scramble_with_highlights(text, highlights, Unit.DOCUMENT, rng)
        return scrambled, moved, sentences
    joiner = joiner_of(text, sentences) or "\n"
    scrambled, moved, order = _scramble(text, highlights, spans, 1, joiner, rng)
    return scrambled, moved, [sentences[i] for i in order]


def _scramble(text: str, highlights: list[list[int]], spans: list[tuple[int, int]], keep: int, joiner: str,
              rng: random.Random) -> tuple[str, list[list[int]], list[int]]:
    tokens = [text[a:b] for a, b in spans]
    order = _order(tokens, keep, rng)
    new_start: dict[int, int] = {}
    pieces, pos = [], 0
    for k, i in enumerate(order):
        if k:
            pieces.append(joiner)
            pos += len(joiner)
        new_start[i] = pos
        pieces.append(tokens[i])
        pos += len(tokens[i])
    moved: list[list[int]] = []
    for h_start, h_end in highlights or []:
        for i, (a, b) in enumerate(spans):
            lo, hi = max(h_start, a), min(h_end, b)
            if lo < hi:
                moved.append([new_start[i] + lo - a, new_start[i] + hi - a])
    moved.sort()
    merged: list[list[int]] = []
    for span in moved:
        if merged and span[0] <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], span[1])
        else:
            merged.append(span)
    return "".join(pieces), merged, order


def scramble_words(text: str, rng: random.Random) -> str:
    """Shuffle all words except the first and last 10% (at least one word at each end).

    Words are whitespace-separated tokens, so punctuation stays attached to its
    word and the sentence-final word (with its full stop) stays last.
    """
    return scramble_with_highlights(text, [], Unit.SENTENCE, rng)[0]


def scramble_sentences(text: str, rng: random.Random) -> str:
    """Shuffle all sentences except the first and the last."""
    return scramble_with_highlights(text, [], Unit.DOCUMENT, rng)[0]


def scramble(text: str, unit: str, rng: random.Random) -> str:
    return scramble_with_highlights(text, [], unit, rng)[0]


class SpamError(Exception):
    """Spam items cannot be (re)generated now; the message says why."""


def spam_count(n_real: int, spam_rate: float) -> int:
    """Number of spam items for a study: round(rate × real items), at least one when the rate is positive."""
    if spam_rate <= 0 or n_real == 0:
        return 0
    return max(1, int(n_real * spam_rate + 0.5))


def spam_victim(candidates: list[Candidate], rng: random.Random) -> Candidate:
    """The candidate to scramble: a system output where there is one, so the reference control stays intact.

    A judgment item has a single candidate, which is then the one scrambled.
    """
    pool = [c for c in candidates if not c.is_reference] or candidates
    return rng.choice(pool)


def _spam_copy(study: Study, item: Item, rng: random.Random) -> Item | None:
    """A spam copy of ``item`` with one candidate scrambled; None when its text is too short to scramble."""
    candidates = list(item.candidates.all())
    victim = spam_victim(candidates, rng)
    sentences = {c.pk: c.sentences for c in candidates}
    if study.unit == Unit.DOCUMENT and victim.sentences:
        scrambled, moved, sentences[victim.pk] = scramble_sentence_list(victim.text, victim.highlights,
                                                                        victim.sentences, rng)
    else:
        scrambled, moved = scramble_with_highlights(victim.text, victim.highlights, study.unit, rng)
    if scrambled == victim.text:
        return None
    return _save_copy(study, item, candidates, victim, scrambled, moved, sentences, {}, rng)


def _edited_sentences(text: str, sentences: list[str], edit: error_injection.Edit) -> list[str] | None:
    """The sentence list after an edit inside one sentence (None: the list is not the text's sentences)."""
    spans = sentence_spans(text, sentences)
    if spans is None:
        return None
    for k, (a, b) in enumerate(spans):
        if a <= edit.a and edit.b <= b:
            changed = list(sentences)
            changed[k] = sentences[k][:edit.a - a] + edit.replacement + sentences[k][edit.b - a:]
            return changed
    return None


def _control_copy(study: Study, item: Item, rng: random.Random, vocabularies: dict[str, list[str]]) -> Item | None:
    """A span study's control copy of ``item``: one candidate with one generated error; None when none fits."""
    candidates = list(item.candidates.all())
    victim = spam_victim(candidates, rng)
    language = item.target_language or study.target_language
    vocabulary = vocabularies.get(error_injection.language_of(language), [])
    error = error_injection.inject_error(victim.text, language, vocabulary, rng)
    if error is None:
        return None
    sentences = {c.pk: c.sentences for c in candidates}
    if victim.sentences:
        edited = _edited_sentences(victim.text, victim.sentences, error.edit)
        if edited is None:
            return None  # the error would fall between sentences or the list is not the text's: skip the item
        sentences[victim.pk] = edited
    moved = error_injection.shift_spans(victim.highlights, error.edit)
    return _save_copy(study, item, candidates, victim, error.text, moved, sentences,
                      {CONTROL_ERROR_KEY: error.as_metadata()}, rng)


def _save_copy(study: Study, item: Item, candidates: list[Candidate], victim: Candidate, text: str,
               highlights: list[list[int]], sentences: dict[int, list[str]], metadata: dict,
               rng: random.Random, *, probe: bool = False) -> Item:
    """Store the copy of ``item`` whose ``victim`` candidate now reads ``text`` (flagged ``is_spam``).

    A context probe's victim is the candidate whose place the changed text takes; it is never the reference.
    """
    scrambled, moved = text, highlights
    suffix, prefix = (PROBE_SUFFIX, "ctx") if probe else ("~spam", "spam")
    copy = Item.objects.create(
        study=study, external_id=f"{item.external_id}{suffix}", document_id=f"{prefix}:{item.external_id}",
        position=0, phenomenon=item.phenomenon, source_context=item.source_context, source=item.source,
        source_sentences=item.source_sentences, target_context=item.target_context, metadata=metadata,
        context_languages=item.context_languages,
        is_spam=True, spam_of=item,
        source_language=item.source_language, target_language=item.target_language,  # same lang marks as its item
        order_key=rng.randrange(ORDER_KEY_MODULUS))
    Candidate.objects.bulk_create([
        Candidate(item=copy, system=c.system, is_reference=c.is_reference and not (probe and c.pk == victim.pk), position=c.position,
                  text=scrambled if c.pk == victim.pk else c.text, sentences=sentences[c.pk],
                  is_spam=c.pk == victim.pk, highlights=moved if c.pk == victim.pk else c.highlights)
        for c in candidates
    ])
    return copy


@transaction.atomic
def spam_items_create(*, study: Study) -> list[Item]:
    """Create the study's spam items, replacing earlier ones.

    Refused (SpamError) once any item of the study has been handed out:
    deleting spam items would delete the assignments and judgments made on
    them, and new ones would change the queues annotators are working through.
    """
    if study.items.filter(assignments__isnull=False).exists():
        raise SpamError(f"Study {study.slug!r} already has assignments; spam items can only be "
                        "regenerated before the first item is handed out.")
    study.items.filter(is_spam=True).delete()
    real_ids = list(study.items.filter(is_spam=False).order_by("pk").values_list("pk", flat=True))
    rng = random.Random(f"{study.seed}:spam")
    wanted = spam_count(len(real_ids), study.spam_rate)
    vocabularies = _study_vocabularies(study) if wanted and study.spec.generated_error_controls else {}
    created: list[Item] = []
    order = rng.sample(real_ids, len(real_ids))
    # Load only the items the draw reaches, a batch at a time (a few are skipped as too short to scramble).
    batch = max(1, 2 * wanted)
    for start in range(0, len(order), batch):
        if len(created) == wanted:
            break
        chunk = order[start:start + batch]
        loaded = Item.objects.filter(pk__in=chunk).prefetch_related("candidates").in_bulk()
        for pk in chunk:
            if len(created) == wanted:
                break
            copy = (_control_copy(study, loaded[pk], rng, vocabularies) if study.spec.generated_error_controls
                    else _spam_copy(study, loaded[pk], rng))
            if copy is not None:
                created.append(copy)
    created += _probe_items_create(study, real_ids)
    _number_spam_documents(study, created)
    return created


def _probe_copy(study: Study, item: Item, rng: random.Random) -> Item | None:
    """A context probe of ``item`` (studies/controls/context_probes.py); None when no probe fits.

    The probe changes the reference where one fits (it is right in context, so the change makes it wrong),
    else another candidate. With several candidates the changed text takes the place of one of the
    *other* candidates, so the original stays beside it on the screen and the answer can say which of the
    two is right; a single candidate (judgment) is changed in place. ``metadata["context_probe"]`` keeps
    the error, its evidence and the original's system.
    """
    candidates = list(item.candidates.all())
    language = item.target_language or study.target_language
    for base in sorted(candidates, key=lambda c: (not c.is_reference, c.position, c.pk)):
        options = context_probes.probe_options(text=base.text, sentences=base.sentences,
                                               context=list(item.target_context), language=language,
                                               context_on_screen=context_probes.context_shown(
                                                   target_context=item.target_context,
                                                   source_context=item.source_context,
                                                   show_source=study.show_source))
        probe = context_probes.draw_probe(options, rng)
        if probe is None:
            continue
        sentences = {c.pk: c.sentences for c in candidates}
        edited = base.sentences
        if base.sentences:
            edited = _edited_sentences(base.text, base.sentences, probe.edit)
            if edited is None:
                continue
        others = [c for c in candidates if c.pk != base.pk]
        victim = rng.choice(others) if others else base
        sentences[victim.pk] = edited
        moved = error_injection.shift_spans(base.highlights, probe.edit)
        record = {**probe.as_metadata(), "original_system": base.system if others else None}
        return _save_copy(study, item, candidates, victim, probe.text, moved, sentences, {PROBE_KEY: record}, rng,
                          probe=True)
    return None


def _probe_items_create(study: Study, real_ids: list[int]) -> list[Item]:
    """The study's context probes: ``round(probe_rate × real items)``, as many as fit, one per document first.

    Seeded apart from the spam copies (``"{seed}:probes"``), so turning probes on leaves the spam copies as
    they were.
    """
    wanted = spam_count(len(real_ids), study.probe_rate)
    if not wanted:
        return []
    rng = random.Random(f"{study.seed}:probes")
    order = rng.sample(real_ids, len(real_ids))
    created: list[Item] = []
    probed_documents: set[str] = set()
    tried: set[int] = set()
    batch = max(1, 4 * wanted)
    for first_pass in (True, False):
        for start in range(0, len(order), batch):
            if len(created) == wanted:
                return created
            chunk = [pk for pk in order[start:start + batch] if pk not in tried]
            loaded = Item.objects.filter(pk__in=chunk).prefetch_related("candidates").in_bulk()
            for pk in chunk:
                if len(created) == wanted:
                    return created
                item = loaded[pk]
                document = item.document_id or f"item:{item.pk}"
                if first_pass and document in probed_documents:
                    continue
                tried.add(pk)
                copy = _probe_copy(study, item, rng)
                if copy is not None:
                    created.append(copy)
                    probed_documents.add(document)
    return created


def _study_vocabularies(study: Study) -> dict[str, list[str]]:
    """The content words of the study's real candidates by target language: what a replaced word is drawn from.

    By language so that a study mixing directions replaces a French word by a French one.
    """
    texts: dict[str, list[str]] = {}
    rows = (Candidate.objects.filter(item__study=study, item__is_spam=False).order_by("pk")
            .values_list("item__target_language", "text").iterator(chunk_size=2000))
    for item_language, text in rows:
        texts.setdefault(error_injection.language_of(item_language or study.target_language), []).append(text)
    return {language: error_injection.content_vocabulary(group, language) for language, group in texts.items()}


def _number_spam_documents(study: Study, created: list[Item]) -> None:
    """Spam documents follow the real ones (doc_index n_real…); the study's counts include them."""
    last = study.items.filter(is_spam=False).aggregate(n=Max("doc_index"))["n"]
    n_real_docs = 0 if last is None else last + 1
    index = document_indexes(seed=study.seed, documents=[c.document_id for c in created], salt="spam-documents",
                             start=n_real_docs)
    for copy in created:
        copy.doc_index = index[copy.document_id]
    Item.objects.bulk_update(created, ["doc_index"], batch_size=2000)
    study.n_documents = n_real_docs + len(index)
    study.n_open_items = study.items.count()
    study.n_spam_items = len(created)
    study.n_real_items = study.n_open_items - len(created)
    Study.objects.filter(pk=study.pk).update(n_documents=study.n_documents, n_open_items=study.n_open_items,
                                             n_spam_items=study.n_spam_items, n_real_items=study.n_real_items)
