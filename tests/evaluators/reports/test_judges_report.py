"""The judges' block of the report and compare pages: the alt-test per judge and phenomenon (equal to the command),
the judge's kappa with each annotator beside theirs with each other, its system ranking beside the humans'."""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from scipy.stats import kendalltau

from annotation.handout.services import annotators_create
from evaluators.judges.importing import judge_import
from evaluators.reports.judges import judges_report
from evaluators.reports.study_stats import report_options, stats_frame, study_export_frame, study_report
from studies.models import Study
from tests.factories import make_study
from tests.report_study import answer_all, ranking_study

pytestmark = pytest.mark.django_db

OPTIONS = report_options({})[0]


def labels_study(slug: str = "jl", *, n_items: int = 64) -> Study:
    """A judgment study, two phenomena, every item labelled by 3 annotators (seeded answers)."""
    study = make_study(slug=slug, protocol="judgment", n_items=n_items, n_candidates=1, phenomena=("it-sie", "it-er"),
                       settings={"labels": ["correct", "wrong", "unsure"], "redundancy": 3, "spam_rate": 0.0})
    answer_all(study, annotators_create(study=study, count=3))
    return study


def first_annotator(study: Study) -> tuple[str, dict[str, str]]:
    """The first annotator's code and labels by item."""
    frame = stats_frame(study_export_frame(study))[0]
    code = sorted(frame["annotator"].unique())[0]
    mine = frame[frame["annotator"] == code]
    return code, dict(zip(mine["item"], mine["label"]))


def store_judge(study: Study, name: str, records: list[dict[str, Any]]) -> None:
    judge_import(study=study, name=name, file_name=f"{name}.jsonl",
                 content="".join(json.dumps(r) + "\n" for r in records))


