"""The ranking protocol: how the protocol's answers become ratings for agreement and scores for rankings, and what the reports and methods text say (evaluators.reports, research)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocols.parts.reports import ReportsRules

if TYPE_CHECKING:
    import pandas as pd


class RankingReports(ReportsRules):
    report_unit = "candidate pairs"
    answer_column = "rank"
    #: By the better-ranked system (Bojar et al. 2016), or by the winner's place in the sorted pair.
    ranking_codings = ("system", "position")
    gives_preferences = True
    contests_reference = True

    def agreement_ratings(self, frame: pd.DataFrame, *, ties: str, spam: str, excluded: str,
                          ranking_coding: str) -> tuple[pd.DataFrame, dict[str, Any]]:
        from evaluators.stats.ratings import ranking_to_pairs

        return ranking_to_pairs(frame, ties=ties, spam=spam, excluded=excluded, coding=ranking_coding)

    def human_pairs(self, frame: pd.DataFrame, *, excluded: str = "drop") -> tuple[pd.DataFrame | None, dict | None]:
        from evaluators.stats.ratings import ranking_to_pairs

        return ranking_to_pairs(frame, ties="keep", spam="drop", excluded=excluded)

    def pairs_from_ratings(self, ratings: pd.DataFrame, *, spam: str, ranking_coding: str) -> pd.DataFrame | None:
        # The same conversion as human_pairs: real items, ties kept, labelled by the winning system.
        return ratings if spam == "drop" and ranking_coding == "system" else None

    def reference_outcomes(self, frame: pd.DataFrame) -> pd.DataFrame | None:
        """``reference``: the reference alone at the best rank; ``system``: a system ranked strictly above it;
        ``tie``: they share the best rank; ``invalid``: a rank is missing."""
        import numpy as np

        from evaluators.reports.study_stats import reference_judgments

        df, head = reference_judgments(frame)
        if head is None:
            return df
        ref_rank = df[df["is_reference"]].groupby("judgment", sort=False)["rank"].min().reindex(head.index)
        best_sys = df[~df["is_reference"]].groupby("judgment", sort=False)["rank"].min().reindex(head.index)
        head["outcome"] = np.select(
            [ref_rank.isna() | best_sys.isna(), ref_rank < best_sys, ref_rank == best_sys],
            ["invalid", "reference", "tie"], default="system")
        head["neither"] = False
        return head.reset_index()

    def prefers_reference(self, frame: pd.DataFrame) -> pd.Series | None:
        import numpy as np
        import pandas as pd

        if "rank" not in frame.columns:
            return None
        rank = pd.to_numeric(frame["rank"], errors="coerce").astype(float)
        ref = rank.where(frame["is_reference"].astype(bool)).groupby(frame["judgment"]).min()
        var = rank.where(~frame["is_reference"].astype(bool)).groupby(frame["judgment"]).min()
        known = ref.notna() & var.notna()
        return pd.Series(np.where(ref[known] < var[known], True, False), index=ref[known].index)

    def methods_design_words(self) -> str:
        return "ranked the candidate translations of each item from best to worst"

    def methods_coding_words(self, coding: str | None) -> str:
        return (", each pair's outcome coded by the winning system"
                if coding != "position" else ", each pair's outcome coded as first, second or tie")

    def records_ties_allowed(self) -> bool:
        return True
