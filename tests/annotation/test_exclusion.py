"""Exclusion that keeps the study whole (issue 8, item 4): through the services, the admin, the import and the API."""
from __future__ import annotations

from collections import Counter

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Annotator, Assignment, AssignmentStatus, Judgment
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from annotation.handout.exclusion import annotator_apply_auto_exclusion, annotator_exclude, annotator_include
from studies.importing.study_file import StudyFileError, study_import
from studies.models import Item, Study
from annotation.dashboard.progress import study_list, study_progress
from tests.conftest import annotator_client
from tests.factories import make_study, study_file

pytestmark = pytest.mark.django_db


def judge(assignment, *, spam_first: bool = False) -> None:
    cands = ordered_candidates(assignment)
    if spam_first:
        cands = sorted(cands, key=lambda c: not c.is_spam)
    judgment_submit(assignment=assignment, payload={"ranks": {c.public_id: k + 1 for k, c in enumerate(cands)}})


def work_through(annotator, limit: int = 1000, **kwargs) -> list[Item]:
    items: list[Item] = []
    while len(items) < limit and (assignment := assignment_next(annotator=annotator)) is not None:
        judge(assignment, **kwargs)
        items.append(assignment.item)
    return items


def counted_per_item(study) -> Counter:
    return Counter(Assignment.objects.filter(item__study=study, annotator__excluded=False,
                                             status=AssignmentStatus.DONE).values_list("item_id", flat=True))


def test_an_excluded_annotators_items_go_to_a_new_annotator_and_the_study_reaches_full_redundancy():
    study = make_study(slug="whole", n_items=12, documents=3, settings={"redundancy": 2})
    a, b, c = annotators_create(study=study, count=3)
    assert len(work_through(a)) == 12 and len(work_through(b)) == 12
    assert not work_through(c)  # the study is full
    annotator_exclude(annotator=a, reason="clicked through")
    study.refresh_from_db()
    assert study.n_open_items == 12 and set(study.items.values_list("n_assigned", flat=True)) == {1}
    assert len(work_through(c)) == 12  # the newcomer gets every reopened item
    per_item = counted_per_item(study)
    assert len(per_item) == 12 and set(per_item.values()) == {2}
    assert Judgment.objects.filter(assignment__annotator=a).count() == 12  # kept
    assert study_progress(study)["n_done"] == 24 == study_progress(study)["n_needed"]
    study.refresh_from_db()
    assert study.n_open_items == 0


def test_putting_back_restores_the_count_and_reports_items_over_the_redundancy():
    study = make_study(slug="back", n_items=6, settings={"redundancy": 1})
    a, b = annotators_create(study=study, count=2)
    work_through(a, limit=4)
    annotator_exclude(annotator=a, reason="r")
    annotator_exclude(annotator=a, reason="again")  # idempotent: counts move once
    assert sorted(study.items.values_list("n_assigned", flat=True)) == [0] * 6
    work_through(b, limit=3)  # three of a's four items (or others) handed out again
    over = annotator_include(annotator=a)
    assert annotator_include(annotator=a) == over  # idempotent too
    n_assigned = dict(study.items.values_list("pk", "n_assigned"))
    a_items = set(a.assignments.values_list("item_id", flat=True))
    b_items = set(b.assignments.values_list("item_id", flat=True))
    for pk, n in n_assigned.items():
        assert n == (pk in a_items) + (pk in b_items)
    assert over == len(a_items & b_items) == study_progress(study)["n_over_redundancy"]
    assert Assignment.objects.filter(item__study=study).count() == 7  # nothing deleted
    study.refresh_from_db()
    assert study.n_open_items == sum(1 for n in n_assigned.values() if n < 1)


def test_progress_counts_only_judgments_that_count():
    study = make_study(slug="prog", n_items=5, settings={"redundancy": 2})
    a, b = annotators_create(study=study, count=2)
    work_through(a)
    work_through(b, limit=2)
    assert study_progress(study)["n_done"] == 7
    annotator_exclude(annotator=b, reason="r")
    row = study_list(queryset=Study.objects.filter(pk=study.pk)).get()
    assert row.n_done == 5 and study_progress(study)["n_done"] == 5


def test_a_pending_item_of_an_excluded_annotator_is_not_uncounted_twice_when_released():
    from datetime import timedelta

    from django.utils import timezone

    from annotation.handout.services import assignments_release_stale
    study = make_study(slug="rel", n_items=2, settings={"redundancy": 1, "reservation_minutes": 10})
    a = annotators_create(study=study)[0]
    held = assignment_next(annotator=a)
    annotator_exclude(annotator=a, reason="r")
    Assignment.objects.filter(pk=held.pk).update(opened_at=timezone.now() - timedelta(minutes=20))
    assert assignments_release_stale(study=study) == 1
    assert set(study.items.values_list("n_assigned", "is_open")) == {(0, True)}
    study.refresh_from_db()
    assert study.n_open_items == 2
    judge(held)  # the late answer of an excluded annotator is kept, and does not count
    assert Judgment.objects.filter(assignment=held).exists()
    assert set(study.items.values_list("n_assigned", flat=True)) == {0}


