"""evaluators.stats.mqm on hand examples: every weight branch, aggregation, bootstrap, error counts, ESA."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from evaluators.stats.mqm import (
    WMT_WEIGHTS,
    MqmWeights,
    bootstrap_system_ci,
    esa_segment_scores,
    is_no_error,
    mqm_error_counts,
    mqm_segment_scores,
    system_scores,
)


def by_system(df: pd.DataFrame) -> dict[str, dict[str, Any]]:
    return {str(k): {str(c): x for c, x in v.items()} for k, v in df.set_index("system").to_dict("index").items()}


def frame(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["system", "segment", "rater", "category", "severity"])


@pytest.mark.parametrize(
    ("category", "severity", "weight", "rule"),
    [
        ("Accuracy/Mistranslation", "Major", 5.0, "major"),
        ("Accuracy/Mistranslation", "Minor", 1.0, "minor"),
        ("Style/Awkward", "minor", 1.0, "minor"),  # case-insensitive severity
        ("Fluency/Punctuation", "Minor", 0.1, "minor-punctuation"),
        ("Fluency/Punctuation", "Major", 5.0, "major"),  # Major punctuation: standard weight (README)
        ("Non-translation", "Major", 25.0, "non-translation"),
        ("Non-translation!", "Minor", 25.0, "non-translation"),  # 2020 files' spelling, any severity
        ("Accuracy/Omission", "Critical", 25.0, "critical"),
        ("Other", "Neutral", 0.0, "neutral"),
        ("No-error", "No-error", 0.0, "no-error"),
        ("no-error", "", 0.0, "no-error"),
    ],
)
def test_every_weight_branch(category: str, severity: str, weight: float, rule: str) -> None:
    assert WMT_WEIGHTS.rule(category, severity) == rule
    assert WMT_WEIGHTS.weight(category, severity) == pytest.approx(weight)


def test_punctuation_category_match_is_exact_after_normalising_case_and_spaces() -> None:
    # "Fluency/Punctuation" in any case matches; a differently spelt path does not
    assert WMT_WEIGHTS.weight("FLUENCY/PUNCTUATION", "minor") == pytest.approx(0.1)
    assert WMT_WEIGHTS.weight("Linguistic conventions/Punctuation", "Minor") == 1.0
    custom = MqmWeights(punctuation_categories=("fluency/punctuation", "linguistic conventions/punctuation"))
    assert custom.weight("Linguistic conventions/Punctuation", "Minor") == pytest.approx(0.1)


def test_configurable_weights_and_unknown_severity() -> None:
    marot = MqmWeights(critical=5.0, name="marot")
    assert marot.weight("Accuracy/Omission", "Critical") == 5.0
    assert marot.describe()["weights"]["critical"] == 5.0
    assert WMT_WEIGHTS.describe()["weights"] == {
        "minor": 1.0,
        "major": 5.0,
        "critical": 25.0,
        "neutral": 0.0,
        "minor_punctuation": 0.1,
        "non_translation": 25.0,
    }
    extra = MqmWeights(extra_severities={"Trivial": 0.1})
    assert extra.weight("Style/Awkward", "trivial") == pytest.approx(0.1)
    with pytest.raises(ValueError, match="unknown MQM severity 'Huge'"):
        WMT_WEIGHTS.weight("Accuracy/Addition", "Huge")
    rows = frame([("S", 1, "r1", "Accuracy/Addition", "Minor"), ("S", 1, "r1", "Accuracy/Addition", "Huge")])
    with pytest.raises(ValueError, match=r"row 1: unknown MQM severity"):
        mqm_segment_scores(rows)


def test_no_error_marker_spellings() -> None:
    assert is_no_error("No-error") and is_no_error("no error") and is_no_error("NO_ERROR")
    assert not is_no_error("error") and not is_no_error("")


def test_segment_scores_sum_weights_and_count_errors() -> None:
    rows = frame(
        [
            ("A", 1, "r1", "Accuracy/Mistranslation", "Major"),  # 5
            ("A", 1, "r1", "Fluency/Punctuation", "Minor"),  # 0.1
            ("A", 1, "r1", "Style/Awkward", "Minor"),  # 1
            ("A", 1, "r2", "No-error", "No-error"),  # 0
            ("A", 2, "r1", "Non-translation", "Major"),  # 25
            ("B", 1, "r1", "No-error", "No-error"),
        ]
    )
    seg = mqm_segment_scores(rows).set_index(["system", "segment", "rater"])
    assert seg.loc[("A", 1, "r1"), "score"] == pytest.approx(6.1)
    assert seg.loc[("A", 1, "r1"), "n_errors"] == 3
    assert seg.loc[("A", 1, "r2"), "score"] == 0.0
    assert seg.loc[("A", 1, "r2"), "n_errors"] == 0
    assert seg.loc[("A", 2, "r1"), "score"] == 25.0
    assert seg.loc[("B", 1, "r1"), "score"] == 0.0
    assert len(seg) == 4


def test_system_score_averages_raters_per_segment_then_segments() -> None:
    # A: segment 1 rated by r1 (6) and r2 (0) -> 3; segment 2 by r1 only (1) -> mean (3 + 1)/2 = 2
    # per rating instead: (6 + 0 + 1)/3 = 2.333
    rows = frame(
        [
            ("A", 1, "r1", "Accuracy/Mistranslation", "Major"),
            ("A", 1, "r1", "Style/Awkward", "Minor"),
            ("A", 1, "r2", "No-error", "No-error"),
            ("A", 2, "r1", "Style/Awkward", "Minor"),
            ("B", 1, "r1", "Fluency/Punctuation", "Minor"),
            ("B", 2, "r2", "No-error", "No-error"),
        ]
    )
    seg = mqm_segment_scores(rows)
    res = system_scores(seg).set_index("system")
    assert res.loc["A", "score"] == pytest.approx(2.0)
    assert res.loc["B", "score"] == pytest.approx(0.05)
    assert res.loc["A", "n_segments"] == 2 and res.loc["A", "n_ratings"] == 3
    assert list(system_scores(seg)["system"]) == ["B", "A"]  # lower MQM is better
    assert list(system_scores(seg)["rank"]) == [1, 2]
    per_rating = system_scores(seg, aggregate="rating").set_index("system")
    assert per_rating.loc["A", "score"] == pytest.approx(7 / 3)
    with pytest.raises(ValueError, match="aggregate"):
        system_scores(seg, aggregate="doc")  # type: ignore[arg-type]


def test_ties_share_a_rank_and_esa_is_higher_is_better() -> None:
    esa = esa_segment_scores(
        pd.DataFrame(
            {
                "system": ["A", "A", "B", "B", "C", "C"],
                "segment": [1, 2, 1, 2, 1, 2],
                "rater": ["r1"] * 6,
                "score": [90, 70, 80, 80, 10, "20"],
            }
        )
    )
    res = system_scores(esa, higher_is_better=True)
    assert list(res["system"]) == ["A", "B", "C"]
    assert list(res["rank"]) == [1, 1, 3]
    assert res.loc[2, "score"] == pytest.approx(15.0)


@pytest.mark.parametrize("bad", [None, "high", -1, 100.5])
def test_esa_rejects_missing_or_out_of_range_scores(bad: object) -> None:
    df = pd.DataFrame({"system": ["A", "A"], "segment": [1, 2], "rater": ["r1", "r1"], "score": [50, bad]})
    with pytest.raises(ValueError, match=r"row\(s\) 1"):
        esa_segment_scores(df)


def test_esa_rejects_two_scores_for_one_rating() -> None:
    df = pd.DataFrame({"system": ["A", "A"], "segment": [1, 1], "rater": ["r1", "r1"], "score": [50, 60]})
    with pytest.raises(ValueError, match="more than one ESA score"):
        esa_segment_scores(df)


def test_bootstrap_ci_is_seeded_paired_and_contains_the_score() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for seg in range(40):
        for system, p_major in (("good", 0.1), ("bad", 0.6)):
            for rater in ("r1", "r2"):
                if rng.random() < p_major:
                    rows.append((system, seg, rater, "Accuracy/Mistranslation", "Major"))
                else:
                    rows.append((system, seg, rater, "No-error", "No-error"))
    seg_scores = mqm_segment_scores(frame(rows))
    first = bootstrap_system_ci(seg_scores, n_boot=500, seed=7)
    pd.testing.assert_frame_equal(first, bootstrap_system_ci(seg_scores, n_boot=500, seed=7))
    a = by_system(first)
    point = by_system(system_scores(seg_scores))
    for s in ("good", "bad"):
        assert a[s]["score"] == pytest.approx(point[s]["score"])
        assert a[s]["ci_low"] <= point[s]["score"] <= a[s]["ci_high"]
    assert a["good"]["ci_high"] < a["bad"]["ci_low"]  # 0.5 vs 3.0 points apart, 40 segments


def test_bootstrap_resamples_the_same_segments_for_every_system() -> None:
    # "plus" has exactly one more Minor error than "base" on every segment: with paired
    # resampling its bootstrap distribution is base's shifted by 1, so are the percentiles
    rng = np.random.default_rng(11)
    rows = []
    for seg in range(30):
        n = int(rng.integers(0, 4))
        base = [("base", seg, "r1", "Style/Awkward", "Minor")] * n or [("base", seg, "r1", "No-error", "No-error")]
        plus = [("plus", seg, "r1", "Style/Awkward", "Minor")] * (n + 1)
        rows += base + plus
    ci = by_system(bootstrap_system_ci(mqm_segment_scores(frame(rows)), n_boot=300, seed=5))
    assert ci["plus"]["ci_low"] == pytest.approx(ci["base"]["ci_low"] + 1)
    assert ci["plus"]["ci_high"] == pytest.approx(ci["base"]["ci_high"] + 1)
    assert ci["base"]["ci_high"] > ci["base"]["ci_low"]


def test_bootstrap_ci_with_one_segment_is_undefined() -> None:
    seg_scores = mqm_segment_scores(frame([("A", 1, "r1", "Style/Awkward", "Minor")]))
    res = bootstrap_system_ci(seg_scores, n_boot=50).iloc[0]
    assert res["score"] == 1.0 and res["ci_low"] is None and res["ci_high"] is None


def test_error_counts_per_system_category_severity() -> None:
    rows = frame(
        [
            ("A", 1, "r1", "Accuracy/Mistranslation", "Major"),
            ("A", 1, "r1", "Accuracy/Mistranslation", "Major"),
            ("A", 2, "r1", "Fluency/Punctuation", "Minor"),
            ("A", 3, "r1", "No-error", "No-error"),
            ("B", 1, "r1", "Discourse/Pronoun reference", "Minor"),
            ("B", 2, "r1", "No-error", "No-error"),
        ]
    )
    counts = mqm_error_counts(rows)
    got: dict[Any, Any] = {(r.system, r.category, r.severity): (r.count, r.penalty, r.per_segment) for r in counts.itertuples()}
    assert got == {
        ("A", "Accuracy/Mistranslation", "Major"): (2, 10.0, pytest.approx(2 / 3)),
        ("A", "Fluency/Punctuation", "Minor"): (1, pytest.approx(0.1), pytest.approx(1 / 3)),
        ("B", "Discourse/Pronoun reference", "Minor"): (1, 1.0, 0.5),
    }
    assert list(counts["system"]) == ["A", "A", "B"]
    empty = mqm_error_counts(frame([("A", 1, "r1", "No-error", "No-error")]))
    assert empty.empty and "count" in empty.columns


def test_missing_columns_are_named() -> None:
    with pytest.raises(ValueError, match="missing column\\(s\\): rater"):
        mqm_segment_scores(pd.DataFrame({"system": [], "segment": [], "category": [], "severity": []}))
