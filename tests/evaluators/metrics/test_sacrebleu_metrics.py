"""Corpus BLEU / chrF / TER evaluators: the same scores and signatures as sacrebleu's API and its command."""
from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import pytest
import sacrebleu
from sacrebleu.metrics import BLEU, CHRF, TER

from evaluators.metrics.corpus import Corpus, EvaluationResult, Segment
from evaluators.metrics.registry import evaluators
from evaluators.metrics.sacrebleu_metrics import make_metric
from tests.evaluators.metrics.sacrebleu_data import (
    CHINESE_REFS, CHINESE_SYSTEMS, JAPANESE_HYPS, JAPANESE_REFS, KOREAN_HYPS, KOREAN_REFS, english, sacrebleu_cli,
    write_systems,
)


def corpus_of(refs: list[str], systems: dict[str, list[str]], language: str = "") -> Corpus:
    return Corpus([Segment(key=str(i), document="", reference=ref,
                           hypotheses={name: lines[i] for name, lines in systems.items()})
                   for i, ref in enumerate(refs)], target_language=language)


def run(name: str, corpus: Corpus) -> EvaluationResult:
    return evaluators()[name].evaluate(corpus)


def by_system(result: EvaluationResult) -> dict[str, float | None]:
    return {s.system: s.score for s in result.systems}


def test_registered_with_orientation_and_level() -> None:
    registry = evaluators()
    assert registry["bleu"].higher_is_better and registry["chrf"].higher_is_better
    assert registry["ter"].higher_is_better is False
    for name in ("bleu", "chrf", "ter"):
        assert registry[name].level == "sentence"
        assert not registry[name].needs_source and not registry[name].needs_documents


def test_english_corpus_scores_and_signatures_equal_sacrebleu_api() -> None:
    refs, systems = english()
    corpus = corpus_of(refs, systems, "en")
    api = {"bleu": BLEU(), "chrf": CHRF(), "ter": TER()}
    for name, metric in api.items():
        result = run(name, corpus)
        for system in result.systems:
            expected = metric.corpus_score(systems[system.system], [refs])
            assert system.score == pytest.approx(expected.score, abs=1e-12)
            assert system.signature == str(metric.get_signature())
            assert system.notes == []
    bleu = run("bleu", corpus).systems[0]
    assert bleu.signature == "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
    assert bleu.counts is not None and bleu.counts["hyp_len"] > 0 and len(bleu.counts["correct"]) == 4


def test_system_score_is_the_corpus_statistic_not_a_mean_of_sentence_scores() -> None:
    refs, systems = english()
    corpus = corpus_of(refs, {"mt": systems["mt"]}, "en")
    for name, sentence in (("bleu", sacrebleu.sentence_bleu), ("chrf", sacrebleu.sentence_chrf),
                           ("ter", sacrebleu.sentence_ter)):
        result = run(name, corpus)
        segment_scores = [s.score for s in result.segments]
        # segment scores are sacrebleu's sentence scores (sentence BLEU with effective order) ...
        assert segment_scores == pytest.approx([sentence(h, [r]).score for h, r in zip(systems["mt"], refs)],
                                               abs=1e-9)
        assert [s.key for s in result.segments] == [str(i) for i in range(len(refs))]
        # ... and the system score is not their mean.
        assert abs(result.systems[0].score - statistics.mean(segment_scores)) > 0.1


def test_english_equals_sacrebleu_cli(tmp_path: Path) -> None:
    refs, systems = english()
    ref, hyps = write_systems(tmp_path, refs, {"mt": systems["mt"]})
    cli = {row["name"]: row for row in sacrebleu_cli(str(ref), "-i", str(hyps[0]), "-m", "bleu", "chrf", "ter")}
    corpus = corpus_of(refs, {"mt": systems["mt"]}, "en")
    for name, cli_name in (("bleu", "BLEU"), ("chrf", "chrF2"), ("ter", "TER")):
        ours = run(name, corpus).systems[0]
        assert ours.score == pytest.approx(cli[cli_name]["score"], abs=1e-9)
        assert ours.signature == cli[cli_name]["signature"]


