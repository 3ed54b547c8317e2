"""What AI-suggested error spans did to the judgments (ESA^AI / MQM^AI; docs/ai-assistance.md). Pure pandas.

Zouhar, Kocmi & Sachan (NAACL 2025), *AI-Assisted Human Evaluation of Machine Translation*,
report time per error span with and without suggestions, how many suggestions annotators keep,
and whether the scores move. The inputs are tables built from the export (one row per
suggestion shown, per judgment, per segment rating); nothing here reads a database.

- Acceptance: the share of suggestions shown that were **kept** as they were (an edited one was
  looked at and changed; a deleted one was rejected), per annotator and overall, apart for real
  suggestions and for decoys (spans placed on text the data marks clean: keeping one is accepting
  an error nobody found, an estimate of automation bias). Intervals are Wilson score intervals
  (Wilson 1927; Brown, Cai & DasGupta 2001), 95%.
- Time: server time per item (``duration_ms`` of each judgment), and per marked span (the sum of
  the durations over the sum of the spans the answers hold, kept and edited suggestions included),
  assisted vs unassisted.
- Scores: per segment (item × system) the mean score of assisted minus that of unassisted
  ratings, over the segments rated both ways: **Wilcoxon signed-rank test** (two-sided, zero
  differences dropped: Wilcoxon 1945, scipy's ``wilcoxon``); where no segment has both, the
  **Mann–Whitney U test** (two-sided) on all ratings of the two conditions.
- Agreement with the AI: character-level precision, recall and F1 of the annotators' target spans
  against the automatic system's (decoys excluded), micro-averaged over the ratings of each condition
  (the character measure of ``evaluators.stats.spans``).
"""
from __future__ import annotations

import math
from typing import Any

import pandas as pd

Z95 = 1.959963984540054


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float | None, float | None]:
    """The Wilson score interval of ``k`` successes in ``n`` trials (None, None when n = 0)."""
    if n <= 0:
        return None, None
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _rate(fates: pd.Series) -> dict[str, Any]:
    n = int(len(fates))
    kept = int((fates == "kept").sum())
    edited = int((fates == "edited").sum())
    low, high = wilson_interval(kept, n)
    return {"n": n, "kept": kept, "edited": edited, "deleted": n - kept - edited,
            "rate": kept / n if n else None, "ci_low": low, "ci_high": high}


def acceptance(shown: pd.DataFrame) -> dict[str, Any]:
    """Kept share of real suggestions and of decoys, overall and per annotator.

    ``shown``: one row per suggestion shown, columns ``annotator``, ``decoy`` (bool), ``fate``
    (kept / edited / deleted).
    """
    out: dict[str, Any] = {"ai": _rate(shown.loc[~shown["decoy"].astype(bool), "fate"]),
                           "decoy": _rate(shown.loc[shown["decoy"].astype(bool), "fate"]), "per_annotator": []}
    for annotator, rows in shown.groupby("annotator", sort=True):
        decoy = rows["decoy"].astype(bool)
        out["per_annotator"].append({"annotator": annotator, "ai": _rate(rows.loc[~decoy, "fate"]),
                                     "decoy": _rate(rows.loc[decoy, "fate"])})
    return out


def timing(judgments: pd.DataFrame) -> dict[str, Any]:
    """Seconds per item and per marked span, assisted vs unassisted.

    ``judgments``: one row per judgment, columns ``assisted`` (bool), ``duration_ms``, ``n_spans``.
    """
    out: dict[str, Any] = {}
    for name, flag in (("assisted", True), ("unassisted", False)):
        rows = judgments[judgments["assisted"].astype(bool) == flag]
        seconds = rows["duration_ms"].astype(float) / 1000.0
        spans = int(rows["n_spans"].sum())
        out[name] = {"n_items": int(len(rows)),
                     "mean_seconds_per_item": float(seconds.mean()) if len(rows) else None,
                     "median_seconds_per_item": float(seconds.median()) if len(rows) else None,
                     "n_spans": spans,
                     "seconds_per_span": float(seconds.sum()) / spans if spans else None}
    return out


def score_difference(ratings: pd.DataFrame) -> dict[str, Any]:
    """Assisted minus unassisted scores, paired by segment where possible, with the test named.

    ``ratings``: one row per rating, columns ``segment`` (hashable: item × system), ``assisted``
    (bool), ``score`` (float; higher is better).
    """
    ratings = ratings.dropna(subset=["score"])
    from scipy import stats as sps  # here, not at import: scipy.stats is heavy (it loads scipy.spatial)

    flag = ratings["assisted"].astype(bool)
    a, u = ratings[flag], ratings[~flag]
    base: dict[str, Any] = {"mean_assisted": float(a["score"].mean()) if len(a) else None,
                            "mean_unassisted": float(u["score"].mean()) if len(u) else None,
                            "n_assisted": int(len(a)), "n_unassisted": int(len(u))}
    means = ratings.groupby(["segment", flag.rename("cond")])["score"].mean().unstack("cond")
    paired = means.dropna() if {True, False} <= set(means.columns) else means.iloc[0:0]
    if len(paired) >= 1:
        diff = (paired[True] - paired[False]).astype(float)
        result: dict[str, Any] = {**base, "paired": True, "n_segments": int(len(diff)),
                                  "mean_difference": float(diff.mean()), "test": "Wilcoxon signed-rank",
                                  "statistic": None, "p_value": None}
        if (diff != 0).sum() >= 1:
            test = sps.wilcoxon(diff, zero_method="wilcox", alternative="two-sided")
            result["statistic"], result["p_value"] = float(test.statistic), float(test.pvalue)
        return result
    result = {**base, "paired": False, "n_segments": 0, "test": "Mann–Whitney U", "statistic": None,
              "p_value": None, "mean_difference": (base["mean_assisted"] - base["mean_unassisted"])
              if len(a) and len(u) else None}
    if len(a) and len(u):
        test = sps.mannwhitneyu(a["score"], u["score"], alternative="two-sided")
        result["statistic"], result["p_value"] = float(test.statistic), float(test.pvalue)
    return result


def _chars(spans: Any) -> set[int]:
    out: set[int] = set()
    for start, end in spans:
        out.update(range(int(start), int(end)))
    return out


def ai_agreement(ratings: pd.DataFrame) -> dict[str, Any]:
    """Character P/R/F1 of annotators' spans against the AI's, per condition (AI = reference: recall is the
    share of the AI's characters the annotators marked).

    ``ratings``: one row per rating, columns ``assisted`` (bool), ``spans`` and ``ai_spans`` (lists of
    (start, end) target intervals).
    """
    out: dict[str, Any] = {}
    for name, flag in (("assisted", True), ("unassisted", False)):
        rows = ratings[ratings["assisted"].astype(bool) == flag]
        both = marked = ai = 0
        for spans, ai_spans in zip(rows["spans"], rows["ai_spans"]):
            mine, theirs = _chars(spans), _chars(ai_spans)
            both += len(mine & theirs)
            marked += len(mine)
            ai += len(theirs)
        p = both / marked if marked else None
        r = both / ai if ai else None
        f1 = 2 * p * r / (p + r) if p is not None and r is not None and p + r > 0 else None
        out[name] = {"n_ratings": int(len(rows)), "precision": p, "recall": r, "f1": f1}
    return out
