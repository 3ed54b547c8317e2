"""Per-annotator quality control: spam-check rules per protocol, the reference control, speed, exclusion."""
from __future__ import annotations

import datetime as dt
from typing import Callable

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Annotator, Assignment, Judgment
from annotation.quality.checks import annotator_quality, quality_sorted, spam_check_failed, study_quality
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from annotation.handout.exclusion import annotator_exclude, annotator_include, study_apply_auto_exclusion
from studies.importing.study_file import study_import
from studies.models import Candidate
from tests.factories import make_study, study_file

pytestmark = pytest.mark.django_db

Decide = Callable[[list[Candidate], bool], dict]


def took(assignment, seconds: float) -> None:
    """The server handed the item out ``seconds`` ago (what the server clock measures an answer from)."""
    opened = timezone.now() - dt.timedelta(seconds=seconds)
    Assignment.objects.filter(pk=assignment.pk).update(opened_at=opened)


def work_through(annotator: Annotator, decide: Decide, *, seconds: float | None = None) -> list[tuple[str, bool]]:
    """Answer every item the annotator gets; decide(screen-ordered candidates, is_spam item) -> payload."""
    seen = []
    while (assignment := assignment_next(annotator=annotator)) is not None:
        candidates = ordered_candidates(assignment)
        payload = decide(candidates, assignment.item.is_spam)
        if seconds is not None:
            took(assignment, seconds)
        judgment_submit(assignment=assignment, payload=payload)
        seen.append((assignment.item.external_id, assignment.item.is_spam))
    return seen


def ranking_study(**settings):
    return make_study(slug="rank", n_items=10, n_candidates=3,
                      settings={"spam_rate": 0.3, "seed": 5, "allow_ties": True, "redundancy": 1, **settings})


def by_system(candidates):
    return {c.system: c for c in candidates}


# --- the failure rule of each protocol ----------------------------------------

def test_ranking_spam_tied_with_a_real_candidate_fails():
    study = ranking_study()
    annotator = annotators_create(study=study)[0]

    def tie_spam_with_worst_real(cands, is_spam):  # reference 1, both system outputs 2
        return {"ranks": {c.public_id: 1 if c.is_reference else 2 for c in cands}}

    work_through(annotator, tie_spam_with_worst_real)
    q = annotator_quality(annotator=annotator)
    assert q.spam_seen == 3
    assert q.spam_failed == 3


def test_ranking_spam_strictly_last_passes_and_ranked_first_fails():
    study = ranking_study()
    last, first = annotators_create(study=study, count=2)
    study.redundancy = 2
    study.save()

    def spam_last(cands, is_spam):
        order = sorted(cands, key=lambda c: c.is_spam)
        return {"ranks": {c.public_id: k + 1 for k, c in enumerate(order)}}

    def spam_first(cands, is_spam):
        order = sorted(cands, key=lambda c: not c.is_spam)
        return {"ranks": {c.public_id: k + 1 for k, c in enumerate(order)}}

    work_through(last, spam_last)
    work_through(first, spam_first)
    assert (annotator_quality(annotator=last).spam_seen, annotator_quality(annotator=last).spam_failed) == (3, 0)
    assert (annotator_quality(annotator=first).spam_seen, annotator_quality(annotator=first).spam_failed) == (3, 3)


def test_ranking_rule_directly():
    study = ranking_study()
    assert spam_check_failed(study=study, answer={"ranks": {"1": 1, "2": 2, "3": 3}}, spam_pk=3) is False
    assert spam_check_failed(study=study, answer={"ranks": {"1": 1, "2": 3, "3": 3}}, spam_pk=3) is True
    assert spam_check_failed(study=study, answer={"ranks": {"1": 1, "2": 3, "3": 2}}, spam_pk=3) is True
    assert spam_check_failed(study=study, answer={"ranks": {"1": 1, "2": 1, "3": 1}}, spam_pk=3) is True


@pytest.mark.parametrize("answer,fails", [("spam", True), ("real", False), ("tie", True), ("neither", False),
                                          ("invalid", False)])
def test_choice_rule(answer, fails):
    study = make_study(slug="ch", protocol="choice", n_items=10, n_candidates=2,
                       settings={"spam_rate": 0.2, "seed": 3, "options": ["neither", "tie", "invalid"], "redundancy": 1})
    annotator = annotators_create(study=study)[0]

    def decide(cands, is_spam):
        if answer == "spam":
            return {"choice": next((c for c in cands if c.is_spam), cands[0]).public_id}
        if answer == "real":
            return {"choice": next(c for c in cands if not c.is_spam).public_id}
        return {"choice": answer}

    work_through(annotator, decide)
    q = annotator_quality(annotator=annotator)
    assert q.spam_seen == 2
    assert q.spam_failed == (2 if fails else 0)


