"""Adaptive allocation in a live study: the setting, the hand-out after the warm-up, "settled" before the end.

Simulated annotators (created and answering through the hand-out services) judge a DA study in which one
system is clearly better than the others; the study settles before every item is judged, and the hand-out's
invariants hold: no item twice to one annotator, exact redundancy counts, excluded annotators' work not counted.
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from annotation.handout import services
from annotation.models import Annotator, Assignment, AssignmentStatus, Judgment
from evaluators.live_allocation import allocation_refresh, allocation_state, allocation_state_store
from evaluators.stats.allocation import DEFAULT_REFRESH_EVERY, DEFAULT_WARMUP
from studies.definition.allocation import DEFAULTS
from studies.importing.study_file import StudyFileError, study_import
from studies.lifecycle.invariants import study_copy
from studies.models import Item, Study
from tests.factories import study_file

pytestmark = pytest.mark.django_db

#: Mean score of each system in the simulation: sys1 is far better than the other two, which are level.
MEANS = {"reference": 40.0, "sys1": 90.0, "sys2": 40.0}


def _da_file(slug: str, *, n_items: int = 120, allocation: Any = None, redundancy: int = 1,
             protocol: str = "esa", **settings: Any) -> dict[str, Any]:
    extra: dict[str, Any] = {"redundancy": redundancy, **settings}
    if protocol == "esa":
        extra["esa_spans"] = False
    if allocation is not None:
        extra["allocation"] = allocation
    return study_file(slug=slug, protocol=protocol, n_items=n_items, n_candidates=3, settings=extra)


def _answer(assignment: Assignment, rng: random.Random, means: dict[str, float] = MEANS) -> dict[str, Any]:
    cands = assignment.item.candidates.all()
    return {"annotations": {c.public_id: {"score": min(100.0, max(0.0, rng.gauss(means[c.system], 5.0)))}
                            for c in cands}}


def _run(study: Study, annotators: list[Annotator], rng: random.Random, *, rounds: int = 10_000) -> int:
    """Annotators in turn take their next item and answer it, until none gets work; the judgments stored."""
    stored = 0
    active = list(annotators)
    for _ in range(rounds):
        if not active:
            break
        annotator = active[rng.randrange(len(active))]
        annotator = Annotator.objects.select_related("study").get(pk=annotator.pk)  # a request reads it afresh
        assignment = services.assignment_next(annotator=annotator)
        if assignment is None:
            active = [a for a in active if a.pk != annotator.pk]
            continue
        services.judgment_submit(assignment=assignment, payload=_answer(assignment, rng))
        stored += 1
    return stored


# --- the setting -------------------------------------------------------------------------------------------

def test_study_file_stores_the_adaptive_options_with_their_defaults() -> None:
    study = study_import(data=_da_file("alloc-file", n_items=3, allocation={"policy": "adaptive", "alpha": 0.1}))
    assert study.allocation == {"policy": "adaptive", "alpha": 0.1, "min_effect": None, "warmup": 20,
                                "target": "all", "close_when_settled": False, "refresh_every": 10}
    shorthand = study_import(data=_da_file("alloc-short", n_items=3, allocation="adaptive"))
    assert shorthand.allocation["policy"] == "adaptive" and shorthand.allocation["warmup"] == 20
    uniform = study_import(data=_da_file("alloc-uniform", n_items=3, allocation="uniform"))
    assert uniform.allocation == {}
    default = study_import(data=_da_file("alloc-default", n_items=3))
    assert default.allocation == {} and default.allocation_state == {}


def test_the_live_defaults_are_the_replay_s() -> None:
    # The replay models the live hand-out: the same warm-up and the same refresh_every unless told otherwise.
    assert DEFAULTS["warmup"] == DEFAULT_WARMUP and DEFAULTS["refresh_every"] == DEFAULT_REFRESH_EVERY


@pytest.mark.parametrize("value, named", [
    ("greedy", "settings.allocation: 'greedy' is not one of uniform, adaptive"),
    ({"policy": "adaptive", "alpha": 1.5}, "settings.allocation.alpha"),
    ({"policy": "adaptive", "min_effect": 0}, "settings.allocation.min_effect"),
    ({"policy": "adaptive", "warmup": -1}, "settings.allocation.warmup"),
    ({"policy": "adaptive", "target": "best"}, "settings.allocation.target"),
    ({"policy": "adaptive", "close_when_settled": "yes"}, "settings.allocation.close_when_settled"),
    ({"policy": "adaptive", "budget": 3}, "settings.allocation: unknown key(s) ['budget']"),
    ({"alpha": 0.05}, "settings.allocation.policy"),
    ({"policy": "adaptive", "refresh_every": 0}, "settings.allocation.refresh_every: 0 must be a whole number of "
                                                 "judgments, 1 to 1000"),
    ({"policy": "adaptive", "refresh_every": 1001}, "settings.allocation.refresh_every: 1001 must be"),
    ({"policy": "adaptive", "refresh_every": 2.5}, "settings.allocation.refresh_every: 2.5 must be"),
    ({"policy": "adaptive", "refresh_every": True}, "settings.allocation.refresh_every: True must be"),
    ({"policy": "uniform", "refresh_every": 5}, "settings.allocation: alpha, min_effect, warmup, target, "
                                                "close_when_settled and refresh_every apply"),
    ({"policy": "uniform", "alpha": 0.05}, "settings.allocation: alpha, min_effect, warmup, target, close_when_settled and refresh_every apply"),
    (3, "settings.allocation: must be"),
])
def test_study_file_refuses_a_bad_allocation_naming_the_field(value: Any, named: str) -> None:
    with pytest.raises(StudyFileError) as caught:
        study_import(data=_da_file("alloc-bad", n_items=3, allocation=value))
    assert any(named in error for error in caught.value.errors), caught.value.errors
    assert not Study.objects.filter(slug="alloc-bad").exists()


def test_adaptive_needs_a_score_per_candidate() -> None:
    with pytest.raises(StudyFileError) as caught:
        study_import(data=_da_file("alloc-judgment", n_items=3, protocol="judgment", allocation="adaptive",
                                   labels=["ok", "wrong"]))
    assert "settings.allocation: adaptive allocation needs a score per candidate (esa, pairwise, mqm) or an order " \
           "of the candidates (ranking, choice); a judgment study has none" in caught.value.errors, caught.value.errors
    assert not Study.objects.filter(slug="alloc-judgment").exists()
    mqm = study_import(data=_da_file("alloc-mqm", n_items=3, protocol="mqm", allocation="adaptive"))
    assert mqm.allocation["policy"] == "adaptive"


def test_min_effect_is_in_the_study_s_score_points() -> None:
    # MQM scores lie in [−25, 0]: a minimum effect of 30 points cannot be; for DA (0–100) it can.
    with pytest.raises(StudyFileError) as caught:
        study_import(data=_da_file("alloc-mqm-effect", n_items=3, protocol="mqm",
                                   allocation={"policy": "adaptive", "min_effect": 30}))
    assert any(e.startswith("settings.allocation.min_effect: 30 must be null or a number above 0 and below 25")
               for e in caught.value.errors), caught.value.errors
    assert study_import(data=_da_file("alloc-da-effect", n_items=3, allocation={
        "policy": "adaptive", "min_effect": 30})).allocation["min_effect"] == 30


def test_model_clean_names_the_field_and_normalises_the_shorthand() -> None:
    study = study_import(data=_da_file("alloc-clean", n_items=3))
    study.allocation = {"policy": "adaptive", "target": "middle"}
    with pytest.raises(ValidationError) as caught:
        study.full_clean()
    assert "allocation" in caught.value.message_dict
    study.allocation = "adaptive"
    study.full_clean()
    assert study.allocation["policy"] == "adaptive" and study.allocation["target"] == "all"
    judgment = study_import(data=_da_file("alloc-clean-judgment", n_items=3, protocol="judgment", labels=["ok", "wrong"]))
    judgment.allocation = "adaptive"
    with pytest.raises(ValidationError) as caught:
        judgment.full_clean()
    assert "or an order of the candidates (ranking, choice); a judgment study has none" \
        in " ".join(caught.value.message_dict["allocation"])
    ranking = study_import(data=_da_file("alloc-clean-rank", n_items=3, protocol="ranking"))
    ranking.allocation = "adaptive"
    ranking.full_clean()
    assert ranking.allocation["policy"] == "adaptive"


# --- the live study ----------------------------------------------------------------------------------------

def _invariants(study: Study) -> None:
    """No item twice to one annotator; each item's count is exactly its counted assignments, never over the
    redundancy; an excluded annotator's assignments are not counted."""
    pairs = Counter(Assignment.objects.filter(item__study=study).values_list("annotator_id", "item_id"))
    assert max(pairs.values()) == 1
    counted = Counter(Assignment.objects.filter(item__study=study, annotator__excluded=False,
                                                status__in=[AssignmentStatus.PENDING, AssignmentStatus.DONE])
                      .values_list("item_id", flat=True))
    for item in Item.objects.filter(study=study):
        assert item.n_assigned == counted.get(item.pk, 0), item.external_id
        assert item.n_assigned <= study.redundancy
        assert item.is_open == (item.n_assigned < study.redundancy)
    study.refresh_from_db()
    assert study.n_open_items == Item.objects.filter(study=study, is_open=True).count()
    assert Judgment.objects.filter(assignment__item__study=study, is_current=True).values("assignment").distinct().count() \
        == Judgment.objects.filter(assignment__item__study=study, is_current=True).count()