@pytest.mark.parametrize("language", ["zh", "zh-Hans", "zh_CN"])
def test_chinese_target_uses_the_zh_tokenizer_and_ter_asian_support(language: str) -> None:
    corpus = corpus_of(CHINESE_REFS, CHINESE_SYSTEMS, language)
    bleu, ter, chrf = run("bleu", corpus), run("ter", corpus), run("chrf", corpus)
    for system in bleu.systems:
        assert system.score == pytest.approx(
            BLEU(tokenize="zh").corpus_score(CHINESE_SYSTEMS[system.system], [CHINESE_REFS]).score, abs=1e-12)
        assert "tok:zh" in system.signature
    for system in ter.systems:
        assert system.score == pytest.approx(
            TER(asian_support=True).corpus_score(CHINESE_SYSTEMS[system.system], [CHINESE_REFS]).score, abs=1e-12)
        assert "asian:yes" in system.signature
    assert by_system(chrf) == pytest.approx(
        {n: CHRF().corpus_score(h, [CHINESE_REFS]).score for n, h in CHINESE_SYSTEMS.items()})
    # 13a would see most Chinese sentences as one token: the scores differ a lot.
    assert by_system(bleu)["sys1"] - BLEU().corpus_score(CHINESE_SYSTEMS["sys1"], [CHINESE_REFS]).score > 10


def test_chinese_equals_sacrebleu_cli_with_tok_zh_and_with_language_pair(tmp_path: Path) -> None:
    ref, hyps = write_systems(tmp_path, CHINESE_REFS, {"sys1": CHINESE_SYSTEMS["sys1"]})
    explicit = {r["name"]: r for r in sacrebleu_cli(str(ref), "-i", str(hyps[0]), "-m", "bleu", "chrf", "ter",
                                                     "-tok", "zh", "--ter-asian-support")}
    automatic = {"BLEU": sacrebleu_cli(str(ref), "-i", str(hyps[0]), "-m", "bleu", "-l", "en-zh")}
    corpus = corpus_of(CHINESE_REFS, {"sys1": CHINESE_SYSTEMS["sys1"]}, "zh")
    bleu = run("bleu", corpus).systems[0]
    for cli in (explicit["BLEU"], automatic["BLEU"]):
        assert bleu.score == pytest.approx(cli["score"], abs=1e-9)
        assert bleu.signature == cli["signature"]
    for name, cli_name in (("chrf", "chrF2"), ("ter", "TER")):
        ours = run(name, corpus).systems[0]
        assert ours.score == pytest.approx(explicit[cli_name]["score"], abs=1e-9)
        assert ours.signature == explicit[cli_name]["signature"]


def test_missing_target_language_is_guessed_and_noted() -> None:
    result = run("bleu", corpus_of(CHINESE_REFS, CHINESE_SYSTEMS, ""))
    assert "tok:zh" in result.systems[0].signature
    assert any("guessed 'zh'" in note for note in result.systems[0].notes)
    guessed = Corpus(corpus_of(CHINESE_REFS, CHINESE_SYSTEMS).segments, target_language="zh",
                     target_language_guessed=True)
    assert any("was guessed" in note for note in run("ter", guessed).systems[0].notes)


def test_unguessable_language_uses_13a_and_says_so() -> None:
    result = run("bleu", corpus_of(["123 456", "7 8 9"], {"a": ["123 456", "7 8"]}, ""))
    assert "tok:13a" in result.systems[0].signature
    assert any("not guessable" in note for note in result.systems[0].notes)


def test_japanese_and_korean_use_mecab_like_sacrebleu_cli(tmp_path: Path) -> None:
    for language, refs, hyps, tok in (("ja", JAPANESE_REFS, JAPANESE_HYPS, "ja-mecab"),
                                      ("ko", KOREAN_REFS, KOREAN_HYPS, "ko-mecab")):
        directory = tmp_path / language
        directory.mkdir()
        ref, files = write_systems(directory, refs, {"h": hyps})
        cli = sacrebleu_cli(str(ref), "-i", str(files[0]), "-m", "bleu", "-tok", tok)
        ours = run("bleu", corpus_of(refs, {"h": hyps}, language)).systems[0]
        assert ours.score == pytest.approx(cli["score"], abs=1e-9)
        assert ours.signature == cli["signature"]
        assert f"tok:{tok}-" in ours.signature and ours.notes == []
        ter = run("ter", corpus_of(refs, {"h": hyps}, language)).systems[0]
        assert "asian:yes" in ter.signature


