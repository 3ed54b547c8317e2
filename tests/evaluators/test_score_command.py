"""``manage.py score``: plain files scored like sacrebleu scores them; every bad input exits 2 naming file and line."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluators.metrics import corpus as corpus_module
from evaluators.metrics import language
from evaluators.metrics.corpus import Corpus, EvaluationResult, SegmentScore, SystemScore
from tests.evaluators.metrics.sacrebleu_data import (
    CHINESE_REFS, CHINESE_SYSTEMS, ROOT, english, sacrebleu_cli, write, write_systems,
)


def score(*args: str | Path) -> str:
    out = StringIO()
    call_command("score", *map(str, args), stdout=out)
    return out.getvalue()


def score_json(*args: str | Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(score(*args, "--json"))
    return result


def fails(*args: str | Path) -> str:
    """The command's error message; it must exit 2 and write nothing to standard output."""
    out = StringIO()
    with pytest.raises(CommandError) as info:
        call_command("score", *map(str, args), stdout=out)
    assert info.value.returncode == 2
    assert out.getvalue() == ""
    return str(info.value)


@pytest.fixture
def en_files(tmp_path: Path) -> tuple[Path, list[Path]]:
    refs, systems = english()
    return write_systems(tmp_path, refs, systems)


def rows(result: dict[str, Any], evaluator: str) -> dict[str, dict[str, Any]]:
    return {r["system"]: r for r in result["systems"] if r["evaluator"] == evaluator}


# --------------------------------------------------------------------------- scores equal sacrebleu's
def test_json_scores_and_signatures_equal_sacrebleu_cli(en_files: tuple[Path, list[Path]]) -> None:
    ref, hyps = en_files
    result = score_json("--hyp", hyps[0], "--hyp", hyps[1], "--ref", ref, "--evaluator", "bleu",
                        "--evaluator", "chrf", "--evaluator", "ter", "--target-language", "en")
    cli = {r["name"]: r for r in sacrebleu_cli(str(ref), "-i", str(hyps[0]), "-m", "bleu", "chrf", "ter")}
    for evaluator, cli_name in (("bleu", "BLEU"), ("chrf", "chrF2"), ("ter", "TER")):
        mt = rows(result, evaluator)["mt"]
        assert mt["score"] == pytest.approx(cli[cli_name]["score"], abs=1e-9)
        assert mt["signature"] == cli[cli_name]["signature"]
        assert set(rows(result, evaluator)) == {"mt", "shuffled"}
    assert rows(result, "ter")["mt"]["higher_is_better"] is False
    assert rows(result, "bleu")["mt"]["counts"]["verbose"] == cli["BLEU"]["verbose_score"]
    assert result["target_language"] == {"code": "en", "guessed": False, "evidence": None,
                                         "source": "--target-language"}
    assert result["paired"] == [] and result["segments"] == len(english()[0])


def test_chinese_target_guessed_and_scored_with_zh_like_sacrebleu(tmp_path: Path) -> None:
    ref, hyps = write_systems(tmp_path, CHINESE_REFS, CHINESE_SYSTEMS)
    result = score_json("--hyp", hyps[0], "--ref", ref, "--evaluator", "bleu", "--evaluator", "ter")
    assert result["target_language"]["code"] == "zh" and result["target_language"]["guessed"] is True
    cli = sacrebleu_cli(str(ref), "-i", str(hyps[0]), "-m", "bleu", "ter", "-l", "en-zh", "--ter-asian-support")
    bleu, ter = rows(result, "bleu")["sys1"], rows(result, "ter")["sys1"]
    assert bleu["score"] == pytest.approx(cli[0]["score"], abs=1e-9) and bleu["signature"] == cli[0]["signature"]
    assert ter["score"] == pytest.approx(cli[1]["score"], abs=1e-9) and ter["signature"] == cli[1]["signature"]
    assert any("guessed" in note for note in bleu["notes"])
    text = score("--hyp", hyps[0], "--ref", ref, "--evaluator", "bleu")
    assert text.startswith("Target language: zh (GUESSED from")
    assert "signature: nrefs:1|case:mixed|eff:no|tok:zh|smooth:exp|version:2.6.0" in text