def judgment_study(multi_label=False):
    labels = ["no error", "sentence-level", "document-level"] if multi_label else ["correct", "incorrect"]
    data = study_file(slug="jd", protocol="judgment", n_items=10, n_candidates=1,
                      settings={"labels": labels, "multi_label": multi_label, "spam_rate": 0.2, "seed": 2,
                                "redundancy": 1})
    for item in data["items"]:
        item["candidates"][0].update(system="mt", is_reference=False)
    return study_import(status="open", data=data)


@pytest.mark.parametrize("label,fails", [("correct", True), ("incorrect", False)])
def test_judgment_rule_first_label_on_a_scrambled_candidate_fails(label, fails):
    study = judgment_study()
    annotator = annotators_create(study=study)[0]
    work_through(annotator, lambda cands, is_spam: {"label": label})
    q = annotator_quality(annotator=annotator)
    assert (q.spam_seen, q.spam_failed) == (2, 2 if fails else 0)
    assert q.reference_first_rate is None  # no reference control in a judgment study


@pytest.mark.parametrize("labels,fails", [(["no error"], True), (["no error", "document-level"], True),
                                          (["sentence-level"], False)])
def test_multi_label_rule(labels, fails):
    study = judgment_study(multi_label=True)
    annotator = annotators_create(study=study)[0]
    work_through(annotator, lambda cands, is_spam: {"labels": labels})
    assert annotator_quality(annotator=annotator).spam_failed == (2 if fails else 0)


def test_only_the_current_revision_counts():
    study = make_study(slug="rev", protocol="choice", n_items=10, n_candidates=2,
                       settings={"spam_rate": 0.1, "seed": 3, "options": ["invalid"], "redundancy": 1})
    annotator = annotators_create(study=study)[0]
    spam_assignment = None
    while (assignment := assignment_next(annotator=annotator)) is not None:
        cands = ordered_candidates(assignment)
        scrambled = next((c for c in cands if c.is_spam), None)
        judgment_submit(assignment=assignment, payload={"choice": (scrambled or cands[0]).public_id})
        if scrambled is not None:
            spam_assignment = assignment
    assert annotator_quality(annotator=annotator).spam_failed == 1
    judgment_submit(assignment=spam_assignment, payload={"choice": "invalid"})  # a revision
    assert Judgment.objects.filter(assignment=spam_assignment).count() == 2
    q = annotator_quality(annotator=annotator)
    assert (q.spam_seen, q.spam_failed, q.n_judgments) == (1, 0, 11)


# --- the reference control, speed -------------------------------------------------

def test_reference_first_rate_ranking_and_choice():
    study = ranking_study(spam_rate=0.0)
    annotator = annotators_create(study=study)[0]
    calls = {"n": 0}

    def reference_best_on_even_items(cands, is_spam):
        calls["n"] += 1
        ref_first = calls["n"] % 2 == 0
        order = sorted(cands, key=lambda c: (not c.is_reference) if ref_first else c.is_reference)
        return {"ranks": {c.public_id: k + 1 for k, c in enumerate(order)}}

    work_through(annotator, reference_best_on_even_items)
    assert annotator_quality(annotator=annotator).reference_first_rate == 0.5

    # a tie at the top is not an outright win
    tie_annotator = annotators_create(study=study, count=1)[0]
    study.redundancy = 2
    study.save()
    work_through(tie_annotator, lambda cands, is_spam: {"ranks": {c.public_id: 1 for c in cands}})
    assert annotator_quality(annotator=tie_annotator).reference_first_rate == 0.0

    choice = make_study(slug="refch", protocol="choice", n_items=4, n_candidates=2, settings={"redundancy": 1})
    picker = annotators_create(study=choice)[0]
    work_through(picker, lambda cands, is_spam: {"choice": next(c for c in cands if c.is_reference).public_id})
    assert annotator_quality(annotator=picker).reference_first_rate == 1.0


def test_median_seconds_and_fast_answers():
    study = make_study(slug="speed", protocol="choice", n_items=3, n_candidates=2,
                       settings={"redundancy": 1, "min_seconds": 3})
    annotator = annotators_create(study=study)[0]
    durations = iter([1.0, 2.5, 10.0])
    while (assignment := assignment_next(annotator=annotator)) is not None:
        took(assignment, next(durations))
        # The client claims a minute on every item: the rule reads the server's clock, not this.
        start = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        judgment_submit(assignment=assignment, payload={
            "choice": ordered_candidates(assignment)[0].public_id, "client_started_at": start.isoformat(),
            "client_submitted_at": (start + dt.timedelta(seconds=60)).isoformat()})
    q = annotator_quality(annotator=annotator)
    assert q.median_seconds == pytest.approx(2.5, abs=0.5)
    assert q.fast_answers == 2
    assert q.n_judgments == 3


def test_annotator_without_judgments_has_no_rates():
    study = make_study(slug="empty", n_items=2)
    (q,) = study_quality(study=study, annotators=annotators_create(study=study))
    assert (q.n_judgments, q.spam_seen, q.spam_failed) == (0, 0, 0)
    assert q.spam_failed_share is None and q.reference_first_rate is None and q.median_seconds is None


