"""The pairwise protocol in the reports: its 0-100 scores are reported as ESA's (or DA's, without spans)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocols.spans.reports import ScoreReports, slider_words

if TYPE_CHECKING:
    import pandas as pd


class PairwiseReports(ScoreReports):
    """Each candidate's 0–100 score as given, higher is better; spans, when the study asks for them."""

    comparison_score_label = "0–100 score (pairwise), higher is better"
    report_template = "protocols/pairwise/_report.html"

    def score_methods(self, uses_spans: bool) -> dict[str, str]:
        from evaluators.reports.span_report import METHODS

        return {"score": "Pairwise: the two candidates of an item shown side by side, each given a 0–100 score "
                         "used as given; higher is better. " + METHODS["score"]}

    def methods_protocol_sentence(self, kind: str, facts: dict[str, Any], report: dict[str, Any]) -> str:
        from evaluators.reports.span_paper import CITATIONS, severity_words

        slider = slider_words(facts)
        spans = ""
        if (report.get("policies") or {}).get("uses_spans", True):
            spans = f", after marking error spans with {severity_words(facts)}"
        return (f"Annotators saw two candidate translations of each item side by side and scored each from 0 to "
                f"100{slider}{spans} (pairwise assessment as in Appraise; anchors of {CITATIONS['esa']}).")

    def protocol_blocks(self, frame: pd.DataFrame, *, spam: str, excluded: str, seed: int) -> dict[str, Any]:
        """``preference``: agreement on which candidate is better (units = items, categories = the preferred
        system or "tie"), and Bradley–Terry strengths of the systems from the preferences (a tie counts half
        to each side). Preferences on control items never count; excluded annotators per the policy."""
        import pandas as pd

        from evaluators.stats.agreement import agreement
        from protocols.pairwise.bradley_terry import bradley_terry

        rows = frame if excluded == "keep" else frame[~frame["excluded"].astype(bool)]
        rows = rows[~rows["is_spam_item"].astype(bool)]
        given = rows[rows["choice"].notna() & (rows["choice"].astype(str) != "")]
        if given.empty:
            return {"preference": None}
        per = given.groupby("judgment", sort=False).agg(item=("item", "first"), annotator=("annotator", "first"),
                                                        choice=("choice", "first"),
                                                        systems=("system", lambda s: sorted(set(s))))
        block: dict[str, Any] = {"n_judgments": int(len(per)), "n_ties": int((per["choice"] == "tie").sum()),
                                 "agreement": None, "agreement_note": ""}
        units = pd.DataFrame({"item": per["item"].astype(str), "rater": per["annotator"], "label": per["choice"]})
        try:
            block["agreement"] = agreement(units, item="item", rater="rater", label="label")
        except ValueError as exc:
            block["agreement_note"] = str(exc)
        pairs = []
        for systems, choice in zip(per["systems"], per["choice"]):
            if len(systems) == 2:  # (a reference and a system with the same text would be one row less)
                a, b = systems
                pairs.append((a, b, 1.0 if choice == a else 0.0 if choice == b else 0.5))
        block["bradley_terry"] = None
        if len({s for a, b, _ in pairs for s in (a, b)}) >= 2:
            strengths = bradley_terry(pairs)
            block["bradley_terry"] = {
                "systems": [{"system": name, "theta": theta, "ci_low": low, "ci_high": high,
                             "preferred": strengths.wins[name]} for name, theta, low, high in strengths.ranked()],
                "comparisons": strengths.comparisons, "prior": strengths.prior, "why_prior": strengths.why_prior}
        block["methods"] = ("Preferences: agreement on which candidate of an item is better (categories: the "
                            "preferred system or a tie; Gwet's AC1 and the others of the agreement block); systems "
                            "ranked by Bradley–Terry strengths (Bradley & Terry 1952), maximum likelihood with 95% "
                            "Wald intervals from the Fisher information, a tie counting half a preference to each "
                            "side.")
        return {"preference": block}
