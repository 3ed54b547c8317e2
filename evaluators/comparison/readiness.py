"""Can a study's humans be compared with its evaluators yet? (reads only, two or three queries)

The comparison needs (a) at least two systems judged on the same items, since the human
system scores come from pairwise preferences between systems, and (b) some evaluator's
scores. DiaBLa-style studies have one MT output per item (next to the reference): every
system-level number is then undefined, and the page says so up front instead of
showing columns of dashes.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count

from studies.models import Candidate, Study

from evaluators.models import Evaluator


@dataclass(frozen=True)
class CompareReadiness:
    n_items: int
    #: real items with at least two non-reference systems (the ones a human preference compares)
    n_items_comparable: int
    max_systems_per_item: int
    n_evaluators_scored: int

    @property
    def too_few_systems(self) -> bool:
        return self.n_items > 0 and self.n_items_comparable == 0

    @property
    def no_scores(self) -> bool:
        return self.n_evaluators_scored == 0


def study_compare_readiness(*, study: Study) -> CompareReadiness:
    per_item = list(Candidate.objects.filter(item__study=study, item__is_spam=False, is_reference=False,
                                             is_spam=False)
                    .order_by().values("item_id").annotate(n=Count("pk")).values_list("n", flat=True))
    n_items = study.items.filter(is_spam=False).count() if not per_item else len(per_item)
    scored = Evaluator.objects.filter(study=study, scores__isnull=False).distinct().count()
    return CompareReadiness(n_items=n_items, n_items_comparable=sum(1 for n in per_item if n >= 2),
                            max_systems_per_item=max(per_item, default=0), n_evaluators_scored=scored)
