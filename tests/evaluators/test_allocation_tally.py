"""The incremental allocation state equals the full recomputation exactly.

After every judgment — fresh answers, revisions, an exclusion and its undoing, a restart (the process's tallies
gone), a tally left behind by another process, settings changed in the admin — the state the hook keeps and the
state recomputed from every judgment are equal, and so are the sequences' arrays, bit for bit. An ordinary
judgment extends the tally (no rebuild, one statement however many judgments the study has); concurrent
submits (one thread and connection each) leave a tally equal to the full recomputation.
"""
from __future__ import annotations

import copy
import random
from functools import partial
from typing import Any

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.handout import services
from annotation.handout.exclusion import annotator_exclude, annotator_include
from annotation.models import Annotator, Assignment
from evaluators import live_allocation
from evaluators.live_allocation import TALLIES, Tally, allocation_state, allocation_tally
from studies.importing.study_file import study_import
from studies.models import Candidate, Item, Study
from tests.annotation.test_adaptive_allocation import _answer, _da_file
from tests.annotation.test_races import run_together

MEANS = {"reference": 50.0, "sys1": 56.0, "sys2": 50.0}


def _same_tally(a: Tally, b: Tally) -> None:
    assert (a.key, a.excluded, a.systems, a.complete, a.watermark, a.judgments) == \
        (b.key, b.excluded, b.systems, b.complete, b.watermark, b.judgments)
    assert (a.column, a.keys) == (b.column, b.keys)  # the candidates the extensions reuse are the rebuild's
    assert a.sequences is not None and b.sequences is not None
    for name in ("count", "sum_x", "sum_sq", "log_k_plus", "log_k_minus", "decided_at", "decision"):
        assert np.array_equal(getattr(a.sequences, name), getattr(b.sequences, name)), name


def _check(study: Study) -> None:
    """The incremental state equals the full one; so do the tallies behind them."""
    incremental = allocation_state(Study.objects.get(pk=study.pk), incremental=True)
    kept = TALLIES.get(study.pk)
    assert kept is not None
    kept = copy.deepcopy(kept)
    full = allocation_state(Study.objects.get(pk=study.pk))
    assert incremental == full
    rebuilt = TALLIES.get(study.pk)
    assert rebuilt is not None
    _same_tally(kept, rebuilt)


def _judge(study: Study, annotator: Annotator, rng: random.Random) -> Assignment | None:
    assignment = services.assignment_next(annotator=Annotator.objects.select_related("study").get(pk=annotator.pk))
    if assignment is not None:
        services.judgment_submit(assignment=assignment, payload=_answer(assignment, rng, MEANS))
    return assignment


@pytest.mark.django_db
def test_incremental_equals_full_through_revisions_exclusions_restarts_and_setting_changes() -> None:
    study = study_import(status="open", data=_da_file("tally", n_items=120, redundancy=2, allocation={
        "policy": "adaptive", "warmup": 10, "min_effect": 3}))
    annotators = services.annotators_create(study=study, count=3)
    rng = random.Random(4)
    done: list[Assignment] = []
    for step in range(150):
        annotator = annotators[rng.randrange(3)]
        assignment = _judge(study, annotator, rng)
        if assignment is not None:
            done.append(assignment)
        if step % 7 == 3 and done:  # a revision of an earlier answer (the hook must not count both)
            old = done[rng.randrange(len(done))]
            services.judgment_submit(assignment=Assignment.objects.select_related("item__study", "annotator")
                                     .get(pk=old.pk), payload=_answer(old, rng, MEANS))
        if step == 40:
            annotator_exclude(annotator=Annotator.objects.get(pk=annotators[1].pk), reason="test")
        if step == 70:
            annotator_include(annotator=Annotator.objects.get(pk=annotators[1].pk))
        if step == 90:
            TALLIES.clear()  # a restart
        if step == 100:  # another process's older tally left in this process: extended from its watermark
            older = copy.deepcopy(TALLIES.get(study.pk))
        if step == 110:
            TALLIES.put(study.pk, older)
        if step == 130:  # the admin changes α: the tally is another one
            Study.objects.filter(pk=study.pk).update(allocation={**study.allocation, "alpha": 0.1})
        _check(study)
    state = allocation_state(Study.objects.get(pk=study.pk))
    assert state["judgments"] > 100 and any(p["decision"] != "open" for p in state["pairs"])


@pytest.mark.django_db
def test_an_ordinary_judgment_extends_the_tally_with_one_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    study = study_import(status="open", data=_da_file("tally-cost", n_items=200, allocation={
        "policy": "adaptive", "warmup": 5}))
    annotator = services.annotators_create(study=study)[0]
    rng = random.Random(5)
    for _ in range(60):
        _judge(study, annotator, rng)
    rebuilds: list[int] = []
    real = live_allocation._tally_rebuild

    def counting(*args: Any) -> Tally:
        rebuilds.append(1)
        return real(*args)

    monkeypatch.setattr(live_allocation, "_tally_rebuild", counting)
    for _ in range(40):
        assignment = services.assignment_next(annotator=Annotator.objects.select_related("study").get(pk=annotator.pk))
        assert assignment is not None
        services.judgment_submit(assignment=assignment, payload=_answer(assignment, rng, MEANS))
        fresh = Study.objects.get(pk=study.pk)
        with CaptureQueriesContext(connection) as queries:
            found = allocation_tally(fresh)
        assert found is not None and found[1] is False
        assert len(queries) == 1, [q["sql"] for q in queries]
    assert rebuilds == []
    _check(study)


@pytest.mark.django_db(transaction=True)
def test_concurrent_submits_leave_a_tally_equal_to_the_full_recomputation() -> None:
    study = study_import(status="open", data=_da_file("tally-race", n_items=80, allocation={
        "policy": "adaptive", "warmup": 5}))
    annotators = services.annotators_create(study=study, count=6)

    def worker(annotator: Annotator, seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(8):
            _judge(study, annotator, rng)

    assert not run_together([partial(worker, a, k) for k, a in enumerate(annotators)])
    _check(study)
    assert allocation_state(Study.objects.get(pk=study.pk))["judgments"] == 48


@pytest.mark.django_db
def test_a_judgment_of_an_item_added_since_rebuilds_the_tally_with_its_new_system() -> None:
    study = study_import(status="open", data=_da_file("tally-added", n_items=40, allocation={
        "policy": "adaptive", "warmup": 5}))
    annotator = services.annotators_create(study=study)[0]
    rng = random.Random(6)
    for _ in range(10):
        _judge(study, annotator, rng)
    kept = TALLIES.get(study.pk)
    assert kept is not None and "sys3" not in kept.systems
    # An item added to the running study, with a system no other item has: the tally does not know its
    # candidates, and extending would drop the new system's scores.
    item = Item.objects.create(study=study, external_id="added", source="Quelle.", order_key=10**9, doc_index=99)
    for position, system in enumerate(("sys1", "sys3")):
        Candidate.objects.create(item=item, system=system, text=f"the candidate of {system}", position=position)
    assignment = Assignment.objects.create(annotator=annotator, item=item, sequence=99)
    assignment = Assignment.objects.select_related("item__study", "annotator").get(pk=assignment.pk)
    services.judgment_submit(assignment=assignment, payload=_answer(assignment, rng, {**MEANS, "sys3": 70.0}))
    found = allocation_tally(Study.objects.get(pk=study.pk))
    assert found is not None
    tally, rebuilt = found
    assert "sys3" in tally.systems and str(item.candidates.get(system="sys3").pk) in tally.column
    _check(study)
    assert allocation_state(Study.objects.get(pk=study.pk))["judgments"] == 11
