"""The spaCy language backend over a pipeline built in code (no model download)."""
from __future__ import annotations

from pathlib import Path

import pytest
import spacy

from evaluators.metrics.language import spacy_backend
from evaluators.metrics.language.spacy_backend import BackendUnavailable, SpacyBackend, load
from tests.evaluators.metrics.spacy_pipelines import rule_pipeline


def test_analyse_gives_tags_lemmas_and_entities_one_sentence_per_segment() -> None:
    backend = SpacyBackend(rule_pipeline())
    out = backend.analyse(["Qiao looked at the photo.", "He saw Acme in Paris on Monday. She stands."], "en")
    assert len(out) == 2  # segments are not re-split
    first = out[0]
    assert [t.text for t in first.tokens] == ["Qiao", "looked", "at", "the", "photo", "."]
    looked = first.tokens[1]
    assert (looked.tag, looked.pos, looked.lemma) == ("VBD", "VERB", "look")
    assert first.tokens[2].tag == ""  # "at" is not in the rule lexicon
    assert [t.whitespace for t in first.tokens][:2] == [True, True]
    assert first.tokens[-2].whitespace is False  # "photo" is glued to "."
    assert [(e.text, e.label, e.start, e.end) for e in first.entities] == [("Qiao", "PERSON", 0, 1)]
    assert [(e.text, e.label) for e in out[1].entities] == [("Acme", "ORG"), ("Paris", "GPE"), ("Monday", "DATE")]
    assert out[1].text == "He saw Acme in Paris on Monday. She stands."


def test_signature_names_pipeline_version_and_spacy() -> None:
    backend = SpacyBackend(rule_pipeline())
    assert backend.name == "spacy:en_rules_test"
    assert backend.signature() == f"nlp:spacy:en_rules_test|pipeline:en_rules_test@0.1.0|spacy:{spacy.__version__}"


def test_pipeline_loaded_by_name_or_path_keeps_that_name(tmp_path: Path) -> None:
    rule_pipeline().to_disk(tmp_path / "my_pipe")
    backend = load(str(tmp_path / "my_pipe"))
    assert backend.name == f"spacy:{tmp_path / 'my_pipe'}"
    assert "@0.1.0|" in backend.signature()
    assert backend.analyse(["Joe met her."])[0].entities[0].text == "Joe"


def test_missing_pipeline_is_a_clear_error() -> None:
    with pytest.raises(BackendUnavailable, match=r"'xx_no_such_pipeline' is not installed.*spacy download"):
        load("xx_no_such_pipeline")
    with pytest.raises(BackendUnavailable, match="needs a pipeline name"):
        load("")


def test_missing_spacy_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_spacy(name: str, *args: object, **kwargs: object) -> object:
        if name == "spacy" or name.startswith("spacy."):
            raise ImportError("No module named 'spacy'")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_spacy)
    with pytest.raises(BackendUnavailable, match="spaCy is not installed"):
        load("en_core_web_sm")


