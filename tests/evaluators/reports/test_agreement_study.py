"""`agreement SLUG` and `agreement --judgments EXPORT`: the study report and its policies."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.handout.exclusion import annotator_exclude
from tests.report_study import DATA_FACTS, choice_study, ranking_study

pytestmark = pytest.mark.django_db


def report(*args, **kw) -> dict:
    out = StringIO()
    call_command("agreement", *args, json=True, stdout=out, **kw)
    return json.loads(out.getvalue())


def export(study, tmp_path, fmt: str) -> str:
    path = tmp_path / f"export.{fmt}"
    call_command("export_judgments", study.slug, format=fmt, output=str(path), stderr=StringIO())
    return str(path)


@pytest.fixture
def ranked():
    return ranking_study()


def test_ranking_report_shape(ranked):
    r = report(ranked.slug)
    assert r["study"] == "rk" and r["protocol"] == "ranking" and r["unit"] == "candidate pairs"
    # 12 real items x 3 pairs, each judged by the 3 annotators; spam items dropped by default
    assert r["n_items"] == 36 and r["n_raters"] == 3 and r["n_ratings"] == 108
    assert "tie" in r["categories"]
    assert set(r["coefficients"]) >= {"percent_agreement", "gwet_ac1", "fleiss_kappa", "conger_kappa",
                                      "krippendorff_alpha", "brennan_prediger"}
    for coef in r["coefficients"].values():
        assert set(coef) >= {"value", "se", "ci_low", "ci_high", "p_value"}
    assert len(r["pairwise_cohen_kappa"]) == 3
    assert r["policies"]["ties"] == "keep" and r["policies"]["spam"] == "drop"
    assert r["policies"]["dropped"]["judgments_spam_item"] > 0
    assert "tie" not in r["without_ties"]["categories"]
    assert set(r["by_phenomenon"]) == {"it-sie", "it-er"}
    for block in r["by_phenomenon"].values():
        assert {"gwet_ac1", "percent_agreement"} <= set(block["coefficients"])
        assert block["n_reference_won"] + block["n_system_won"] + block["n_tie"] + block["n_invalid"] \
            == block["n_judgments_with_reference"] == 18
    ctrl = r["control"]
    assert ctrl["n_judgments"] == 36
    assert ctrl["share"] == pytest.approx(ctrl["n_reference_won"] / 36)
    assert ctrl["n_reference_won"] == sum(b["n_reference_won"] for b in r["by_phenomenon"].values())
    systems = [s["system"] for s in r["ranking"]["systems"]]
    assert sorted(systems) == ["reference", "sys1", "sys2"]
    assert systems[0] == "reference"  # the crafted answers rank it first most often
    assert set(r["methods"]) >= {"gwet_ac1", "control", "ranking", "by_phenomenon"}


def same_report(from_file: dict, direct: dict) -> bool:
    """Every number equal; of ``facts``, those the file records (the file's own say collection "file")."""
    file_facts, facts = from_file.pop("facts"), direct.pop("facts")
    assert file_facts["collection"]["how"] == "file" and facts["collection"]["how"] == "native"
    assert {k: file_facts[k] for k in DATA_FACTS} == {k: facts[k] for k in DATA_FACTS}
    assert file_facts["recorded"]["timing"]["n_timed"] == facts["recorded"]["timing"]["n_timed"]
    assert file_facts["recorded"]["blinding"] is None and facts["recorded"]["blinding"] is True
    return from_file == direct


def test_reproducible_from_csv_and_jsonl_exports(ranked, tmp_path):
    assert same_report(report(judgments=export(ranked, tmp_path, "csv")), report(ranked.slug))
    assert same_report(report(judgments=export(ranked, tmp_path, "jsonl")), report(ranked.slug))


def test_options_reproducible_from_export(ranked, tmp_path):
    kw = {"ties": "drop", "spam": "keep", "seed": 7, "bootstrap": 50}
    assert same_report(report(judgments=export(ranked, tmp_path, "csv"), **kw), report(ranked.slug, **kw))


def test_dropping_ties(ranked):
    keep, drop = report(ranked.slug), report(ranked.slug, ties="drop")
    assert "tie" not in drop["categories"]
    assert drop["n_ratings"] < keep["n_ratings"]
    assert drop["n_ratings"] == keep["n_ratings"] - drop["policies"]["dropped"]["units_tie"]
    assert drop["policies"]["dropped"]["units_tie"] > 0
    # Both variants are always in the report, whichever is the main one.
    assert drop["with_ties"]["coefficients"] == keep["coefficients"]
    assert keep["without_ties"]["coefficients"] == drop["coefficients"]
    assert "without_ties" not in drop and "with_ties" not in keep


def test_keeping_spam_items_adds_units(ranked):
    dropped, kept = report(ranked.slug), report(ranked.slug, spam="keep")
    assert kept["n_items"] > dropped["n_items"]
    assert kept["policies"]["dropped"].get("judgments_spam_item", 0) == 0
    # The control figure and the ranking use real items whatever the spam policy.
    assert kept["control"] == dropped["control"]
    assert kept["ranking"] == dropped["ranking"]


def test_excluding_an_annotator(ranked):
    before = report(ranked.slug)
    annotator = ranked.annotators.order_by("sequence").first()
    annotator_exclude(annotator=annotator, reason="failed checks")
    after = report(ranked.slug)
    assert after["n_raters"] == before["n_raters"] - 1 == 2
    assert after["policies"]["dropped"]["judgments_excluded_annotator"] > 0
    assert after["control"]["n_judgments"] < before["control"]["n_judgments"]
    assert "cohen_kappa" in after["coefficients"]  # exactly two raters left
    kept = report(ranked.slug, excluded="keep")
    assert kept["n_raters"] == 3
    assert kept["coefficients"] == before["coefficients"]


def test_choice_study_counts_like_dip_table_13(tmp_path):
    study = choice_study()
    r = report(study.slug)
    assert r["unit"] == "items" and r["protocol"] == "choice"
    assert "invalid" not in r["categories"]
    invalid = r["policies"]["dropped"]["judgments_invalid"]
    assert invalid == sum(b["n_invalid"] for b in r["by_phenomenon"].values()) == r["control"]["n_invalid"]
    assert invalid > 0
    ctrl = r["control"]
    assert ctrl["n_reference_won"] + ctrl["n_system_won"] + ctrl["n_tie"] + ctrl["n_invalid"] == ctrl["n_judgments"]
    assert ctrl["n_neither"] > 0 and ctrl["n_tie"] >= ctrl["n_neither"]
    assert r["ranking"]["sign_test"] is not None  # two systems
    assert same_report(report(judgments=export(study, tmp_path, "csv")), r)


def test_text_summary(ranked):
    out = StringIO()
    call_command("agreement", ranked.slug, stdout=out)
    text = out.getvalue()
    assert "Gwet's AC1" in text and "without ties" in text and "it-sie" in text
    assert "Human ranking of the systems" in text and "Control: the hidden reference won" in text


# ---------------------------------------------------------------- bad input
def test_unknown_slug():
    with pytest.raises(CommandError, match="No study with slug 'nope'"):
        call_command("agreement", "nope", stdout=StringIO())


def test_export_missing_column(tmp_path):
    path = tmp_path / "e.csv"
    path.write_text("item,annotator,system,protocol\nx,a,s,ranking\n")
    with pytest.raises(CommandError, match="missing column\\(s\\) judgment"):
        call_command("agreement", judgments=str(path), stdout=StringIO())


def test_export_bad_rank(tmp_path):
    path = tmp_path / "e.csv"
    path.write_text("judgment,item,annotator,system,protocol,rank\nj1,x,a,s1,ranking,1\nj1,x,a,s2,ranking,two\n")
    with pytest.raises(CommandError, match="row 2: column 'rank': 'two' is not a number"):
        call_command("agreement", judgments=str(path), stdout=StringIO())


def test_export_bad_boolean(tmp_path):
    path = tmp_path / "e.csv"
    path.write_text("judgment,item,annotator,system,protocol,rank,is_spam\nj1,x,a,s1,ranking,1,maybe\n")
    with pytest.raises(CommandError, match="column 'is_spam': 'maybe' is not a boolean"):
        call_command("agreement", judgments=str(path), stdout=StringIO())


def test_export_mixing_studies(tmp_path):
    path = tmp_path / "e.csv"
    path.write_text("study,judgment,item,annotator,system,protocol,rank\ns1,j1,x,a,s1,ranking,1\n"
                    "s2,j2,x,a,s1,ranking,1\n")
    with pytest.raises(CommandError, match="mixes studies s1, s2"):
        call_command("agreement", judgments=str(path), stdout=StringIO())


def test_negative_bootstrap(ranked):
    with pytest.raises(CommandError, match="--bootstrap"):
        call_command("agreement", ranked.slug, bootstrap=0, stdout=StringIO())


def test_report_frame_is_the_export_frame(ranked):
    """The lean column-wise frame the report reads equals the export's judgments_frame."""
    import pandas as pd

    from evaluators.reports.study_stats import stats_frame, study_export_frame
    from annotation.exporting.judgments import judgments_frame

    lean, slug, protocol = stats_frame(study_export_frame(ranked))
    full, _, _ = stats_frame(judgments_frame(ranked))
    pd.testing.assert_frame_equal(lean, full)
    assert (slug, protocol) == ("rk", "ranking") and len(lean) == ranked.items.count() * 3 * 3


def test_ranking_coding_by_position_is_an_option_and_is_reported(ranked):
    by_system = report(ranked.slug)
    by_position = report(ranked.slug, ranking_coding="position")
    assert by_system["policies"]["ranking_coding"] == "system"
    assert by_position["policies"]["ranking_coding"] == "position"
    assert set(by_position["categories"]) <= {"first", "second", "tie"}
    assert len(by_system["categories"]) > 3 or set(by_system["categories"]) != {"first", "second", "tie"}
    same = by_system["coefficients"]["percent_agreement"]["value"]
    assert by_position["coefficients"]["percent_agreement"]["value"] == pytest.approx(same)
    assert "ranking_coding=position" in by_position["methods"]["unit"]
