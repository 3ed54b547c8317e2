"""Attention checks are spread through every annotator's queue (issue: spam bunched at the front).

The schedule (annotation.handout.ordering.CheckSchedule) is simulated for 2,000
annotators of each demo study: nobody's first item is a check, checks never
come more than two in a row, and for every quota k an annotator's first k items
hold within ±1 of q·k checks (q = spam copies / items). The hand-out follows
the schedule on a real imported demo study.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from annotation.handout import ordering
from annotation.handout.check_figures import scheduled_queues, shuffled_queues, summarise
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.importing.study_file import parse_study, study_import
from studies.controls.spam import spam_count

DEMO = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "studies").glob("*.json"))


def _counts(path: Path) -> tuple[int, list[int], int, float, int]:
    data = json.loads(path.read_text())
    parsed = parse_study(data)
    sizes = Counter(i["document_id"] or f"item:{i['external_id']}" for i in parsed.items)
    rate = float(parsed.fields.get("spam_rate") or 0.0)
    seed = int(data.get("seed", 1))
    return len(parsed.items), list(sizes.values()), spam_count(len(parsed.items), rate), rate, seed


@pytest.mark.django_db
@pytest.mark.parametrize("path", DEMO, ids=[p.stem for p in DEMO])
def test_checks_are_spread_for_2000_annotators_of_each_demo_study(path):
    n_real, sizes, n_spam, rate, seed = _counts(path)
    assert n_spam > 0
    after = summarise(scheduled_queues(seed=seed, n_real=n_real, n_spam=n_spam), n_spam / (n_real + n_spam))
    assert after.n_annotators == 2000
    assert after.first_is_check <= rate and after.first_is_check == 0.0
    assert after.longest_run <= 2
    assert after.worst_deviation <= 1.0
    # The former order (spam copies shuffled in as one-item documents) fails at least one of these.
    before = summarise(shuffled_queues(seed=seed, doc_sizes=sizes, n_spam=n_spam), n_spam / (n_real + n_spam))
    assert before.first_is_check > rate or before.longest_run > 2 or before.worst_deviation > 1.0


def test_the_schedule_has_one_check_per_block_never_first():
    schedule = ordering.check_schedule(seed=7, sequence=3, n_checks=13, n_items=113)
    kinds = schedule.kinds(113)
    assert sum(kinds) == 13 and not kinds[0]
    for block in range(13):
        first, last = schedule.block_bounds(block)
        assert sum(kinds[first - 1:last]) == 1
    assert [schedule.checks_up_to(k) for k in (1, 113)] == [0, 13]
    assert ordering.check_schedule(seed=7, sequence=3, n_checks=0, n_items=10).kinds(10) == [False] * 10


@pytest.mark.django_db
def test_the_hand_out_follows_the_schedule_on_the_pronoun_demo():
    path = next(p for p in DEMO if p.stem == "diabla-pronoun-mono")
    study = study_import(data=json.loads(path.read_text()), status="open")
    assert study.n_spam_items > 0 and study.n_real_items > 0
    share = study.n_spam_items / (study.n_real_items + study.n_spam_items)
    for annotator in annotators_create(study=study, count=6):
        kinds = []
        for _ in range(30):
            assignment = assignment_next(annotator=annotator)
            if assignment is None:
                break
            kinds.append(assignment.item.is_spam)
            payload = {"ranks": {c.public_id: k + 1 for k, c in enumerate(assignment.item.candidates.all())}}
            judgment_submit(assignment=assignment, payload=payload)
        assert kinds and not kinds[0]
        assert summarise([kinds], share).longest_run <= 2
        assert abs(sum(kinds) - share * len(kinds)) <= 1.0