def test_adaptive_study_settles_before_every_item_is_judged() -> None:
    study = study_import(status="open", data=_da_file(
        "alloc-live", n_items=150, redundancy=2,
        allocation={"policy": "adaptive", "warmup": 10, "target": "top"}))
    annotators = services.annotators_create(study=study, count=6)
    stored = _run(study, annotators, random.Random(1))
    study.refresh_from_db()
    state = study.allocation_state
    assert state["settled"] is True
    assert stored < 150 * 2, "settled before every item had its redundancy"
    assert stored == state["judgments"] >= 10
    decided = {(p["a"], p["b"]): p["decision"] for p in state["pairs"]}
    assert decided[("reference", "sys1")] == "second better"
    assert decided[("sys1", "sys2")] == "first better"
    assert set(state["out_of_top"]) == {"reference", "sys2"}
    # Settled: nobody gets new work, and the items left stay open (never filled behind the counts' back).
    late = services.annotators_create(study=study)[0]
    assert services.assignment_next(annotator=Annotator.objects.get(pk=late.pk)) is None
    assert study.n_open_items > 0
    _invariants(study)


def test_all_pairs_with_a_minimum_effect_settle_the_level_pair_as_indistinguishable() -> None:
    study = study_import(status="open", data=_da_file(
        "alloc-all", n_items=150, redundancy=2, allocation={"policy": "adaptive", "warmup": 10, "min_effect": 10}))
    stored = _run(study, services.annotators_create(study=study, count=6), random.Random(1))
    study.refresh_from_db()
    state = study.allocation_state
    assert state["settled"] is True and stored == state["judgments"] < 150 * 2
    decided = {(p["a"], p["b"]): p["decision"] for p in state["pairs"]}
    assert decided == {("reference", "sys1"): "second better", ("reference", "sys2"): "indistinguishable",
                       ("sys1", "sys2"): "first better"}
    _invariants(study)


