"""The `agreement` command, ratings mode: Gwet's example data against his R package, and bad input.

Expected values are the published output of Gwet's R package irrCAC on
irrCAC.datasets (the issue's acceptance figures), not recomputed here.
"""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from irrCAC.datasets import raw_4raters, raw_ben_gerry, raw_gender

TOL = 1e-4


def long_csv(wide: pd.DataFrame, path: Path) -> Path:
    """Gwet's wide layout as a long CSV: one row per (unit, rater); missing = blank label."""
    w = wide.reset_index(drop=True)
    w.index = [f"u{i + 1}" for i in range(len(w))]
    w.index.name = "unit"
    long = w.reset_index().melt(id_vars="unit", var_name="coder", value_name="rating")
    long.to_csv(path, index=False)
    return path


def run(path: Path, **kw) -> dict:
    out = StringIO()
    call_command("agreement", ratings=str(path), item="unit", rater="coder", label="rating", json=True,
                 stdout=out, **kw)
    return json.loads(out.getvalue())


def check(result: dict, key: str, value: float, se: float | None = None) -> None:
    coef = result["coefficients"][key]
    assert coef["value"] == pytest.approx(value, abs=TOL), key
    if se is not None:
        assert coef["se"] == pytest.approx(se, abs=TOL), key


def test_raw_4raters_unweighted(tmp_path):
    res = run(long_csv(raw_4raters(), tmp_path / "r4.csv"))
    assert res["n_items"] == 12 and res["n_raters"] == 4
    assert res["categories"] == [1, 2, 3, 4, 5]
    check(res, "percent_agreement", 0.81818, 0.12561)
    check(res, "gwet_ac1", 0.77544, 0.14295)
    ac1 = res["coefficients"]["gwet_ac1"]
    assert ac1["ci_low"] == pytest.approx(0.461, abs=1e-3)
    assert ac1["ci_high"] == pytest.approx(1.0, abs=TOL)
    assert ac1["p_value"] == pytest.approx(1.0436e-4, rel=1e-3)
    check(res, "fleiss_kappa", 0.76117, 0.15302)
    check(res, "krippendorff_alpha", 0.74342, 0.14548)
    check(res, "conger_kappa", 0.76282, 0.14917)
    check(res, "brennan_prediger", 0.77273, 0.14472)
    assert "cohen_kappa" not in res["coefficients"]  # only with exactly two raters
    assert len(res["pairwise_cohen_kappa"]) == 6


def test_raw_4raters_quadratic(tmp_path):
    res = run(long_csv(raw_4raters(), tmp_path / "r4.csv"), weights="quadratic")
    check(res, "gwet_ac1", 0.91400, 0.10396)
    check(res, "fleiss_kappa", 0.86494)
    check(res, "krippendorff_alpha", 0.84911)
    check(res, "conger_kappa", 0.85771)
    check(res, "brennan_prediger", 0.90152)


def test_raw_ben_gerry(tmp_path):
    res = run(long_csv(raw_ben_gerry(), tmp_path / "bg.csv"))
    assert res["n_raters"] == 2
    check(res, "gwet_ac1", 0.66144, 0.18396)
    check(res, "fleiss_kappa", 0.64935)
    check(res, "krippendorff_alpha", 0.66489)
    check(res, "conger_kappa", 0.65714)
    check(res, "brennan_prediger", 0.65909)
    check(res, "percent_agreement", 0.72727)
    # Two raters: Cohen's kappa is reported, and equals the single pairwise entry.
    assert res["coefficients"]["cohen_kappa"]["value"] == pytest.approx(res["pairwise_cohen_kappa"][0]["value"])


def test_raw_gender(tmp_path):
    res = run(long_csv(raw_gender(), tmp_path / "g.csv"))
    check(res, "gwet_ac1", 0.20808, 0.09070)
    check(res, "fleiss_kappa", 0.12889)
    check(res, "krippendorff_alpha", 0.14341)
    check(res, "conger_kappa", 0.16572)
    check(res, "brennan_prediger", 0.18333)


