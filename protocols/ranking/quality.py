"""The ranking protocol: quality control, the spam check in words."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocols.parts.quality import QualityRules

if TYPE_CHECKING:
    from studies.models import Candidate, Study


class RankingQuality(QualityRules):
    spam_rule_text = "passes only when the scrambled candidate is ranked strictly last"

    def spam_answer_words(self, study: Study, answer: dict[str, Any],
                          candidates: list[Candidate]) -> tuple[list[str], str]:
        name = {c.pk: ("scrambled copy" if c.is_spam else f"{c.system}") for c in candidates}
        ranks = sorted(((rank, int(pk)) for pk, rank in answer.get("ranks", {}).items()))
        return ([f"rank {rank}: {name.get(pk, pk)}" for rank, pk in ranks],
                "the scrambled copy ranked strictly last, below every real candidate")

    def spam_check_failed(self, study: Study, answer: dict[str, Any], spam_pk: int, control: Any = None) -> bool:
        """Passes only when the scrambled candidate is ranked strictly below every real one."""
        ranks = {int(pk): rank for pk, rank in answer.get("ranks", {}).items()}
        if spam_pk not in ranks:
            return False
        real = [rank for pk, rank in ranks.items() if pk != spam_pk]
        return any(ranks[spam_pk] <= rank for rank in real)

    def reference_won(self, study: Study, answer: dict[str, Any], reference_pk: int) -> bool | None:
        ranks = {int(pk): rank for pk, rank in answer.get("ranks", {}).items()}
        if reference_pk not in ranks:
            return None
        return all(ranks[reference_pk] < rank for pk, rank in ranks.items() if pk != reference_pk)

    probe_rule_text = ("caught when the changed candidate is ranked strictly below its unchanged original "
                       "(alone: strictly last)")

    def probe_caught(self, study: Study, answer: dict[str, Any], probe: Any) -> bool:
        ranks = {int(pk): rank for pk, rank in answer.get("ranks", {}).items()}
        if probe.probe_pk not in ranks:
            return False
        if probe.original_pk is not None and probe.original_pk in ranks:
            return ranks[probe.probe_pk] > ranks[probe.original_pk]
        return all(ranks[probe.probe_pk] > rank for pk, rank in ranks.items() if pk != probe.probe_pk)