def test_all_pairs_without_a_minimum_effect_never_settle_two_level_systems() -> None:
    study = study_import(status="open", data=_da_file(
        "alloc-level", n_items=40, allocation={"policy": "adaptive", "warmup": 5}))
    stored = _run(study, services.annotators_create(study=study, count=2), random.Random(1))
    study.refresh_from_db()
    assert stored == 40 and study.allocation_state["settled"] is False
    assert study.allocation_state["open_pairs"] == [["reference", "sys2"]]
    assert study.n_open_items == 0
    _invariants(study)


def test_uniform_study_hands_out_every_item_to_its_redundancy() -> None:
    study = study_import(status="open", data=_da_file("alloc-uniform-live", n_items=30, redundancy=2))
    stored = _run(study, services.annotators_create(study=study, count=4), random.Random(2))
    study.refresh_from_db()
    assert stored == 30 * 2 and study.allocation_state == {} and study.n_open_items == 0
    _invariants(study)


def test_excluded_annotators_judgments_leave_the_sequences() -> None:
    study = study_import(status="open", data=_da_file(
        "alloc-excl", n_items=40, allocation={"policy": "adaptive", "warmup": 5, "refresh_every": 1}))
    annotators = services.annotators_create(study=study, count=2)
    rng = random.Random(3)
    for _ in range(6):
        annotator = Annotator.objects.select_related("study").get(pk=annotators[0].pk)
        assignment = services.assignment_next(annotator=annotator)
        assert assignment is not None
        services.judgment_submit(assignment=assignment, payload=_answer(assignment, rng))
    study.refresh_from_db()
    assert study.allocation_state["warmed_up"]
    assert allocation_state(Study.objects.get(pk=study.pk), incremental=True)["judgments"] == 6
    from annotation.handout.exclusion import annotator_exclude
    annotator_exclude(annotator=Annotator.objects.get(pk=annotators[0].pk), reason="test")
    assert allocation_refresh(Study.objects.get(pk=study.pk))["judgments"] == 0
    _invariants(study)


