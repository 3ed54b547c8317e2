"""evaluators.reports.study_stats without the database: conversions, protocols, edge cases."""
from __future__ import annotations

import pandas as pd
import pytest

from evaluators.reports import study_stats as ss
from evaluators.stats import ratings as rt


def ranking_frame() -> pd.DataFrame:
    """3 annotators x 4 items x (reference, s1, s2); ties; one spam item; one excluded annotator."""
    rows = []
    patterns = {"a": [(1, 2, 3), (1, 1, 2), (2, 1, 3), (1, 2, 2)],
                "b": [(1, 2, 3), (1, 2, 3), (1, 1, 1), (1, 3, 2)],
                "c": [(2, 1, 3), (1, 1, 2), (2, 1, 3), (3, 2, 1)]}
    for ann, pats in patterns.items():
        for i, pat in enumerate(pats):
            for system, rank in zip(("reference", "s1", "s2"), pat):
                rows.append({"judgment": f"{ann}{i}", "item": f"x{i}", "annotator": ann, "system": system,
                             "is_reference": system == "reference", "is_spam_item": i == 3,
                             "phenomenon": "p1" if i % 2 else "p2", "rank": float(rank), "choice": None,
                             "label": None, "excluded": ann == "c"})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("spam", ["drop", "keep"])
@pytest.mark.parametrize("excluded", ["drop", "keep"])
def test_derived_without_ties_equals_direct_conversion(spam, excluded):
    frame = ranking_frame()
    derived, derived_pol = ss._ratings(frame, "ranking", ties="drop", spam=spam, excluded=excluded)
    direct, direct_pol = rt.ranking_to_pairs(frame, ties="drop", spam=spam, excluded=excluded)
    pd.testing.assert_frame_equal(derived.reset_index(drop=True), direct.reset_index(drop=True))
    assert derived_pol == direct_pol
    assert direct_pol["dropped_units"]["tie"] > 0


def test_reused_pairs_equal_the_ranking_conversion():
    frame = ranking_frame()
    report = ss.report_from_frame(frame, study="t", protocol="ranking", n_boot=20)
    again = ss._ranking(ss._pairs(frame, "ranking", excluded="drop"), "ranking", seed=0, n_boot=20, notes=[])
    assert report["ranking"] == again


def test_outcomes_like_dip_table_13():
    frame = ranking_frame()
    out = ss.outcome_counts(frame, "ranking").set_index("judgment")["outcome"]
    assert out["a0"] == "reference" and out["a1"] == "tie" and out["a2"] == "system"
    assert out["b2"] == "tie" and out["c3"] == "system"


def test_control_uses_real_items_and_the_excluded_policy():
    frame = ranking_frame()
    drop = ss.report_from_frame(frame, study="t", protocol="ranking", n_boot=10)
    keep = ss.report_from_frame(frame, study="t", protocol="ranking", n_boot=10, excluded="keep")
    assert drop["control"]["n_judgments"] == 6  # a, b on the 3 real items
    assert keep["control"]["n_judgments"] == 9
    spam_kept = ss.report_from_frame(frame, study="t", protocol="ranking", n_boot=10, spam="keep")
    assert spam_kept["control"] == drop["control"]


def test_judgment_protocol_report():
    rows = []
    for ann, labels in {"a": ["ok", "bad", "ok", "ok"], "b": ["ok", "bad", "bad", "ok"]}.items():
        for i, lab in enumerate(labels):
            rows.append({"judgment": f"{ann}{i}", "item": f"x{i}", "annotator": ann, "system": "s1",
                         "is_reference": False, "is_spam_item": False, "phenomenon": "", "rank": None,
                         "choice": None, "label": lab, "excluded": False})
    frame, slug, protocol = ss.stats_frame(pd.DataFrame(rows).assign(protocol="judgment", study="j",
                                                                     is_spam=False))
    report = ss.report_from_frame(frame, study=slug, protocol=protocol)
    assert report["unit"] == "items" and report["n_items"] == 4 and report["n_raters"] == 2
    assert report["coefficients"]["percent_agreement"]["value"] == pytest.approx(0.75)
    assert "cohen_kappa" in report["coefficients"]
    assert report["control"] is None and report["ranking"] is None and report["without_ties"] is None
    assert report["by_phenomenon"] == {}
    assert any("no ties" in n for n in report["notes"])


def test_report_options_defaults_and_errors():
    options, errors = ss.report_options({})
    assert options == {"ties": "keep", "spam": "drop", "excluded": "drop", "pilot": "drop",
                       "ranking_coding": "system", "weights": "identity", "seed": 0, "n_boot": 1000} and errors == {}
    options, errors = ss.report_options({"ties": "drop", "bootstrap": "0", "weights": "cubic", "seed": "-1",
                                         "ranking_coding": "pos"})
    assert options["ties"] == "drop"
    assert set(errors) == {"bootstrap", "weights", "seed", "ranking_coding"}
    assert ss.report_options({"ranking_coding": "position"})[0]["ranking_coding"] == "position"


def test_unknown_protocol_in_export():
    frame = pd.DataFrame([{"judgment": "j", "item": "x", "annotator": "a", "system": "s", "protocol": "poll"}])
    with pytest.raises(ss.ReportError, match="unknown protocol 'poll'"):
        ss.stats_frame(frame, source="f.csv")


@pytest.mark.parametrize("ties, other", [("keep", "without_ties"), ("drop", "with_ties")])
def test_each_phenomenon_reports_agreement_with_and_without_ties(ties, other):
    """DiP Table 13 / Jwalapuram et al.: per phenomenon, both variants; ties only ever remove units."""
    frame = ranking_frame()
    report = ss.report_from_frame(frame, study="t", protocol="ranking", ties=ties, spam="keep", n_boot=10)
    for name, block in report["by_phenomenon"].items():
        variant = block[other]
        with_ties, without = (block, variant) if ties == "keep" else (variant, block)
        assert "tie" not in without["categories"]
        assert without["n_ratings"] < with_ties["n_ratings"], name
        subset = ss._ratings(frame, "ranking", ties="drop", spam="keep", excluded="drop")[0]
        expected = ss._agreement(subset[subset["phenomenon"] == name], "identity")
        assert without["coefficients"]["gwet_ac1"] == expected["coefficients"]["gwet_ac1"]