def test_target_language_option_is_used_and_normalised(tmp_path: Path) -> None:
    ref, hyps = write_systems(tmp_path, CHINESE_REFS, CHINESE_SYSTEMS)
    result = score_json("--hyp", hyps[0], "--ref", ref, "--evaluator", "bleu", "--target-language", "zh_Hans")
    assert result["target_language"]["code"] == "zh-hans" and result["target_language"]["guessed"] is False
    assert "tok:zh" in rows(result, "bleu")["sys1"]["signature"]
    assert "notes" not in rows(result, "bleu")["sys1"]


def test_paired_bootstrap_json_equals_sacrebleu_cli(en_files: tuple[Path, list[Path]]) -> None:
    ref, hyps = en_files
    result = score_json(*[a for h in hyps for a in ("--hyp", h)], "--ref", ref, "--evaluator", "bleu",
                        "--evaluator", "ter", "--target-language", "en", "--paired-bs")
    cli = sacrebleu_cli(str(ref), "-i", *map(str, hyps), "-m", "bleu", "ter", "--paired-bs")
    by = {(t["evaluator"], t["system"]): t for t in result["paired"]}
    for evaluator, cli_name in (("bleu", "BLEU"), ("ter", "TER")):
        for hyp, cli_row in zip(hyps, cli):
            ours = by[(evaluator, hyp.stem)]
            for key in ("score", "p_value", "mean", "ci"):
                expected = cli_row[cli_name][key]
                assert ours[key] == (None if expected is None else pytest.approx(expected, abs=1e-9))
    assert all(t["baseline"] == "mt" and t["method"] == "bs" for t in result["paired"])


def test_paired_ar_text_output(en_files: tuple[Path, list[Path]]) -> None:
    ref, hyps = en_files
    text = score("--hyp", hyps[0], "--hyp", hyps[2], "--ref", ref, "--evaluator", "chrf", "--target-language", "en",
                 "--paired-ar", "--paired-n", "500", "--paired-seed", "3")
    assert "Paired approximate randomization test with 500 trials (seed 3)" in text
    assert "Baseline: mt" in text and "(p = " in text and ")*" in text  # the oracle differs significantly
    assert "chrf   nrefs:1|ar:500|seed:3|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0" in text


# --------------------------------------------------------------------------- names, documents, other evaluators
def test_system_names_from_file_names_or_name_equals_file(tmp_path: Path) -> None:
    refs, systems = english()
    ref = write(tmp_path / "ref.txt", refs)
    plain = write(tmp_path / "system-a.hyp.txt", systems["mt"])
    packed = tmp_path / "sys-b.txt.gz"
    packed.write_bytes(gzip.compress(("\n".join(systems["shuffled"]) + "\n").encode()))
    result = score_json("--hyp", plain, "--hyp", packed, "--hyp", f"Mine={plain}", "--ref", ref,
                        "--evaluator", "bleu", "--target-language", "en")
    names = list(rows(result, "bleu"))
    assert names == ["system-a.hyp", "sys-b", "Mine"]
    assert rows(result, "bleu")["Mine"]["score"] == rows(result, "bleu")["system-a.hyp"]["score"]


@dataclass
class DocEvaluator:
    """A test-only document-level evaluator: the share of hypotheses equal to their reference, per document."""

    name: str = "test-doc-share"
    higher_is_better: bool = True
    level: str = "document"
    description: str = "test"
    needs_source: bool = False
    needs_documents: bool = True
    seen: list[Any] = field(default_factory=list)

    def evaluate(self, corpus: Corpus, *, nlp: Any = None, progress: Any = None) -> EvaluationResult:
        self.seen.append((corpus, nlp))
        if corpus.target_language != "en":
            raise ValueError(f"defined for English only, not {corpus.target_language!r}")
        result = EvaluationResult(self.name, True, [])
        for system in corpus.systems:
            docs = {doc: 100 * sum(s.hypotheses[system] == s.reference for s in segs) / len(segs)
                    for doc, segs in corpus.documents().items()}
            result.systems.append(SystemScore(system, sum(docs.values()) / len(docs), "test-doc-share|v1",
                                              categories={"exact": {"f1": 0.5}}, counts={"documents": len(docs)},
                                              documents=docs, notes=["a test evaluator"]))
            result.segments += [SegmentScore(s.key, system, docs[s.document], s.document)
                                for s in corpus.segments]
        return result


@pytest.fixture
def doc_evaluator(monkeypatch: pytest.MonkeyPatch) -> DocEvaluator:
    import evaluators.metrics.registry  # noqa: F401  (the real registry first, so the test one adds to it)

    evaluator = DocEvaluator()
    monkeypatch.setitem(corpus_module._REGISTRY, evaluator.name, evaluator)
    return evaluator


