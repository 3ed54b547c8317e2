"""``replay``: an MQM release, a long CSV and an mt-metrics-eval directory replayed; the errors name the field."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

ROOT = Path(__file__).resolve().parents[2]
TED = ROOT / "fixtures" / "wmt-mqm" / "mqm_ted_ende.subset.tsv"


def run(*args: str) -> dict:
    out = io.StringIO()
    call_command("replay", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def long_csv(path: Path, *, systems: int = 5, items: int = 30, metric_noise: float = 0.5) -> Path:
    rng = np.random.default_rng(4)
    lines = ["system,segment,scorer,score"]
    for s in range(systems):
        for i in range(items):
            human = s * 0.4 + rng.normal()
            lines.append(f"sys{s},seg{i},human,{human:.4f}")
            lines.append(f"sys{s},seg{i},metricA,{human + rng.normal() * metric_noise:.4f}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_an_mqm_release_is_replayed_with_its_reference_system_named() -> None:
    report = run(str(TED), "--format", "mqm-tsv", "--seeds", "3", "--budgets", "20,50", "--method", "metric_var",
                 "--method", "diversity")
    assert (report["systems"], report["metric"]) == (14, "chrF")
    assert any("system 'ref'" in note for note in report["notes"])
    runs = {r["method"]: r for r in report["methods"]}
    assert set(runs) == {"random", "metric_var", "diversity"}
    assert runs["random"]["seeds"] == 3 and runs["metric_var"]["seeds"] == 1
    point = runs["random"]["points"][0]
    assert point["items"] == int(report["items"] * 0.2) and point["judgments"] == point["items"] * 14
    assert 0 <= point["spa_low"] <= point["spa"] <= point["spa_high"] <= 1
    assert 0 <= point["top_low"] <= point["top_high"] <= 1
    assert runs["metric_var"]["parity"] > 0


def test_a_long_csv_takes_its_only_metric_and_says_so(tmp_path: Path) -> None:
    report = run(str(long_csv(tmp_path / "s.csv")), "--format", "scores", "--seeds", "2", "--budgets", "50")
    assert report["metric"] == "metricA" and any("only metric" in n for n in report["notes"])
    assert [r["method"] for r in report["methods"]] == ["random", "metric_avg", "metric_var", "metric_cons"]
    # All the data orders the systems as all the data (SPA itself may stay below 1: the permutation test's
    # random signs go with positions, so reordered items give other p-values, as in subset2evaluate).
    full = run(str(long_csv(tmp_path / "t.csv")), "--format", "scores", "--seeds", "2", "--budgets", "100")
    assert all(r["points"][0]["pairwise_accuracy"] == 1.0 and r["points"][0]["top"] == 1.0
               for r in full["methods"])


def test_an_mtme_directory_is_read(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    for scorer in ("human", "chrF"):
        lines = [f"sys{s}\t{s + rng.normal():.3f}" for s in range(4) for _ in range(12)]
        (tmp_path / f"{scorer}.seg.score").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = run(str(tmp_path), "--format", "mtme", "--metric", "chrF", "--seeds", "2", "--budgets", "50")
    assert (report["systems"], report["items"]) == (4, 12)


def test_the_null_data_is_said(tmp_path: Path) -> None:
    report = run(str(long_csv(tmp_path / "s.csv")), "--format", "scores", "--seeds", "2", "--budgets", "50",
                 "--null")
    assert report["null"] is True and any(n.startswith("null:") for n in report["notes"])


@pytest.mark.parametrize(("args", "message"), [
    (["--budgets", "10,abc"], "--budgets: 'abc' is not a number"),
    (["--budgets", "50,20"], "--budgets: give increasing"),
    (["--budgets", "150"], "--budgets: 150 is not a percentage"),
    (["--seeds", "0"], "--seeds: between 1"),
    (["--metric", "nope"], "--metric: no complete scores of 'nope'"),
    (["--human", "people"], "no scorer 'people'"),
    (["--method", "diversity"], "--method diversity: needs the candidates' texts"),
])
def test_bad_arguments_name_the_option(tmp_path: Path, args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        call_command("replay", str(long_csv(tmp_path / "s.csv")), "--format", "scores", *args,
                     stdout=io.StringIO())


def test_a_bad_file_is_refused_by_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("system,segment,scorer,score\nsys0,seg1,human,abc\n", encoding="utf-8")
    with pytest.raises(CommandError, match="line 2: score 'abc' is not a number"):
        call_command("replay", str(bad), "--format", "scores", stdout=io.StringIO())
    with pytest.raises(CommandError, match="no such file|does not exist"):
        call_command("replay", str(tmp_path / "missing.tsv"), "--format", "mqm-tsv", stdout=io.StringIO())


def test_an_unknown_reference_system_is_named() -> None:
    with pytest.raises(CommandError, match="reference system 'refZ' is not in the file"):
        call_command("replay", str(TED), "--format", "mqm-tsv", "--reference-system", "refZ", stdout=io.StringIO())


def allocation_csv(path: Path) -> Path:
    rng = np.random.default_rng(9)
    lines = ["system,segment,scorer,score"]
    for s, mean in enumerate([85, 45, 60, 58]):
        for i in range(150):
            lines.append(f"sys{s},seg{i},human,{min(100, max(0, rng.normal(mean, 12))):.3f}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_allocation_replay_compares_uniform_and_adaptive(tmp_path: Path) -> None:
    path = allocation_csv(tmp_path / "scores.csv")
    report = run(str(path), "--format", "scores", "--allocation", "adaptive", "--seeds", "2",
                 "--score-range", "0,100", "--warmup", "10")
    assert set(report["policies"]) == {"uniform", "adaptive"}
    assert report["pairs"] == 6 and report["reference_decisions"]["mean"] >= 3
    assert report["policies"]["adaptive"]["reached_share"] == 1.0
    assert report["saving"] > 0
    out = io.StringIO()
    call_command("replay", str(path), "--format", "scores", "--allocation", "adaptive", "--seeds", "2",
                 "--score-range", "0,100", "--null", stdout=out)
    assert "runs with a false decision" in out.getvalue()


def test_allocation_replay_looks_every_refresh_every_judgments(tmp_path: Path) -> None:
    # The live default (10) unless given; K = 1 looks after each judgment and never needs more judgments than K = 10
    # (the stale view only adds judgments of systems already decided).
    path = allocation_csv(tmp_path / "scores.csv")
    args = (str(path), "--format", "scores", "--allocation", "adaptive", "--seeds", "3", "--score-range", "0,100",
            "--warmup", "10")
    default, each = run(*args), run(*args, "--refresh-every", "1")
    assert default["refresh_every"] == 10 and each["refresh_every"] == 1
    assert each["policies"]["adaptive"]["judgments_to_reference"]["mean"] \
        <= default["policies"]["adaptive"]["judgments_to_reference"]["mean"] \
        <= default["policies"]["uniform"]["judgments_to_reference"]["mean"]
    out = io.StringIO()
    call_command("replay", *args, "--refresh-every", "5", stdout=out)
    assert "looks at its sequences once every 5 judgments" in out.getvalue()
    with pytest.raises(CommandError, match="--refresh-every: at least 1 judgment"):
        run(*args, "--refresh-every", "0")


def test_allocation_needs_a_score_range_the_scores_respect(tmp_path: Path) -> None:
    path = allocation_csv(tmp_path / "scores.csv")
    with pytest.raises(CommandError, match="--score-range LOW,HIGH: required"):
        run(str(path), "--format", "scores", "--allocation", "uniform", "--seeds", "1")
    with pytest.raises(CommandError, match="outside \\[0, 50\\]"):
        run(str(path), "--format", "scores", "--allocation", "uniform", "--seeds", "1", "--score-range", "0,50")
    with pytest.raises(CommandError, match="not LOW,HIGH"):
        run(str(path), "--format", "scores", "--allocation", "uniform", "--seeds", "1", "--score-range", "x")


def _strip(report: dict) -> dict:
    return {k: v for k, v in report.items() if k not in ("file", "format", "notes")}


def test_an_appraise_csv_replays_as_the_mean_of_its_raters_scores(tmp_path: Path) -> None:
    """Appraise's export (TGT and REF rows, two annotators; BAD and CHK controls left out) replays exactly as the
    long CSV of the cells' mean scores does."""
    rng = np.random.default_rng(3)
    appraise, means = [], ["system,segment,scorer,score"]
    for s, (system, kind, mean) in enumerate([("ref", "REF", 80), ("sysA", "TGT", 70), ("sysB", "TGT", 50)]):
        for i in range(40):
            scores = [int(min(100, max(0, rng.normal(mean, 10)))) for _ in range(2)]
            for k, score in enumerate(scores):
                appraise.append(f"ann{k},{system},{i},{kind},eng,deu,{score},1700000000,1700000060")
            means.append(f"{system},{i},human,{sum(scores) / 2!r}")
    appraise.append("ann0,sysA,3,BAD,eng,deu,0,1700000000,1700000060")
    appraise.append("ann1,sysB,4,CHK,eng,deu,100,1700000000,1700000060")
    (tmp_path / "a.csv").write_text("\n".join(appraise) + "\n", encoding="utf-8")
    (tmp_path / "m.csv").write_text("\n".join(means) + "\n", encoding="utf-8")
    args = ("--seeds", "3", "--budgets", "25,50", "--method", "random")
    report = run(str(tmp_path / "a.csv"), "--format", "appraise-csv", *args)
    assert _strip(report) == _strip(run(str(tmp_path / "m.csv"), "--format", "scores", *args))
    assert (report["systems"], report["items"]) == (3, 40) and any("REF rows" in n for n in report["notes"])
    allocation = run(str(tmp_path / "a.csv"), "--format", "appraise-csv", "--allocation", "adaptive", "--seeds", "2",
                     "--warmup", "5")
    assert allocation["score_range"] == [0, 100] and allocation["pairs"] == 3


