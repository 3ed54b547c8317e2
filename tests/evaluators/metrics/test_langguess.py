"""The target-language guesser: script first, then exclusive function words; undecidable is None, never English."""
from __future__ import annotations

import json

import pytest

from evaluators.metrics.langguess import FUNCTION_WORDS, guess_language, primary_subtag, validate_code
from tests.evaluators.metrics.sacrebleu_data import CHINESE_REFS, JAPANESE_REFS, KOREAN_REFS, ROOT


@pytest.mark.parametrize(("texts", "language"), [
    (["The cat is on the table and it is sleeping, but the dog is not."], "en"),
    (["Le chat est sur la table et il dort, mais le chien n'est pas là."], "fr"),
    (["Die Katze ist auf dem Tisch und schläft, aber der Hund ist nicht da."], "de"),
    (["El gato está en la mesa y duerme, pero el perro no está con los niños."], "es"),
    (CHINESE_REFS, "zh"),
    (JAPANESE_REFS, "ja"),
    (KOREAN_REFS, "ko"),
    (["القطة على الطاولة وهي نائمة"], "ar"),
    (["Кошка спит на столе, а собака нет."], "ru"),
    (["Кішка спить на столі, а собака їсть і п'є."], "uk"),
])
def test_languages_by_script_and_function_words(texts: list[str], language: str) -> None:
    assert guess_language(texts).language == language


def test_diabla_references_by_direction() -> None:
    rows = [json.loads(line) for line in (ROOT / "fixtures" / "diabla" / "utterances.jsonl").open(encoding="utf-8")]
    french = guess_language(r["reference"] for r in rows if r["source_language"] == "english")
    english = guess_language(r["reference"] for r in rows if r["source_language"] == "french")
    assert (french.language, english.language) == ("fr", "en")
    assert french.evidence.startswith("Latin script, function words: fr ")
    # Line by line, a short line is undecidable rather than wrong: no French line is read as English.
    per_line = [guess_language([r["reference"]]).language for r in rows if r["source_language"] == "english"]
    assert "en" not in per_line and per_line.count("fr") > 50


@pytest.mark.parametrize(("texts", "evidence"), [
    (["123 456", "!!"], "no letters"),
    (["OK."], "too few function words"),
    (["the and is le et est"], "too close to decide"),
    (["ab αβ"], "no dominant script"),
])
def test_undecidable_texts_are_none(texts: list[str], evidence: str) -> None:
    guess = guess_language(texts)
    assert guess.language is None and evidence in guess.evidence


def test_function_word_lists_count_only_exclusive_words() -> None:
    # "de" and "la" are French and Spanish (neither list has them); "il" is French and Italian: it counts for neither.
    assert "de" not in FUNCTION_WORDS["fr"] and "la" not in FUNCTION_WORDS["es"]
    assert "il" in FUNCTION_WORDS["fr"] and "il" in FUNCTION_WORDS["it"]
    assert guess_language(["il il il il"]).language is None


def test_language_codes() -> None:
    assert validate_code("zh_Hans") == "zh-hans" and validate_code(" pt-BR ") == "pt-br"
    assert primary_subtag("ZH-cn") == "zh" and primary_subtag("") == ""
    for bad in ("xx", "english", "e", "zh--", ""):
        with pytest.raises(ValueError, match="unknown language code"):
            validate_code(bad)
