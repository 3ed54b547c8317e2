"""ContraPro accuracy in the comparison: a 3-item contrastive study made by the generator, hand-checked numbers."""
from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pandas as pd
import pytest
from django.core.management import call_command

from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from evaluators.comparison.selectors import study_comparison
from evaluators.comparison.core import compare_frames
from evaluators.comparison.contrastive import distance_bucket
from evaluators.metrics.scores import evaluator_run, scores_import
from studies.generators.choice import SourceItem, contrastive_study, generated_import
from tests.compare_study import compare_study

pytestmark = pytest.mark.django_db

# p1: es, antecedent 0 sentences back, two variants; p2: er, 1 back; p3: es, 5 back (bucket ">3")
ITEMS: list[dict[str, Any]] = [
    {"id": "p1", "phenomenon": "pronoun", "source": "Es ist rot.", "metadata": {"pronoun": "es", "antecedent_distance": 0},
     "candidates": [{"system": "reference", "is_reference": True, "text": "It is red."},
                    {"system": "contrastive-he", "text": "He is red."},
                    {"system": "contrastive-she", "text": "She is red."}]},
    {"id": "p2", "phenomenon": "pronoun", "source": "Er ist alt.", "metadata": {"pronoun": "er", "antecedent_distance": 1},
     "candidates": [{"system": "reference", "is_reference": True, "text": "It is old."},
                    {"system": "contrastive-he", "text": "He is old."}]},
    {"id": "p3", "phenomenon": "pronoun", "source": "Es ist neu.", "metadata": {"pronoun": "es", "antecedent_distance": 5},
     "candidates": [{"system": "reference", "is_reference": True, "text": "It is new."},
                    {"system": "contrastive-she", "text": "She is new."}]},
]
# the model is right on p1 (0.9 > 0.5, 0.2) and p2 (0.8 > 0.3), wrong on p3 (a tie counts as an error)
SCORES = """item,system,score
p1,reference,0.9
p1,contrastive-1,0.5
p1,contrastive-2,0.2
p2,reference,0.8
p2,contrastive-1,0.3
p3,reference,0.4
p3,contrastive-1,0.4
"""


@pytest.fixture
def study():
    generated = contrastive_study(items=[SourceItem(data=i, where=f"item {i['id']}") for i in ITEMS],
                                  slug="contra", redundancy=2, spam_rate=0.0, seed=1)
    s = generated_import(status="open", generated=generated)
    scores_import(study=s, file_name="m.csv", content=SCORES, name="model", higher_is_better=True)
    return s


def judge(study, pick) -> None:
    """Every annotator answers every item with ``pick(annotator sequence, item id)`` → a system name."""
    for annotator in annotators_create(study=study, count=2):
        while (assignment := assignment_next(annotator=annotator)) is not None:
            cands = {c.system: c.public_id for c in assignment.item.candidates.all()}
            system = pick(annotator.sequence, assignment.item.external_id)
            judgment_submit(assignment=assignment, payload={"choice": cands[system]})


def test_accuracy_and_breakdowns(study):
    block = study_comparison(study=study, n_boot=50)["contrastive"]
    assert block["variants"] == ["contrastive-1", "contrastive-2"] and block["n_items"] == 3
    model = block["evaluators"]["model"]
    assert model["accuracy"] == pytest.approx(2 / 3)
    assert (model["n_correct"], model["n_items"], model["n_skipped"]) == (2, 3, 0)
    assert model["by_pronoun"] == {
        "er": {"accuracy": 1.0, "n_correct": 1, "n_items": 1, "n_skipped": 0},
        "es": {"accuracy": 0.5, "n_correct": 1, "n_items": 2, "n_skipped": 0}}
    assert list(model["by_antecedent_distance"]) == ["0", "1", ">3"]
    assert model["by_antecedent_distance"][">3"]["accuracy"] == 0.0
    assert model["by_antecedent_distance"]["0"]["accuracy"] == 1.0