@pytest.mark.django_db
def test_an_export_replays_its_counted_scores(tmp_path: Path) -> None:
    """A DA study exported by export_judgments: the replay reads it through the importer, without the excluded
    annotator's judgments, as the long CSV of the counted judgments' mean scores."""
    import random as pyrandom

    from annotation.handout import services
    from annotation.handout.exclusion import annotator_exclude
    from annotation.models import Annotator, Judgment
    from studies.importing.study_file import study_import
    from tests.annotation.test_adaptive_allocation import _answer, _da_file

    study = study_import(status="open", data=_da_file("replay-export", n_items=30, redundancy=3))
    annotators = services.annotators_create(study=study, count=3)
    rng = pyrandom.Random(2)
    for annotator in annotators:
        while (assignment := services.assignment_next(
                annotator=Annotator.objects.select_related("study").get(pk=annotator.pk))) is not None:
            services.judgment_submit(assignment=assignment, payload=_answer(assignment, rng))
    annotator_exclude(annotator=Annotator.objects.get(pk=annotators[2].pk), reason="test")
    export = tmp_path / "export.csv"
    call_command("export_judgments", study.slug, "--format", "csv", "--output", str(export))
    cells: dict[tuple[str, str], list[float]] = {}
    for judgment in Judgment.objects.filter(assignment__item__study=study, assignment__annotator__excluded=False):
        for cand in judgment.assignment.item.candidates.all():
            score = judgment.answer["annotations"][str(cand.pk)]["score"]
            cells.setdefault((cand.system, judgment.assignment.item.external_id), []).append(score)
    lines = ["system,segment,scorer,score"] + [f"{s},{i},human,{sum(v) / len(v)!r}" for (s, i), v in cells.items()]
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ("--seeds", "2", "--budgets", "50", "--method", "random")
    report = run(str(export), "--format", "export", *args)
    assert (report["systems"], report["items"]) == (3, 30)
    assert _strip(report) == _strip(run(str(tmp_path / "m.csv"), "--format", "scores", *args))


