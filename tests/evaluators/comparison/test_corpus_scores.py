"""Registry evaluators in the comparison: corpus system scores (sacrebleu's, not a mean of sentence scores),
signatures, paired tests, and lower-is-better metrics oriented in every rank statistic."""
from __future__ import annotations

import json
from io import StringIO

import pandas as pd
import pytest
from django.core.management import call_command
from sacrebleu.metrics import BLEU, TER

from evaluators.comparison.core import compare_frames
from evaluators.comparison.selectors import study_comparison
from evaluators.metrics.scores import evaluator_run
from evaluators.models import Evaluator, MetricScore
from evaluators.metrics.study_corpus import study_corpus
from studies.models import Candidate
from tests.compare_study import compare_study

pytestmark = pytest.mark.django_db

WORDS = "the committee will publish its final report on the new rail line next spring".split()
SUBSTITUTES = "a panel may release some early notes about an old bus route last".split()


def _text(item: int, errors: int) -> str:
    """The reference sentence of ``item`` with ``errors`` words replaced (more errors: a worse system)."""
    words = list(WORDS) + [f"w{item}x{j}" for j in range(1 + 3 * item)]  # lengths differ: mean != corpus
    for k in range(errors):
        words[2 + 3 * k] = SUBSTITUTES[2 + 3 * k]
    return " ".join(words)


@pytest.fixture
def study():
    """The compare study (humans: sys1 > sys2 > sys3 > sys4, sys1/sys2 swapped on two items), with texts whose
    edit distance to the reference follows the humans' order: sysK has K wrong words."""
    s = compare_study(slug="corpus", spam_rate=0.0)
    for cand in Candidate.objects.filter(item__study=s).select_related("item"):
        item = int(cand.item.external_id.split("-")[1])
        errors = 0 if cand.is_reference else int(cand.system[3:])
        cand.text = _text(item, errors)
        cand.save(update_fields=["text"])
    return s


def test_ter_is_oriented_in_ranks_item_level_tau_and_system_correlations(study):
    ter = evaluator_run(study=study, name="ter")
    assert ter.higher_is_better is False
    e = next(x for x in study_comparison(study=study, n_boot=100)["evaluators"] if x["name"] == "ter")
    assert e["system_score"] == "corpus" and e["system_score_higher_is_better"] is False
    scores = {s: v["score"] for s, v in e["systems"].items()}
    assert scores["sys1"] < scores["sys2"] < scores["sys3"] < scores["sys4"]  # TER: more errors, higher
    # Rank 1 = the LOWEST TER; if orientation were ignored sys4 would be ranked first ...
    assert {s: v["rank"] for s, v in e["systems"].items()} == {"sys1": 1, "sys2": 2, "sys3": 3, "sys4": 4}
    # ... the item-level WMT Kendall-like tau and the system-level correlations would be negative.
    assert e["item_level"]["kendall_tau"] > 0.8 and e["item_level"]["accuracy"] > 0.8
    assert e["system_level"]["spearman"]["value"] == pytest.approx(1.0)
    assert e["system_level"]["kendall"]["value"] == pytest.approx(1.0)
    assert e["system_level"]["pearson"]["value"] > 0.9
    favours = {(t["a"], t["b"]): t["favours"] for t in e["paired_t_tests"]["tests"]}
    assert favours[("sys1", "sys4")] == "sys1"  # the lower mean TER is favoured (no verdict on so few units)
    # sacrebleu's paired test: baseline = the first system of the study file; TER's direction is sacrebleu's
    paired = e["paired"]
    assert paired["baseline"] == "sys1" and paired["method"] == "bs" and paired["seed"] == 12345
    assert [t["system"] for t in paired["tests"]] == ["sys1", "sys2", "sys3", "sys4"]
    assert paired["tests"][0]["p_value"] is None and all(t["p_value"] is not None for t in paired["tests"][1:])


