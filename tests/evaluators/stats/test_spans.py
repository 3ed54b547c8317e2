"""evaluators.stats.spans on hand examples: span P/R/F1, category pairs, score agreement, unitized alpha."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evaluators.stats.agreement import agreement
from evaluators.stats.spans import (
    category_agreement,
    category_pairs,
    score_agreement,
    span_agreement,
    unitized_alpha,
    unitized_alpha_pairs,
)

NAN = float("nan")


def spans(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["unit", "rater", "start", "end", "category"])


# unit u1: A marks [0,10) and [20,25); B marks [5,15) and [20,25)
# unit u2: A marks nothing (judged); B marks [0,4)
# unit u3: only A judged it -> ignored for the pair
HAND = spans(
    [
        ("u1", "A", 0, 10, "Accuracy/Mistranslation"),
        ("u1", "A", 20, 25, "Fluency/Grammar"),
        ("u1", "B", 5, 15, "Accuracy/Omission"),
        ("u1", "B", 20, 25, "Fluency/Grammar"),
        ("u2", "A", NAN, NAN, None),
        ("u2", "B", 0, 4, "Style/Awkward"),
        ("u3", "A", 0, 30, "Accuracy/Addition"),
    ]
)


def test_character_exact_and_overlap_prf_on_a_hand_example() -> None:
    (res,) = span_agreement(HAND)
    assert (res["rater_a"], res["rater_b"], res["n_units"]) == ("A", "B", 2)
    ch = res["characters"]
    # A: 10 + 5 = 15 chars; B: 10 + 5 + 4 = 19; both: [5,10) + [20,25) = 10
    assert (ch["a"], ch["b"], ch["both"]) == (15, 19, 10)
    assert ch["precision"] == pytest.approx(10 / 19)
    assert ch["recall"] == pytest.approx(10 / 15)
    assert ch["f1"] == pytest.approx(2 * 10 / (15 + 19))
    ex = res["exact"]
    assert (ex["a"], ex["b"], ex["matched"]) == (2, 3, 1)
    assert ex["precision"] == pytest.approx(1 / 3) and ex["recall"] == pytest.approx(1 / 2)
    assert ex["f1"] == pytest.approx(2 * 1 / (2 + 3))
    ov = res["overlap"]
    assert (ov["a_matched"], ov["b_matched"]) == (2, 2)
    assert ov["precision"] == pytest.approx(2 / 3) and ov["recall"] == pytest.approx(1.0)
    assert ov["f1"] == pytest.approx(2 * (2 / 3) / (2 / 3 + 1))


def test_swapping_raters_swaps_precision_and_recall() -> None:
    swapped = HAND.replace({"rater": {"A": "Z"}})  # Z sorts after B: B becomes the reference
    (res,) = span_agreement(swapped)
    assert (res["rater_a"], res["rater_b"]) == ("B", "Z")
    assert res["characters"]["precision"] == pytest.approx(10 / 15)
    assert res["characters"]["recall"] == pytest.approx(10 / 19)
    assert res["characters"]["f1"] == pytest.approx(2 * 10 / 34)


def test_overlapping_spans_of_one_rater_count_characters_once() -> None:
    df = spans([("u", "A", 0, 10, "x"), ("u", "A", 5, 12, "y"), ("u", "B", 0, 12, "x")])
    (res,) = span_agreement(df)
    assert res["characters"]["a"] == 12 and res["characters"]["f1"] == pytest.approx(1.0)
    assert res["exact"]["matched"] == 0


def test_sides_are_separate_units() -> None:
    df = pd.DataFrame(
        {
            "unit": ["s", "s"],
            "rater": ["A", "B"],
            "side": ["target", "source"],
            "start": [0, 0],
            "end": [5, 5],
        }
    )
    (res,) = span_agreement(df, side="side")
    assert res["n_units"] == 0  # A judged the target, B the source: nothing shared
    (same,) = span_agreement(df.assign(side="target"), side="side")
    assert same["characters"]["f1"] == 1.0


def test_nothing_marked_by_either_gives_none_not_a_number() -> None:
    df = spans([("u", "A", NAN, NAN, None), ("u", "B", NAN, NAN, None)])
    (res,) = span_agreement(df)
    assert res["n_units"] == 1
    assert res["characters"]["precision"] is None and res["characters"]["f1"] is None


def test_bad_spans_are_named() -> None:
    with pytest.raises(ValueError, match=r"row\(s\) 1"):
        span_agreement(spans([("u", "A", 0, 3, "x"), ("u", "B", 4, 4, "x")]))
    with pytest.raises(ValueError, match="missing column"):
        span_agreement(pd.DataFrame({"unit": [1], "rater": ["A"]}))


def test_category_pairs_match_one_to_one_by_largest_overlap() -> None:
    pairs = category_pairs(HAND)
    got = sorted(
        tuple(g.sort_values("rater")["label"]) for _, g in pairs.groupby("item")
    )
    assert got == [("Accuracy/Mistranslation", "Accuracy/Omission"), ("Fluency/Grammar", "Fluency/Grammar")]
    top = category_pairs(HAND, depth=1)
    assert sorted(tuple(g.sort_values("rater")["label"]) for _, g in top.groupby("item")) == [
        ("Accuracy", "Accuracy"),
        ("Fluency", "Fluency"),
    ]
    # one A span overlapping two B spans: matched to the larger overlap only
    df = spans([("u", "A", 0, 10, "x"), ("u", "B", 0, 3, "y"), ("u", "B", 4, 10, "z")])
    p = category_pairs(df)
    assert p["item"].nunique() == 1
    assert set(p["label"]) == {"x", "z"}


def test_category_agreement_uses_the_adapter() -> None:
    rows = []
    labels_a = ["acc", "acc", "flu", "flu", "sty", "acc"]
    labels_b = ["acc", "flu", "flu", "flu", "sty", "acc"]
    for k, (la, lb) in enumerate(zip(labels_a, labels_b)):
        rows += [(f"u{k}", "A", 0, 5, la), (f"u{k}", "B", 1, 6, lb)]
    res = category_agreement(spans(rows))
    assert res["n_matched"] == 6
    expect = agreement(
        pd.DataFrame({"item": list(range(6)) * 2, "rater": ["A"] * 6 + ["B"] * 6, "label": labels_a + labels_b})
    )
    assert res["pooled"]["coefficients"]["gwet_ac1"]["value"] == pytest.approx(expect["coefficients"]["gwet_ac1"]["value"])
    (pair,) = res["pairs"]
    assert pair["percent_agreement"]["value"] == pytest.approx(5 / 6)
    assert pair["gwet_ac1"]["value"] == pytest.approx(expect["coefficients"]["gwet_ac1"]["value"])
    # AC1 by hand (Gwet 2008): pa = 5/6; pi_k over both raters: acc 5/12, flu 5/12, sty 2/12 (q = 3)
    pi = np.array([5, 5, 2]) / 12
    pe = (pi * (1 - pi)).sum() / (3 - 1)
    assert pair["gwet_ac1"]["value"] == pytest.approx((5 / 6 - pe) / (1 - pe))
    none = category_agreement(spans([("u", "A", 0, 2, "x"), ("u", "B", 3, 5, "y")]))
    assert none["n_matched"] == 0 and none["pooled"] is None


def test_score_agreement_pairs_and_interval_alpha() -> None:
    # Krippendorff (2011) "Computing Krippendorff's alpha-reliability", 4 observers x 12 units:
    # alpha interval = 0.849 (nominal 0.743)
    data = {
        "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        "C": [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    }
    rows = [(u, r, v) for r, vals in data.items() for u, v in enumerate(vals)]
    res = score_agreement(pd.DataFrame(rows, columns=["unit", "rater", "score"]))
    assert res["krippendorff_alpha_interval"]["value"] == pytest.approx(0.849, abs=5e-4)
    assert res["n_raters"] == 4 and len(res["pairs"]) == 6
    ab = next(p for p in res["pairs"] if (p["rater_a"], p["rater_b"]) == ("A", "B"))
    x = np.array(data["A"][:9])
    y = np.array(data["B"][:9])
    assert ab["n"] == 9
    assert ab["kendall_tau"] == pytest.approx(stats.kendalltau(x, y).statistic)
    assert ab["pearson"] == pytest.approx(float(np.corrcoef(x, y)[0, 1]))


def test_score_agreement_undefined_cases_are_notes() -> None:
    df = pd.DataFrame({"unit": [1, 2, 3, 1, 2, 3], "rater": ["A"] * 3 + ["B"] * 3, "score": [5, 5, 5, 1, 2, 3]})
    (p,) = score_agreement(df)["pairs"]
    assert p["kendall_tau"] is None and "same score" in p["note"]
    short = score_agreement(df[df["unit"] < 3])
    assert short["pairs"][0]["note"].startswith("fewer than 3")
    with pytest.raises(ValueError, match="more than one score"):
        score_agreement(pd.concat([df, df.head(1)]))


# ---------------------------------------------------------------- unitized alpha
def krippendorff_2004() -> tuple[dict, dict]:
    """Krippendorff (2004: 254): continuum 150..450, two observers, categories c and k (shifted to 0..300)."""

    def u(b: int, length: int) -> tuple[int, int]:
        return (b - 150, b - 150 + length)

    i = {"c": [u(225, 70), u(370, 30)], "k": [u(180, 60), u(300, 50)]}
    j = {"c": [u(220, 80), u(355, 20), u(400, 20)], "k": [u(180, 60), u(300, 50)]}
    return i, j


def test_unitized_alpha_krippendorff_2004_worked_example() -> None:
    i, j = krippendorff_2004()
    res = unitized_alpha(i, j, 300)
    c, k = res["categories"]["c"], res["categories"]["k"]
    # distances: 50 + 850 + 400 per direction -> D_o = 2600 / (2 * 300^2)
    assert c["d_o"] == pytest.approx(2600 / 180000)
    assert c["d_o"] == pytest.approx(0.0144, abs=1e-4)
    assert c["d_e"] == pytest.approx(0.0532, abs=1e-4)
    assert c["alpha"] == pytest.approx(0.7286, abs=1e-4)
    assert k["d_o"] == 0.0 and k["d_e"] == pytest.approx(0.0490, abs=1e-4) and k["alpha"] == 1.0
    assert res["alpha"] == pytest.approx(0.859, abs=5e-4)


def krippendorff_1995(stretch: float) -> tuple[dict, dict, int]:
    """Krippendorff (1995: 57): four pairs of observers (A-D) on a 24-unit continuum, scaled by ``stretch``."""

    def u(b: int, length: int) -> tuple[int, int]:
        return (int(b * stretch), int(b * stretch) + int(length * stretch))

    first = {
        "A": [u(2, 8), u(14, 6)],
        "B": [u(0, 18)],
        "C": [u(2, 6), u(10, 2), u(14, 4), u(20, 2)],
        "D": [u(0, 2), u(2, 8), u(10, 4), u(14, 6), u(20, 4)],
    }
    second = {
        "A": [u(4, 4), u(15, 2)],
        "B": [u(0, 2), u(2, 1), u(3, 1), u(4, 1), u(5, 1), u(6, 3), u(9, 1)],
        "C": [u(0, 2), u(4, 4), u(10, 4), u(16, 2), u(20, 2)],
        "D": [u(0, 4), u(4, 4), u(8, 7), u(15, 2), u(17, 7)],
    }
    return first, second, int(24 * stretch)


def test_unitized_alpha_krippendorff_1995_example() -> None:
    a, b, length = krippendorff_1995(1)
    cats = unitized_alpha(a, b, length)["categories"]
    # observed disagreements are exact
    assert cats["A"]["d_o"] == pytest.approx(0.03125, abs=1e-5)
    assert cats["B"]["d_o"] == pytest.approx(2.26736, abs=1e-5)
    assert cats["C"]["d_o"] == pytest.approx(0.02777, abs=1e-5)
    assert cats["D"]["d_o"] == pytest.approx(0.38715, abs=1e-5)
    # expected disagreement and alpha in the fine-grained limit; the article's D_e has a small
    # arithmetic slip (see docs/mqm.md), hence the tolerances 0.005 / 0.02
    a, b, length = krippendorff_1995(50000)
    cats = unitized_alpha(a, b, length)["categories"]
    for cat, d_e, alpha in (("A", 0.06990, 0.553), ("B", 1.17731, -0.926), ("C", 0.08642, 0.679), ("D", 0.41445, 0.066)):
        assert cats[cat]["d_e"] == pytest.approx(d_e, abs=5e-3)
        assert cats[cat]["alpha"] == pytest.approx(alpha, abs=2e-2)
    # the coarse version (12 positions) of category C
    a, b, length = krippendorff_1995(0.5)
    c = unitized_alpha({"C": a["C"]}, {"C": b["C"]}, length)["categories"]["C"]
    assert c["d_e"] == pytest.approx(0.05494, abs=1e-5) and c["alpha"] == pytest.approx(0.494, abs=1e-3)


def test_unitized_alpha_identical_and_bad_units() -> None:
    same = {"x": [(0, 4), (10, 12)]}
    assert unitized_alpha(same, same, 20)["alpha"] == 1.0
    empty = unitized_alpha({}, {}, 20)
    assert empty["alpha"] is None and empty["note"]
    with pytest.raises(ValueError, match="not inside the continuum"):
        unitized_alpha({"x": [(5, 25)]}, same, 20)


def test_unitized_alpha_pairs_lays_units_end_to_end() -> None:
    # the 2004 example cut into two units of 150 characters each: same alpha
    i, j = krippendorff_2004()
    rows = []
    for rater, obs in (("i", i), ("j", j)):
        for cat, units in obs.items():
            for s, e in units:
                unit = "u1" if e <= 150 else "u2"
                off = 0 if unit == "u1" else 150
                assert s >= off
                rows.append((unit, rater, s - off, e - off, cat))
    (res,) = unitized_alpha_pairs(spans(rows), {"u1": 150, "u2": 150})
    assert res["length"] == 300 and res["n_units"] == 2
    assert res["alpha"] == pytest.approx(unitized_alpha(i, j, 300)["alpha"])
    assert not math.isnan(res["alpha"])
    with pytest.raises(ValueError, match="beyond the unit's length"):
        unitized_alpha_pairs(spans(rows), {"u1": 100, "u2": 150})
