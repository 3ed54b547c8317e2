"""``select_items``: the long CSV and a study's stored scores give subset2evaluate's rankings; budget, JSON, errors.

The reference rankings are those of tests/evaluators/stats/data/subset2evaluate_ref.json (subset2evaluate 1.0.27).
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluators.metrics.scores import scores_import
from evaluators.models import Evaluator, MetricScore
from studies.models import Item
from studies.importing.study_file import study_import
from tests.evaluators.stats.test_selection import REF

SYSTEMS = REF["systems"]
BY_ID = {(r["method"], r.get("metric") or r.get("seed")): r for r in REF["reference"]}


def write_csv(path: Path, *, drop: tuple[str, str] | None = None, extra: str = "") -> Path:
    lines = ["system,segment,scorer,score"]
    for seg in REF["segments"]:
        for metric in ("cont", "grid"):
            for system, value in zip(SYSTEMS, seg[metric]):
                if (system, seg["segment"]) != drop or metric != "cont":
                    lines.append(f"{system},{seg['segment']},{metric},{value!r}")
    path.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    return path


def run(*args: str) -> dict:
    out = io.StringIO()
    call_command("select_items", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize("method", ["metric_avg", "metric_var", "metric_cons"])
@pytest.mark.parametrize("metric", ["cont", "grid"])
def test_csv_gives_subset2evaluate_ranking_and_utilities(tmp_path, method, metric):
    result = run("--scores", str(write_csv(tmp_path / "s.csv")), "--metric", metric, "--method", method)
    ref = BY_ID[(method, metric)]
    assert set(result) == {"method", "metric", "items"} and (result["method"], result["metric"]) == (method, metric)
    assert [item["segment"] for item in result["items"]] == ref["order"]
    utility_of = dict(zip([s["segment"] for s in REF["segments"]], ref["utilities"]))
    assert max(abs(item["utility"] - utility_of[item["segment"]]) for item in result["items"]) <= 1e-9
    assert all(set(item) == {"segment", "utility"} for item in result["items"])


def test_random_follows_the_seed(tmp_path):
    path = str(write_csv(tmp_path / "s.csv"))
    for seed in (0, 7):
        result = run("--scores", path, "--metric", "cont", "--method", "random", "--seed", str(seed))
        assert [item["segment"] for item in result["items"]] == BY_ID[("random", seed)]["order"]


@pytest.mark.parametrize("budget, n", [("5", 5), ("25%", 10), ("12.5%", 5), ("400", 40)])
def test_budget_keeps_the_most_useful(tmp_path, budget, n):
    result = run("--scores", str(write_csv(tmp_path / "s.csv")), "--metric", "cont", "--method", "metric_var",
                 "--budget", budget)
    assert [item["segment"] for item in result["items"]] == BY_ID[("metric_var", "cont")]["order"][:n]


def test_lower_is_better_flips_metric_avg_only(tmp_path):
    path = str(write_csv(tmp_path / "s.csv"))
    plain = run("--scores", path, "--metric", "cont", "--method", "metric_avg")
    flipped = run("--scores", path, "--metric", "cont", "--method", "metric_avg", "--lower-is-better")
    assert {i["segment"]: -i["utility"] for i in plain["items"]} == {i["segment"]: i["utility"] for i in flipped["items"]}
    var = run("--scores", path, "--metric", "cont", "--method", "metric_var", "--lower-is-better")
    assert [i["segment"] for i in var["items"]] == BY_ID[("metric_var", "cont")]["order"]


def test_plain_output_is_a_table(tmp_path):
    out = io.StringIO()
    call_command("select_items", "--scores", str(write_csv(tmp_path / "s.csv")), "--metric", "grid",
                 "--method", "metric_cons", "--budget", "3", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("metric_cons on grid: 3 of 40 items, 6 systems")
    assert lines[1].split() == ["rank", "segment", "utility"]
    assert [line.split()[1] for line in lines[2:]] == BY_ID[("metric_cons", "grid")]["order"][:3]


@pytest.mark.parametrize("args, message", [
    (["--metric", "cont", "--method", "kmeans"], "--method: unknown method 'kmeans'"),
    (["--metric", "bleu", "--method", "metric_avg"], "--metric: no scorer 'bleu'"),
    (["--metric", "cont", "--method", "metric_avg", "--budget", "0"], "--budget: '0': a number of items"),
    (["--metric", "cont", "--method", "metric_avg", "--budget", "1%"], "--budget: '1%' of 40"),
    (["--metric", "cont", "--method", "diversity"], "diversity needs the candidates' texts"),
    (["--metric", "cont", "--method", "diversity", "--similarity", "lm"], "--similarity: unknown similarity 'lm'"),
])
def test_bad_arguments_are_one_line(tmp_path, args, message):
    with pytest.raises(CommandError, match=message.replace("(", r"\(")) as exc:
        call_command("select_items", "--scores", str(write_csv(tmp_path / "s.csv")), *args)
    assert exc.value.returncode == 2


def test_csv_problems_name_the_line_and_missing_cells(tmp_path):
    bad = write_csv(tmp_path / "bad.csv", extra="sys0,doc0-0,grid,abc\n")
    with pytest.raises(CommandError, match=r"line 482: score 'abc' is not a number"):
        call_command("select_items", "--scores", str(bad), "--metric", "grid", "--method", "metric_avg")
    holed = write_csv(tmp_path / "holed.csv", drop=("sys3", "doc1-2"))
    with pytest.raises(CommandError, match=r"'cont' has no score for system 'sys3' on segment 'doc1-2'"):
        call_command("select_items", "--scores", str(holed), "--metric", "cont", "--method", "metric_var")
    with pytest.raises(CommandError, match=r"--scores: .*nope.csv"):
        call_command("select_items", "--scores", str(tmp_path / "nope.csv"), "--metric", "cont",
                     "--method", "metric_var")


def stored_study(slug: str = "sel"):
    """A study of the reference's segments: its 6 systems plus a scored reference (spam copies get no scores)."""
    items = [{"id": seg["segment"], "source": f"Quelle {k}.",
              "candidates": [{"system": "reference", "text": "Die Referenz.", "is_reference": True}]
              + [{"system": s, "text": text or "-"} for s, text in zip(SYSTEMS, seg["tgt"])]}
             for k, seg in enumerate(REF["segments"])]
    data = {"slug": slug, "title": "Selection", "protocol": "ranking", "items": items,
            "settings": {"redundancy": 1, "allow_ties": True, "spam_rate": 0.1, "unit": "sentence",
                         "instructions": "Rank them."}}
    study = study_import(data=data, status="open")
    lines = ["item,system,score,name,higher_is_better"]
    for seg in REF["segments"]:
        lines.append(f"{seg['segment']},reference,100.0,cont,true")  # left out: a reference is no system
        lines += [f"{seg['segment']},{s},{v!r},cont,true" for s, v in zip(SYSTEMS, seg["cont"])]
        lines += [f"{seg['segment']},{s},{-v!r},err,false" for s, v in zip(SYSTEMS, seg["grid"])]
    scores_import(study=study, file_name="s.csv", content="\n".join(lines) + "\n")
    return study


