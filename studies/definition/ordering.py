"""The seeded keys and numbers that put a study's documents in a random order (one home for the modulus).

Importing gives every document a key and a dense number (``Item.doc_index``);
spam generation numbers the spam copies after the real documents; the
annotation app walks a per-annotator permutation of the numbers
(annotation/handout/ordering.py, docs/assignment.md). ``order_key`` is kept for
existing data and the admin's item preview.
"""
from __future__ import annotations

import random
from typing import Iterable

ORDER_KEY_MODULUS = 2_147_483_647  # a prime: keys live in [0, p) for the per-annotator affine shuffle


def document_order_key(seed: int, document: str) -> int:
    """Seeded random key shared by every item of a document (its place in the shuffle)."""
    return random.Random(f"{seed}:doc:{document}").randrange(ORDER_KEY_MODULUS)


def document_indexes(*, seed: int, documents: Iterable[str], salt: str = "documents", start: int = 0) -> dict[str, int]:
    """Number documents start, start+1, … in a seeded shuffle (the same seed gives the same numbers).

    Annotators walk their own permutation of these numbers (annotation.handout.ordering);
    the shuffle here only keeps the file's order (e.g. sorted by phenomenon) out of it.
    """
    ordered = sorted(set(documents))
    random.Random(f"{seed}:{salt}").shuffle(ordered)
    return {doc: start + k for k, doc in enumerate(ordered)}