def test_after_the_warm_up_only_items_of_open_pairs_go_out() -> None:
    # Items 0–9 hold reference, sys1, sys2; items 10–29 only reference and sys2 (the level pair).
    data = _da_file("alloc-pairs", n_items=30, allocation={"policy": "adaptive", "warmup": 0})
    for item in data["items"][10:]:
        item["candidates"] = [c for c in item["candidates"] if c["system"] != "sys1"]
    study = study_import(status="open", data=data)
    study.allocation_state = {"judgments": 0, "warmed_up": True, "settled": False,
                              "open_pairs": [["reference", "sys1"]]}
    study.save(update_fields=["allocation_state"])
    annotator = services.annotators_create(study=study)[0]
    seen = set()
    while (assignment := services.assignment_next(annotator=Annotator.objects.select_related("study")
                                                  .get(pk=annotator.pk))) is not None:
        seen.add(int(assignment.item.external_id.split("-")[1]))
        # An answer with scores keeps the stored state as set here only if no refresher rewrites it: skip the
        # answer and take the item as handed out (it stays the annotator's, so mark it done by hand).
        Assignment.objects.filter(pk=assignment.pk).update(status=AssignmentStatus.DONE)
    assert seen == set(range(10))
    _invariants(study)


def test_a_copy_keeps_the_setting_and_starts_without_state() -> None:
    study = study_import(status="open", data=_da_file(
        "alloc-orig", n_items=60, allocation={"policy": "adaptive", "warmup": 5, "target": "top"}))
    _run(study, services.annotators_create(study=study, count=2), random.Random(6))
    study.refresh_from_db()
    assert study.allocation_state["settled"] is True
    copy = study_copy(study=study, slug="alloc-orig-copy")
    assert copy.allocation == study.allocation and copy.allocation_state == {}


def test_a_refresh_that_read_fewer_judgments_never_replaces_a_newer_state() -> None:
    study = study_import(status="open", data=_da_file("alloc-race", n_items=20, allocation="adaptive"))
    annotator = services.annotators_create(study=study)[0]
    rng = random.Random(7)
    assignment = services.assignment_next(annotator=Annotator.objects.select_related("study").get(pk=annotator.pk))
    services.judgment_submit(assignment=assignment, payload=_answer(assignment, rng))
    stale = allocation_state(Study.objects.get(pk=study.pk))  # read with one judgment stored
    assignment = services.assignment_next(annotator=Annotator.objects.select_related("study").get(pk=annotator.pk))
    services.judgment_submit(assignment=assignment, payload=_answer(assignment, rng))
    allocation_refresh(Study.objects.get(pk=study.pk))
    assert Study.objects.get(pk=study.pk).allocation_state["judgments"] == 2
    assert allocation_state_store(Study.objects.get(pk=study.pk), stale) is False
    assert Study.objects.get(pk=study.pk).allocation_state["judgments"] == 2
    current = allocation_state(Study.objects.get(pk=study.pk))
    assert allocation_state_store(Study.objects.get(pk=study.pk), current) is True  # the same watermark writes
    assert allocation_refresh(Study.objects.get(pk=study.pk))["judgments"] == 2


