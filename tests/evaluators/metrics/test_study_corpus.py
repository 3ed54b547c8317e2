"""A study as a Corpus, and registry evaluators run on studies (scores, system scores, signature, notes)."""
from __future__ import annotations

from typing import Any

import pytest

from evaluators.metrics import corpus as corpus_module
from evaluators.metrics.corpus import Corpus, EvaluationResult, SegmentScore, SystemScore
from evaluators.metrics.scores import EvaluationError, evaluator_run
from evaluators.metrics.study_corpus import build_study_corpus, study_corpus
from evaluators.models import Evaluator, MetricScore
from studies.importing.study_file import study_import
from tests.factories import owned_import, persona, study_file

pytestmark = pytest.mark.django_db

FR = ["Le chat est sur la table et il dort.", "Je ne sais pas pour vous, mais nous sommes là.",
      "Elle est partie avec son frère.", "Ce que tu dis est vrai, mais il faut partir."]
EN = ["The cat is on the table and it sleeps.", "I do not know about you, but we are here.",
      "She left with her brother.", "What you say is true, but we have to go."]


def _study(slug: str, refs: list[str], hyps: dict[str, list[str]], *, documents: int = 2,
           meta: list[dict[str, Any]] | None = None, **top: Any):
    n = len(refs)
    data = study_file(slug=slug, n_items=n, n_candidates=1 + len(hyps), documents=documents,
                      settings={"spam_rate": 0.0})
    systems = list(hyps)
    for i, item in enumerate(data["items"]):
        item["candidates"] = [{"system": "reference", "text": refs[i], "is_reference": True}] + [
            {"system": s, "text": hyps[s][i]} for s in systems]
        if meta:
            item["metadata"] = meta[i]
    data["settings"].update(top)
    return owned_import(status="open", data=data)


def test_segments_are_real_items_with_a_reference_in_document_order_systems_in_file_order():
    data = study_file(slug="sc", n_items=4, n_candidates=3, documents=2, settings={"spam_rate": 0.5})
    data["items"][3]["candidates"][0]["is_reference"] = False  # no reference: skipped, counted
    data["items"][1]["candidates"] = [data["items"][1]["candidates"][k] for k in (2, 0, 1)]  # sys2 first here
    study = study_import(status="open", data=data)
    assert study.items.filter(is_spam=True).exists()
    built = build_study_corpus(study)
    corpus = built.corpus
    assert [s.key for s in corpus.segments] == ["ext-0", "ext-2", "ext-1"]  # doc-0 (positions 0, 1), doc-1
    assert [s.document for s in corpus.segments] == ["doc-0", "doc-0", "doc-1"]
    assert corpus.systems == ["sys1", "sys2"]  # the study file's order (position), not the first item's
    seg = corpus.segments[0]
    assert seg.reference.startswith("Item 0 candidate 0") and seg.hypotheses["sys2"].startswith("Item 0 candidate 2")
    assert seg.source == "Quelle 0." and "reference" not in seg.hypotheses
    assert set(built.items) == {"ext-0", "ext-1", "ext-2"} and built.n_skipped_no_reference == 1
    assert "1 item(s) without a reference candidate were skipped" in built.notes[0]


def test_target_language_from_the_study_is_not_guessed():
    study = _study("lang-study", EN, {"mt": EN}, target_language="fr")  # the field wins over the text
    corpus = study_corpus(study)
    assert corpus.target_language == "fr" and not corpus.target_language_guessed and not corpus.segment_languages


def test_target_language_guessed_from_the_references_is_reported_as_a_guess():
    built = build_study_corpus(_study("lang-guess", FR, {"mt": FR}))
    assert built.corpus.target_language == "fr" and built.corpus.target_language_guessed
    assert any("was guessed from the reference texts" in n for n in built.notes)


def test_no_silent_english_fallback_when_nothing_decides():
    built = build_study_corpus(_study("lang-none", ["OK.", "42", "Hmm.", "Ah."], {"mt": ["OK."] * 4}))
    assert built.corpus.target_language == "" and not built.corpus.target_language_guessed
    assert any(n.startswith("target language unknown") for n in built.notes)


