"""``import_judge`` / ``export_judge``: an LLM judge's answers checked as an annotator's, stored beside the annotators,
never one of them, and written back out as the file that stores them again."""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.dashboard.progress import study_progress
from annotation.exporting.judgments import export_lines
from annotation.handout.services import annotators_create, assignment_next
from annotation.models import Annotator, Assignment, Judgment
from evaluators.models import JudgeAnswer, LLMJudge
from evaluators.reports.study_stats import study_report
from studies.models import AuditEvent, Candidate, Study
from tests.conftest import annotator_client
from tests.factories import make_study, member_of
from tests.report_study import ranking_study
from tests.span_study import span_study

pytestmark = pytest.mark.django_db

JUDGE = "secret-judge-gpt"


def import_judge(study: Study, path: Path, *args: str) -> str:
    out = io.StringIO()
    call_command("import_judge", study.slug, str(path), *args, stdout=out)
    return out.getvalue()


def ranking_lines(study: Study, *, flip: bool = False) -> list[dict[str, Any]]:
    """A judge that ranks the reference first on every real item (last with ``flip``)."""
    lines = []
    for item in study.items.filter(is_spam=False).order_by("pk"):
        systems = list(item.candidates.order_by("position").values_list("system", flat=True))
        ranks = {s: k + 1 for k, s in enumerate(reversed(systems) if flip else systems)}
        lines.append({"item": item.external_id, "ranks": ranks})
    return lines


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_ranking_judge_is_stored_in_the_annotators_answer_form(tmp_path: Path) -> None:
    study = ranking_study("jr", n_items=6, n_annotators=2)
    out = import_judge(study, write_jsonl(tmp_path / "gpt.jsonl", ranking_lines(study)), "--name", JUDGE,
                       "--description", "GPT-4o, prompt v2")
    judge = LLMJudge.objects.get(study=study, name=JUDGE)
    assert out.strip() == f"judge {JUDGE}: 6 answers stored from gpt.jsonl (jsonl)"
    assert judge.n_answers == 6 and judge.file_format == "jsonl" and judge.description == "GPT-4o, prompt v2"
    assert len(judge.sha256) == 64 and judge.imported_by == ""
    answer = JudgeAnswer.objects.filter(judge=judge).order_by("item_id").first()
    cands = {c.system: c.pk for c in Candidate.objects.filter(item=answer.item)}
    # The stored form of Judgment.answer: candidate pks as keys, in pk order.
    assert answer.answer == {"ranks": {str(cands["reference"]): 1, str(cands["sys1"]): 2, str(cands["sys2"]): 3}}
    assert answer.line == 1
    event = AuditEvent.objects.get(action="judge_imported", study=study)
    assert event.details["judge"] == JUDGE and event.details["answers"] == 6 and event.details["replaced"] is None


def test_csv_judgment_labels_and_json_cells(tmp_path: Path) -> None:
    study = make_study(slug="jl", protocol="judgment", n_items=4, n_candidates=1,
                       settings={"labels": ["correct", "wrong"], "redundancy": 2})
    path = tmp_path / "judge.csv"
    path.write_text("item,label\next-0,correct\next-1,wrong\next-2,correct\n", encoding="utf-8")
    import_judge(study, path, "--name", "j")
    assert sorted(a["labels"][0] for a in JudgeAnswer.objects.values_list("answer", flat=True)) == \
        ["correct", "correct", "wrong"]
    ranking = make_study(slug="jc", n_items=2)
    path = tmp_path / "ranks.csv"
    path.write_text('item,ranks\next-0,"{""reference"": 1, ""sys1"": 3, ""sys2"": 2}"\n', encoding="utf-8")
    import_judge(ranking, path, "--name", "r")
    (answer,) = JudgeAnswer.objects.filter(judge__study=ranking)
    assert sorted(answer.answer["ranks"].values()) == [1, 2, 3]


def test_an_esa_judge_gives_spans_and_scores(tmp_path: Path) -> None:
    study = span_study(slug="je", protocol="esa", candidates=2, items=2)
    records = []
    for item in study.items.filter(is_spam=False).order_by("pk"):
        systems = list(item.candidates.order_by("position").values_list("system", flat=True))
        records.append({"item": item.external_id, "annotations": {
            systems[0]: {"spans": [], "score": 90}, systems[1]: {"spans": [{"start": 0, "end": 4, "severity": "major"}],
                                                                  "score": 35}}})
    import_judge(study, write_jsonl(tmp_path / "esa.jsonl", records), "--name", "qe")
    scores = sorted(e["score"] for a in JudgeAnswer.objects.values_list("answer", flat=True)
                    for e in a["annotations"].values())
    assert scores == [35, 35, 90, 90]