def test_what_the_hand_out_reads_is_current_after_each_judgment() -> None:
    study = study_import(status="open", data=_da_file("alloc-lag", n_items=150, allocation={
        "policy": "adaptive", "warmup": 5, "target": "top", "refresh_every": 1}))
    annotator = services.annotators_create(study=study)[0]
    rng = random.Random(9)
    writes = stored = 0
    while (assignment := services.assignment_next(
            annotator=Annotator.objects.select_related("study").get(pk=annotator.pk))) is not None:
        stored += 1
        services.judgment_submit(assignment=assignment, payload=_answer(assignment, rng))
        kept = Study.objects.get(pk=study.pk).allocation_state
        full = allocation_state(Study.objects.get(pk=study.pk))
        assert (kept["warmed_up"], kept["settled"], kept["open_pairs"]) == \
            (full["warmed_up"], full["settled"], full["open_pairs"]), stored
        writes += kept["judgments"] == stored
    # Written when the hand-out's view changed (the first judgment, the warm-up's end, decisions), not every time.
    assert 3 <= writes < stored < 150 and kept["settled"]
    assert allocation_refresh(Study.objects.get(pk=study.pk))["judgments"] == stored


@pytest.mark.parametrize("every", [4, 10])
def test_the_state_is_refreshed_at_every_k_th_judgment_and_reads_every_judgment(every: int) -> None:
    # refresh_every K: the hook looks at the judgments when the new judgment's id is K or more above the stored
    # watermark (here, one study alone, its judgments have consecutive ids: at judgments 1, K + 1, 2K + 1, …), and
    # then reads every judgment since: the state equals the full recomputation's there; in between nothing
    # is written (the hand-out reads the state of the last refresh).
    study = study_import(status="open", data=_da_file("alloc-every", n_items=150, allocation={
        "policy": "adaptive", "warmup": 5, "target": "top", "refresh_every": every}))
    annotators = services.annotators_create(study=study, count=2)
    rng = random.Random(9)
    refreshed_at = []
    stored = 0
    before = Study.objects.get(pk=study.pk).allocation_state
    while (assignment := services.assignment_next(annotator=Annotator.objects.select_related("study").get(
            pk=annotators[stored % 2].pk))) is not None:
        judgment, _ = services.judgment_submit(assignment=assignment, payload=_answer(assignment, rng))
        stored += 1
        kept = Study.objects.get(pk=study.pk).allocation_state
        due = not before or judgment.pk - before["watermark"] >= every
        if due:
            refreshed_at.append(stored)
            full = allocation_state(Study.objects.get(pk=study.pk))
            assert kept["watermark"] == judgment.pk and kept["judgments"] == stored  # none skipped
            assert kept == full, stored
        else:
            assert kept == before, stored  # not refreshed before the K-th judgment
        before = kept
    assert refreshed_at == list(range(1, stored + 1, every))
    # Settled, seen at a refresh: the hand-out stopped there, up to K − 1 judgments after the sequences decided.
    assert kept["settled"] and stored < 150
    assert allocation_refresh(Study.objects.get(pk=study.pk))["judgments"] == stored
    _invariants(study)


def _mqm_answer(assignment: Assignment, rng: random.Random) -> dict[str, Any]:
    """sys1 has no error; the others one major error (5 points) and a minor one half the time."""
    out = {}
    for cand in assignment.item.candidates.all():
        spans = []
        if cand.system != "sys1":
            spans.append({"start": 0, "end": 4, "severity": "major", "category": "Accuracy/Mistranslation"})
            if rng.random() < 0.5:
                spans.append({"start": 5, "end": 8, "severity": "minor", "category": "Fluency/Grammar"})
        out[cand.public_id] = {"spans": spans}
    return {"annotations": out}