def test_items_mixing_directions_keep_their_own_language():
    meta = [{"target_language": "french"}, {"target_language": "english"}, {"target_language": "french"},
            {"target_language": "english"}]
    refs = [FR[0], EN[1], FR[2], EN[3]]
    built = build_study_corpus(_study("lang-mixed", refs, {"mt": refs}, meta=meta))
    corpus = built.corpus
    assert corpus.segment_languages == {"ext-0": "fr", "ext-1": "en", "ext-2": "fr", "ext-3": "en"}
    assert corpus.target_language in ("fr", "en") and not corpus.target_language_guessed
    assert any("2 × 'fr', 2 × 'en'" in n or "2 × 'en', 2 × 'fr'" in n for n in built.notes)


def test_registry_evaluator_on_a_study_stores_segment_scores_system_scores_and_signature():
    refs = ["He saw her.", "She left.", "It rained.", "They came back."]
    study = _study("reg", refs, {"A": ["He saw her.", "He left.", "It rained.", "Rain."],
                                 "B": ["She saw him.", "She left.", "Rain fell.", "They came back."]},
                   target_language="en")
    evaluator = evaluator_run(study=study, name="pronoun-p")
    rows = {(r.item.external_id, r.system): r.score for r in MetricScore.objects.filter(evaluator=evaluator)
            .select_related("item")}
    # A: ext-3 has no pronoun in the hypothesis: precision 0/0, not stored (the old built-in stored 0).
    assert rows[("ext-0", "A")] == 1.0 and rows[("ext-1", "A")] == 0.0 and ("ext-3", "A") not in rows
    assert ("ext-2", "B") not in rows  # B's "Rain fell." has no pronoun either
    a = evaluator.system_scores["A"]
    # pooled over the corpus: A's pronouns he, her | he | it (4), of which he, her, it match (3)
    assert a["score"] == pytest.approx(3 / 4)
    assert a["counts"] == {"matched": 3, "hypothesis": 4, "reference": 5, "segments": 4, "undefined": 1}
    assert rows[("ext-0", "B")] == 0.0 and rows[("ext-1", "B")] == 1.0
    assert evaluator.system_scores["B"]["score"] == pytest.approx(2 / 4)
    assert evaluator.signature.startswith("pronoun-p|lang:en|tok:words|")
    assert any(n.startswith("1 of 4 segment(s) have no pronoun in the hypothesis") for n in evaluator.notes)  # A and B
    assert evaluator.paired is None  # sacrebleu has no paired test for a word-list metric


def test_a_document_level_registry_evaluator_stores_its_score_on_every_item_of_the_document():
    study = _study("reg-doc", EN, {"A": EN, "B": FR}, target_language="en")
    evaluator = evaluator_run(study=study, name="blonde-lex")
    rows = list(MetricScore.objects.filter(evaluator=evaluator, system="A").select_related("item"))
    assert {r.document for r in rows} == {"doc-0", "doc-1"} and len(rows) == 4
    documents = {r.document: r.score for r in rows}
    assert all(r.score == documents[r.document] for r in rows)
    assert evaluator.system_scores["A"]["score"] == pytest.approx(100.0)  # identical to the references
    assert evaluator.system_scores["B"]["score"] < 50
    assert evaluator.signature.startswith("blonde-lex|") and "nlp:lexicon" in evaluator.signature
    assert "categories" in evaluator.system_scores["A"] and evaluator.backend == ""


def test_a_refused_study_stores_nothing_and_says_why():
    study = _study("reg-fr", FR, {"A": FR}, target_language="fr")
    with pytest.raises(EvaluationError) as exc:
        evaluator_run(study=study, name="blonde-lex")
    assert "English targets" in str(exc.value)
    assert not Evaluator.objects.filter(study=study).exists()
    with pytest.raises(EvaluationError) as exc:
        evaluator_run(study=study, name="connective-acc")  # no French connective list
    assert "no connective list for target language 'fr'" in str(exc.value)
    with pytest.raises(EvaluationError) as exc:
        evaluator_run(study=study, name="blonde-lex", nlp="nonsense:x")
    assert str(exc.value).startswith("nlp: unknown language backend 'nonsense:x'")