def test_mecab_missing_falls_back_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    from sacrebleu.tokenizers import tokenizer_ja_mecab, tokenizer_ko_mecab

    monkeypatch.setattr(tokenizer_ja_mecab, "MeCab", None)
    monkeypatch.setattr(tokenizer_ko_mecab, "MeCab", None)
    ja, ko = make_metric("bleu", "ja"), make_metric("bleu", "ko")
    bleu_ja: Any = ja.metric
    bleu_ko: Any = ko.metric
    assert bleu_ja.tokenizer_signature == "char" and "ja-mecab is not installed" in ja.notes[0]
    assert bleu_ko.tokenizer_signature == "intl" and "ko-mecab is not installed" in ko.notes[0]
    result = run("bleu", corpus_of(JAPANESE_REFS, {"h": JAPANESE_HYPS}, "ja"))
    assert result.systems[0].score == pytest.approx(
        BLEU(tokenize="char").corpus_score(JAPANESE_HYPS, [JAPANESE_REFS]).score)
    assert any("not comparable" in note for note in result.systems[0].notes)


def test_a_system_missing_segments_is_scored_on_its_own_segments() -> None:
    refs, systems = english()
    segments = [Segment(key=str(i), document="", reference=ref,
                        hypotheses={"mt": systems["mt"][i], **({"half": systems["mt"][i]} if i % 2 else {})})
                for i, ref in enumerate(refs)]
    result = run("bleu", Corpus(segments, target_language="en"))
    half = next(s for s in result.systems if s.system == "half")
    odd = [i for i in range(len(refs)) if i % 2]
    assert half.score == pytest.approx(
        BLEU().corpus_score([systems["mt"][i] for i in odd], [[refs[i] for i in odd]]).score)
    assert any(f"{len(odd)} of {len(refs)} segments" in note for note in half.notes)
    assert sum(1 for s in result.segments if s.system == "half") == len(odd)


def test_progress_is_reported_per_system() -> None:
    refs, systems = english()
    calls: list[tuple[int, int]] = []
    evaluators()["chrf"].evaluate(corpus_of(refs, systems, "en"), progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 3), (2, 3), (3, 3)]


def test_mixed_target_languages_share_a_setting_or_are_refused() -> None:
    refs, systems = english()
    corpus = corpus_of(refs, {"mt": systems["mt"]}, "en")
    corpus.segment_languages = {str(i): ("fr" if i % 2 else "en") for i in range(len(refs))}
    result = run("bleu", corpus)
    assert result.systems[0].score == pytest.approx(BLEU().corpus_score(systems["mt"], [refs]).score)
    assert any("(en, fr) share one sacrebleu setting: tokenizer 13a" in n for n in result.systems[0].notes)
    corpus.segment_languages["0"] = "zh"
    for name in ("bleu", "ter"):
        with pytest.raises(ValueError, match="need different sacrebleu settings"):
            run(name, corpus)
    assert run("chrf", corpus).systems[0].score == pytest.approx(CHRF().corpus_score(systems["mt"], [refs]).score)


@pytest.mark.parametrize("name", ["bleu", "chrf", "ter"])
def test_a_hypothesis_repeated_by_another_system_is_scored_once_with_the_same_statistics(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import evaluators.metrics.sacrebleu_metrics as sm

    refs = ["the cat sat on the mat .", "a dog barked at the moon all night", "he left"]
    systems = {"A": ["the cat sat on a mat .", "a dog barked all night", "he left"],
               "B": ["the cat sat on a mat .", "the dog was barking at the moon", "he left"],  # 0 and 2 as A's
               "C": ["he left", "a dog barked all night", "she left"]}  # A's segment-1 text; "he left" on segment 0
    calls: list[str] = []
    real = sm.segment_statistics

    def counting(metric: Any, hypotheses: Any, ref_cache: Any, keys: Any = None, memo: Any = None) -> Any:
        out = real(metric, hypotheses, ref_cache, keys, memo)
        calls.append(str(len(memo) if memo is not None else -1))
        return out

    monkeypatch.setattr(sm, "segment_statistics", counting)
    result = run(name, corpus_of(refs, systems, "en"))
    # distinct (segment, text) pairs: A 3, B +1 (segment 1), C +2 (segment 0's "he left", segment 2's "she left")
    assert calls == ["3", "4", "6"]
    metric = BLEU(effective_order=True) if name == "bleu" else make_metric(name, "en").metric  # sentence BLEU
    for seg in result.segments:
        i = int(seg.key)
        hyp = systems[seg.system][i]
        expected = metric.sentence_score(hyp, [refs[i]]).score  # sacrebleu on the pair itself
        assert seg.score == pytest.approx(expected, abs=1e-9), (name, seg.system, i)
    for system in systems:
        assert next(s for s in result.systems if s.system == system).score == pytest.approx(
            make_metric(name, "en").metric.corpus_score(systems[system], [refs]).score, abs=1e-9)