def test_any_registered_evaluator_runs_with_documents(tmp_path: Path, doc_evaluator: DocEvaluator,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    ref = write(tmp_path / "ref.txt", ["a b c", "d e f", "g h i", "j k l"])
    hyp = write(tmp_path / "h.txt", ["a b c", "d e x", "g h i", "j k l"])
    src = write(tmp_path / "src.txt", ["1", "2", "3", "4"])
    docs = write(tmp_path / "docs.txt", ["d1", "d1", "d2", "d2"])
    backend = object()
    monkeypatch.setattr(language, "_LOADED", {})
    monkeypatch.setitem(language.BACKEND_FACTORIES, "fake", lambda arg: backend)
    result = score_json("--hyp", hyp, "--ref", ref, "--src", src, "--docs", docs, "--evaluator", "test-doc-share",
                        "--evaluator", "bleu", "--target-language", "en", "--nlp", "fake:x")
    row = rows(result, "test-doc-share")["h"]
    assert row["documents"] == {"d1": 50.0, "d2": 100.0} and row["score"] == 75.0
    assert row["categories"] == {"exact": {"f1": 0.5}} and row["counts"] == {"documents": 2}
    assert row["notes"] == ["a test evaluator"] and row["signature"] == "test-doc-share|v1"
    assert result["documents"] == 2
    corpus, nlp = doc_evaluator.seen[-1]
    assert nlp is backend
    assert [s.document for s in corpus.segments] == ["d1", "d1", "d2", "d2"]
    assert [s.source for s in corpus.segments] == ["1", "2", "3", "4"]
    # --paired-bs covers bleu, says the other one has no test
    text = score("--hyp", hyp, "--hyp", f"b={ref}", "--ref", ref, "--docs", docs, "--evaluator", "test-doc-share",
                 "--evaluator", "bleu", "--target-language", "en", "--paired-bs", "--paired-n", "20")
    assert "no paired test for test-doc-share" in text


def test_document_evaluator_needs_docs_and_its_errors_exit_2(tmp_path: Path, doc_evaluator: DocEvaluator) -> None:
    ref = write(tmp_path / "ref.txt", ["a b c", "d e f"])
    hyp = write(tmp_path / "h.txt", ["a b c", "d e x"])
    docs = write(tmp_path / "docs.txt", ["d1", "d1"])
    assert "test-doc-share scores documents: give --docs" in fails("--hyp", hyp, "--ref", ref, "--evaluator",
                                                                   "test-doc-share", "--target-language", "en")
    message = fails("--hyp", hyp, "--ref", ref, "--docs", docs, "--evaluator", "test-doc-share",
                    "--target-language", "fr")
    assert "--evaluator test-doc-share: defined for English only, not 'fr'" in message
    assert "paired tests cover bleu, chrf, ter only" in fails(
        "--hyp", hyp, "--hyp", f"x={hyp}", "--ref", ref, "--docs", docs, "--evaluator", "test-doc-share",
        "--target-language", "en", "--paired-bs")


# --------------------------------------------------------------------------- errors: exit 2, file and line named
def test_missing_files(en_files: tuple[Path, list[Path]], tmp_path: Path) -> None:
    ref, hyps = en_files
    assert f"--hyp {tmp_path / 'nope.txt'}: no such file" in fails("--hyp", tmp_path / "nope.txt", "--ref", ref,
                                                                    "--evaluator", "bleu")
    assert f"--ref {tmp_path / 'nope.txt'}: no such file" in fails("--hyp", hyps[0], "--ref", tmp_path / "nope.txt",
                                                                    "--evaluator", "bleu")
    assert "is a directory" in fails("--hyp", tmp_path, "--ref", ref, "--evaluator", "bleu")
    assert f"--src {tmp_path / 'src.txt'}: no such file" in fails(
        "--hyp", hyps[0], "--ref", ref, "--src", tmp_path / "src.txt", "--evaluator", "bleu", "--target-language", "en")


def test_empty_files(en_files: tuple[Path, list[Path]], tmp_path: Path) -> None:
    ref, hyps = en_files
    empty = write(tmp_path / "empty.txt", [])
    empty.write_bytes(b"")
    blank = tmp_path / "blank.txt"
    blank.write_text("\n  \n\n", encoding="utf-8")
    assert f"--hyp {empty}: empty file" in fails("--hyp", empty, "--ref", ref, "--evaluator", "bleu")
    assert f"--ref {blank}: empty file" in fails("--hyp", hyps[0], "--ref", blank, "--evaluator", "bleu")


def test_line_counts_that_differ_name_the_file_and_line(tmp_path: Path) -> None:
    ref = write(tmp_path / "ref.txt", ["one", "two", "three"])
    short = write(tmp_path / "short.txt", ["one", "two"])
    long = write(tmp_path / "long.txt", ["one", "two", "three", "four"])
    message = fails("--hyp", short, "--ref", ref, "--evaluator", "bleu", "--target-language", "en")
    assert f"--hyp {short} has 2 lines but the reference {ref} has 3: line 3 of {ref} has no counterpart in {short}" \
        in message
    message = fails("--hyp", long, "--ref", ref, "--evaluator", "bleu", "--target-language", "en")
    assert f"line 4 of {long} has no counterpart in {ref}" in message
    same = write(tmp_path / "same.txt", ["one", "two", "three"])
    assert f"--src {short} has 2 lines" in fails("--hyp", same, "--ref", ref, "--src", short, "--evaluator", "bleu",
                                                 "--target-language", "en")
    assert f"--docs {long} has 4 lines" in fails("--hyp", same, "--ref", ref, "--docs", long, "--evaluator", "bleu",
                                                 "--target-language", "en")


def test_bad_document_files(tmp_path: Path) -> None:
    ref = write(tmp_path / "ref.txt", ["a", "b", "c", "d"])
    hyp = write(tmp_path / "h.txt", ["a", "b", "c", "d"])
    blank = write(tmp_path / "blank.txt", ["d1", "", "d1", "d2"])
    split = write(tmp_path / "split.txt", ["d1", "d2", "d1", "d3"])
    assert f"--docs {blank}: line 2: empty document id" in fails(
        "--hyp", hyp, "--ref", ref, "--docs", blank, "--evaluator", "bleu", "--target-language", "en")
    assert f"--docs {split}: line 3: document 'd1' resumes after it ended at line 1" in fails(
        "--hyp", hyp, "--ref", ref, "--docs", split, "--evaluator", "bleu", "--target-language", "en")


def test_non_utf8_names_the_line(tmp_path: Path, en_files: tuple[Path, list[Path]]) -> None:
    ref, _ = en_files
    bad = tmp_path / "latin1.txt"
    lines = ["fine", "still fine", "caf\u00e9"] + ["x"] * (len(english()[0]) - 3)
    bad.write_bytes("\n".join(lines).encode("latin-1"))
    message = fails("--hyp", bad, "--ref", ref, "--evaluator", "bleu")
    assert f"--hyp {bad}: line 3: not UTF-8 text (invalid continuation byte at byte 4 of the line)" in message


def test_duplicate_system_names(tmp_path: Path, en_files: tuple[Path, list[Path]]) -> None:
    ref, hyps = en_files
    other = tmp_path / "other"
    other.mkdir()
    copy = write(other / "mt.txt", english()[1]["mt"])
    message = fails("--hyp", hyps[0], "--hyp", copy, "--ref", ref, "--evaluator", "bleu")
    assert f"--hyp {copy}: system name 'mt' is already used by --hyp {hyps[0]}" in message
    assert "system name 'x' is already used" in fails("--hyp", f"x={hyps[0]}", "--hyp", f"x={hyps[1]}", "--ref", ref,
                                                      "--evaluator", "bleu")
    assert "empty system name" in fails("--hyp", f"={hyps[0]}", "--ref", ref, "--evaluator", "bleu")


def test_unknown_evaluator_language_and_backend(en_files: tuple[Path, list[Path]]) -> None:
    ref, hyps = en_files
    message = fails("--hyp", hyps[0], "--ref", ref, "--evaluator", "bleu", "--evaluator", "bleurt")
    assert "--evaluator: unknown evaluator(s) 'bleurt'; known:" in message and "chrf" in message
    assert "--target-language: unknown language code 'xx'" in fails(
        "--hyp", hyps[0], "--ref", ref, "--evaluator", "bleu", "--target-language", "xx")
    assert "--source-language: unknown language code 'english'" in fails(
        "--hyp", hyps[0], "--ref", ref, "--evaluator", "bleu", "--source-language", "english")
    assert "--nlp bogus: unknown language backend 'bogus'" in fails(
        "--hyp", hyps[0], "--ref", ref, "--evaluator", "bleu", "--nlp", "bogus")


def test_unguessable_target_language_is_an_error_not_english(tmp_path: Path) -> None:
    ref = write(tmp_path / "ref.txt", ["12 34", "56 78"])
    hyp = write(tmp_path / "h.txt", ["12 34", "56"])
    message = fails("--hyp", hyp, "--ref", ref, "--evaluator", "bleu")
    assert f"--ref {ref}: cannot guess the target language (no letters in the text); give --target-language" in message


def test_paired_test_arguments(en_files: tuple[Path, list[Path]]) -> None:
    ref, hyps = en_files
    assert "give at least two --hyp files" in fails("--hyp", hyps[0], "--ref", ref, "--evaluator", "bleu",
                                                    "--paired-bs")
    assert "need --paired-bs or --paired-ar" in fails("--hyp", hyps[0], "--ref", ref, "--evaluator", "bleu",
                                                      "--paired-n", "10")
    assert "n_samples must be a positive integer" in fails(
        "--hyp", hyps[0], "--hyp", hyps[1], "--ref", ref, "--evaluator", "bleu", "--target-language", "en",
        "--paired-ar", "--paired-n", "0")


def test_real_process_exit_status_and_output(en_files: tuple[Path, list[Path]], tmp_path: Path) -> None:
    ref, hyps = en_files
    short = write(tmp_path / "short.txt", ["one"])
    proc = subprocess.run([sys.executable, "manage.py", "score", "--hyp", str(short), "--ref", str(ref),
                           "--evaluator", "bleu"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"--hyp {short} has 1 lines but the reference {ref} has" in proc.stderr
    proc = subprocess.run([sys.executable, "manage.py", "score", "--hyp", str(hyps[0]), "--ref", str(ref),
                           "--evaluator", "bleu", "--json"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["target_language"]["code"] == "en" and result["target_language"]["guessed"] is True
    assert result["systems"][0]["signature"] == "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"


# --------------------------------------------------------------------------- the BlonDe family: names that say what ran
@pytest.fixture
def blonde_files(tmp_path: Path) -> dict[str, Path]:
    refs = ["Qiao saw him.", "She looked at the photo.", "He was there."]
    return {"ref": write(tmp_path / "ref.txt", refs),
            "hyp": write(tmp_path / "mt.txt", ["Qiao saw her.", "She looked at the picture.", "He was here."]),
            "docs": write(tmp_path / "docs.txt", ["d1", "d1", "d2"])}


@pytest.fixture
def rule_spacy(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--nlp spacy:NAME`` loads the tests' rule pipeline (no spaCy model is installed here)."""
    from evaluators.metrics.language.spacy_backend import SpacyBackend
    from tests.evaluators.metrics.spacy_pipelines import rule_pipeline

    monkeypatch.setattr(language, "_LOADED", {})
    monkeypatch.setitem(language.BACKEND_FACTORIES, "spacy", lambda arg: SpacyBackend(rule_pipeline()))


def test_blonde_without_a_spacy_pipeline_refuses_and_says_how_to_get_one(blonde_files: dict[str, Path]) -> None:
    f = blonde_files
    for name in ("blonde", "dblonde"):
        message = fails("--hyp", f["hyp"], "--ref", f["ref"], "--docs", f["docs"], "--evaluator", name,
                        "--target-language", "en")
        assert message.startswith(f"--evaluator {name}: {name} needs a spaCy pipeline (the language backend here "
                                  "is lexicon)")
        assert "--nlp spacy:en_core_web_sm" in message and "docs/evaluators.md" in message
        assert f"ask for {name}-lex by that name" in message


def test_blonde_lex_is_named_blonde_lex_in_json_and_signature_and_notes_its_categories(
        blonde_files: dict[str, Path]) -> None:
    f = blonde_files
    result = score_json("--hyp", f["hyp"], "--ref", f["ref"], "--docs", f["docs"], "--evaluator", "blonde-lex",
                        "--evaluator", "dblonde-lex", "--target-language", "en")
    for name in ("blonde-lex", "dblonde-lex"):
        row = rows(result, name)["mt"]
        assert row["evaluator"] == name and row["signature"].startswith(f"{name}|")
        assert "entity" not in row["categories"]
        assert any(n.startswith(f"{name} is an approximation of BlonDe on the lexicon backend, not BlonDe: "
                                "categories computed: tense, pronoun, dm")
                   and n.endswith("not computed, left out of the means: entity (the backend recognises no PERSON "
                                  "or other named entities)") for n in row["notes"])
    text = score("--hyp", f["hyp"], "--ref", f["ref"], "--docs", f["docs"], "--evaluator", "blonde-lex",
                 "--target-language", "en")
    assert "\nblonde-lex (higher is better)\n" in text and "  signature: blonde-lex|" in text
    assert "  note: blonde-lex is an approximation of BlonDe" in text


def test_blonde_with_a_spacy_pipeline_is_blonde(blonde_files: dict[str, Path], rule_spacy: None) -> None:
    f = blonde_files
    result = score_json("--hyp", f["hyp"], "--ref", f["ref"], "--docs", f["docs"], "--evaluator", "blonde",
                        "--target-language", "en", "--nlp", "spacy:en_rules_test")
    row = rows(result, "blonde")["mt"]
    assert row["signature"].startswith("blonde|") and "pipeline:en_rules_test@0.1.0" in row["signature"]
    assert "entity" in row["categories"] and not any("approximation" in n for n in row.get("notes", []))
    assert "blonde-lex is BlonDe on the lexicon backend" in fails(
        "--hyp", f["hyp"], "--ref", f["ref"], "--docs", f["docs"], "--evaluator", "blonde-lex",
        "--target-language", "en", "--nlp", "spacy:en_rules_test")


def test_blonde_plus_reads_the_authors_annotation_file(blonde_files: dict[str, Path], rule_spacy: None,
                                                       tmp_path: Path) -> None:
    f = blonde_files
    common = ("--hyp", f["hyp"], "--ref", f["ref"], "--docs", f["docs"], "--target-language", "en",
              "--nlp", "spacy:en_rules_test")
    # The authors' an.txt lines: the MT sentence, then 1,<reference phrase>,<MT phrase> <pos/a,b> (ambiguity) and
    # 3,<reference phrase>,… (ellipsis); other fields (2, 5, 6: error types without spans) are ignored.
    annotations = write(tmp_path / "an.txt", ["Qiao saw her.\t3,him, her <pos/10,12>",
                                              "She looked at the picture.\t1,photo, picture <pos/19,25>\t6",
                                              "He was here.\t5"])
    result = score_json(*common, "--evaluator", "blonde-plus", "--annotations", annotations)
    row = rows(result, "blonde-plus")["mt"]
    assert row["evaluator"] == "blonde-plus" and row["signature"].startswith("blonde-plus|")
    cats = row["categories"]
    assert cats["plus:ambiguity"]["recall"] == 0 and cats["plus:ellipsis"]["recall"] == 0  # both phrases missed
    assert "sblonde" in cats and row["score"] < rows(score_json(*common, "--evaluator", "blonde"), "blonde")["mt"]["score"]
    same = write(tmp_path / "same.txt", ["Qiao saw him.", "She looked at the photo.", "He was there."])
    perfect = rows(score_json("--hyp", same, *common[2:], "--evaluator", "blonde-plus", "--annotations", annotations),
                   "blonde-plus")["same"]
    assert perfect["categories"]["plus:ambiguity"]["recall"] == pytest.approx(100) and perfect["score"] == pytest.approx(100)
    # Bad or missing annotation files: exit 2, naming the file and line.
    assert "blonde-plus needs the human annotations of the reference" in fails(*common, "--evaluator", "blonde-plus")
    assert "--annotations: only blonde-plus uses human annotations" in fails(
        *common, "--evaluator", "blonde", "--annotations", annotations)
    short = write(tmp_path / "short.txt", ["x\t3,him, her"])
    assert f"--annotations {short} has 1 lines but the reference" in fails(
        *common, "--evaluator", "blonde-plus", "--annotations", short)
    shifted = write(tmp_path / "shifted.txt", ["x\t5", "Qiao saw her.\t3,him, her", "x\t6"])
    assert (f"--annotations {shifted}: line 2: ellipsis phrase 'him' is not in line 2 of the reference "
            f"{f['ref']}; the file's lines must be aligned with --ref") in fails(
        *common, "--evaluator", "blonde-plus", "--annotations", shifted)
    none = write(tmp_path / "none.txt", ["x\t5", "x\t6", "x"])
    assert "no line marks an ambiguous (1,…) or omitted (3,…) phrase" in fails(
        *common, "--evaluator", "blonde-plus", "--annotations", none)
    assert "blonde-plus needs a spaCy pipeline" in fails(
        *common[:-2], "--evaluator", "blonde-plus", "--annotations", annotations)
