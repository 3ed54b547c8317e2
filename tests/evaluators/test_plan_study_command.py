"""``plan_study``: a pilot study or file → power per pair, rank ranges, judgments, hours; the items for a power."""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluators.reports.study_pilot import study_pilot
from evaluators.reports.study_stats import study_report
from tests.plan_study import JUDGMENT_SECONDS, esa_pilot_study

TED = Path("fixtures/wmt-mqm/mqm_ted_ende.subset.tsv")


def run(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command("plan_study", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.django_db
def test_a_pilot_study_is_read_as_the_report_reads_it_with_its_times() -> None:
    study = esa_pilot_study()
    pilot = study_pilot(study)
    ranking = {r["system"]: r["score"] for r in study_report(study, n_boot=50)["ranking"]["systems"]}
    assert {s: m for s, m in zip(pilot.systems, pilot.means(), strict=True)} == pytest.approx(ranking)
    assert pilot.raters_per_cell == 2.0 and pilot.within_variance is not None
    assert pilot.seconds_per_judgment == pytest.approx(JUDGMENT_SECONDS / 3)  # one judgment rates 3 candidates
    result = run("--pilot", study.slug, "--items", "12", "--raters-per-item", "2", "--seeds", "200")
    plan = result["plan"]
    assert plan["judgments"] == 12 * 3 * 2
    assert plan["annotator_hours"] == pytest.approx(12 * 3 * 2 * JUDGMENT_SECONDS / 3 / 3600)
    assert [s["system"] for s in plan["systems"]] == ["reference", "sys1", "sys2"]
    power = {(p["better"], p["worse"]): p["power"] for p in plan["pairs"]}
    assert power[("reference", "sys2")] > power[("sys1", "sys2")]
    assert any("rater noise modelled" in n for n in plan["notes"]) is False  # same raters as the pilot


def test_a_file_pilot_plans_and_sizes_a_pair() -> None:
    result = run("--pilot-file", str(TED), "--format", "mqm-tsv", "--items", "200", "--pair", "Facebook-AI,Nemo",
                 "--seeds", "200", "--seconds-per-judgment", "36")
    assert result["pilot"]["items"] == 101 and result["pilot"]["systems"] == 14
    plan = result["plan"]
    assert len(plan["pairs"]) == 91 and plan["judgments"] == 200 * 14
    assert plan["annotator_hours"] == pytest.approx(200 * 14 * 36 / 3600)
    assert all(1 <= s["expected_rank_width"] <= 14 for s in plan["systems"])
    target = result["for_power"]
    assert target["pair"] == ["Facebook-AI", "Nemo"] and target["power"] >= 0.8
    smaller = run("--pilot-file", str(TED), "--format", "mqm-tsv", "--items", str(target["items"] - 1),
                  "--seeds", "200", "--systems", "14")["plan"]
    assert [p["power"] for p in smaller["pairs"] if {p["better"], p["worse"]} == {"Facebook-AI", "Nemo"}][0] < 0.8
    top = run("--pilot-file", str(TED), "--format", "mqm-tsv", "--items", "50", "--systems", "3", "--seeds", "50")
    means = {s["system"]: s["score"] for s in plan["systems"]}
    assert set(top["systems_planned"]) == set(sorted(means, key=lambda s: -means[s])[:3])
    assert top["plan"]["annotator_hours"] is None and any("not known" in n for n in top["plan"]["notes"])


def test_text_output_names_the_figures() -> None:
    out = io.StringIO()
    call_command("plan_study", "--pilot-file", str(TED), "--format", "mqm-tsv", "--items", "100", "--seeds", "50",
                 "--pair", "ref,Nemo", stdout=out)
    text = out.getvalue()
    assert "100 items × 14 systems × 1 rater(s): 1400 judgments" in text and "annotator-hours not known" in text
    assert "ref over Nemo:" in text
    assert np.isfinite(float(text.split("items give power ")[1].split("%")[0]))


@pytest.mark.parametrize(("args", "message"), [
    (["--items", "5"], "--items: between 10"),
    ([], "--items: give the planned number"),
    (["--items", "50", "--pair", "ref"], "--pair: 'ref': give two systems"),
    (["--items", "50", "--pair", "ref,nobody"], "--pair: no system 'nobody'"),
    (["--items", "50", "--systems", "15"], "--systems: between 2 and the pilot's 14"),
    (["--items", "50", "--power", "1.5"], "--power: between 0 and 1"),
    (["--items", "50", "--seeds", "3"], "--seeds: between 10"),
    (["--items", "50", "--raters-per-item", "0"], "--raters-per-item: between 1"),
    (["--items", "50", "--seconds-per-judgment", "-1"], "--seconds-per-judgment: above 0"),
])
def test_bad_arguments_name_the_option(args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        call_command("plan_study", "--pilot-file", str(TED), "--format", "mqm-tsv", *args, stdout=io.StringIO())


@pytest.mark.django_db
def test_bad_sources_name_the_option(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="--format: give the format"):
        call_command("plan_study", "--pilot-file", str(TED), "--items", "50", stdout=io.StringIO())
    with pytest.raises(CommandError, match="--pilot: no study 'nope'"):
        call_command("plan_study", "--pilot", "nope", "--items", "50", stdout=io.StringIO())
    bad = tmp_path / "s.csv"
    bad.write_text("system,segment,scorer,score\na,1,human,1\n", encoding="utf-8")
    with pytest.raises(CommandError, match="--pilot-file: "):
        call_command("plan_study", "--pilot-file", str(bad), "--format", "scores", "--items", "50", stdout=io.StringIO())
