"""The ranking protocol's spec."""
from __future__ import annotations

from typing import Any

from studies.models import Candidate, Study

from protocols.answers import answer_body
from protocols.spec import ProtocolSpec
from protocols.ranking.pages import RankingPages
from protocols.ranking.quality import RankingQuality
from protocols.ranking.reports import RankingReports
from protocols.ranking.transfer import RankingTransfer


class Ranking(RankingPages, RankingTransfer, RankingReports, RankingQuality, ProtocolSpec):
    name = "ranking"
    label = "Ranking (rank all candidates)"
    answer_fields = ("ranks",)
    answer_schema = answer_body(
        {"ranks": {"type": "object", "description": "Every candidate's public id mapped to its rank, 1 = best.",
                   "additionalProperties": {"type": "integer", "minimum": 1}}},
        required=["ranks"])
    preference_observations = True

    def preference_values(self, answer: dict[str, Any], keys: list[str]) -> dict[str, float]:
        """Minus each candidate's rank (1 = best): a pair's preference is the sign of their rank difference, a tie
        none."""
        ranks = answer.get("ranks") or {}
        return {key: -float(ranks[key]) for key in keys
                if isinstance(ranks.get(key), int) and not isinstance(ranks.get(key), bool)}

    def validate_answer(self, study: Study, *, item_source: str, candidates: dict[str, Candidate],
                        payload: dict[str, Any], errors: dict[str, list[str]]) -> dict[str, Any] | None:
        value = payload["ranks"]
        if not isinstance(value, dict):
            errors["ranks"] = ["Must be an object mapping every candidate id to its rank."]
            return None
        n = len(candidates)
        unknown = [k for k in value if k not in candidates]
        missing = [k for k in candidates if k not in value]
        if unknown:
            errors.setdefault("ranks", []).append(f"Unknown candidate id(s) for this item: {', '.join(map(str, unknown))}.")
        if missing:
            # The ids let a client (and the item page, as letters) point at the unranked candidates.
            errors.setdefault("ranks", []).append(
                f"Every candidate needs a rank; {len(missing)} missing ({', '.join(missing)}).")
        ranks: dict[str, int] = {}
        for key, rank in value.items():
            if key not in candidates:
                continue
            if isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= n:
                errors.setdefault("ranks", []).append(f"Rank of candidate {key} must be a whole number from 1 to {n}.")
            else:
                ranks[key] = rank
        if not errors.get("ranks") and not study.allow_ties and len(set(ranks.values())) != len(ranks):
            shared = [k for k, r in ranks.items() if list(ranks.values()).count(r) > 1]
            errors["ranks"] = [f"Two candidates share a rank, but this study does not allow ties ({', '.join(shared)})."]
        if errors.get("ranks"):
            return None
        return {"ranks": {str(candidates[k].pk): r for k, r in sorted(ranks.items(), key=lambda kv: candidates[kv[0]].pk)}}
