"""evaluators.stats.prefill: Wilson intervals against published values, acceptance, time, scores, AI agreement."""
from __future__ import annotations

import pandas as pd
import pytest

from evaluators.stats.prefill import acceptance, ai_agreement, score_difference, timing, wilson_interval


def test_wilson_interval_matches_published_values() -> None:
    # Newcombe (1998), Statistics in Medicine 17, Table I: 81/263 -> 0.2553 to 0.3662; 15/148 -> 0.0624 to 0.1605.
    low, high = wilson_interval(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)
    low, high = wilson_interval(15, 148)
    assert (round(low, 4), round(high, 4)) == (0.0624, 0.1605)
    assert wilson_interval(0, 0) == (None, None)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == pytest.approx(1.0)


def test_acceptance_per_annotator_apart_for_decoys() -> None:
    shown = pd.DataFrame({"annotator": ["a"] * 6 + ["b"] * 2,
                          "decoy": [False, False, False, True, True, False, True, False],
                          "fate": ["kept", "edited", "deleted", "kept", "deleted", "kept", "kept", "deleted"]})
    out = acceptance(shown)
    assert out["ai"]["n"] == 5 and out["ai"]["kept"] == 2 and out["ai"]["rate"] == 0.4
    assert out["decoy"]["n"] == 3 and out["decoy"]["rate"] == pytest.approx(2 / 3)
    a = out["per_annotator"][0]
    assert a["annotator"] == "a" and a["ai"]["edited"] == 1 and a["decoy"]["rate"] == 0.5
    assert a["decoy"]["ci_low"] < 0.5 < a["decoy"]["ci_high"]


def test_timing_per_item_and_per_span() -> None:
    judgments = pd.DataFrame({"assisted": [True, True, False, False], "duration_ms": [10_000, 20_000, 30_000, 50_000],
                              "n_spans": [3, 1, 2, 0]})
    out = timing(judgments)
    assert out["assisted"]["mean_seconds_per_item"] == 15.0 and out["assisted"]["seconds_per_span"] == 7.5
    assert out["unassisted"]["seconds_per_span"] == 40.0 and out["unassisted"]["median_seconds_per_item"] == 40.0


def test_score_difference_paired_by_segment_with_wilcoxon() -> None:
    rows = []
    for seg in range(8):
        rows.append({"segment": seg, "assisted": True, "score": 60 + seg})
        rows.append({"segment": seg, "assisted": False, "score": 50 + seg + (seg % 3)})
    out = score_difference(pd.DataFrame(rows))
    assert out["paired"] and out["test"] == "Wilcoxon signed-rank" and out["n_segments"] == 8
    diffs = [10 - (s % 3) for s in range(8)]
    assert out["mean_difference"] == pytest.approx(sum(diffs) / 8)
    from scipy.stats import wilcoxon
    assert out["p_value"] == pytest.approx(wilcoxon(diffs).pvalue)


def test_score_difference_unpaired_falls_back_to_mann_whitney() -> None:
    rows = [{"segment": k, "assisted": k % 2 == 0, "score": float(k)} for k in range(10)]
    out = score_difference(pd.DataFrame(rows))
    assert not out["paired"] and out["test"] == "Mann–Whitney U" and out["p_value"] is not None


def test_ai_agreement_by_characters() -> None:
    ratings = pd.DataFrame({"assisted": [True, False], "spans": [[(0, 4)], [(2, 6)]],
                            "ai_spans": [[(0, 4)], [(0, 4)]]})
    out = ai_agreement(ratings)
    assert out["assisted"]["f1"] == 1.0
    assert out["unassisted"]["precision"] == 0.5 and out["unassisted"]["recall"] == 0.5