@pytest.mark.django_db
def test_slug_uses_stored_scores_without_the_references_or_spam_items():
    study = stored_study()
    spam = Item.objects.filter(study=study, is_spam=True).first()
    cont = Evaluator.objects.get(study=study, name="cont")
    MetricScore.objects.bulk_create([MetricScore(evaluator=cont, item=spam, system=s, score=-50.0) for s in SYSTEMS])
    for method in ("metric_avg", "metric_var", "metric_cons"):
        result = run("--slug", "sel", "--metric", "cont", "--method", method)
        assert [i["segment"] for i in result["items"]] == BY_ID[(method, "cont")]["order"]
    # A lower-is-better evaluator is oriented first: -(-grid) ranks as grid.
    result = run("--slug", "sel", "--metric", "err", "--method", "metric_avg")
    assert [i["segment"] for i in result["items"]] == BY_ID[("metric_avg", "grid")]["order"]


@pytest.mark.django_db
def test_slug_diversity_reads_the_candidates_texts():
    stored_study()
    ref = BY_ID[("diversity", "unigram")]
    # The study file cannot hold an empty candidate, so "-" stands for it: compare where no text was empty.
    result = run("--slug", "sel", "--metric", "cont", "--method", "diversity")
    utility_of = dict(zip([s["segment"] for s in REF["segments"]], ref["utilities"]))
    full = {s["segment"] for s in REF["segments"] if all(s["tgt"])}
    assert len(full) > 30
    assert all(abs(i["utility"] - utility_of[i["segment"]]) <= 1e-9 for i in result["items"] if i["segment"] in full)
    bleu = run("--slug", "sel", "--metric", "cont", "--method", "diversity", "--similarity", "bleu")
    bleu_of = dict(zip([s["segment"] for s in REF["segments"]], BY_ID[("diversity", "bleu")]["utilities"]))
    assert all(abs(i["utility"] - bleu_of[i["segment"]]) <= 1e-9 for i in bleu["items"] if i["segment"] in full)


@pytest.mark.django_db
def test_slug_errors():
    stored_study()
    with pytest.raises(CommandError, match="--slug: no study 'nope'"):
        call_command("select_items", "--slug", "nope", "--metric", "cont", "--method", "metric_avg")
    with pytest.raises(CommandError, match=r"--metric: no evaluator 'bleu' in sel; evaluators: cont, err"):
        call_command("select_items", "--slug", "sel", "--metric", "bleu", "--method", "metric_avg")