def test_an_adaptive_mqm_study_settles_on_its_capped_error_scores() -> None:
    study = study_import(status="open", data=_da_file(
        "alloc-mqm-live", n_items=80, protocol="mqm", allocation={"policy": "adaptive", "warmup": 5, "target": "top"}))
    annotators = services.annotators_create(study=study, count=3)
    rng = random.Random(10)
    stored = 0
    while True:
        annotator = Annotator.objects.select_related("study").get(pk=annotators[stored % 3].pk)
        assignment = services.assignment_next(annotator=annotator)
        if assignment is None:
            break
        services.judgment_submit(assignment=assignment, payload=_mqm_answer(assignment, rng))
        stored += 1
    study.refresh_from_db()
    state = study.allocation_state
    assert state["scale"] == [-25.0, 0.0] and state["settled"] is True and stored < 80
    decided = {(p["a"], p["b"]): p for p in state["pairs"]}
    assert decided[("sys1", "sys2")]["decision"] == "first better"
    assert 5.0 <= decided[("sys1", "sys2")]["mean"] <= 6.0  # 5 points of Major, half a point of minor on average
    _invariants(study)


def test_a_failing_refresh_never_costs_the_annotator_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    from annotation.handout import allocation

    def broken(study: Study) -> None:
        raise RuntimeError("statistics down")

    monkeypatch.setattr(allocation, "_refreshers", [broken])
    study = study_import(data=_da_file("fail", n_items=6, allocation="adaptive"), status="open")
    annotator = services.annotators_create(study=study, count=1)[0]
    assignment = services.assignment_next(annotator=annotator)
    assert assignment is not None
    judgment, created = services.judgment_submit(assignment=assignment, payload=_answer(assignment, random.Random(1)))
    assert created and Judgment.objects.filter(pk=judgment.pk, is_current=True).exists()


def test_a_study_set_to_close_when_settled_closes_once_with_the_record() -> None:
    from studies.access.audit import study_events
    from studies.lifecycle.stages import study_status_set

    study = study_import(status="open", data=_da_file("alloc-close", n_items=150, redundancy=2, allocation={
        "policy": "adaptive", "warmup": 10, "target": "top", "close_when_settled": True}))
    stored = _run(study, services.annotators_create(study=study, count=4), random.Random(1))
    study.refresh_from_db()
    assert study.status == "closed" and study.allocation_state["settled"] is True and stored < 300
    record = study.provenance["closed_when_settled"]
    assert record["judgments"] == study.allocation_state["judgments"] and record["target"] == "top"
    assert record["alpha"] == 0.05 and set(record["out_of_top"]) == {"reference", "sys2"}
    decided = {(p["a"], p["b"]): p for p in record["pairs"]}
    assert decided[("sys1", "sys2")]["decision"] == "first better"
    assert decided[("sys1", "sys2")]["low"] >= 0 and decided[("sys1", "sys2")]["observations"] > 0
    closing = [e for e in study_events(study) if e.action == "status_changed"]
    assert [(e.details["after"], e.details["via"]) for e in closing] == [("closed", "allocation")]
    from evaluators.reports import paper
    from evaluators.reports.study_stats import study_report
    text = paper.methods_paragraph(study_report(study, n_boot=20))
    assert "The study closed itself when every pair of the top cluster was settled" in text
    assert f"after {record['judgments']} judgments: " in text and "sys1 better than sys2 (" in text
    # Re-opened by the researcher: it stays open (the record is kept), however often the state is refreshed.
    study_status_set(study=study, status="open")
    allocation_refresh(Study.objects.get(pk=study.pk))
    again = Study.objects.get(pk=study.pk)
    assert again.status == "open" and again.provenance["closed_when_settled"] == record


def test_without_the_setting_a_settled_study_stays_open() -> None:
    study = study_import(status="open", data=_da_file("alloc-noclose", n_items=60, allocation={
        "policy": "adaptive", "warmup": 5, "target": "top"}))
    _run(study, services.annotators_create(study=study, count=2), random.Random(6))
    study.refresh_from_db()
    assert study.allocation_state["settled"] is True and study.status == "open"
    assert "closed_when_settled" not in (study.provenance or {})