def test_lower_is_better_flips_the_decision(study):
    scores_import(study=study, file_name="l.csv", content=SCORES, name="loss", higher_is_better=False)
    loss = study_comparison(study=study, n_boot=50)["contrastive"]["evaluators"]["loss"]
    # now the reference must score strictly LOWER: wrong on p1 and p2, p3 still a tie
    assert loss["accuracy"] == 0.0 and loss["n_items"] == 3


def test_reference_free_evaluator_gets_a_note_not_a_number(study):
    evaluator_run(study=study, name="chrf")  # built-ins never score the reference
    chrf = study_comparison(study=study, n_boot=50)["contrastive"]["evaluators"]["chrf"]
    assert chrf["accuracy"] is None and "did not score the reference" in chrf["note"]


def test_human_accuracy_next_to_the_model(study):
    # annotator 1 always picks the reference; annotator 2 picks it except on p3
    judge(study, lambda seq, item: "contrastive-1" if (seq == 2 and item == "p3") else "reference")
    result = study_comparison(study=study, n_boot=50)
    human = result["contrastive"]["human"]
    assert (human["n_correct"], human["n_judgments"], human["n_items"]) == (5, 6, 3)
    assert human["accuracy"] == pytest.approx(5 / 6)
    assert human["by_pronoun"]["es"] == {"accuracy": 0.75, "n_correct": 3, "n_judgments": 4}
    assert human["by_antecedent_distance"][">3"] == {"accuracy": 0.5, "n_correct": 1, "n_judgments": 2}


def test_command_json_has_the_block_and_a_plain_study_has_null(study):
    out = StringIO()
    call_command("compare", study.slug, "--json", "--bootstrap", "20", stdout=out)
    data = json.loads(out.getvalue())
    assert data["contrastive"]["evaluators"]["model"]["accuracy"] == pytest.approx(2 / 3)
    plain = compare_study(slug="plain", n_items=3, n_annotators=1)
    assert study_comparison(study=plain, n_boot=20)["contrastive"] is None


def test_page_shows_the_accuracy(study, admin_client):
    html = admin_client.get(f"/reports/{study.slug}/compare/", {"bootstrap": 20}).content.decode()
    assert "ContraPro accuracy" in html
    assert 'data-evaluator="model" data-field="contrapro">0.667<' in html


def test_pure_function_pronoun_falls_back_to_phenomenon_and_no_distance_means_null():
    scores = pd.DataFrame({"evaluator": "m", "item": ["a", "a", "b", "b"],
                           "system": ["ref", "contrastive-x", "ref", "contrastive-x"],
                           "score": [1.0, 0.0, 0.0, 1.0], "is_reference": [True, False, True, False]})
    items = pd.DataFrame({"item": ["a", "b"], "document": "", "phenomenon": ["sie", "es"]})
    r = compare_frames(pd.DataFrame(), scores, protocol="choice", items=items, n_boot=20)
    m = r["contrastive"]["evaluators"]["m"]
    assert m["accuracy"] == 0.5 and m["by_antecedent_distance"] is None
    assert m["by_pronoun"]["sie"]["accuracy"] == 1.0 and m["by_pronoun"]["es"]["accuracy"] == 0.0
    assert r["contrastive"]["human"] is None


@pytest.mark.parametrize("value,bucket", [(0, "0"), (3, "3"), (4, ">3"), ("2", "2"), (2.0, "2"), (None, "(none)"),
                                          ("", "(none)"), ("far", "far"), (-1, "-1")])
def test_distance_buckets(value, bucket):
    assert distance_bucket(value) == bucket


def test_command_text_summarises_the_accuracy(study):
    out = StringIO()
    call_command("compare", study.slug, "--bootstrap", "20", stdout=out)
    text = out.getvalue()
    assert "ContraPro accuracy (3 items, variants contrastive-1, contrastive-2):" in text
    assert "  model: 0.667 (2/3 items)" in text
    assert "paired t-tests (per item): 3 items: too few for a per-item test (at least 10): no verdict" in text
