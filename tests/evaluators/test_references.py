"""References are chosen, never guessed (issue 22): a study whose items have two human translations.

A hand-made MQM TSV with two reference systems (``ref`` and ``refB``, both taken for references by the
import's name rule) and two machine systems.  bleu/chrf/ter score against both references and say so;
the other evaluators refuse without ``--reference NAME`` and list the references; the stored scores and
signatures name the reference(s); ``compare --reference`` ranks the other human translation like a system.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluators.comparison.selectors import study_comparison
from evaluators.metrics.scores import EvaluationError, evaluator_run
from evaluators.metrics.study_corpus import ReferenceChoiceError, build_study_corpus
from evaluators.models import Evaluator
from studies.models import Study
from tests.factories import persona

pytestmark = pytest.mark.django_db

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity"
SOURCES = ["他们昨天到了。", "这本书很好。", "我们明天见。", "天气很冷。"]
TEXTS = {
    "sysX": ["They arrived yesterday.", "This book is very good.", "We will see you tomorrow.",
             "The weather is very cold."],
    "sysY": ["Yesterday they came.", "The book is good.", "See you tomorrow.", "It is cold."],
    "ref": ["They got here the day before.", "A fine book, this one.", "Until tomorrow, then.",
            "Cold weather today."],
    "refB": ["They arrived yesterday.", "This book is very good.", "We'll see you tomorrow.",
             "The weather is very cold."],
}
#: One minor error per (system, segment) listed; every other rating is No-error.  sysY and ref are worse.
ERRORS = {("sysY", 0), ("sysY", 1), ("ref", 0), ("ref", 1), ("ref", 2), ("ref", 3)}


def mqm_file(tmp_path: Path) -> Path:
    rows = [HEADER]
    for system, texts in TEXTS.items():
        for k, (source, target) in enumerate(zip(SOURCES, texts, strict=True)):
            doc = f"talk.{k // 2 + 1}"
            if (system, k) in ERRORS:
                rows.append(f"{system}\t{doc}\t{k % 2 + 1}\t{k + 1}\trater1\t{source}\t<v>{target.split()[0]}</v>"
                            f"{target[len(target.split()[0]):]}\tFluency/Grammar\tMinor")
            else:
                rows.append(f"{system}\t{doc}\t{k % 2 + 1}\t{k + 1}\trater1\t{source}\t{target}\tNo-error\tNo-error")
    path = tmp_path / "two_refs.tsv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def import_file(tmp_path: Path, *args: str) -> tuple[Study, str]:
    owner = persona("owner")  # the imported study's owner, whom the `staff` client signs in as
    out, err = io.StringIO(), io.StringIO()
    call_command("import_judgments", str(mqm_file(tmp_path)), "--format", "mqm-tsv", "--user", owner.username, *args,
                 stdout=out, stderr=err)
    study = Study.objects.get(slug=out.getvalue().strip())
    study.target_language = "en"
    study.save(update_fields=["target_language"])
    return study, err.getvalue()


@pytest.fixture
def two_refs(tmp_path: Path) -> Study:
    return import_file(tmp_path)[0]


def test_the_import_says_on_stderr_which_systems_its_name_rule_made_references(tmp_path):
    study, err = import_file(tmp_path)
    assert "reference systems by their names" in err and "ref, refB" in err and "--reference-system" in err
    assert "2 references" in err and "--reference NAME" in err
    again, err = import_file(tmp_path, "--slug", "chosen", "--reference-system", "refB")
    assert err.strip() == "reference systems (--reference-system): refB"
    assert set(again.items.first().candidates.filter(is_reference=True).values_list("system", flat=True)) == {"refB"}


def test_a_study_with_two_references_gives_every_segment_both(two_refs):
    corpus = build_study_corpus(two_refs).corpus
    assert corpus.reference_names == ["ref", "refB"] and corpus.several_references
    assert corpus.systems == ["sysX", "sysY"]  # neither human translation is scored as a system
    assert corpus.segments[0].references == (TEXTS["ref"][0], TEXTS["refB"][0])


def test_bleu_uses_all_references_by_default_and_says_so(two_refs):
    from sacrebleu.metrics import BLEU

    bleu = evaluator_run(study=two_refs, name="bleu", paired=None)
    expected = BLEU().corpus_score(TEXTS["sysX"], [TEXTS["ref"], TEXTS["refB"]])
    assert bleu.system_scores["sysX"]["score"] == pytest.approx(expected.score)
    assert bleu.references == ["ref", "refB"]
    assert bleu.signature.startswith("nrefs:2|") and bleu.signature.endswith("|ref:ref,refB")
    assert bleu.system_scores["sysX"]["signature"] == bleu.signature
    assert any("scored against all 2 references ('ref', 'refB')" in n for n in bleu.notes)


def test_an_evaluator_taking_one_reference_refuses_and_lists_the_references(two_refs):
    with pytest.raises(EvaluationError) as exc:
        evaluator_run(study=two_refs, name="pronoun-f")
    message = str(exc.value)
    assert "several references" in message and "'ref', 'refB'" in message and "--reference NAME" in message
    assert not Evaluator.objects.filter(study=two_refs).exists()
    with pytest.raises(CommandError, match=r"--reference NAME \(one of 'ref', 'refB'\)"):
        call_command("evaluate", two_refs.slug, "--evaluator", "chrf", "--evaluator", "pronoun-f",
                     stdout=io.StringIO())


def test_a_chosen_reference_is_stored_named_and_the_other_human_translation_is_scored(two_refs):
    out = io.StringIO()
    call_command("evaluate", two_refs.slug, "--evaluator", "pronoun-f", "--reference", "refB", stdout=out)
    evaluator = Evaluator.objects.get(study=two_refs, name="pronoun-f")
    assert evaluator.references == ["refB"] and evaluator.signature.endswith("|ref:refB")
    assert set(evaluator.system_scores) == {"sysX", "sysY", "ref"}  # ref.A is a human system here
    assert "reference: refB" in out.getvalue()
    assert any("'ref' scored like systems" in n for n in evaluator.notes)


def test_an_unknown_reference_is_refused_with_the_list(two_refs):
    with pytest.raises(ReferenceChoiceError, match=r"its references: 'ref', 'refB'"):
        build_study_corpus(two_refs, "sysX")
    with pytest.raises(CommandError, match=r"--reference: reference 'refC' is not a reference .* 'ref', 'refB'"):
        call_command("evaluate", two_refs.slug, "--evaluator", "bleu", "--reference", "refC", stdout=io.StringIO())
    with pytest.raises(CommandError, match=r"--reference: .*its references: 'ref', 'refB'"):
        call_command("compare", two_refs.slug, "--reference", "refC", stdout=io.StringIO())


def test_one_reference_per_item_under_different_names_is_no_choice(tmp_path):
    study, _ = import_file(tmp_path)
    # drop refB from the first half of the items and ref from the others: each item keeps one reference
    for n, item in enumerate(study.items.order_by("pk")):
        item.candidates.filter(system="refB" if n < 2 else "ref").delete()
    built = build_study_corpus(study)
    assert not built.corpus.several_references and len(built.corpus.segments) == 4
    assert evaluator_run(study=study, name="pronoun-f").references == ["ref", "refB"]


def test_compare_names_the_references_and_with_one_chosen_ranks_the_other(two_refs):
    evaluator_run(study=two_refs, name="bleu", paired=None)
    result = study_comparison(study=two_refs, n_boot=10)
    assert result["references"] == {"study": ["ref", "refB"], "chosen": None, "human_side": ["ref", "refB"]}
    assert set(result["human"]["systems"]) == {"sysX", "sysY"}
    assert result["evaluators"][0]["references"] == ["ref", "refB"]
    assert any("the study has 2 references ('ref', 'refB')" in n for n in result["notes"])
    text = io.StringIO()
    call_command("compare", two_refs.slug, "--bootstrap", "10", stdout=text)
    assert "  references: ref, refB" in text.getvalue()

    chosen = study_comparison(study=two_refs, n_boot=10, reference="refB")
    assert chosen["evaluators"] == []  # bleu was scored against both: left out, and said why
    assert any("bleu left out: scored against 'ref', 'refB', not 'refB' alone" in n for n in chosen["notes"])
    evaluator_run(study=two_refs, name="bleu", paired=None, reference="refB")
    out = io.StringIO()
    call_command("compare", two_refs.slug, "--reference", "refB", "--json", "--bootstrap", "10", stdout=out)
    chosen = json.loads(out.getvalue())
    assert set(chosen["human"]["systems"]) == {"sysX", "sysY", "ref"}  # ref.A ranked like a system (worst)
    assert chosen["human"]["systems"]["ref"]["rank"] == 3
    bleu = chosen["evaluators"][0]
    assert bleu["references"] == ["refB"] and set(bleu["systems"]) == {"sysX", "sysY", "ref"}
    assert chosen["references"]["chosen"] == "refB"


def test_the_compare_page_offers_the_references_and_runs_with_the_one_chosen(staff, two_refs,
                                                                             django_capture_on_commit_callbacks):
    from django.urls import reverse

    page = staff.get(reverse("compare-report", args=[two_refs.slug]), {"bootstrap": 10}).content.decode()
    assert '<select name="reference">' in page and '<option value="refB">refB' in page
    assert 'id="id_reference"' in page and "all references (ref, refB): bleu, chrf, ter only" in page  # the run form
    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post(reverse("compare-run", args=[two_refs.slug]),
                              {"evaluators": ["pronoun-f"], "reference": "refB"})
    assert response.status_code == 302
    assert Evaluator.objects.get(study=two_refs, name="pronoun-f").references == ["refB"]
    page = staff.get(reverse("compare-report", args=[two_refs.slug]),
                     {"bootstrap": 10, "reference": "refB"}).content.decode()
    assert 'data-field="references">Reference: refB<' in page and "--reference refB" in page
    bad = staff.get(reverse("compare-report", args=[two_refs.slug]), {"reference": "sysX"})
    assert bad.status_code == 400 and "not a reference of this study; its references: ref, refB" in bad.content.decode()
    bad = staff.post(reverse("compare-run", args=[two_refs.slug]), {"evaluators": ["pronoun-f"], "reference": "sysX"})
    assert bad.status_code == 400 and "reference: Select a valid choice" in bad.content.decode()


def test_the_compare_api_takes_a_reference(staff, two_refs):
    from django.urls import reverse

    evaluator_run(study=two_refs, name="pronoun-f", reference="refB")
    url = reverse("api-study-compare", args=[two_refs.slug])
    body = staff.get(url, {"reference": "refB", "bootstrap": 10}).json()
    assert body["references"]["chosen"] == "refB" and "ref" in body["human"]["systems"]
    assert body["evaluators"][0]["references"] == ["refB"]
    bad = staff.get(url, {"reference": "nope"})
    assert bad.status_code == 400 and "its references: ref, refB" in bad.json()["errors"]["reference"][0]


def test_score_takes_several_reference_files_for_sacrebleu_and_refuses_them_for_the_others(tmp_path):
    from sacrebleu.metrics import BLEU

    files = {}
    for name in ("sysX", "ref", "refB"):
        files[name] = tmp_path / f"{name}.txt"
        files[name].write_text("\n".join(TEXTS[name]) + "\n", encoding="utf-8")
    out = io.StringIO()
    call_command("score", "--hyp", str(files["sysX"]), "--ref", str(files["ref"]), "--ref", str(files["refB"]),
                 "--evaluator", "bleu", "--target-language", "en", "--json", stdout=out)
    result = json.loads(out.getvalue())["systems"][0]
    expected = BLEU().corpus_score(TEXTS["sysX"], [TEXTS["ref"], TEXTS["refB"]])
    assert result["score"] == pytest.approx(expected.score) and result["signature"].startswith("nrefs:2|")
    with pytest.raises(CommandError, match=r"--ref: 2 references given .*; pronoun-f scores against one"):
        call_command("score", "--hyp", str(files["sysX"]), "--ref", str(files["ref"]), "--ref", str(files["refB"]),
                     "--evaluator", "pronoun-f", "--target-language", "en", stdout=io.StringIO())


def test_compare_says_when_a_stored_run_does_not_name_its_reference(two_refs):
    bleu = evaluator_run(study=two_refs, name="bleu", paired=None)
    Evaluator.objects.filter(pk=bleu.pk).update(references=[])  # a run stored before references were recorded
    notes = study_comparison(study=two_refs, n_boot=10)["notes"]
    assert any(n.startswith("bleu: scored before references were recorded") for n in notes)
