"""The lexicon backend's UD-trained tagger: held-out floors, the shipped files, the model file format."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evaluators.metrics.language import tagger

SAMPLES = Path(__file__).resolve().parents[3] / "fixtures" / "ud"
FOCUS = frozenset({"NOUN", "ADJ", "PROPN"})
#: Held-out floors of NOUN/ADJ/PROPN-versus-rest F1 on the committed test samples (fixtures/ud/README.md).
#: Measured with tagger version 1: en 0.972, de 0.953, fr 0.958, zh 0.920 (docs/evaluators.md has the
#: figures on the whole test sections).
FLOORS = {"en": ("en_ewt", 0.96), "de": ("de_gsd", 0.94), "fr": ("fr_gsd", 0.95), "zh": ("zh_gsdsimp", 0.90)}


def focus_f1(model: tagger.Model, path: Path) -> tuple[float, int]:
    tp = fp = fn = n = 0
    for words, gold in tagger.read_conllu(path, model.language):
        for g, p in zip(gold, model.tag(words)):
            n += 1
            tp += g in FOCUS and p in FOCUS
            fp += p in FOCUS and g not in FOCUS
            fn += g in FOCUS and p not in FOCUS
    return 2 * tp / (2 * tp + fp + fn), n


@pytest.mark.parametrize("language", sorted(FLOORS))
def test_held_out_noun_adjective_proper_noun_f1_stays_above_its_floor(language: str) -> None:
    prefix, floor = FLOORS[language]
    model = tagger.model(language)
    assert model is not None and model.language == language and model.version == tagger.MODEL_VERSION
    f1, tokens = focus_f1(model, SAMPLES / f"{prefix}-ud-test.sample.conllu")
    assert tokens > 1500
    assert f1 >= floor, f"{language}: F1 {f1:.4f} below the floor {floor}"


def test_the_shipped_files_are_small_licensed_and_loaded_once() -> None:
    for language in tagger.LANGUAGES:
        path = tagger.DATA_DIR / f"{language}.npz"
        assert path.stat().st_size < 3_000_000
        assert tagger.model(language) is tagger.model(language)
    readme = (tagger.DATA_DIR / "README.md").read_text(encoding="utf-8")
    assert "CC BY-SA 4.0" in readme and "UD English-EWT" in readme
    assert (tagger.DATA_DIR / "LICENSE-CC-BY-SA-4.0.txt").exists()
    assert tagger.model("es") is None  # no model: the backend keeps its rules
    assert tagger.signature() == f"tagger:ud-ap-{tagger.MODEL_VERSION}"


def test_a_saved_model_reads_back_and_tags_with_its_quantised_weights(tmp_path: Path) -> None:
    words = ["the", "cat"]
    norm = [tagger.normalise(w) for w in words]
    classes = ["DET", "NOUN"]
    feats = ["w=the", "w=cat", "t-1=DET"]
    weights = np.array([[2.0, -1.0], [-0.5, 1.5], [0.0, 0.25]])
    path = tmp_path / "xx.npz"
    tagger.save(path, language="xx", version="9", classes=classes, features_=feats, weights=weights,
                tagdict={"a": "DET"})
    model = tagger.read(path)
    assert (model.language, model.version, model.classes) == ("xx", "9", ("DET", "NOUN"))
    assert model.weights.dtype == np.int8 and model.weights[0, 0] == 127  # the largest weight maps to 127
    assert model.tag(["The", "cat", "a"]) == ["DET", "NOUN", "DET"]
    assert "w=cat" in tagger.features(words, 1, norm, "DET", "-START-")


def test_features_fold_digits_and_case_and_describe_the_shape() -> None:
    assert tagger.normalise("Friday1984") == "friday0000"
    assert [tagger.shape(w) for w in ("Friday", "U.S.", "1984", "e-mail")] == ["Xx", "X.X.", "d", "x-x"]
