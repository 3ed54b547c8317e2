"""Tests for evaluators.stats.ratings (judgments -> ratings conversions)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluators.stats.agreement import agreement
from protocols.registry import protocol_named
from evaluators.stats.ratings import (
    choice_to_labels,
    choice_to_pairs,
    judgment_to_labels,
    multilabel_category,
    ranking_to_pairs,
    validate_judgments,
)


def rows(judgment, item, annotator, ranks=None, choice=np.nan, labels=None, spam=False, excluded=False, phenomenon="ph"):
    systems = list((ranks or labels or {"A": None, "B": None}).keys())
    out = []
    for s in systems:
        out.append(
            {
                "judgment": judgment,
                "item": item,
                "annotator": annotator,
                "system": s,
                "is_reference": s == "ref",
                "is_spam_item": spam,
                "phenomenon": phenomenon,
                "rank": (ranks or {}).get(s, np.nan),
                "choice": choice,
                "label": (labels or {}).get(s, np.nan),
                "excluded": excluded,
            }
        )
    return out


def ranking_frame():
    r = []
    # item 1: both annotators agree C > A = B (screen order shuffled)
    r += rows(1, "i1", "u1", ranks={"C": 1, "A": 2, "B": 2})
    r += rows(2, "i1", "u2", ranks={"B": 2, "C": 1, "A": 2})
    # item 2: disagreement on A vs B; u2 left C unranked
    r += rows(3, "i2", "u1", ranks={"A": 1, "B": 2, "C": 3})
    r += rows(4, "i2", "u2", ranks={"B": 1, "A": 2, "C": np.nan})
    # spam item: everyone agrees
    r += rows(5, "spam", "u1", ranks={"A": 1, "B": 2, "C": 3}, spam=True)
    r += rows(6, "spam", "u2", ranks={"A": 1, "B": 2, "C": 3}, spam=True)
    # excluded annotator: contrarian
    r += rows(7, "i1", "bad", ranks={"A": 1, "B": 2, "C": 3}, excluded=True)
    r += rows(8, "i2", "bad", ranks={"C": 1, "B": 2, "A": 3}, excluded=True)
    return pd.DataFrame(r)


def test_ranking_to_pairs_units_labels_and_fixed_order():
    df = ranking_frame()
    out, pol = ranking_to_pairs(df)
    got = {(r.judgment, r.item): r.label for r in out.itertuples()}
    assert got[(1, "i1|A|B")] == "tie"
    assert got[(1, "i1|A|C")] == "C"
    assert got[(1, "i1|B|C")] == "C"
    assert got[(3, "i2|A|B")] == "A" and got[(4, "i2|A|B")] == "B"
    assert (4, "i2|A|C") not in got  # C unranked by u2
    assert list(out.columns[:4]) == ["item", "rater", "label", "phenomenon"]
    assert (out["system_a"] < out["system_b"]).all()
    assert set(out["source_item"]) == {"i1", "i2"}
    # shuffled screen order gives exactly the same table
    out2, _ = ranking_to_pairs(df.sample(frac=1, random_state=1))
    key = ["judgment", "item"]
    pd.testing.assert_frame_equal(out.sort_values(key).reset_index(drop=True), out2.sort_values(key).reset_index(drop=True))
    assert pol["dropped_judgments"]["spam_item"] == 2
    assert pol["dropped_judgments"]["excluded_annotator"] == 2
    assert pol["dropped_units"]["missing_rank"] == 2
    assert pol["dropped_units"]["tie"] == 0
    assert pol["n_units_out"] == len(out) == 3 + 3 + 3 + 1
    assert pol["n_judgments_in"] == 8 and pol["n_judgments_used"] == 4


def test_ranking_ties_drop_removes_exactly_the_ties():
    df = ranking_frame()
    keep, _ = ranking_to_pairs(df)
    drop, pol = ranking_to_pairs(df, ties="drop")
    n_ties = int((keep["label"] == "tie").sum())
    assert n_ties == 2
    assert pol["dropped_units"]["tie"] == n_ties
    assert len(drop) == len(keep) - n_ties
    assert "tie" not in set(drop["label"])


def test_policies_move_agreement_in_documented_direction():
    df = ranking_frame()
    base = agreement(ranking_to_pairs(df)[0])
    # excluded contrarian annotator lowers agreement when kept
    with_bad = agreement(ranking_to_pairs(df, excluded="keep")[0])
    assert with_bad["n_raters"] == base["n_raters"] + 1
    pa = lambda r: r["coefficients"]["percent_agreement"]["value"]
    assert pa(with_bad) < pa(base)
    # easy spam items (full agreement) inflate agreement when kept
    with_spam = agreement(ranking_to_pairs(df, spam="keep")[0])
    assert with_spam["n_items"] == base["n_items"] + 3
    assert pa(with_spam) > pa(base)


def test_choice_to_labels_policies():
    r = []
    r += rows(1, "i1", "u1", choice="A")
    r += rows(2, "i1", "u2", choice="A")
    r += rows(3, "i2", "u1", choice=" TIE ")
    r += rows(4, "i2", "u2", choice="tie")
    r += rows(5, "i3", "u1", choice="neither")
    r += rows(6, "i3", "u2", choice="invalid")
    r += rows(7, "i4", "u1", choice="Z")  # not a candidate
    r += rows(8, "i4", "u2", choice=np.nan)
    r += rows(9, "i5", "u1", choice="B", spam=True)
    df = pd.DataFrame(r)
    out, pol = choice_to_labels(df)
    assert dict(zip(out["judgment"], out["label"])) == {1: "A", 2: "A", 3: "tie", 4: "tie", 5: "neither"}
    assert list(out["item"]) == ["i1", "i1", "i2", "i2", "i3"]
    assert pol["dropped_judgments"] == {
        "excluded_annotator": 0, "spam_item": 1, "missing_choice": 1, "invalid": 1, "unknown_choice": 1,
    }
    out_d, pol_d = choice_to_labels(df, ties="drop")
    assert pol_d["dropped_units"]["tie"] == 2
    assert set(out_d["label"]) == {"A", "neither"}
    # dropping ties where both annotators agreed lowers raw agreement
    a_keep = agreement(out)["coefficients"]["percent_agreement"]["value"]
    a_drop = agreement(out_d)["coefficients"]["percent_agreement"]["value"]
    assert a_keep == 1.0 and a_drop == 1.0
    assert agreement(out_d)["n_items"] == agreement(out)["n_items"] - 1


def test_choice_to_pairs():
    r = []
    r += rows(1, "i1", "u1", choice="B", labels={"A": 0, "B": 0, "C": 0})
    r += rows(2, "i1", "u2", choice="tie", labels={"A": 0, "B": 0, "C": 0})
    r += rows(3, "i2", "u1", choice="neither")
    df = pd.DataFrame(r)
    out, pol = choice_to_pairs(df)
    got = sorted(zip(out["judgment"], out["item"], out["label"]))
    assert got == [
        (1, "i1|A|B", "B"), (1, "i1|B|C", "B"),
        (2, "i1|A|B", "tie"), (2, "i1|A|C", "tie"), (2, "i1|B|C", "tie"),
        (3, "i2|A|B", "tie"),
    ]
    out2, pol2 = choice_to_pairs(df, neither="drop", ties="drop")
    assert pol2["dropped_judgments"]["neither"] == 1
    assert pol2["dropped_units"]["tie"] == 3
    assert list(out2["label"]) == ["B", "B"]


def test_judgment_to_labels_multilabel_and_units():
    r = []
    r += rows(1, "i1", "u1", labels={"A": ["fluency", "accuracy"]})
    r += rows(2, "i1", "u2", labels={"A": ("accuracy", "fluency")})
    r += rows(3, "i2", "u1", labels={"A": []})
    r += rows(4, "i2", "u2", labels={"A": "invalid"})
    r += rows(5, "i3", "u1", labels={"A": " "})
    df = pd.DataFrame(r)
    out, pol = judgment_to_labels(df)
    assert list(out["label"]) == ["accuracy+fluency", "accuracy+fluency", "none"]
    assert list(out["item"]) == ["i1", "i1", "i2"]
    assert pol["unit"] == "item"
    assert pol["dropped_units"] == {"missing_label": 1, "invalid": 1}
    # two judged candidates per item -> unit becomes item|system
    df2 = pd.DataFrame(rows(1, "i1", "u1", labels={"A": 3, "B": 4}) + rows(2, "i1", "u2", labels={"A": 3, "B": 5}))
    out2, pol2 = judgment_to_labels(df2)
    assert pol2["unit"] == "item|system"
    assert sorted(set(out2["item"])) == ["i1|A", "i1|B"]
    res = agreement(out2)
    assert res["n_items"] == 2 and res["coefficients"]["percent_agreement"]["value"] == 0.5
    assert multilabel_category({"b", "a"}) == "a+b"


def test_reference_policy():
    df = pd.DataFrame(rows(1, "i1", "u1", ranks={"A": 1, "ref": 2, "B": 3}))
    keep, _ = ranking_to_pairs(df)
    drop, pol = ranking_to_pairs(df, references="drop")
    assert len(keep) == 3 and len(drop) == 1
    assert pol["dropped_candidate_rows"]["reference"] == 1


def test_validation_errors():
    df = ranking_frame()
    with pytest.raises(ValueError, match="required"):
        validate_judgments(df.drop(columns=["annotator"]))
    with pytest.raises(ValueError, match="twice"):
        validate_judgments(pd.concat([df, df.iloc[[0]]]))
    bad = df.copy()
    bad.loc[0, "system"] = "Tie"
    with pytest.raises(ValueError, match="clash"):
        validate_judgments(bad)
    with pytest.raises(ValueError, match="ties"):
        ranking_to_pairs(df, ties="maybe")
    # optional columns may be absent
    minimal = df[["judgment", "item", "annotator", "system", "rank"]]
    out, pol = ranking_to_pairs(minimal)
    assert "phenomenon" not in out.columns and pol["dropped_judgments"]["spam_item"] == 0


def test_human_pairs_of_each_protocol_use_its_converter_on_real_items():
    df = ranking_frame()
    pairs, pol = protocol_named("ranking").human_pairs(df)
    expected, expected_pol = ranking_to_pairs(df, ties="keep", spam="drop")
    pd.testing.assert_frame_equal(pairs, expected)
    assert pol == expected_pol and pol["dropped_judgments"]["spam_item"] == 2
    assert "spam" not in set(pairs["source_item"]) and "tie" in set(pairs["label"])
    kept, _ = protocol_named("ranking").human_pairs(df, excluded="keep")
    assert {"bad"} == set(kept["rater"]) - set(pairs["rater"])

    r = rows(1, "i1", "u1", choice="B", labels={"A": 0, "B": 0})
    r += rows(2, "i1", "u2", choice="neither", labels={"A": 0, "B": 0})
    r += rows(3, "s", "u1", choice="A", labels={"A": 0, "B": 0}, spam=True)
    choices = pd.DataFrame(r)
    cpairs, _ = protocol_named("choice").human_pairs(choices)
    assert sorted(zip(cpairs["judgment"], cpairs["label"])) == [(1, "B"), (2, "tie")]
    assert protocol_named("judgment").human_pairs(choices) == (None, None)


def test_empty_output_keeps_the_phenomenon_column_as_text():
    for out, _ in (
        ranking_to_pairs(ranking_frame().iloc[:0]),
        choice_to_labels(ranking_frame().iloc[:0]),
        choice_to_pairs(ranking_frame().iloc[:0]),
    ):
        assert len(out) == 0 and out["phenomenon"].dtype == object


def test_position_coding_labels_pairs_first_second_tie():
    """Same units, same observed agreement; three categories instead of one per system plus 'tie'."""
    df = ranking_frame()
    by_system, _ = ranking_to_pairs(df)
    by_position, pol = ranking_to_pairs(df, coding="position")
    assert pol["coding"] == "position"
    assert list(by_position["item"]) == list(by_system["item"])
    assert set(by_position["label"]) <= {"first", "second", "tie"}
    expected = np.where(by_system["label"] == "tie", "tie",
                        np.where(by_system["label"] == by_system["system_a"], "first", "second"))
    assert list(by_position["label"]) == list(expected)
    a, b = agreement(by_system), agreement(by_position)
    assert a["coefficients"]["percent_agreement"]["value"] == pytest.approx(b["coefficients"]["percent_agreement"]["value"])
    with pytest.raises(ValueError, match="ranking coding 'rank'"):
        ranking_to_pairs(df, coding="rank")
