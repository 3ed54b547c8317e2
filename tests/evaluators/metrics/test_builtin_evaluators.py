"""The word-list evaluators and the registry evaluators run on studies: hand-computed pronoun/connective
scores, the ``evaluate`` command.  Sentence-level sacrebleu scores are checked in test_sacrebleu_metrics.py."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from sacrebleu.metrics import BLEU

from evaluators.metrics.study_corpus import guess_target_language as guess_language
from evaluators.metrics.wordlists import connective_accuracy, connective_any, pronoun_prf, pronoun_tokens
from evaluators.models import Evaluator, MetricScore
from evaluators.metrics.scores import UnknownEvaluatorError, evaluator_names, evaluator_run
from studies.importing.study_file import study_import
from tests.factories import study_file

HYP = "The cat was sitting on the mat when she came in."
REF = "The cat sat on the mat when he came in."


def test_pronoun_prf_hand_computed():
    # hyp pronouns: she, it, him   ref pronouns: he, it, her, it  -> matched: it (once)
    p, r, f = pronoun_prf("She gave it to him.", "He gave it to her, it said.")
    assert p == pytest.approx(1 / 3) and r == pytest.approx(1 / 4)
    assert f == pytest.approx(2 * (1 / 3) * (1 / 4) / (1 / 3 + 1 / 4))
    assert pronoun_prf("A dog.", "A cat.") is None  # nothing to evaluate
    assert pronoun_prf("A dog.", "He left.") == (None, 0.0, 0.0)  # precision 0/0: undefined, not 0
    # word boundaries and case: "This", "Itself"→itself, "hit" is not "it", "it's" counts "it"
    assert pronoun_tokens("This hit ITSELF; it's his.") == {"itself": 1, "it": 1, "his": 1}


def test_french_pronouns_and_language_guess():
    assert dict(pronoun_tokens("Qu'il vienne : j'ai dit qu'elle s'en va avec son chat.", "fr")) == {
        "il": 1, "j'": 1, "elle": 1, "s'": 1, "son": 1}
    # English words that look like French pronouns are not counted in English text
    assert pronoun_tokens("My son sat on it.", "en") == {"my": 1, "it": 1}
    assert guess_language(["Le chat est sur la table et il dort."]) == "fr"
    assert guess_language(["The cat is on the table and it sleeps."]) == "en"


def test_connectives_hand_computed():
    ref = "He stayed because it rained, and then he slept."  # because, and, then
    assert connective_accuracy("He stayed because it rained; he slept.", ref) == pytest.approx(1 / 3)
    assert connective_accuracy("It rained.", "It rained.") is None
    assert connective_any("It rained so he stayed.", ref) == 1.0
    assert connective_any("It rained. He stayed.", ref) == 0.0
    assert connective_accuracy("Bandit sandwiches.", "And so?") == 0.0  # "and" inside words never counts


def _study():
    data = study_file(slug="bi", n_items=4, n_candidates=3, documents=2, settings={"spam_rate": 0.25})
    texts = {0: REF, 1: HYP, 2: "A cat is on a mat."}
    for i, item in enumerate(data["items"]):
        for k, cand in enumerate(item["candidates"]):
            cand["text"] = f"{texts[k]} Sentence {i}."
            cand["highlights"] = []
    return study_import(status="open", data=data)


@pytest.mark.django_db
def test_run_scores_real_non_reference_candidates_only():
    study = _study()
    assert study.items.filter(is_spam=True).exists()
    evaluator = evaluator_run(study=study, name="bleu")
    rows = list(evaluator.scores.select_related("item"))
    assert {r.system for r in rows} == {"sys1", "sys2"}  # never the reference
    assert not any(r.item.is_spam for r in rows)  # never a spam item
    assert len(rows) == 8
    one = next(r for r in rows if r.item.external_id == "ext-0" and r.system == "sys1")
    assert one.score == pytest.approx(
        BLEU(effective_order=True).sentence_score(f"{HYP} Sentence 0.", [f"{REF} Sentence 0."]).score)
    assert evaluator.kind == "builtin" and evaluator.higher_is_better
    assert evaluator_run(study=study, name="ter").higher_is_better is False


@pytest.mark.django_db
def test_document_level_concatenates_in_position_order():
    study = _study()
    evaluator = evaluator_run(study=study, name="doc-bleu")
    rows = list(evaluator.scores.select_related("item").filter(system="sys1"))
    # doc-0 holds ext-0 (position 0) and ext-2 (position 1)
    doc0 = {r.item.external_id: r for r in rows if r.document == "doc-0"}
    assert set(doc0) == {"ext-0", "ext-2"}
    expected = BLEU(effective_order=True).sentence_score(f"{HYP} Sentence 0. {HYP} Sentence 2.",
                                                         [f"{REF} Sentence 0. {REF} Sentence 2."]).score
    assert doc0["ext-0"].score == doc0["ext-2"].score == pytest.approx(expected)
    doc1 = next(r.score for r in rows if r.document == "doc-1")
    assert evaluator.system_scores["sys1"]["score"] == pytest.approx((expected + doc1) / 2)  # mean of documents
    assert evaluator.signature.startswith("doc-bleu|unit:document|") and "tok:13a" in evaluator.signature


def _stored() -> dict[str, object]:
    return {e.name: (e.system_scores, e.signature, e.notes, e.paired,
                     sorted(e.scores.values_list("item__external_id", "system", "document", "score")))
            for e in Evaluator.objects.order_by("name")}


@pytest.mark.django_db
def test_evaluate_in_two_processes_stores_what_one_process_stores():
    study = _study()
    names = ["chrf", "pronoun-f", "ter", "lexical-consistency"]
    args = [a for n in names for a in ("--evaluator", n)]
    call_command("evaluate", study.slug, *args, "--paired-bs", stdout=StringIO(), stderr=StringIO(), processes=1)
    one = _stored()
    err = StringIO()
    call_command("evaluate", study.slug, *args, "--paired-bs", stdout=StringIO(), stderr=err, processes=2)
    assert _stored() == one and set(one) == set(names)
    done = [line.split(" (")[0].split(" ", 2)[2] for line in err.getvalue().splitlines() if " done (" in line]
    assert sorted(done) == sorted(f"{n} done" for n in names)  # each once, in the order they finished


@pytest.mark.django_db
def test_evaluate_in_two_processes_stores_nothing_when_one_refuses():
    study = _study()
    study.target_language = "fr"  # dcoem (this process's half) is defined for English only; chrf, ter score it
    study.save()
    call_command("evaluate", study.slug, "--evaluator", "chrf", stdout=StringIO(), processes=1)
    before = _stored()
    with pytest.raises(CommandError, match=r"^dcoem: .*English.*\(none of chrf, ter, dcoem was stored\)"):
        call_command("evaluate", study.slug, "--evaluator", "chrf", "--evaluator", "ter", "--evaluator", "dcoem",
                     stdout=StringIO(), stderr=StringIO(), processes=2)
    assert _stored() == before and list(before) == ["chrf"]


@pytest.mark.django_db
def test_evaluate_command(capsys):
    study = _study()
    out, err = StringIO(), StringIO()
    call_command("evaluate", study.slug, "--evaluator", "chrf", "--evaluator", "pronoun-f", "--paired-bs", stdout=out,
                 stderr=err, processes=1)
    lines = out.getvalue().splitlines()
    progress = err.getvalue().splitlines()  # not a terminal: one line per evaluator, then the store
    assert [line.split(" (")[0] for line in progress] == [
        "evaluate: 1/2 chrf done", "evaluate: 2/2 pronoun-f done", "evaluate: storing the scores of 2 evaluator(s)"]
    assert lines[0] == "chrf: 8 scores stored" and "pronoun-f: 8 scores stored" in lines
    chrf = Evaluator.objects.get(name="chrf")
    assert f"  sys1: {chrf.system_scores['sys1']['score']:.4f}" in lines
    assert f"  signature: {chrf.signature}" in lines and chrf.signature.startswith("nrefs:1|case:mixed|eff:yes|nc:6")
    assert any(line.startswith("  paired bootstrap resampling (1000 samples, seed 12345), baseline sys1")
               for line in lines)
    call_command("evaluate", study.slug, "--evaluator", "chrf", stdout=StringIO())  # rerun replaces (no test asked)
    assert MetricScore.objects.filter(evaluator__name="chrf").count() == 8
    assert Evaluator.objects.get(name="chrf").paired is None
    with pytest.raises(CommandError) as exc:
        call_command("evaluate", study.slug, "--evaluator", "comet")
    assert "unknown evaluator(s): comet; available: bleu, blonde," in str(exc.value)
    with pytest.raises(CommandError) as exc:
        call_command("evaluate", study.slug, "--evaluator", "chrf", "--nlp", "nonsense")
    assert "--nlp: unknown language backend 'nonsense'" in str(exc.value)
    with pytest.raises(UnknownEvaluatorError):
        evaluator_run(study=study, name="comet")
    assert set(Evaluator.objects.values_list("name", flat=True)) == {"chrf", "pronoun-f"}
    assert set(evaluator_names()) >= {"bleu", "chrf", "ter", "doc-bleu", "pronoun-f", "connective-acc", "blonde"}


@pytest.mark.django_db
def test_evaluate_with_several_evaluators_is_all_or_nothing():
    study = _study()
    call_command("evaluate", study.slug, "--evaluator", "chrf", "--paired-bs", stdout=StringIO())
    before = Evaluator.objects.get(study=study, name="chrf")
    n_before = before.scores.count()
    assert before.paired is not None
    # chrf runs first and would replace the stored run (without a paired test); blonde then refuses (no spaCy).
    with pytest.raises(CommandError) as exc:
        call_command("evaluate", study.slug, "--evaluator", "chrf", "--evaluator", "pronoun-f",
                     "--evaluator", "blonde", stdout=StringIO())
    message = str(exc.value)
    assert message.startswith("blonde: blonde needs a spaCy pipeline") and "--nlp spacy:" in message
    assert message.endswith("(none of chrf, pronoun-f, blonde was stored)")
    after = Evaluator.objects.get(study=study, name="chrf")
    assert after.paired == before.paired and after.scores.count() == n_before  # the earlier run is kept
    assert set(Evaluator.objects.filter(study=study).values_list("name", flat=True)) == {"chrf"}


@pytest.mark.django_db
def test_evaluate_stores_blonde_lex_under_its_own_name_with_the_categories_it_computed():
    study = _study()
    with pytest.raises(CommandError, match="blonde needs a spaCy pipeline .* ask for blonde-lex by that name"):
        call_command("evaluate", study.slug, "--evaluator", "blonde", stdout=StringIO())
    out = StringIO()
    call_command("evaluate", study.slug, "--evaluator", "dblonde-lex", stdout=out)
    stored = Evaluator.objects.get(study=study)
    assert stored.name == "dblonde-lex" and stored.signature.startswith("dblonde-lex|")
    assert stored.backend == "" and "nlp:lexicon" in stored.signature
    assert any(n.startswith("dblonde-lex is an approximation of BlonDe on the lexicon backend, not BlonDe: "
                            "categories computed: tense, pronoun, dm; not computed") and "entity" in n
               for n in stored.notes)
    assert out.getvalue().startswith("dblonde-lex: ")


@pytest.mark.django_db
def test_stored_scores_equal_each_evaluators_own_result_and_ter_equals_sacrebleus(monkeypatch):
    """What ``evaluate`` stores (insert_rows, no model instances) is the evaluator's result to 1e-12, and the
    sentence TER computed through ter_exact is sacrebleu's own TER on every segment."""
    from sacrebleu.metrics import TER

    from evaluators.metrics import sacrebleu_metrics
    from evaluators.metrics.registry import evaluators
    from evaluators.metrics.study_corpus import build_study_corpus

    study = _study()
    built = build_study_corpus(study, None)
    names = ["bleu", "chrf", "ter", "doc-bleu", "doc-chrf", "pronoun-f", "connective-acc", "lexical-consistency",
             "blonde-lex", "dblonde-lex", "dcoem"]
    call_command("evaluate", study.slug, *[a for n in names for a in ("--evaluator", n)], stdout=StringIO(),
                 stderr=StringIO())
    external = {item.pk: key for key, item in built.items.items()}
    scored = 0
    for name in names:
        spec = evaluators()[name]
        own = {(s.key, s.system): s.score for s in spec.evaluate(built.corpus).segments
               if s.score is not None and s.key in built.items}
        stored = {(external[i], s): v for i, s, v in
                  MetricScore.objects.filter(evaluator__study=study, evaluator__name=name)
                  .values_list("item_id", "system", "score")}
        assert stored.keys() == own.keys(), name
        assert max((abs(stored[k] - own[k]) for k in own), default=0.0) <= 1e-12, name
        scored += bool(stored)
    assert scored >= 8  # (lexical consistency and its kin find little to score in four short items)
    # ter again with sacrebleu's own segment statistics instead of ter_exact: the same stored scores
    monkeypatch.setattr(sacrebleu_metrics, "segment_statistics", lambda metric, hyps, refs, keys=None, memo=None: [
        TER._compute_segment_statistics(metric, metric._preprocess_segment(h), r) for h, r in zip(hyps, refs)])
    theirs = {(s.key, s.system): s.score for s in evaluators()["ter"].evaluate(built.corpus).segments}
    ours = {(external[i], s): v for i, s, v in MetricScore.objects.filter(
        evaluator__study=study, evaluator__name="ter").values_list("item_id", "system", "score")}
    assert ours == {k: v for k, v in theirs.items() if k in ours} and len(ours) == 8
