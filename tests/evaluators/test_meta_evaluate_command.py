"""``meta_evaluate`` on plain files: the long CSV, mt-metrics-eval's layout, and named errors (exit 2)."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluators.stats import meta


def scores(n_sys: int = 5, n_seg: int = 30, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    latent = np.linspace(0, 1, n_sys)[:, None] + rng.normal(0, 0.5, size=(n_sys, n_seg))
    human = np.round(latent * 4)
    human[0, 0] = np.nan  # a missing human score
    return {"human": human, "good": latent + rng.normal(0, 0.2, size=latent.shape),
            "ter": -latent * 10 + rng.normal(0, 2, size=latent.shape)}


def write_csv(path: Path, table: dict[str, np.ndarray]) -> Path:
    lines = ["system,segment,scorer,score"]
    for scorer, matrix in table.items():
        for i, row in enumerate(matrix):
            for j, value in enumerate(row):
                lines.append(f"sys{i},seg{j},{scorer},{'' if np.isnan(value) else repr(float(value))}")
    path.write_text("\n".join(lines) + "\n")
    return path


def run(*args: str) -> dict:
    out = io.StringIO()
    call_command("meta_evaluate", *args, "--json", "--resamples", "200", stdout=out)
    return json.loads(out.getvalue())["meta"]


def test_long_csv_gives_every_statistic_equal_to_the_library(tmp_path):
    table = scores()
    result = run("--scores", str(write_csv(tmp_path / "s.csv", table)), "--lower-is-better", "ter")
    expected = meta.meta_evaluate(human_seg=table["human"], metrics_seg={"good": table["good"], "ter": table["ter"]},
                                  lower_is_better=["ter"], settings=meta.MetaSettings(resamples=200))
    for name in ("good", "ter"):
        for key in ("pairwise_accuracy", "pearson", "kendall", "spearman", "spa"):
            assert result["system"][name][key] == pytest.approx(expected.system[name][key])
        for key in ("acc_eq", "acc_eq_threshold", "pearson", "kendall"):
            assert result["segment"][name][key] == pytest.approx(expected.segment[name][key])
    assert {c["metric"] for c in result["clusters"]} == {"good", "ter"}
    assert result["settings"]["seed"] == 4 and result["settings"]["n_systems"] == 5
    assert result["settings"]["n_segments"] == 30
    # TER oriented: it agrees with the humans as well as its negation would.
    assert result["system"]["ter"]["pairwise_accuracy"] > 0.5


def test_mtme_directory_layout(tmp_path):
    table = scores()
    (tmp_path / "human-scores").mkdir()
    (tmp_path / "metric-scores").mkdir()
    for scorer, matrix in table.items():
        folder = tmp_path / ("human-scores" if scorer == "human" else "metric-scores")
        lines = [f"sys{i}\t{'None' if np.isnan(v) else v}" for i, row in enumerate(matrix) for v in row]
        (folder / f"{scorer}.seg.score").write_text("\n".join(lines) + "\n")
    from_dir = run("--mtme-dir", str(tmp_path), "--lower-is-better", "ter")
    from_csv = run("--scores", str(write_csv(tmp_path / "s.csv", table)), "--lower-is-better", "ter")
    assert from_dir["system"] == from_csv["system"] and from_dir["segment"] == from_csv["segment"]
    # A system-level file replaces the mean of segment scores.
    (tmp_path / "metric-scores" / "good.sys.score").write_text("".join(f"sys{i}\t{-i}\n" for i in range(5)))
    flipped = run("--mtme-dir", str(tmp_path), "--lower-is-better", "ter")
    assert flipped["system"]["good"]["pairwise_accuracy"] < from_dir["system"]["good"]["pairwise_accuracy"]


@pytest.mark.parametrize("content, message", [
    ("system,segment,score\nA,1,0.5\n", "line 1: missing column(s) scorer"),
    ("system,segment,scorer,score\nA,1,human,abc\n", "line 2: score 'abc' is not a number"),
    ("system,segment,scorer,score\nA,1,human,1\nA,1,human,2\n", "line 3: a second score"),
    ("system,segment,scorer,score\n,1,human,1\n", "line 2: system is empty"),
    ("system,segment,scorer,score\nA,1,human,inf\n", "line 2: score 'inf' is not a finite number"),
    ("", "the file is empty"),
])
def test_bad_rows_are_named_and_exit_2(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(CommandError) as exc:
        call_command("meta_evaluate", "--scores", str(path), "--json", stdout=io.StringIO())
    assert message in str(exc.value) and exc.value.returncode == 2


def test_unknown_names_and_missing_files_exit_2(tmp_path):
    path = write_csv(tmp_path / "s.csv", scores())
    for args, message in [(["--human", "mqm"], "--human: no scorer 'mqm'"),
                          (["--lower-is-better", "xyz"], "--lower-is-better: unknown scorer(s) xyz"),
                          (["--resamples", "0"], "--resamples")]:
        with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")) as exc:
            call_command("meta_evaluate", "--scores", str(path), *args, stdout=io.StringIO())
        assert exc.value.returncode == 2
    with pytest.raises(CommandError, match="no such file"):
        call_command("meta_evaluate", "--scores", str(tmp_path / "nope.csv"), stdout=io.StringIO())
    with pytest.raises(CommandError, match="no human.seg.score"):
        call_command("meta_evaluate", "--mtme-dir", str(tmp_path), stdout=io.StringIO())


def test_text_output_lists_levels_and_clusters(tmp_path):
    out = io.StringIO()
    call_command("meta_evaluate", "--scores", str(write_csv(tmp_path / "s.csv", scores())), "--resamples", "50",
                 stdout=out)
    text = out.getvalue()
    assert "System level (5 systems)" in text and "Segment level (30 segments)" in text and "Clusters by" in text