def alt_test_command(*args: str) -> dict:
    out = io.StringIO()
    call_command("alt_test", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_a_judge_copying_an_annotator(tmp_path: Path) -> None:
    study = labels_study()
    code, labels = first_annotator(study)
    store_judge(study, "copy", [{"item": i, "label": v} for i, v in labels.items()])
    block = judges_report(study, options=OPTIONS, human_ranking=None)
    assert block is not None and block["phenomena"] == ["it-er", "it-sie"] and block["n_annotators"] == 3
    (judge,) = block["judges"]
    # The alt-test is the command's, overall and per phenomenon.
    command = alt_test_command("--slug", study.slug, "--pilot", "drop")
    assert judge["alt_test"] == command["judges"][0]
    for name in block["phenomena"]:
        per = alt_test_command("--slug", study.slug, "--pilot", "drop", "--phenomenon", name)
        assert judge["alt_test_by_phenomenon"][name] == per["judges"][0]
        assert per["judges"][0]["per_annotator"][0]["instances"] == 32
    # Against its own annotator the copy is exactly as aligned: it wins every instance.
    first = next(a for a in judge["alt_test"]["per_annotator"] if a["annotator"] == code)
    assert first["advantage_probability"] == 1.0
    # Agreement: kappa 1 with the annotator it copies; with the others, that annotator's own kappas.
    rows = {r["annotator"]: r for r in judge["agreement"]["per_annotator"]}
    assert rows[code]["kappa"] == pytest.approx(1.0) and rows[code]["n"] == 64
    report = study_report(study)
    for pair in report["pairwise_cohen_kappa"]:
        if code in (pair["rater_a"], pair["rater_b"]):
            other = pair["rater_b"] if pair["rater_a"] == code else pair["rater_a"]
            assert rows[other]["kappa"] == pytest.approx(pair["value"], abs=1e-12)
    between = [p["value"] for p in report["pairwise_cohen_kappa"]]
    assert judge["agreement"]["mean_kappa_between_annotators"] == pytest.approx(sum(between) / len(between))
    assert rows[code]["mean_kappa_with_annotators"] == pytest.approx(
        sum(p["value"] for p in report["pairwise_cohen_kappa"] if code in (p["rater_a"], p["rater_b"])) / 2)
    assert judge["ranking"] is None  # labels are not preferences: no ranking for either
    facts = judge["facts"]
    assert facts["n_answers"] == 64 and facts["n_real_items_answered"] == 64 and facts["n_real_items"] == 64
    assert facts["file_name"] == "copy.jsonl"
    paragraph = judge["methods"]
    assert paragraph.startswith(f"The LLM judge copy answered 64 of the study's 64 items; its 64 answers were "
                                f"imported on {facts['imported_at'][:10]} from copy.jsonl (SHA-256 {facts['sha256'][:12]}…)")
    assert f"winning rate ω = {judge['alt_test']['winning_rate']:.2f}" in paragraph
    verdict = "passes" if judge["alt_test"]["passed"] else "does not pass"
    assert f"so it {verdict} the test (ω ≥ 0.5)" in paragraph


def test_a_ranking_judge_ranks_the_systems_beside_the_humans() -> None:
    study = ranking_study("jrk", n_items=24, n_annotators=3)
    records = []
    for item in study.items.filter(is_spam=False):
        records.append({"item": item.external_id, "ranks": {"reference": 1, "sys1": 2, "sys2": 3}})
    store_judge(study, "ordered", records)
    report = study_report(study)
    block = judges_report(study, options=OPTIONS, human_ranking=report["ranking"])
    assert block is not None
    (judge,) = block["judges"]
    ranking = judge["ranking"]
    assert {r["system"]: r["position"] for r in ranking["systems"]} == {"reference": 1, "sys1": 2, "sys2": 3}
    human = {r["system"]: r["position"] for r in report["ranking"]["systems"]}
    assert [r["system"] for r in ranking["systems"]] == sorted(human, key=human.get)  # in the humans' order
    assert {r["system"]: r["human_position"] for r in ranking["systems"]} == human
    systems = sorted(human)
    expected = kendalltau([{"reference": 1, "sys1": 2, "sys2": 3}[s] for s in systems], [human[s] for s in systems])
    assert ranking["kendall_tau"] == pytest.approx(expected.statistic)
    # Rankings are read as the report's candidate-pair units; the command with the stored judge agrees.
    assert block["settings"]["instances"] == "agreement units" and block["settings"]["scoring"] == "accuracy"
    command = alt_test_command("--slug", study.slug, "--pilot", "drop")
    assert command["judges"][0] == judge["alt_test"]
    assert command["judges"][0]["per_annotator"][0]["instances"] == 72  # 24 items x 3 candidate pairs


def test_no_judge_no_block_and_constant_queries() -> None:
    study = labels_study("jq", n_items=12)
    assert judges_report(study, options=OPTIONS, human_ranking=None) is None
    _, labels = first_annotator(study)
    records = [{"item": i, "label": v} for i, v in labels.items()]
    store_judge(study, "a", records)
    with CaptureQueriesContext(connection) as one:
        judges_report(study, options=OPTIONS, human_ranking=None)
    for name in ("b", "c", "d"):
        store_judge(study, name, records)
    with CaptureQueriesContext(connection) as four:
        block = judges_report(study, options=OPTIONS, human_ranking=None)
    assert block is not None and [j["name"] for j in block["judges"]] == ["a", "b", "c", "d"]
    assert len(four.captured_queries) == len(one.captured_queries)


def test_too_few_instances_is_said_not_hidden() -> None:
    study = labels_study("jt", n_items=12)
    _, labels = first_annotator(study)
    store_judge(study, "small", [{"item": i, "label": v} for i, v in labels.items()])
    (judge,) = judges_report(study, options=OPTIONS, human_ranking=None)["judges"]
    assert judge["alt_test"]["error"].startswith("no annotator has 30 or more instances")
    assert "could not be run: no annotator has 30 or more instances" in judge["methods"]


@pytest.mark.parametrize("protocol", ["esa", "mqm"])
def test_span_studies_compare_their_judges_too(protocol: str) -> None:
    from tests.span_study import answer_all as span_answer_all, span_study

    study = span_study(slug=f"js-{protocol}", protocol=protocol, candidates=3, items=12, redundancy=3)

    def plan(k: int, item: str, system: str) -> dict[str, Any]:
        worst = (k + int(item.rsplit("-", 1)[1]) + len(system)) % 3
        spans = [] if worst == 0 else [{"start": 0, "end": 3, "severity": "minor" if worst == 1 else "major",
                                        **({"category": "Accuracy/Mistranslation"} if protocol == "mqm" else {})}]
        return {"spans": spans, **({"score": 90 - 30 * worst} if protocol == "esa" else {})}

    span_answer_all(study, plan, annotators=3)
    records = []
    for item in study.items.filter(is_spam=False).order_by("pk"):
        answers = {}
        for system in item.candidates.values_list("system", flat=True):
            answers[system] = {"spans": [] if system == "reference" else
                               [{"start": 0, "end": 3, "severity": "major",
                                 **({"category": "Accuracy/Mistranslation"} if protocol == "mqm" else {})}],
                               **({"score": 95 if system == "reference" else 40} if protocol == "esa" else {})}
        records.append({"item": item.external_id, "annotations": answers})
    store_judge(study, "qe", records)
    report = study_report(study)
    block = judges_report(study, options=OPTIONS, human_ranking=report["ranking"])
    (judge,) = block["judges"]
    assert block["settings"]["scoring"] == ("neg_rmse" if protocol == "esa" else "accuracy")
    assert block["settings"]["instances"] == ("candidates (item and system)" if protocol == "esa"
                                              else "agreement units")
    # 12 items x 3 candidates = 36 instances per annotator; the command gives the same test.
    assert judge["alt_test"] == alt_test_command("--slug", study.slug, "--pilot", "drop")["judges"][0]
    assert all(a["instances"] == 36 for a in judge["alt_test"]["per_annotator"])
    assert {r["annotator"] for r in judge["agreement"]["per_annotator"]} == \
        {p["rater_a"] for p in report["pairwise_cohen_kappa"]} | {p["rater_b"] for p in report["pairwise_cohen_kappa"]}
    assert all(r["n"] == 36 for r in judge["agreement"]["per_annotator"])
    positions = {r["system"]: r["position"] for r in judge["ranking"]["systems"]}
    assert positions["reference"] == 1 and sorted(positions.values()) == [1, 2, 3]
    assert {r["system"]: r["human_position"] for r in judge["ranking"]["systems"]} == \
        {r["system"]: r["position"] for r in report["ranking"]["systems"]}