def test_constant_number_of_queries():
    study = make_study(slug="q", protocol="choice", n_items=12, n_candidates=2, settings={"spam_rate": 0.2, "redundancy": 6})
    annotators = annotators_create(study=study, count=6)
    for a in annotators[:2]:
        work_through(a, lambda cands, is_spam: {"choice": cands[0].public_id})
    with CaptureQueriesContext(connection) as few:
        study_quality(study=study)
    for a in annotators[2:]:
        work_through(a, lambda cands, is_spam: {"choice": cands[1].public_id})
    with CaptureQueriesContext(connection) as many:
        rows = study_quality(study=study)
    assert len(few) == len(many) <= 3
    assert sum(r.n_judgments for r in rows) == 6 * 14  # 12 real items and round(0.2 × 12) = 2 spam items


def test_sorting_puts_missing_values_last():
    study = make_study(slug="sort", protocol="choice", n_items=4, n_candidates=2, settings={"redundancy": 2})
    a, b, c = annotators_create(study=study, count=3)
    work_through(a, lambda cands, is_spam: {"choice": cands[0].public_id}, seconds=9)
    work_through(b, lambda cands, is_spam: {"choice": cands[0].public_id}, seconds=4)
    rows = study_quality(study=study)
    assert [r.annotator for r in quality_sorted(rows, sort="median_seconds", descending=False)] == [b.code, a.code, c.code]
    assert [r.annotator for r in quality_sorted(rows, sort="median_seconds", descending=True)] == [a.code, b.code, c.code]
    assert [r.annotator for r in quality_sorted(rows, sort="nonsense", descending=True)] == [a.code, b.code, c.code]


# --- exclusion ----------------------------------------------------------------

def test_exclude_needs_a_reason_and_put_back_keeps_everything():
    study = make_study(slug="ex", protocol="choice", n_items=3, n_candidates=2, settings={"redundancy": 1})
    annotator = annotators_create(study=study)[0]
    work_through(annotator, lambda cands, is_spam: {"choice": cands[0].public_id})
    with pytest.raises(ValidationError) as err:
        annotator_exclude(annotator=annotator, reason="   ")
    assert "reason" in err.value.message_dict
    annotator.refresh_from_db()
    assert not annotator.excluded
    annotator_exclude(annotator=annotator, reason="clicked through")
    annotator.refresh_from_db()
    assert annotator.excluded and annotator.exclusion_reason == "clicked through" and annotator.excluded_at
    q = annotator_quality(annotator=annotator)
    assert q.excluded and q.exclusion_reason == "clicked through" and q.n_judgments == 3
    annotator_include(annotator=annotator)
    annotator.refresh_from_db()
    assert not annotator.excluded and annotator.exclusion_reason == "" and annotator.excluded_at is None
    assert Judgment.objects.filter(assignment__annotator=annotator).count() == 3


def test_auto_exclusion_after_a_failed_spam_check_stops_work():
    study = make_study(slug="auto", protocol="choice", n_items=20, n_candidates=2,
                       settings={"spam_rate": 0.1, "seed": 4, "redundancy": 2, "auto_exclude_share": 0.4,
                                 "auto_exclude_min_checks": 1})
    careless, careful = annotators_create(study=study, count=2)
    seen = work_through(careless, lambda cands, is_spam: {"choice": next((c for c in cands if c.is_spam), cands[0]).public_id})
    careless.refresh_from_db()
    assert careless.excluded
    assert careless.exclusion_reason == "auto: failed 1 of 1 spam checks"
    assert seen[-1][1] is True  # stopped right after the failed check
    assert len(seen) < 22
    work_through(careful, lambda cands, is_spam: {"choice": next(c for c in cands if not c.is_spam).public_id})
    careful.refresh_from_db()
    assert not careful.excluded


def test_study_rule_applied_on_demand():
    study = make_study(slug="rule", protocol="choice", n_items=20, n_candidates=2,
                       settings={"spam_rate": 0.2, "seed": 4, "redundancy": 3})
    a, b, c = annotators_create(study=study, count=3)
    work_through(a, lambda cands, is_spam: {"choice": next((x for x in cands if x.is_spam), cands[0]).public_id})
    work_through(b, lambda cands, is_spam: {"choice": next(x for x in cands if not x.is_spam).public_id})
    assert study_apply_auto_exclusion(study=study) == []  # no rule set
    study.auto_exclude_share = 0.5
    study.save()
    excluded = study_apply_auto_exclusion(study=study)
    assert [x.code for x in excluded] == [a.code]
    a.refresh_from_db()
    assert a.exclusion_reason == "auto: failed 4 of 4 spam checks"
    assert study_apply_auto_exclusion(study=study) == []  # already excluded: nothing new