def test_an_export_of_labels_is_refused(tmp_path: Path) -> None:
    export = tmp_path / "labels.csv"
    header = ("study,item,document,annotator,system,is_reference,is_spam,rank,choice,label,screen_position,"
              "started_at,submitted_at,duration_ms")
    rows = [f"s,i1,d,a1,{system},false,false,,,ok,{k},2024-01-01T00:00:00+00:00,2024-01-01T00:00:10+00:00,"
            "10000" for k, system in ((1, "sysA"), (2, "sysB"))]
    export.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    with pytest.raises(CommandError) as caught:
        run(str(export), "--format", "export")
    assert "--format export: a replay needs a score per candidate" in str(caught.value)
    assert "or an order of the candidates (a ranking or choice export); this export (labels) has neither" \
        in str(caught.value)


@pytest.mark.django_db
def test_a_ranking_export_replays_as_preferences(tmp_path: Path) -> None:
    """A ranking study exported by export_judgments: the human value is minus the mean rank (as the long CSV of
    it replays), and adaptive allocation compares pairs by preference, range (0, 1)."""
    import random as pyrandom

    from annotation.handout import services
    from annotation.models import Annotator, Judgment
    from studies.importing.study_file import study_import
    from tests.annotation.test_adaptive_preferences import CLEAR, _answer, _file

    study = study_import(status="open", data=_file("replay-rank", "ranking", n_items=40, allocation="uniform",
                                                   redundancy=2))
    rng = pyrandom.Random(4)
    for annotator in services.annotators_create(study=study, count=2):
        while (assignment := services.assignment_next(
                annotator=Annotator.objects.select_related("study").get(pk=annotator.pk))) is not None:
            services.judgment_submit(assignment=assignment, payload=_answer(assignment, rng, CLEAR))
    export = tmp_path / "export.csv"
    call_command("export_judgments", study.slug, "--format", "csv", "--output", str(export))
    cells: dict[tuple[str, str], list[float]] = {}
    for judgment in Judgment.objects.filter(assignment__item__study=study):
        for cand in judgment.assignment.item.candidates.all():
            cells.setdefault((cand.system, judgment.assignment.item.external_id), []).append(
                -judgment.answer["ranks"][str(cand.pk)])
    lines = ["system,segment,scorer,score"] + [f"{s},{i},human,{sum(v) / len(v)!r}" for (s, i), v in cells.items()]
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ("--seeds", "2", "--budgets", "50", "--method", "random")
    report = run(str(export), "--format", "export", *args)
    assert (report["systems"], report["items"]) == (3, 40) and any("minus the candidate's rank" in n
                                                                     for n in report["notes"])
    assert _strip(report) == _strip(run(str(tmp_path / "m.csv"), "--format", "scores", *args))
    allocation = run(str(export), "--format", "export", "--allocation", "adaptive", "--seeds", "3", "--warmup", "5")
    assert allocation["score_range"] == [0.0, 1.0] and allocation["pairs"] == 3
    assert allocation["policies"]["adaptive"]["reached_share"] == 1.0
    null = run(str(export), "--format", "export", "--allocation", "adaptive", "--seeds", "20", "--null")
    assert null["policies"]["adaptive"]["false_decision_runs"] <= 2  # at most 5% expected: one run of 20
    with pytest.raises(CommandError, match="--score-range: an export of ranks or choices"):
        run(str(export), "--format", "export", "--allocation", "adaptive", "--score-range", "0,100")
