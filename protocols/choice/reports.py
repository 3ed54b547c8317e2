"""The choice protocol: how the protocol's answers become ratings for agreement and scores for rankings, and what the reports and methods text say (evaluators.reports, research)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocols.parts.reports import ReportsRules

if TYPE_CHECKING:
    import pandas as pd


class ChoiceReports(ReportsRules):
    report_unit = "items"
    answer_column = "choice"
    gives_preferences = True
    contests_reference = True

    def methods_design_words(self) -> str:
        return "chose the better of the candidate translations of each item"

    def agreement_ratings(self, frame: pd.DataFrame, *, ties: str, spam: str, excluded: str,
                          ranking_coding: str) -> tuple[pd.DataFrame, dict[str, Any]]:
        from evaluators.stats.ratings import choice_to_labels

        return choice_to_labels(frame, ties=ties, spam=spam, excluded=excluded)

    def human_pairs(self, frame: pd.DataFrame, *, excluded: str = "drop") -> tuple[pd.DataFrame | None, dict | None]:
        """The chosen candidate beats every other; ``'neither'`` counts as a tie."""
        from evaluators.stats.ratings import choice_to_pairs

        return choice_to_pairs(frame, ties="keep", spam="drop", excluded=excluded)

    def reference_outcomes(self, frame: pd.DataFrame) -> pd.DataFrame | None:
        """``reference`` / ``system``: that candidate chosen; ``tie``: choice ``tie`` or ``neither``;
        ``invalid``: anything else (``invalid``, no answer)."""
        import numpy as np
        import pandas as pd

        from evaluators.reports.study_stats import reference_judgments
        from evaluators.stats.ratings import NEITHER, TIE

        df, head = reference_judgments(frame)
        if head is None:
            return df
        g = df.groupby("judgment", sort=False)
        choice = g["choice"].first().map(lambda v: v.strip() if isinstance(v, str) else v)
        low = choice.map(lambda v: v.lower() if isinstance(v, str) else v)
        ref_systems = df[df["is_reference"]].groupby("judgment", sort=False)["system"].agg(set)
        systems = g["system"].agg(set)
        is_ref = pd.Series([c in ref_systems.get(j, set()) for j, c in zip(choice.index, choice)], index=choice.index)
        is_sys = pd.Series([c in s for c, s in zip(choice, systems)], index=choice.index) & ~is_ref
        neither = (low == NEITHER).fillna(False).astype(bool)
        head["outcome"] = np.select([is_ref, is_sys, (low == TIE) | neither], ["reference", "system", "tie"],
                                    default="invalid")
        head["neither"] = neither.to_numpy()
        return head.reset_index()

    def prefers_reference(self, frame: pd.DataFrame) -> pd.Series | None:
        if "choice" not in frame.columns:
            return None
        frame = frame[frame["choice"].notna() & (frame["choice"].astype(str) != "invalid")]
        chosen = frame["chosen"].fillna(False).astype(bool) if "chosen" in frame.columns \
            else frame["system"].astype(str) == frame["choice"].astype(str)
        return (chosen & frame["is_reference"].astype(bool)).groupby(frame["judgment"]).any()