@pytest.mark.parametrize(("records", "message"), [
    ([{"item": "nope", "ranks": {}}], r"line 2: item: no item 'nope' in study jb"),
    ([{"ranks": {"reference": 1}}], r"line 2: item: required"),
    ([{"item": "ext-0", "ranks": {"reference": 1, "sys1": 2, "sys2": "x"}}], r"line 2: ranks\.sys2: 'x' is not of type"),
    ([{"item": "ext-0", "ranks": {"reference": 1, "sys1": 2}}], r"line 2: ranks: Every candidate needs a rank; 1 missing \(sys2\)"),
    ([{"item": "ext-0", "ranks": {"reference": 1, "sys1": 2, "nobody": 3, "sys2": 3}}],
     r"line 2: ranks: Unknown candidate id\(s\) for this item: nobody"),
    ([{"item": "ext-0", "label": "x"}], r"line 2: answer: Additional properties are not allowed"),
    ([{"item": "ext-0", "ranks": {"reference": 1, "sys1": 2, "sys2": 3}},
      {"item": "ext-0", "ranks": {"reference": 1, "sys1": 2, "sys2": 3}}],
     r"line 3: item: a second answer for item 'ext-0' \(first on line 2\)"),
])
def test_bad_records_are_named_by_line_and_field_and_nothing_is_stored(tmp_path: Path, records: list[dict],
                                                                        message: str) -> None:
    study = make_study(slug="jb", n_items=3)
    good = [{"item": "ext-1", "ranks": {"reference": 1, "sys1": 2, "sys2": 3}}]
    with pytest.raises(CommandError, match=message):
        import_judge(study, write_jsonl(tmp_path / "bad.jsonl", good + records), "--name", "bad")
    assert not LLMJudge.objects.exists() and not JudgeAnswer.objects.exists()