def test_the_automatic_rule_waits_for_the_minimum_number_of_checks():
    study = make_study(slug="minchecks", n_items=30, settings={"spam_rate": 0.5, "seed": 3, "redundancy": 1,
                                                                 "auto_exclude_share": 0.1})
    assert study.auto_exclude_min_checks == 3
    annotator = annotators_create(study=study)[0]
    failed = 0
    while (assignment := assignment_next(annotator=annotator)) is not None:
        judge(assignment, spam_first=True)  # fails every spam check
        failed += assignment.item.is_spam
        annotator.refresh_from_db()
        assert annotator.excluded == (failed >= 3), failed
        if annotator.excluded:
            break
    assert annotator.exclusion_reason == "auto: failed 3 of 3 spam checks"
    assert not annotator_apply_auto_exclusion(annotator=annotator)  # already excluded


def test_settings_through_the_import_with_named_errors():
    data = study_file(slug="imp", settings={"auto_exclude_min_checks": 5, "contact": "lab@example.org",
                                            "screened_out_code": "SCR33N"})
    study = study_import(data=data)
    assert (study.auto_exclude_min_checks, study.contact, study.screened_out_code) == (5, "lab@example.org", "SCR33N")
    cases: list[tuple[dict, str]] = [({"auto_exclude_min_checks": 0}, "settings.auto_exclude_min_checks: must be between 1 and 1000"),
                         ({"auto_exclude_min_checks": "3"}, "settings.auto_exclude_min_checks: must be an integer"),
                         ({"contact": 3}, "settings.contact: must be a string"),
                         ({"screened_out_code": "x" * 65}, "settings.screened_out_code:")]
    for bad, message in cases:
        with pytest.raises(StudyFileError) as exc:
            study_import(data=study_file(slug="imp2", settings=bad))
        assert any(e.startswith(message) for e in exc.value.errors), exc.value.errors
    assert not Study.objects.filter(slug="imp2").exists()


def test_excluded_participant_sees_the_contact_and_the_screened_out_code():
    study = make_study(slug="out", n_items=4, settings={"contact": "lab@example.org", "screened_out_code": "SCR33N",
                                                        "completion_code": "DONE99"})
    annotator = annotators_create(study=study, external_ids=["PID1"])[0]
    annotator_exclude(annotator=annotator, reason="failed checks")
    body = Client().get(reverse("annotation:start", args=[annotator.token]), follow=True).content.decode()
    assert "lab@example.org" in body and "SCR33N" in body and "cc=SCR33N" in body
    assert "DONE99" not in body and "failed checks" not in body
    resp = annotator_client(annotator).get("/api/v1/annotate/next")
    assert resp.status_code == 403
    assert resp.json()["contact"] == "lab@example.org" and resp.json()["screened_out_code"] == "SCR33N"
    assert "X-Completion-Code" not in resp


def test_without_a_screened_out_code_no_code_is_shown():
    study = make_study(slug="out2", n_items=2, settings={"contact": "Write to the lab via Prolific."})
    annotator = annotators_create(study=study)[0]
    annotator_exclude(annotator=annotator, reason="r")
    body = Client().get(reverse("annotation:start", args=[annotator.token]), follow=True).content.decode()
    assert "Write to the lab via Prolific." in body and "screened-out-code" not in body
    assert "screened_out_code" not in annotator_client(annotator).get("/api/v1/annotate/next").json()


def _admin_change(client, annotator, **changes):
    data = {"external_id": annotator.external_id, "exclusion_reason": annotator.exclusion_reason,
            "excluded": "on" if annotator.excluded else ""}
    data.update(changes)
    if not data["excluded"]:
        data.pop("excluded")
    return client.post(reverse("admin:annotation_annotator_change", args=[annotator.pk]), data, follow=True)


def test_excluding_and_putting_back_in_the_admin_moves_the_counts(client, admin_user):
    client.force_login(admin_user)
    study = make_study(slug="adm", n_items=3, settings={"redundancy": 1})
    a, b = annotators_create(study=study, count=2)
    work_through(a)
    assert _admin_change(client, a, excluded="on", exclusion_reason="slow").status_code == 200
    a.refresh_from_db()
    assert a.excluded and a.exclusion_reason == "slow"
    assert set(study.items.values_list("n_assigned", flat=True)) == {0}
    assert len(work_through(b)) == 3
    resp = _admin_change(client, a, excluded="")
    a.refresh_from_db()
    assert not a.excluded
    assert set(study.items.values_list("n_assigned", flat=True)) == {2}
    assert "3 item(s) of this study now have more judgments than its redundancy" in resp.content.decode()


def test_changing_the_redundancy_reopens_items():
    study = make_study(slug="red", n_items=3, settings={"redundancy": 1})
    work_through(annotators_create(study=study)[0])
    study.refresh_from_db()
    assert study.n_open_items == 0
    study.redundancy = 2
    study.save()
    study.refresh_from_db()
    assert study.n_open_items == 3 and len(work_through(annotators_create(study=study)[0])) == 3
