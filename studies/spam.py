"""Spam (control) items, after BlonDe App. D and Kittur et al. (2008).

A spam item is a copy of a real item in which one real candidate is replaced by a
scrambled version of itself: at sentence level every word is shuffled except the
first and last 10%; at document level every sentence is shuffled except the
first and the last. Everything is seeded by the study's seed, so the same study
file and seed always give the same spam items and the same scrambles.
"""
from __future__ import annotations

import math
import random
import re

from django.db import transaction

from .importing import ORDER_KEY_MODULUS
from .models import Candidate, Item, Study, Unit

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


def _shuffle_middle(tokens: list[str], keep: int, rng: random.Random) -> list[str]:
    """Shuffle tokens[keep:-keep]; when at least two distinct tokens can move, the order always changes."""
    if keep * 2 >= len(tokens):
        return list(tokens)
    head, middle, tail = tokens[:keep], tokens[keep:len(tokens) - keep], tokens[len(tokens) - keep:]
    if len(set(middle)) < 2:
        return list(tokens)
    shuffled = list(middle)
    for _ in range(20):
        rng.shuffle(shuffled)
        if shuffled != middle:
            break
    else:  # vanishingly unlikely; a rotation always changes the order of distinct tokens
        shuffled = middle[1:] + middle[:1]
    return head + shuffled + tail


def words_kept(n_words: int) -> int:
    """Words kept in place at each end: 10% rounded up, at least one.

    Rounding up means at least the first and last 10% never move (BlonDe App. D
    keeps "10% at the beginning and end"); one word at each end keeps the
    capitalised first word and the sentence-final punctuation where a reader
    expects them, so the candidate is not spotted by its edges alone.
    """
    return max(1, math.ceil(n_words * 0.1))


def scramble_words(text: str, rng: random.Random) -> str:
    """Shuffle all words except the first and last 10% (at least one word at each end).

    Words are whitespace-separated tokens, so punctuation stays attached to its
    word and the sentence-final word (with its full stop) stays last.
    """
    words = text.split()
    return " ".join(_shuffle_middle(words, words_kept(len(words)), rng))


def split_sentences(text: str) -> list[str]:
    """Sentences of a document block: one a line when the text has line breaks, else split after . ! ? …"""
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) > 1:
        return lines
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def scramble_sentences(text: str, rng: random.Random) -> str:
    """Shuffle all sentences except the first and the last."""
    sentences = split_sentences(text)
    joiner = "\n" if "\n" in text.strip() else " "
    return joiner.join(_shuffle_middle(sentences, 1, rng))


def scramble(text: str, unit: str, rng: random.Random) -> str:
    return scramble_sentences(text, rng) if unit == Unit.DOCUMENT else scramble_words(text, rng)


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
    real = list(study.items.filter(is_spam=False).order_by("pk").prefetch_related("candidates"))
    rng = random.Random(f"{study.seed}:spam")
    wanted = spam_count(len(real), study.spam_rate)
    created: list[Item] = []
    for item in rng.sample(real, len(real)):
        if len(created) == wanted:
            break
        candidates = list(item.candidates.all())
        victim = spam_victim(candidates, rng)
        scrambled = scramble(victim.text, study.unit, rng)
        if scrambled == victim.text:
            continue  # too short to scramble; try another item
        copy = Item.objects.create(
            study=study, external_id=f"{item.external_id}~spam", document_id=f"spam:{item.external_id}",
            position=0, phenomenon=item.phenomenon, source_context=item.source_context, source=item.source,
            target_context=item.target_context, metadata={}, is_spam=True, spam_of=item,
            order_key=rng.randrange(ORDER_KEY_MODULUS))
        Candidate.objects.bulk_create([
            Candidate(item=copy, system=c.system, is_reference=c.is_reference, position=c.position,
                      text=scrambled if c.pk == victim.pk else c.text,
                      is_spam=c.pk == victim.pk, highlights=[] if c.pk == victim.pk else c.highlights)
            for c in candidates
        ])
        created.append(copy)
    return created
