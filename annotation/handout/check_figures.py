"""Where the attention checks fall in annotators' queues, before and after the check schedule.

Used by ``tests/annotation/test_check_schedule.py`` (assertions over 2,000
annotators per demo study) and by ``python manage.py check_placement`` (the
figures in docs/assignment.md). Pure functions of a study's counts and seed.
"""
from __future__ import annotations

from dataclasses import dataclass

from annotation.handout import ordering


@dataclass(frozen=True)
class Placement:
    n_annotators: int
    first_is_check: float      # share of annotators whose first item is a check
    run_of_4: float            # share with four or more checks in a row somewhere in their queue
    longest_run: int           # the longest run of checks over all annotators
    worst_deviation: float     # max over annotators and quotas k of |checks in first k − q·k|


def _runs(kinds: list[bool]) -> int:
    best = run = 0
    for k in kinds:
        run = run + 1 if k else 0
        best = max(best, run)
    return best


def _deviation(kinds: list[bool], share: float) -> float:
    worst, seen = 0.0, 0
    for k, is_check in enumerate(kinds, start=1):
        seen += is_check
        worst = max(worst, abs(seen - share * k))
    return worst


def summarise(queues: list[list[bool]], share: float) -> Placement:
    runs = [_runs(q) for q in queues]
    return Placement(
        n_annotators=len(queues),
        first_is_check=sum(1 for q in queues if q and q[0]) / len(queues),
        run_of_4=sum(1 for r in runs if r >= 4) / len(queues),
        longest_run=max(runs, default=0),
        worst_deviation=max((_deviation(q, share) for q in queues), default=0.0))


def scheduled_queues(*, seed: int, n_real: int, n_spam: int, n_annotators: int = 2000) -> list[list[bool]]:
    """Check positions of annotators 1..n under the check schedule (a queue as long as the study)."""
    total = n_real + n_spam
    return [ordering.check_schedule(seed=seed, sequence=s, n_checks=n_spam, n_items=total).kinds(total)
            for s in range(1, n_annotators + 1)]


def shuffled_queues(*, seed: int, doc_sizes: list[int], n_spam: int, n_annotators: int = 2000) -> list[list[bool]]:
    """The former order: spam copies as one-item documents in one walk over all documents."""
    n_docs = len(doc_sizes) + n_spam
    queues = []
    for s in range(1, n_annotators + 1):
        walk = ordering.walk_for(seed=seed, sequence=s, n_documents=n_docs)
        kinds: list[bool] = []
        for doc in walk.documents():
            kinds.extend([False] * doc_sizes[doc] if doc < len(doc_sizes) else [True])
        queues.append(kinds)
    return queues
