"""paired_test: the same p-values, means and CIs as sacrebleu's command with the same seed and resamples."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from evaluators.metrics.corpus import Corpus, Segment
from evaluators.metrics.significance import paired_test
from tests.evaluators.metrics.sacrebleu_data import CHINESE_REFS, CHINESE_SYSTEMS, english, sacrebleu_cli, write_systems

CLI_NAMES = {"bleu": "BLEU", "chrf": "chrF2", "ter": "TER"}


def corpus_of(refs: list[str], systems: dict[str, list[str]], language: str) -> Corpus:
    return Corpus([Segment(key=str(i), document="", reference=ref,
                           hypotheses={name: lines[i] for name, lines in systems.items()})
                   for i, ref in enumerate(refs)], target_language=language)


def assert_same_as_cli(ours: dict[str, list[dict[str, Any]]], cli: list[dict[str, Any]], names: list[str]) -> None:
    """Every system's score, p-value, mean and CI equal the CLI's (its system column is the file path)."""
    for evaluator, rows in ours.items():
        assert [r["system"] for r in rows] == names
        for row, cli_row in zip(rows, cli, strict=True):
            theirs = cli_row[CLI_NAMES[evaluator]]
            assert row["score"] == pytest.approx(theirs["score"], abs=1e-9)
            for key in ("p_value", "mean", "ci"):
                if theirs[key] is None:
                    assert row[key] is None
                else:
                    assert row[key] == pytest.approx(theirs[key], abs=1e-9), (evaluator, row["system"], key)


def test_paired_bootstrap_equals_sacrebleu_cli(tmp_path: Path) -> None:
    refs, systems = english()
    ref, hyps = write_systems(tmp_path, refs, systems)
    cli = sacrebleu_cli(str(ref), "-i", *map(str, hyps), "-m", "bleu", "chrf", "ter", "--paired-bs")
    corpus = corpus_of(refs, systems, "en")
    ours = {name: paired_test(corpus, name) for name in CLI_NAMES}
    assert_same_as_cli(ours, cli, list(systems))
    bleu = ours["bleu"]
    assert [r["is_baseline"] for r in bleu] == [True, False, False]
    assert bleu[0]["p_value"] is None and bleu[0]["significant"] is None and bleu[0]["mean"] is not None
    assert {r["baseline"] for r in bleu} == {"mt"}
    assert all(r["method"] == "bs" and r["n_samples"] == 1000 and r["seed"] == 12345 for r in bleu)
    assert bleu[0]["signature"] == "nrefs:1|bs:1000|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
    # The oracle system (half the lines are the reference) differs significantly; significance is p < 0.05.
    oracle = next(r for r in bleu if r["system"] == "oracle")
    assert oracle["p_value"] <= 0.05 and oracle["significant"] is True
    for rows in ours.values():
        for row in rows[1:]:
            assert row["significant"] == (row["p_value"] <= 0.05)
    json.dumps(ours)  # plain data


def test_approximate_randomization_equals_sacrebleu_cli(tmp_path: Path) -> None:
    refs, systems = english()
    ref, hyps = write_systems(tmp_path, refs, systems)
    cli = sacrebleu_cli(str(ref), "-i", *map(str, hyps), "-m", "bleu", "ter", "--paired-ar")
    corpus = corpus_of(refs, systems, "en")
    ours = {name: paired_test(corpus, name, method="ar") for name in ("bleu", "ter")}
    assert_same_as_cli(ours, cli, list(systems))
    row = ours["bleu"][1]
    assert row["n_samples"] == 10000 and row["mean"] is None and row["ci"] is None
    assert "ar:10000|seed:12345" in row["signature"]


def test_other_seed_and_sample_count_equal_the_cli_with_the_same(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    refs, systems = english()
    ref, hyps = write_systems(tmp_path, refs, systems)
    cli = sacrebleu_cli(str(ref), "-i", *map(str, hyps), "-m", "chrf", "--paired-bs", "--paired-bs-n", "300",
                        env={**os.environ, "SACREBLEU_SEED": "7"})
    monkeypatch.setenv("SACREBLEU_SEED", "99")  # not read: the seed is an argument
    ours = paired_test(corpus_of(refs, systems, "en"), "chrf", n_samples=300, seed=7)
    assert_same_as_cli({"chrf": ours}, cli, list(systems))
    assert ours[1]["n_samples"] == 300 and ours[1]["seed"] == 7 and "bs:300|seed:7" in ours[1]["signature"]
    assert os.environ["SACREBLEU_SEED"] == "99"  # restored
    # seed=None is sacrebleu's default 12345 whatever the environment says, and gives other resamples.
    default = paired_test(corpus_of(refs, systems, "en"), "chrf", n_samples=300)
    cli_default = sacrebleu_cli(str(ref), "-i", *map(str, hyps), "-m", "chrf", "--paired-bs", "--paired-bs-n", "300",
                                env={k: v for k, v in os.environ.items() if k != "SACREBLEU_SEED"})
    assert_same_as_cli({"chrf": default}, cli_default, list(systems))
    assert default[1]["mean"] != ours[1]["mean"]


def test_chinese_paired_bootstrap_uses_zh_like_the_cli(tmp_path: Path) -> None:
    ref, hyps = write_systems(tmp_path, CHINESE_REFS, CHINESE_SYSTEMS)
    cli = sacrebleu_cli(str(ref), "-i", *map(str, hyps), "-m", "bleu", "-tok", "zh", "--paired-bs")
    ours = paired_test(corpus_of(CHINESE_REFS, CHINESE_SYSTEMS, "zh"), "bleu")
    assert_same_as_cli({"bleu": ours}, cli, list(CHINESE_SYSTEMS))
    assert "tok:zh" in ours[0]["signature"]


def test_baseline_argument_puts_that_system_first() -> None:
    refs, systems = english()
    rows = paired_test(corpus_of(refs, systems, "en"), "ter", baseline="oracle", n_samples=50)
    assert [r["system"] for r in rows] == ["oracle", "mt", "shuffled"]
    assert rows[0]["is_baseline"] and all(r["baseline"] == "oracle" for r in rows)
    assert rows[0]["higher_is_better"] is False


def test_only_segments_every_system_translated_are_compared() -> None:
    refs, systems = english()
    segments = [Segment(key=str(i), document="", reference=ref,
                        hypotheses={"mt": systems["mt"][i], **({"oracle": systems["oracle"][i]} if i < 100 else {})})
                for i, ref in enumerate(refs)]
    rows = paired_test(Corpus(segments, target_language="en"), "bleu", n_samples=20)
    assert rows[1]["n_segments"] == 100
    assert any(f"{len(refs) - 100} of {len(refs)} segments left out" in n for n in rows[1]["notes"])


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"evaluator": "blonde"}, "sacrebleu's corpus metrics only"),
    ({"evaluator": "bleu", "method": "t-test"}, "unknown paired test method"),
    ({"evaluator": "bleu", "baseline": "nobody"}, "baseline 'nobody' is not one of the systems"),
    ({"evaluator": "bleu", "seed": 0}, "seed must be a positive integer"),
    ({"evaluator": "bleu", "n_samples": 0}, "n_samples must be a positive integer"),
])
def test_bad_arguments_are_value_errors(kwargs: dict[str, Any], message: str) -> None:
    refs, systems = english()
    with pytest.raises(ValueError, match=message):
        paired_test(corpus_of(refs, systems, "en"), **kwargs)


def test_one_system_or_no_common_segment_is_a_value_error() -> None:
    refs, systems = english()
    with pytest.raises(ValueError, match="at least two systems"):
        paired_test(corpus_of(refs, {"mt": systems["mt"]}, "en"), "bleu")
    disjoint = Corpus([Segment("1", "", "a b", {"x": "a b"}), Segment("2", "", "c d", {"y": "c d"})], "en")
    with pytest.raises(ValueError, match="no segment has a hypothesis from every system"):
        paired_test(disjoint, "bleu")
