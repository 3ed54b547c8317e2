"""``alt_test``: the ratings CSV and a stored judgment study give the alt-test of every judge; errors name the option."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.handout.services import annotators_create
from evaluators.stats.alt_test import alt_test
from tests.evaluators.stats.test_alt_test import RUNS
from tests.factories import make_study
from tests.report_study import answer_all


def run(*args: str) -> dict:
    out = io.StringIO()
    call_command("alt_test", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def write_run(tmp_path: Path, runs: list[dict]) -> tuple[Path, Path]:
    ratings = tmp_path / "ratings.csv"
    lines = ["item,rater,label"] + [f"{i},{h},{v}" for h, labels in runs[0]["humans"].items() for i, v in labels.items()]
    ratings.write_text("\n".join(lines) + "\n", encoding="utf-8")
    judges = tmp_path / "judges.csv"
    lines = ["judge,item,label"] + [f"{r['judge_name']},{i},{v}" for r in runs for i, v in r["judge"].items()]
    judges.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ratings, judges


def test_a_ratings_csv_gives_the_authors_figures_for_every_judge(tmp_path: Path) -> None:
    runs = [r for r in RUNS if r["kind"] == "categorical" and r["epsilon"] == 0.3]
    ratings, judges = write_run(tmp_path, runs)
    report = run("--ratings", str(ratings), "--item", "item", "--rater", "rater", "--label", "label",
                 "--judges", str(judges), "--epsilon", "0.3")
    assert report["scoring"] == "accuracy" and report["annotators"] == 9
    by_name = {j["judge"]: j for j in report["judges"]}
    for r in runs:
        got = by_name[r["judge_name"]]
        assert got["winning_rate"] == pytest.approx(r["winning_rate"], abs=1e-9)
        assert got["advantage_probability"] == pytest.approx(r["advantage_probability"], abs=1e-9)
        assert got["passed"] == (r["winning_rate"] >= 0.5)
        assert got["dropped_annotators"] == [{"annotator": "ann8", "instances": got["dropped_annotators"][0]["instances"]}]
        assert len(got["per_annotator"]) == 8


def test_numeric_labels_with_neg_rmse(tmp_path: Path) -> None:
    runs = [r for r in RUNS if r["kind"] == "numeric" and r["epsilon"] == 0.3]
    ratings, judges = write_run(tmp_path, runs)
    report = run("--ratings", str(ratings), "--item", "item", "--rater", "rater", "--label", "label",
                 "--judges", str(judges), "--scoring", "neg_rmse", "--epsilon", "0.3")
    assert {j["judge"]: j["winning_rate"] for j in report["judges"]} == pytest.approx(
        {r["judge_name"]: r["winning_rate"] for r in runs}, abs=1e-9)


@pytest.mark.django_db
def test_a_judgment_study_is_read_as_labels_per_item_and_annotator(tmp_path: Path) -> None:
    study = make_study(slug="jd", protocol="judgment", n_items=12, n_candidates=1,
                       settings={"labels": ["correct", "wrong"], "redundancy": 3, "spam_rate": 0.0})
    answer_all(study, annotators_create(study=study, count=3))
    report = run("--slug", "jd", "--judges", str(_judge_of_first_annotator(tmp_path, study)), "--min-instances", "5")
    (judge,) = report["judges"]
    assert report["annotators"] == 3 and report["source"] == "study jd"
    # The judge copies annotator 1: against annotator 1's colleagues it is exactly as aligned as annotator 1.
    first = next(a for a in judge["per_annotator"] if a["annotator"] == _first_code(study))
    assert first["advantage_probability"] == 1.0


def _first_code(study) -> str:
    from evaluators.reports.study_stats import stats_frame, study_export_frame
    frame, _, _ = stats_frame(study_export_frame(study))
    return sorted(frame["annotator"].unique())[0]


def _judge_of_first_annotator(tmp_path: Path, study) -> Path:
    from evaluators.reports.study_stats import stats_frame, study_export_frame
    frame, _, _ = stats_frame(study_export_frame(study))
    first = frame[frame["annotator"] == _first_code(study)]
    path = tmp_path / "judge.csv"
    path.write_text("judge,item,label\n" + "".join(f"copy,{r.item},{r.label}\n" for r in first.itertuples()),
                    encoding="utf-8")
    return path


@pytest.mark.django_db
def test_a_ranking_study_is_refused_with_the_way_out(tmp_path: Path) -> None:
    make_study(slug="rk")
    judges = tmp_path / "j.csv"
    judges.write_text("judge,item,label\ngpt,ext-0,1\n", encoding="utf-8")
    with pytest.raises(CommandError, match="a ranking study has no single label.*use --ratings"):
        call_command("alt_test", "--slug", "rk", "--judges", str(judges), stdout=io.StringIO())


@pytest.mark.parametrize(("args", "message"), [
    (["--epsilon", "1.5"], "--epsilon: at least 0 and below 1"),
    (["--q", "0"], "--q: between 0 and 1"),
    (["--min-annotators", "1"], "--min-annotators: at least 2"),
])
def test_bad_options_are_named(tmp_path: Path, args: list[str], message: str) -> None:
    ratings, judges = write_run(tmp_path, RUNS[:1])
    with pytest.raises(CommandError, match=message):
        call_command("alt_test", "--ratings", str(ratings), "--item", "item", "--rater", "rater", "--label", "label",
                     "--judges", str(judges), *args, stdout=io.StringIO())


def test_bad_files_are_named_by_line(tmp_path: Path) -> None:
    ratings, judges = write_run(tmp_path, RUNS[:1])
    with pytest.raises(CommandError, match="--item, --rater, --label: needed with --ratings"):
        call_command("alt_test", "--ratings", str(ratings), "--judges", str(judges), stdout=io.StringIO())
    with pytest.raises(CommandError, match="--ratings: line 1: missing column\\(s\\) annotator"):
        call_command("alt_test", "--ratings", str(ratings), "--item", "item", "--rater", "annotator", "--label",
                     "label", "--judges", str(judges), stdout=io.StringIO())
    bad = tmp_path / "bad.csv"
    bad.write_text("judge,item,label\ngpt,i1,3\ngpt,i1,4\n", encoding="utf-8")
    with pytest.raises(CommandError, match="--judges: line 3: a second label of item 'i1' by judge 'gpt'"):
        call_command("alt_test", "--ratings", str(ratings), "--item", "item", "--rater", "rater", "--label", "label",
                     "--judges", str(bad), stdout=io.StringIO())
    bad.write_text("judge,item,label\ngpt,i1,high\n", encoding="utf-8")
    with pytest.raises(CommandError, match="--judges: line 2: 'high' is not a number"):
        call_command("alt_test", "--ratings", str(ratings), "--item", "item", "--rater", "rater", "--label", "label",
                     "--judges", str(bad), "--scoring", "neg_rmse", stdout=io.StringIO())


def test_the_pure_function_and_the_command_agree_on_the_dropped(tmp_path: Path) -> None:
    r = RUNS[0]
    result = alt_test(r["judge"], r["humans"])
    ratings, judges = write_run(tmp_path, [r])
    report = run("--ratings", str(ratings), "--item", "item", "--rater", "rater", "--label", "label",
                 "--judges", str(judges))
    assert report["judges"][0]["dropped_instances"] == len(result.dropped_instances)


@pytest.mark.django_db
def test_stored_judges_are_used_without_judges_file(tmp_path: Path) -> None:
    study = make_study(slug="js", protocol="judgment", n_items=12, n_candidates=1, phenomena=("a", "b"),
                       settings={"labels": ["correct", "wrong"], "redundancy": 3, "spam_rate": 0.0})
    answer_all(study, annotators_create(study=study, count=3))
    with pytest.raises(CommandError, match="--judges: study js has no judge stored with import_judge"):
        call_command("alt_test", "--slug", "js", stdout=io.StringIO())
    path = _judge_of_first_annotator(tmp_path, study)
    from_file = run("--slug", "js", "--judges", str(path), "--min-instances", "5")
    stored = tmp_path / "copy.jsonl"
    stored.write_text("".join(json.dumps({"item": line.split(",")[1], "label": line.split(",")[2]}) + "\n"
                              for line in path.read_text(encoding="utf-8").splitlines()[1:]), encoding="utf-8")
    call_command("import_judge", "js", str(stored), "--name", "copy", stdout=io.StringIO())
    assert run("--slug", "js", "--min-instances", "5") == from_file
    per_a = run("--slug", "js", "--min-instances", "2", "--phenomenon", "a")
    assert per_a["source"] == "study js, phenomenon a"
    assert all(a["instances"] == 6 for a in per_a["judges"][0]["per_annotator"])
    assert per_a == run("--slug", "js", "--judges", str(path), "--min-instances", "2", "--phenomenon", "a")
    with pytest.raises(CommandError, match=r"--phenomenon: no instance of phenomenon 'c' in study js \(phenomena: a, b\)"):
        call_command("alt_test", "--slug", "js", "--phenomenon", "c", stdout=io.StringIO())
    ratings, judges = write_run(tmp_path, RUNS[:1])
    with pytest.raises(CommandError, match="--phenomenon: only with --slug"):
        call_command("alt_test", "--ratings", str(ratings), "--item", "item", "--rater", "rater", "--label", "label",
                     "--judges", str(judges), "--phenomenon", "a", stdout=io.StringIO())
    with pytest.raises(CommandError, match="--judges: needed with --ratings"):
        call_command("alt_test", "--ratings", str(ratings), "--item", "item", "--rater", "rater", "--label", "label",
                     stdout=io.StringIO())


@pytest.mark.django_db
def test_pilot_annotators_kept_or_dropped(tmp_path: Path) -> None:
    study = make_study(slug="jp", protocol="judgment", n_items=8, n_candidates=1,
                       settings={"labels": ["correct", "wrong"], "redundancy": 4, "spam_rate": 0.0})
    answer_all(study, annotators_create(study=study, count=3))
    pilot = annotators_create(study=study, count=1)[0]
    answer_all(study, [pilot])
    type(pilot).objects.filter(pk=pilot.pk).update(is_pilot=True)
    path = _judge_of_first_annotator(tmp_path, study)
    kept = run("--slug", "jp", "--judges", str(path), "--min-instances", "5")
    dropped = run("--slug", "jp", "--judges", str(path), "--min-instances", "5", "--pilot", "drop")
    assert kept["annotators"] == 4 and dropped["annotators"] == 3
    assert pilot.code not in {a["annotator"] for a in dropped["judges"][0]["per_annotator"]}
