"""Each annotator's document order: a seeded permutation, walked with a cursor.

A study's documents are numbered 0..D-1 at import (``Item.doc_index``). An
annotator's order is the affine walk

    v_j = (b + a·j) mod P,   j = 0, 1, …, P-1,

over the smallest prime P ≥ D, skipping values ≥ D ("cycle walking"); a is
drawn uniformly from 1..P-1 and b uniformly from 0..D-1, both from
(study seed, annotator sequence). Because P is prime and a ≠ 0, the walk visits
every residue once, so the accepted values are a permutation of the documents.
The start b is itself a document, drawn uniformly, so the annotator's k-th
document is a uniformly random rotation of one fixed cyclic sequence: every
document is equally likely at every position (docs/assignment.md has the proof).

The hand-out (annotation.handout.services) looks at the open items of the next
``WINDOW`` documents of this walk in one index-backed query, and keeps its place
(the cursor, ``Assignment.order_step``) on the assignment it creates.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

#: Documents looked at per query, and queries per request before the fallback scan of all open items.
WINDOW = 16
MAX_WINDOWS = 3


@lru_cache(maxsize=1024)
def prime_at_least(n: int) -> int:
    """The smallest prime ≥ max(n, 2) (trial division: n is a document count, well under 10^9)."""
    candidate = max(n, 2)
    while True:
        if all(candidate % d for d in range(2, int(candidate ** 0.5) + 1)):
            return candidate
        candidate += 1


@dataclass(frozen=True)
class Walk:
    """One annotator's permutation of documents 0..d-1."""

    a: int
    b: int
    p: int
    d: int

    def window(self, start: int, size: int = WINDOW) -> tuple[list[tuple[int, int]], int]:
        """Up to ``size`` (step, document) pairs from step ``start`` on, and the step after the last one looked at."""
        found: list[tuple[int, int]] = []
        step = start
        while step < self.p and len(found) < size:
            value = (self.b + self.a * step) % self.p
            if value < self.d:
                found.append((step, value))
            step += 1
        return found, step

    def documents(self) -> list[int]:
        """The whole order (for tests and docs; the hand-out only ever takes windows)."""
        return [doc for _, doc in self.window(0, max(self.d, 1))[0]]


def walk_for(*, seed: int, sequence: int, n_documents: int, salt: str = "walk") -> Walk:
    """The walk of annotator ``sequence`` in a study with this seed and document count (same inputs, same walk).

    ``salt`` separates independent walks of one annotator (the real documents' and the checks')."""
    p = prime_at_least(n_documents)
    rng = random.Random(f"{seed}:{salt}:{sequence}")
    return Walk(a=rng.randrange(1, p), b=rng.randrange(n_documents) if n_documents else 0, p=p, d=n_documents)


def fallback_offset(*, seed: int, sequence: int, request: int, n_documents: int) -> int:
    """Where the fallback scan of open items starts: seeded per annotator and request, so tails are spread out."""
    if n_documents <= 0:
        return 0
    return random.Random(f"{seed}:fallback:{sequence}:{request}").randrange(n_documents)


@dataclass(frozen=True)
class CheckSchedule:
    """Where the attention checks (spam copies) fall in one annotator's queue.

    A study with ``n_checks`` spam copies and ``n_items`` items in all (real and
    spam) gives each annotator the check share q = n_checks / n_items. Queue
    positions 1, 2, … are cut into consecutive blocks, block j holding positions
    ⌊j/q⌋+1 … ⌊(j+1)/q⌋ (1/q ≥ 2 positions, since the spam rate is at most 0.5);
    each block has exactly one check, at a seeded uniform place in the block,
    never at position 1. Hence: the first item is never a check; two checks are
    never more than two in a row (the last place of one block, the first of the
    next); and the first k positions hold ⌊kq⌋ or ⌊kq⌋+1 checks, within ±1 of
    q × k for every quota k. Integer arithmetic only (q is the fraction
    n_checks / n_items), so the schedule is the same on every machine.
    """

    seed: int
    sequence: int
    n_checks: int
    n_items: int

    def block_of(self, position: int) -> int:
        """The block holding queue position ``position`` (1-based): ⌈position·q⌉ − 1."""
        return (position * self.n_checks + self.n_items - 1) // self.n_items - 1

    def block_bounds(self, block: int) -> tuple[int, int]:
        """First and last queue positions of ``block``."""
        return block * self.n_items // self.n_checks + 1, (block + 1) * self.n_items // self.n_checks

    def check_position(self, block: int) -> int:
        first, last = self.block_bounds(block)
        if block == 0:
            first = min(2, last)  # never the annotator's very first item
        return random.Random(f"{self.seed}:checks:{self.sequence}:{block}").randint(first, last)

    def is_check(self, position: int) -> bool:
        """Whether queue position ``position`` is a check slot."""
        if self.n_checks <= 0 or self.n_items <= 0 or position < 1:
            return False
        return self.check_position(self.block_of(position)) == position

    def checks_up_to(self, position: int) -> int:
        """Check slots among positions 1..``position``."""
        if self.n_checks <= 0 or self.n_items <= 0 or position < 1:
            return 0
        block = self.block_of(position)
        return block + (1 if self.check_position(block) <= position else 0)

    def kinds(self, n: int) -> list[bool]:
        """The first ``n`` positions, True where a check falls (for tests, docs and benchmarks)."""
        return [self.is_check(k) for k in range(1, n + 1)]


def check_schedule(*, seed: int, sequence: int, n_checks: int, n_items: int) -> CheckSchedule:
    """The check schedule of annotator ``sequence`` (see :class:`CheckSchedule`)."""
    return CheckSchedule(seed=seed, sequence=sequence, n_checks=max(0, n_checks), n_items=max(0, n_items))
