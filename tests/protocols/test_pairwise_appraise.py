"""Appraise's pairwise export read back into results (protocols/pairwise/appraise.py).

The rows are written the way Appraise's ``PairwiseAssessmentResult.get_system_data(extended_csv=True)``
writes them (read at commit 612e4b09fc28): one row per side and system, target1 first.
"""
from __future__ import annotations

import pytest

from protocols.pairwise.appraise import AppraisePairwiseError, parse_appraise_pairwise

SEGMENTS = """\
ann1,sysA,7,TGT,en,de,80,,,1700000000,1700000030
ann1,sysB,7,TGT,en,de,55,,,1700000000,1700000030
ann2,sysB,7,TGT,en,de,70,,,1700000100,1700000160
ann2,sysA,7,TGT,en,de,70,,,1700000100,1700000160
"""

BATCHED = """\
ann1,sysA,3,TGT,en,de,90,[],[],1700000000.5,1700000040.25,12,4411,0
ann1,sysC,3,TGT,en,de,90,[],[],1700000000.5,1700000040.25,12,4411,0
ann1,sysB,3,TGT,en,de,20,[],[],1700000000.5,1700000040.25,12,4411,1
"""

DOCUMENT = """\
ann1,sysA,0,TGT,en,de,75,doc1,False,1700000000,1700000020
ann1,sysB,0,TGT,en,de,60,doc1,False,1700000000,1700000020
ann1,sysA,1,TGT,en,de,66,doc1,True,1700000020,1700000050
ann1,sysB,1,TGT,en,de,61,doc1,True,1700000020,1700000050
"""


def test_two_rows_of_one_result_are_its_two_sides_in_order():
    results = parse_appraise_pairwise("s.csv", SEGMENTS)
    assert [(r.annotator, r.first.systems, r.first.score, r.second.systems, r.second.score) for r in results] == [
        ("ann1", ["sysA"], 80, ["sysB"], 55), ("ann2", ["sysB"], 70, ["sysA"], 70)]
    assert results[0].line == 1 and results[1].line == 3
    assert (results[0].submitted_at - results[0].started_at).total_seconds() == 30
    assert results[0].document == "" and not results[0].complete_document


def test_identical_outputs_are_split_by_the_side_column():
    (result,) = parse_appraise_pairwise("b.csv", BATCHED)
    assert result.first.systems == ["sysA", "sysC"] and result.first.score == 90
    assert result.second.systems == ["sysB"] and result.second.lines == [3]


def test_without_the_side_column_identical_outputs_are_refused_by_line():
    cut = "\n".join(",".join(line.split(",")[:11]) for line in BATCHED.splitlines())
    with pytest.raises(AppraisePairwiseError) as refused:
        parse_appraise_pairwise("b.csv", cut)
    assert refused.value.problems == [
        "b.csv, lines 1, 2, 3: one result with 3 rows; without the batch-info columns (--batch-info: batchNo, "
        "item id, side) the two sides of a result with identical outputs joined by '+' cannot be told apart"]


def test_document_exports_are_recognised_and_keep_whole_document_scores_apart():
    results = parse_appraise_pairwise("d.csv", DOCUMENT)
    assert [(r.document, r.segment, r.complete_document) for r in results] == [("doc1", "0", False), ("doc1", "1", True)]


def test_every_problem_is_named_by_line_and_nothing_is_returned():
    bad = ("ann1,sysA,7,XYZ,en,de,80,,,1700000000,1700000030\n"
           "ann1,sysB,7,XYZ,en,de,abc,,,1700000000,1700000030\n"
           "ann1,sysA,8,TGT,en,de,50,,,1700000000\n"
           "ann3,sysA,9,TGT,en,de,101,,,1700000090,1700000000\n"
           "ann3,sysA,9,TGT,en,de,3,,,1700000090,1700000000\n")
    with pytest.raises(AppraisePairwiseError) as refused:
        parse_appraise_pairwise("x.csv", bad)
    problems = refused.value.problems
    assert "x.csv, line 1: type 'XYZ' is not one of TGT, REF, BAD, CHK" in problems
    assert "x.csv, line 2: score 'abc' is not a number" in problems
    assert any(p.startswith("x.csv, line 3: 10 columns") for p in problems)
    assert "x.csv, line 4: score 101 is outside 0–100" in problems
    assert "x.csv, lines 4, 5: system 'sysA' is on both sides" not in problems  # refused earlier by the score
    assert "x.csv, line 4: end 1700000000 is before start 1700000090" in problems
