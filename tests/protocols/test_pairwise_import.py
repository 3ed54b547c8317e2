"""``import_judgments --format appraise-pairwise-csv``: Appraise's pairwise score export as a closed pairwise study.

The fixture is written the way Appraise's ``PairwiseAssessmentResult.get_system_data(extended_csv=True)``
writes its rows (protocols/pairwise/appraise.py: no header, one row per side, target1 first; 11 columns,
14 with ``--batch-info``).
"""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import Judgment
from studies.models import Candidate, Item, Status, Study

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_user")]


def _result(user: str, segment: str, first: tuple[str, int], second: tuple[str, int], start: int,
            kind: str = "TGT") -> str:
    return "".join(f"{user},{system},{segment},{kind},en,de,{score},,,{start},{start + 30}\n"
                   for system, score in (first, second))


#: Three systems, two annotators; A mostly beats B, B mostly beats C, one tie, one upset (so every
#: Bradley–Terry strength exists without a prior); segment 4 shows two pairs; one BAD control result.
APPRAISE = "".join([
    _result("ann1", "1", ("A", 80), ("B", 60), 1700000000), _result("ann2", "1", ("B", 55), ("A", 75), 1700000100),
    _result("ann1", "2", ("B", 70), ("C", 40), 1700000200), _result("ann2", "2", ("C", 50), ("B", 50), 1700000300),
    _result("ann1", "3", ("A", 90), ("C", 20), 1700000400), _result("ann2", "3", ("C", 35), ("A", 85), 1700000500),
    _result("ann1", "4", ("A", 40), ("B", 65), 1700000600), _result("ann2", "4", ("C", 30), ("B", 60), 1700000700),
    _result("ann1", "5", ("A", 70), ("C", 30), 1700000800), _result("ann2", "5", ("A", 72), ("C", 31), 1700000900),
    _result("ann1", "6", ("B", 10), ("A", 12), 1700001000, kind="BAD"),
])


