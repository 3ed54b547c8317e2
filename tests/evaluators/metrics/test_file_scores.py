"""evaluators.metrics.file_scores called directly (no command): the scores, errors and outputs of ``score``."""
from __future__ import annotations

import gzip
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from sacrebleu.metrics import BLEU

from evaluators.metrics.file_scores import ScoreInputError, read_lines, score_files, scores_json, scores_text
from tests.evaluators.metrics.sacrebleu_data import english, write_systems


def test_scores_equal_sacrebleu_and_outputs_equal_the_commands(tmp_path: Path) -> None:
    refs, systems = english()
    ref, hyps = write_systems(tmp_path, refs, systems)
    scores = score_files(hyps=[str(h) for h in hyps], refs=[str(ref)], evaluators=["bleu", "bleu"],
                         target_language="en", paired="bs", paired_n=50, paired_seed=3)
    assert [r.evaluator for r in scores.results] == ["bleu"]  # a name asked twice runs once
    by_system = {s.system: s.score for s in scores.results[0].systems}
    assert by_system == pytest.approx({name: BLEU().corpus_score(lines, [refs]).score
                                       for name, lines in systems.items()}, abs=1e-9)
    assert scores.language == {"code": "en", "guessed": False, "evidence": None, "source": "--target-language"}
    assert len(scores.tests) == len(systems) and scores.tests[0]["n_samples"] == 50
    args = [*(a for h in hyps for a in ("--hyp", str(h))), "--ref", str(ref), "--evaluator", "bleu",
            "--target-language", "en", "--paired-bs", "--paired-n", "50", "--paired-seed", "3"]
    text, as_json = StringIO(), StringIO()
    call_command("score", *args, "--width", "2", stdout=text)
    call_command("score", *args, "--json", stdout=as_json)
    assert text.getvalue().rstrip("\n") == scores_text(scores, 2)
    assert json.loads(as_json.getvalue()) == scores_json(scores)


def test_bad_input_is_a_score_input_error_naming_file_and_line(tmp_path: Path) -> None:
    ref = tmp_path / "ref.txt"
    ref.write_text("a b c\nd e f\n", encoding="utf-8")
    short = tmp_path / "short.txt"
    short.write_text("a b c\n", encoding="utf-8")
    with pytest.raises(ScoreInputError, match=f"--hyp {short} has 1 lines but the reference {ref} has 2"):
        score_files(hyps=[str(short)], refs=[str(ref)], evaluators=["bleu"], target_language="en")
    with pytest.raises(ScoreInputError, match="unknown evaluator"):
        score_files(hyps=[str(ref)], refs=[str(ref)], evaluators=["no-such-metric"])
    with pytest.raises(ScoreInputError, match="not a usable file name"):
        read_lines(Path("bad\x00name.txt"), "--hyp")


def test_read_lines_splits_at_newline_only_and_reads_gzip(tmp_path: Path) -> None:
    plain = tmp_path / "crlf.txt"
    plain.write_bytes(b"one \r\ntwo\rstill two\n\nfour\n")
    # sacrebleu splits at \n only: a lone \r stays inside its line; trailing whitespace (and \r) goes.
    assert read_lines(plain, "--ref") == ["one", "two\rstill two", "", "four"]
    packed = tmp_path / "lines.txt.gz"
    packed.write_bytes(gzip.compress("é\nü".encode()))
    assert read_lines(packed, "--hyp") == ["é", "ü"]
    broken = tmp_path / "broken.gz"
    broken.write_bytes(b"not gzip")
    with pytest.raises(ScoreInputError, match=f"--hyp {broken}: not a readable gzip file"):
        read_lines(broken, "--hyp")