def test_spacy_failing_on_a_missing_dependency_says_which(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def broken_spacy(name: str, *args: object, **kwargs: object) -> object:
        if name == "spacy":
            raise ModuleNotFoundError("No module named 'click'", name="click")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", broken_spacy)
    with pytest.raises(BackendUnavailable, match=r"spaCy cannot be imported \(No module named 'click'\)"):
        load("en_core_web_sm")


def test_other_target_language_is_refused() -> None:
    backend = SpacyBackend(rule_pipeline())
    backend.analyse(["It is."], "en-GB")
    backend.analyse(["It is."], "")
    with pytest.raises(BackendUnavailable, match="is for language 'en'.*'fr'"):
        backend.analyse(["Il est."], "fr")


def test_unused_components_are_disabled_and_texts_batched(monkeypatch: pytest.MonkeyPatch) -> None:
    nlp = rule_pipeline(extra=["sentencizer"])
    backend = SpacyBackend(nlp)
    assert backend.disabled_for({"tag"}) == ["entity_ruler", "sentencizer"]
    assert backend.disabled_for({"entities"}) == ["attribute_ruler", "sentencizer"]
    with pytest.raises(ValueError, match="unknown annotations"):
        backend.disabled_for({"dependencies"})
    # Only the tags asked for: no entities are found, and the components are on again afterwards.
    out = backend.analyse(["Qiao looked."], need={"tag"})
    assert out[0].entities == () and out[0].tokens[1].tag == "VBD"
    assert nlp.pipe_names == ["attribute_ruler", "entity_ruler", "sentencizer"]
    calls: list[int] = []
    real_pipe = nlp.pipe

    def counting_pipe(texts, **kwargs):
        texts = list(texts)
        calls.append(len(texts))
        return real_pipe(texts, **kwargs)

    monkeypatch.setattr(nlp, "pipe", counting_pipe)
    assert len(backend.analyse([f"Qiao saw {i}." for i in range(50)])) == 50
    assert calls == [50]


def test_split_sentences_with_and_without_a_sentence_component() -> None:
    text = "Qiao looked at the photo. He saw her! They met."
    assert SpacyBackend(rule_pipeline()).split_sentences(text, "en") == [
        "Qiao looked at the photo.", "He saw her!", "They met."]
    assert SpacyBackend(rule_pipeline(extra=["sentencizer"])).split_sentences(text) == [
        "Qiao looked at the photo.", "He saw her!", "They met."]


def test_module_names_its_install_commands() -> None:
    assert "python -m spacy download en_core_web_sm" in (spacy_backend.__doc__ or "")


def test_get_backend_selects_spacy_by_spec_and_loads_it_once(tmp_path: Path) -> None:
    from evaluators.metrics.language import get_backend

    rule_pipeline().to_disk(tmp_path / "pipe")
    backend = get_backend(f"spacy:{tmp_path / 'pipe'}")
    assert isinstance(backend, SpacyBackend)
    assert get_backend(f"spacy:{tmp_path / 'pipe'}") is backend
    with pytest.raises(BackendUnavailable, match="is not installed"):
        get_backend("spacy:xx_no_such_pipeline")
    with pytest.raises(ValueError, match=r"unknown language backend 'stanza'.*spacy:NAME"):
        get_backend("stanza")


def test_a_ruler_whose_only_tag_rule_is_space_is_skipped_for_tags_and_its_rule_redone() -> None:
    # en_core_web_*'s attribute_ruler sets TAG only as IS_SPACE -> _SP; for tags alone it need not run.
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("attribute_ruler")
    ruler.add([[{"IS_SPACE": True}]], {"TAG": "_SP", "POS": "SPACE"})  # type: ignore[attr-defined]
    ruler.add([[{"LOWER": "runs"}]], {"POS": "VERB"})  # type: ignore[attr-defined]
    backend = SpacyBackend(nlp)
    assert backend.disabled_for({"tag"}) == ["attribute_ruler"]
    assert backend.disabled_for({"tag", "pos"}) == []
    fast = backend.analyse(["She  runs."], need={"tag"})[0]
    full = backend.analyse(["She  runs."])[0]
    assert [t.tag for t in fast.tokens] == [t.tag for t in full.tokens] == ["", "_SP", "", ""]
    assert full.tokens[2].pos == "VERB" and fast.tokens[2].pos == ""
    # A ruler with any other TAG rule runs whenever tags are needed.
    assert SpacyBackend(rule_pipeline()).disabled_for({"tag"}) == ["entity_ruler"]


def test_tagged_gives_what_analyse_gives_for_tags_and_entities() -> None:
    # BlonDe's lean path reads texts, tags and entities from the Doc arrays; it must agree with analyse().
    texts = ["Qiao looked at the photo.", "He  saw Acme in Paris on Monday.", "", "  ", "Joe’s  heart."]
    backend = SpacyBackend(rule_pipeline())
    full = backend.analyse(texts, "en", need={"tag", "entities"})
    lean = backend.tagged(texts, "en")
    assert len(lean) == len(texts)
    for sentence, (text, words, tags, entities) in zip(full, lean):
        assert text == sentence.text
        assert words == [t.text for t in sentence.tokens]
        assert tags == [t.tag for t in sentence.tokens]
        assert entities == [(e.text, e.label) for e in sentence.entities]
    assert lean[1][1][:2] == ["He", " "] and lean[1][2][:2] == ["PRP", ""]
    assert lean[1][3] == [("Acme", "ORG"), ("Paris", "GPE"), ("Monday", "DATE")]
    assert backend.tagged(texts[:1], "en", entities=False)[0][3] == []
    with pytest.raises(BackendUnavailable, match="'fr'"):
        backend.tagged(["Il est."], "fr")
    # With a ruler that only tags whitespace (skipped), whitespace tokens are still tagged _SP.
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("attribute_ruler")
    ruler.add([[{"IS_SPACE": True}]], {"TAG": "_SP"})  # type: ignore[attr-defined]
    spaced = SpacyBackend(nlp)
    assert spaced.tagged(["She  runs."])[0][2] == ["", "_SP", "", ""] == [
        t.tag for t in spaced.analyse(["She  runs."])[0].tokens]