def test_bad_files_are_named(tmp_path: Path) -> None:
    study = make_study(slug="jf", n_items=2)
    path = tmp_path / "bad.jsonl"
    path.write_text('{"item": "ext-0", "ranks": {"reference": 1, "sys1": 2, "sys2": 3}}\n[1]\n{broken\n',
                    encoding="utf-8")
    with pytest.raises(CommandError, match=r"2 error\(s\), nothing stored:\n  line 2: not a JSON object\n  line 3: "
                                           r"not valid JSON"):
        import_judge(study, path, "--name", "j")
    path = tmp_path / "bad.csv"
    path.write_text("item,rank\next-0,1\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"line 1: unknown column 'rank' \(columns: item, ranks\)"):
        import_judge(study, path, "--name", "j")
    path.write_text("item,ranks\next-0,{not json\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"line 2: ranks: not valid JSON"):
        import_judge(study, path, "--name", "j")
    path.write_text("item,ranks\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"no answers"):
        import_judge(study, path, "--name", "j")
    other = tmp_path / "judge.txt"
    other.write_text("x", encoding="utf-8")
    with pytest.raises(CommandError, match=r"--format: cannot tell the format"):
        import_judge(study, other, "--name", "j")
    with pytest.raises(CommandError, match=r"--name: a non-empty name"):
        import_judge(study, path, "--name", " ")
    assert not LLMJudge.objects.exists()


def test_the_same_name_again_replaces_the_judge_and_a_bad_file_keeps_the_old_one(tmp_path: Path) -> None:
    study = ranking_study("jx", n_items=4, n_annotators=2)
    import_judge(study, write_jsonl(tmp_path / "v1.jsonl", ranking_lines(study)), "--name", "gpt")
    first = LLMJudge.objects.get(name="gpt")
    with pytest.raises(CommandError):
        import_judge(study, write_jsonl(tmp_path / "v2.jsonl", [{"item": "ext-0", "ranks": {}}]), "--name", "gpt")
    assert LLMJudge.objects.get(name="gpt").pk == first.pk and JudgeAnswer.objects.filter(judge=first).count() == 4
    out = import_judge(study, write_jsonl(tmp_path / "v3.jsonl", ranking_lines(study, flip=True)[:3]), "--name", "gpt")
    assert out.startswith(f"judge gpt: replaced the one imported on {first.imported_at.isoformat()} from v1.jsonl "
                          "(4 answers)")
    judge = LLMJudge.objects.get(study=study, name="gpt")
    assert judge.pk != first.pk and judge.file_name == "v3.jsonl" and judge.answers.count() == 3
    assert JudgeAnswer.objects.count() == 3


def test_import_needs_a_manager(tmp_path: Path) -> None:
    study = make_study(slug="ja", n_items=2)
    member_analyst = member_of(study, "analyst")
    path = write_jsonl(tmp_path / "j.jsonl", [{"item": "ext-0", "ranks": {"reference": 1, "sys1": 2, "sys2": 3}}])
    with pytest.raises(CommandError, match="scores needs manager"):
        import_judge(study, path, "--name", "j", "--user", member_analyst.username)


def _human_side(study: Study) -> dict[str, Any]:
    """Everything made of the annotators: agreement report, quality, progress, the export, the hand-out."""
    out = io.StringIO()
    call_command("quality", study.slug, "--json", stdout=out)
    report = study_report(study)
    report.pop("facts")
    return {"report": report, "quality": json.loads(out.getvalue()), "progress": study_progress(study),
            "export": "".join(export_lines(study, fmt="csv")),
            "counts": (Annotator.objects.count(), Assignment.objects.count(), Judgment.objects.count())}


def test_a_judge_is_never_an_annotator(tmp_path: Path) -> None:
    study = ranking_study("jn", n_items=6, n_annotators=2)
    before = _human_side(study)
    import_judge(study, write_jsonl(tmp_path / "j.jsonl", ranking_lines(study)), "--name", JUDGE)
    after = _human_side(study)
    assert after == before
    # A new annotator is handed items as before: the judge's answers fill no redundancy slot.
    fresh = make_study(slug="jh", n_items=3, settings={"redundancy": 1})
    import_judge(fresh, write_jsonl(tmp_path / "h.jsonl", ranking_lines(fresh)), "--name", JUDGE)
    annotator = annotators_create(study=fresh)[0]
    assert assignment_next(annotator=annotator) is not None


def test_an_annotator_never_sees_a_judge(tmp_path: Path) -> None:
    study = make_study(slug="jv", n_items=3, settings={"redundancy": 1})
    import_judge(study, write_jsonl(tmp_path / "j.jsonl", ranking_lines(study)), "--name", JUDGE,
                 "--description", "judge-description-zz")
    annotator = annotators_create(study=study)[0]
    client = annotator_client(annotator)
    api = client.get("/api/v1/annotate/next")
    assert api.status_code == 200
    page = client.get(f"/a/{annotator.token}/", follow=True)
    item = client.get(f"/a/{annotator.token}/item/", follow=True)
    for body in (api.content.decode(), page.content.decode(), item.content.decode()):
        assert JUDGE not in body and "judge-description-zz" not in body


def test_export_judge_writes_the_file_that_stores_the_same_answers(tmp_path: Path) -> None:
    for study, records in _studies_with_judges():
        import_judge(study, write_jsonl(tmp_path / f"{study.slug}.jsonl", records), "--name", "orig")
        written = tmp_path / f"{study.slug}-out.jsonl"
        err = io.StringIO()
        call_command("export_judge", study.slug, "--output", str(written), stderr=err)
        assert f"answer(s) of judge orig (imported" in err.getvalue()
        import_judge(study, written, "--name", "again")
        stored = {n: dict(JudgeAnswer.objects.filter(judge__study=study, judge__name=n)
                          .values_list("item_id", "answer")) for n in ("orig", "again")}
        assert stored["orig"] == stored["again"] and len(stored["orig"]) == len(records)
        with pytest.raises(CommandError, match="has 2 judges; name one"):
            call_command("export_judge", study.slug, stdout=io.StringIO())
        out = io.StringIO()
        call_command("export_judge", study.slug, "--name", "again", stdout=out)
        assert [json.loads(line) for line in out.getvalue().splitlines()] == \
            [json.loads(line) for line in written.read_text(encoding="utf-8").splitlines()]
    with pytest.raises(CommandError, match="has no judge 'x'"):
        call_command("export_judge", "ej-rank", "--name", "x", stdout=io.StringIO())


def _studies_with_judges() -> list[tuple[Study, list[dict[str, Any]]]]:
    ranking = make_study(slug="ej-rank", n_items=3)
    choice = make_study(slug="ej-choice", protocol="choice", n_items=3, n_candidates=2,
                        settings={"options": ["neither", "tie"]})
    labels = make_study(slug="ej-multi", protocol="judgment", n_items=2, n_candidates=1,
                        settings={"labels": ["a", "b", "c"], "multi_label": True})
    pairwise = span_study(slug="ej-pair", protocol="pairwise", candidates=2, items=2)
    pair_items = list(pairwise.items.filter(is_spam=False).order_by("pk"))
    pair_systems = [list(i.candidates.order_by("position").values_list("system", flat=True)) for i in pair_items]
    return [
        (ranking, ranking_lines(ranking)),
        (choice, [{"item": "ext-0", "choice": "sys1"}, {"item": "ext-1", "choice": "neither"},
                  {"item": "ext-2", "choice": "reference"}]),
        (labels, [{"item": "ext-0", "labels": ["c", "a"]}, {"item": "ext-1", "label": "b"}]),
        (pairwise, [{"item": i.external_id, "annotations": {s[0]: {"score": 70}, s[1]: {"score": 20}},
                     "preference": s[0]} for i, s in zip(pair_items, pair_systems)]),
    ]