def test_bleu_system_score_is_sacrebleus_corpus_bleu_with_its_signature(study):
    bleu = evaluator_run(study=study, name="bleu")
    corpus = study_corpus(study)
    assert corpus.target_language == "en" and corpus.target_language_guessed
    refs = [seg.reference for seg in corpus.segments]
    hyps = [seg.hypotheses["sys3"] for seg in corpus.segments]
    metric = BLEU()
    expected = metric.corpus_score(hyps, [refs])
    assert bleu.system_scores["sys3"]["score"] == pytest.approx(expected.score)
    assert bleu.signature == f"{metric.get_signature()}|ref:reference"  # sacrebleu's, naming the reference
    sentence_mean = sum(r.score for r in MetricScore.objects.filter(evaluator=bleu, system="sys3")) / len(refs)
    assert sentence_mean != pytest.approx(expected.score)  # the old system score (a mean) is not what is shown
    e = next(x for x in study_comparison(study=study, n_boot=100)["evaluators"] if x["name"] == "bleu")
    assert e["systems"]["sys3"]["corpus"] == pytest.approx(expected.score)
    assert e["systems"]["sys3"]["mean"] == pytest.approx(sentence_mean)  # the mean stays in the JSON
    assert e["signature"] == bleu.signature and e["corpus"]["sys3"]["counts"]["ref_len"] == expected.ref_len
    assert any("was guessed" in n for n in e["evaluator_notes"])
    assert TER().corpus_score(hyps, [refs]).score > 0


def test_compare_json_has_paired_and_signature_per_evaluator(study):
    evaluator_run(study=study, name="chrf", paired="ar")
    evaluator_run(study=study, name="pronoun-f")
    out = StringIO()
    call_command("compare", study.slug, "--json", "--bootstrap", "50", stdout=out)
    data = {e["name"]: e for e in json.loads(out.getvalue())["evaluators"]}
    assert data["chrf"]["paired"]["method"] == "ar" and data["chrf"]["paired"]["n_samples"] == 10000
    assert data["chrf"]["signature"].startswith("nrefs:1|case:mixed|eff:yes|nc:6")
    assert data["pronoun-f"]["paired"] is None  # sacrebleu's paired tests exist for its own metrics only
    text = StringIO()
    call_command("compare", study.slug, "--bootstrap", "50", stdout=text)
    assert "paired approximate randomization vs sys1 (10000 samples, seed 12345): sys2 p=" in text.getvalue()
    assert Evaluator.objects.get(study=study, name="chrf").paired["tests"][1]["method"] == "ar"


def test_the_corpus_score_not_the_mean_ranks_systems_when_the_evaluator_has_one():
    # Segment means say B is better (lower); the corpus scores say A: the corpus scores decide, oriented.
    judgments = pd.DataFrame(columns=["judgment", "item", "annotator", "system", "is_reference", "is_spam",
                                      "rank", "excluded"])
    scores = pd.DataFrame({"evaluator": "err", "item": ["i1", "i1", "i2", "i2"], "system": ["A", "B", "A", "B"],
                           "score": [50.0, 10.0, 50.0, 10.0]})
    spec = {"name": "err", "higher_is_better": False, "kind": "builtin",
            "system_scores": {"A": {"score": 20.0}, "B": {"score": 30.0}}, "signature": "err|v:1"}
    e = compare_frames(judgments, scores, protocol="ranking", evaluators=[spec])["evaluators"][0]
    assert e["system_score"] == "corpus"
    assert e["systems"]["A"] == {"mean": 50.0, "n": 2, "corpus": 20.0, "score": 20.0, "rank": 1}
    assert e["systems"]["B"]["rank"] == 2 and e["signature"] == "err|v:1"
    plain = compare_frames(judgments, scores, protocol="ranking",
                           evaluators=[{"name": "err", "higher_is_better": False}])["evaluators"][0]
    assert plain["system_score"] == "mean" and plain["systems"]["B"]["rank"] == 1 and plain["paired"] is None