def test_jsonl_input_gives_the_same_numbers(tmp_path):
    csv_res = run(long_csv(raw_ben_gerry(), tmp_path / "bg.csv"))
    frame = pd.read_csv(tmp_path / "bg.csv", dtype=str, keep_default_na=False)
    jl = tmp_path / "bg.jsonl"
    jl.write_text("".join(json.dumps(r) + "\n" for r in frame.to_dict("records")))
    assert run(jl) == csv_res


def test_explicit_categories_change_bp(tmp_path):
    """Brennan-Prediger's chance agreement is 1/q: an unused category changes it."""
    path = long_csv(raw_ben_gerry(), tmp_path / "bg.csv")
    base = run(path)
    more = run(path, categories=",".join(map(str, base["categories"])) + ",zzz")
    assert more["categories"][-1] == "zzz"
    assert more["coefficients"]["brennan_prediger"]["value"] > base["coefficients"]["brennan_prediger"]["value"]


def test_text_output_lists_ac1_first(tmp_path):
    out = StringIO()
    call_command("agreement", ratings=str(long_csv(raw_4raters(), tmp_path / "r4.csv")), item="unit",
                 rater="coder", label="rating", stdout=out)
    text = out.getvalue()
    assert text.index("Gwet's AC1") < text.index("Fleiss' kappa")
    assert "0.7754" in text and "Krippendorff's alpha" in text


def test_output_file(tmp_path):
    dest = tmp_path / "out.json"
    call_command("agreement", ratings=str(long_csv(raw_gender(), tmp_path / "g.csv")), item="unit",
                 rater="coder", label="rating", json=True, output=str(dest), stdout=StringIO())
    assert json.loads(dest.read_text())["coefficients"]["gwet_ac1"]["value"] == pytest.approx(0.20808, abs=TOL)


# ---------------------------------------------------------------- bad input
def bad(match: str, **kw) -> None:
    with pytest.raises(CommandError, match=match):
        call_command("agreement", stdout=StringIO(), **kw)


def test_missing_column_is_named(tmp_path):
    path = long_csv(raw_ben_gerry(), tmp_path / "bg.csv")
    bad(r"missing column\(s\) 'grade' \(--label\)", ratings=str(path), item="unit", rater="coder", label="grade")


def test_missing_file(tmp_path):
    bad("nope.csv: no such file", ratings=str(tmp_path / "nope.csv"), item="unit", rater="coder", label="rating")


def test_empty_file(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("")
    bad("empty", ratings=str(path), item="unit", rater="coder", label="rating")


def test_header_only_file(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("unit,coder,rating\n")
    bad("no rows", ratings=str(path), item="unit", rater="coder", label="rating")


def test_all_labels_blank(tmp_path):
    path = tmp_path / "blank.csv"
    path.write_text("unit,coder,rating\nu1,a,\nu1,b,\n")
    bad("no ratings", ratings=str(path), item="unit", rater="coder", label="rating")


def test_ragged_line_is_named(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("unit,coder,rating\nu1,a,x\nu1,b,x,extra\n")
    bad("line 3", ratings=str(path), item="unit", rater="coder", label="rating")


def test_bad_jsonl_line_is_named(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"unit": "u1", "coder": "a", "rating": "x"}\n{"unit": \n')
    bad("line 2", ratings=str(path), item="unit", rater="coder", label="rating")


def test_not_utf8(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(b"unit,coder,rating\nu1,a,\xff\xfe\n")
    bad("not UTF-8", ratings=str(path), item="unit", rater="coder", label="rating")


def test_duplicate_rating(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("unit,coder,rating\nu1,a,x\nu1,a,y\nu1,b,x\n")
    bad("same \\(item, rater\\)", ratings=str(path), item="unit", rater="coder", label="rating")


def test_blank_rater(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("unit,coder,rating\nu1,a,x\nu1,,y\n")
    bad("line 3 of a CSV\\): blank rater in column 'coder'", ratings=str(path), item="unit", rater="coder",
        label="rating")


def test_label_outside_categories(tmp_path):
    path = long_csv(raw_ben_gerry(), tmp_path / "bg.csv")
    bad("not among categories", ratings=str(path), item="unit", rater="coder", label="rating", categories="a,b")


def test_no_mode_or_two_modes(tmp_path):
    bad("exactly one of")
    bad("exactly one of", ratings="x.csv", judgments="y.csv")