class _UndefinedEvaluator:
    """A registry evaluator whose scores are partly undefined (None, NaN): not stored, counted."""

    name = "test-undefined"
    higher_is_better = False
    level = "sentence"
    description = "test only"
    needs_source = False
    needs_documents = False

    def evaluate(self, corpus: Corpus, *, nlp: Any = None, progress: Any = None) -> EvaluationResult:
        segs = [SegmentScore(key=s.key, system=sys, score=None if i == 0 else float(i))
                for i, s in enumerate(corpus.segments) for sys in s.hypotheses]
        systems = [SystemScore(system=sys, score=float("nan") if sys == "B" else 1.5, signature="t|v:1",
                               notes=["a note"]) for sys in corpus.systems]
        return EvaluationResult(evaluator=self.name, higher_is_better=False, systems=systems, segments=segs)


def test_undefined_scores_are_not_stored_and_non_finite_system_scores_become_null(monkeypatch):
    monkeypatch.setitem(corpus_module._REGISTRY, "test-undefined", _UndefinedEvaluator())
    study = _study("reg-undef", EN, {"A": EN, "B": EN}, target_language="en")
    evaluator = evaluator_run(study=study, name="test-undefined")
    assert evaluator.higher_is_better is False  # the evaluator's own orientation
    assert MetricScore.objects.filter(evaluator=evaluator).count() == 6  # 8 minus ext-0's two
    assert evaluator.system_scores["B"]["score"] is None and evaluator.system_scores["A"]["score"] == 1.5
    assert "2 segment score(s) undefined: not stored, left out of the means" in evaluator.notes
    assert "a note" in evaluator.notes and evaluator.signature == "t|v:1|ref:reference"  # the stored signature names the reference


def test_blonde_with_a_spacy_backend_on_a_study_records_the_pipeline():
    from evaluators.metrics.language.spacy_backend import SpacyBackend
    from tests.evaluators.metrics.spacy_pipelines import EXAMPLE, rule_pipeline

    refs = [ref for _, ref, _ in EXAMPLE]
    study = _study("reg-spacy", refs, {s: [hyps[s] for _, _, hyps in EXAMPLE] for s in ("A", "B")}, documents=3,
                   target_language="en")
    evaluator = evaluator_run(study=study, name="blonde", nlp=SpacyBackend(rule_pipeline()))
    assert evaluator.backend == "spacy:en_rules_test"
    assert evaluator.signature.startswith("blonde|") and "pipeline:en_rules_test@0.1.0" in evaluator.signature
    assert 0 < evaluator.system_scores["A"]["score"] < 100 and evaluator.system_scores["A"]["categories"]
    assert MetricScore.objects.filter(evaluator=evaluator).exclude(document="").count() == 2 * len(refs)


def test_the_admin_shows_what_a_run_stored(client):
    from django.urls import reverse

    study = _study("reg-admin", EN, {"A": EN}, target_language="en")
    evaluator = evaluator_run(study=study, name="chrf")
    client.force_login(persona("owner"))  # an analyst or manager of the study reads its evaluators in the admin
    page = client.get(reverse("admin:evaluators_evaluator_change", args=[evaluator.pk])).content.decode()
    assert evaluator.signature in page and "system_scores" in page.replace("System scores", "system_scores")


def test_a_chinese_study_gets_the_zh_tokenizer_and_the_chinese_lists():
    refs = ["你们富人总以为钱能买到一切。", "你们想的太对了。", "当他回家的时候，她们已经走了。", "我喜欢茶，而他喜欢咖啡。"]
    hyps = ["你富人总以为钱能买到一切。", "你们想的太对了。", "他回家，他们已经走了。", "我喜欢茶，而他喜欢咖啡。"]
    study = _study("reg-zh", refs, {"A": hyps}, target_language="zh-Hans")
    bleu = evaluator_run(study=study, name="bleu")
    assert "tok:zh" in bleu.signature
    pronouns = evaluator_run(study=study, name="pronoun-f")
    assert "lang:zh|tok:words+jieba:0.42.1" in pronouns.signature
    f = {r.item.external_id: r.score for r in MetricScore.objects.filter(evaluator=pronouns).select_related("item")}
    assert f == {"ext-0": 0.0, "ext-1": 1.0, "ext-2": pytest.approx(2 * 1 / (2 + 2)), "ext-3": 1.0}
    connectives = evaluator_run(study=study, name="connective-acc")
    acc = {r.item.external_id: r.score for r in MetricScore.objects.filter(evaluator=connectives)
           .select_related("item")}
    assert acc == {"ext-2": 0.0, "ext-3": 1.0}  # 当…时候 missing in ext-2's hypothesis; 而 kept in ext-3