def run(tmp_path, content: str, slug: str = "pw-appraise") -> str:
    path = tmp_path / "pairwise.csv"
    path.write_text(content, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    call_command("import_judgments", str(path), "--format", "appraise-pairwise-csv", "--slug", slug,
                 "--user", "admin", stdout=out, stderr=err)
    return out.getvalue().strip()


def test_the_appraise_pairwise_export_becomes_a_closed_pairwise_study(tmp_path):
    study = Study.objects.get(slug=run(tmp_path, APPRAISE))
    assert study.protocol == "pairwise" and study.status == Status.CLOSED
    items = {i.external_id: sorted(i.candidates.values_list("system", flat=True))
             for i in Item.objects.filter(study=study, is_spam=False)}
    assert items == {"1": ["A", "B"], "2": ["B", "C"], "3": ["A", "C"], "4 (A vs B)": ["A", "B"],
                     "4 (B vs C)": ["B", "C"], "5": ["A", "C"]}
    answers = {(j.assignment.annotator.external_id, j.assignment.item.external_id): j.answer
               for j in Judgment.objects.filter(assignment__item__study=study).select_related("assignment__item",
                                                                                            "assignment__annotator")}
    assert len(answers) == 10  # the BAD result is dropped
    pk = {(c.item.external_id, c.system): c.pk for c in Candidate.objects.filter(item__study=study)}
    assert answers[("ann1", "1")] == {"annotations": {str(pk[("1", "A")]): {"spans": [], "score": 80.0},
                                                      str(pk[("1", "B")]): {"spans": [], "score": 60.0}},
                                      "choice": {"candidate": pk[("1", "A")]}}
    assert answers[("ann2", "2")]["choice"] == {"option": "tie"}  # equal scores
    assert "1 quality-control results (BAD, REF, CHK) dropped" in study.provenance["summary"]
    assert study.provenance["format_name"].startswith("Appraise's pairwise score export")


def test_the_report_gives_agreement_and_a_ranking_by_scores_and_by_preferences(tmp_path, admin_client):
    slug = run(tmp_path, APPRAISE)
    report = admin_client.get(reverse("evaluators:report-json", args=[slug])).json()
    assert report["protocol"] == "pairwise" and report["n_ratings"] == 20
    assert [row["system"] for row in report["ranking"]["systems"]][0] == "A"  # WMT scores
    block = report["preference"]
    assert block["n_judgments"] == 10 and block["n_ties"] == 1
    assert "percent_agreement" in block["agreement"]["coefficients"]
    strengths = block["bradley_terry"]
    assert [s["system"] for s in strengths["systems"]] == ["A", "B", "C"]
    assert not strengths["prior"]  # every system won and lost once at least: the plain MLE exists
    page = admin_client.get(reverse("evaluators:report", args=[slug])).content.decode()
    assert "Bradley–Terry strengths from 10 preferences" in page


def refused(tmp_path, content: str) -> str:
    with pytest.raises(CommandError) as error:
        run(tmp_path, content, slug="pw-bad")
    assert not Study.objects.filter(slug="pw-bad").exists()
    assert Judgment.objects.count() == 0
    return str(error.value)


def test_a_missing_column_is_named_by_line(tmp_path):
    cut = APPRAISE.splitlines()
    cut[2] = cut[2].rsplit(",", 1)[0]  # line 3 lost its end time
    message = refused(tmp_path, "\n".join(cut) + "\n")
    assert "pairwise.csv, line 3: 10 columns; Appraise's pairwise export has 11 (user, system" in message


def test_a_score_outside_0_100_is_named_by_line_and_field(tmp_path):
    message = refused(tmp_path, APPRAISE.replace("ann2,A,3,TGT,en,de,85,", "ann2,A,3,TGT,en,de,185,"))
    assert "pairwise.csv, line 12: score 185 is outside 0–100" in message


def test_unknown_values_of_the_side_and_type_columns_are_named(tmp_path):
    """Appraise writes no preference column (the preference is the higher score); its closed-set columns are
    the result's type and, with --batch-info, the side a row scores."""
    batched = ("ann1,A,1,TGT,en,de,80,,,1700000000,1700000030,3,901,0\n"
               "ann1,B,1,TGT,en,de,60,,,1700000000,1700000030,3,901,2\n"
               "ann2,A,2,XYZ,en,de,80,,,1700000100,1700000130\n"
               "ann2,B,2,XYZ,en,de,60,,,1700000100,1700000130\n")
    message = refused(tmp_path, batched)
    assert "pairwise.csv, line 2: side '2' is not 0 or 1" in message
    assert "pairwise.csv, line 3: type 'XYZ' is not one of TGT, REF, BAD, CHK" in message


def test_one_appraise_item_with_another_segment_or_pair_is_refused(tmp_path):
    batched = ("ann1,A,1,TGT,en,de,80,,,1700000000,1700000030,3,901,0\n"
               "ann1,B,1,TGT,en,de,60,,,1700000000,1700000030,3,901,1\n"
               "ann2,A,1,TGT,en,de,70,,,1700000100,1700000130,3,901,0\n"
               "ann2,C,1,TGT,en,de,20,,,1700000100,1700000130,3,901,1\n")
    message = refused(tmp_path, batched)
    assert ("pairwise.csv, line 3: item id 901: segment '1' with systems A and C, but segment '1' with systems "
            "A and B on line 1") in message


def test_a_second_score_of_one_item_by_one_annotator_is_refused(tmp_path):
    again = APPRAISE + _result("ann1", "1", ("B", 50), ("A", 70), 1700002000)
    message = refused(tmp_path, again)
    assert "pairwise.csv, line 23: annotator 'ann1' scored item '1' again (line 1)" in message


def test_an_older_appraise_export_without_the_errors_columns_is_read_the_same(tmp_path):
    """Appraise before error spans wrote 9 columns a segment row (no errors, sourceErrors)."""
    old = "".join(",".join(cells[:7] + cells[9:]) + "\n"
                  for cells in (line.split(",") for line in APPRAISE.splitlines()))
    assert all(len(line.split(",")) == 9 for line in old.splitlines())
    new_study = Study.objects.get(slug=run(tmp_path, APPRAISE, slug="pw-new"))
    old_study = Study.objects.get(slug=run(tmp_path, old, slug="pw-old"))

    def answers(study: Study) -> list:
        return sorted((j.assignment.annotator.external_id, j.assignment.item.external_id,
                       sorted(a["score"] for a in j.answer["annotations"].values()))
                      for j in Judgment.objects.filter(assignment__item__study=study))
    assert answers(old_study) == answers(new_study) and len(answers(old_study)) == 10
