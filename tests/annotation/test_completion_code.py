"""Pass/fail completion codes (issue 15, scope 6): decided on the server from the QC rule, page and API agree."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.quality.completion import AUDIT_ACTION, completion_for, passes
from annotation.models import Annotator
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.importing.study_file import StudyFileError, study_import
from studies.models import AuditEvent, Study
from tests.conftest import annotator_client
from tests.factories import make_study, study_file

pytestmark = pytest.mark.django_db

PASS, FAIL, SCREENED = "PASS1111", "FAIL2222", "SCRN3333"


def checked_study(slug: str = "codes", **settings) -> Study:
    """Half the study is spam checks; no automatic exclusion, so a failing annotator reaches the end."""
    base = {"spam_rate": 0.5, "seed": 3, "redundancy": 2, "completion_code": PASS, "failed_code": FAIL,
            "screened_out_code": SCREENED, "pass_max_failed_share": 0.25, "auto_exclude_min_checks": 2,
            "contact": "lab@example.org"}
    base.update(settings)
    return make_study(slug=slug, n_items=6, settings=base)


def work_through(annotator: Annotator, *, fail_checks: bool, client: Client | None = None,
                 pages: list[str] | None = None) -> int:
    """Answer every item (spam candidate first = a failed check, last = passed); return the checks seen."""
    checks = 0
    while (assignment := assignment_next(annotator=annotator)) is not None:
        if client is not None and pages is not None:
            pages.append(client.get(reverse("annotation:item-detail",
                                            args=[annotator.token, assignment.public_id])).content.decode())
        cands = sorted(ordered_candidates(assignment), key=lambda c: c.is_spam != fail_checks)
        judgment_submit(assignment=assignment, payload={"ranks": {c.public_id: k + 1 for k, c in enumerate(cands)}})
        checks += assignment.item.is_spam
    return checks


def done_page(annotator: Annotator) -> str:
    resp = Client().get(reverse("annotation:done", args=[annotator.token]))
    assert resp.status_code == 200
    return resp.content.decode()


def api_done(annotator: Annotator):
    resp = annotator_client(annotator).get("/api/v1/annotate/next")
    assert resp.status_code == 204
    return resp


def test_rule_on_counts_threshold_inclusive_and_minimum_checks():
    study = Study(pass_max_failed_share=0.25, auto_exclude_share=0.9, auto_exclude_min_checks=4)
    assert passes(study=study, checks=4, failed=1)  # 25 % = the threshold: passes
    assert not passes(study=study, checks=4, failed=2)
    assert passes(study=study, checks=3, failed=3)  # fewer checks than the minimum: passes
    study.pass_max_failed_share = None  # falls back to the exclusion share
    assert passes(study=study, checks=10, failed=9) and not passes(study=study, checks=10, failed=10)
    study.auto_exclude_share = None  # no rule at all: everyone passes
    assert passes(study=study, checks=10, failed=10)


def test_passing_annotator_gets_the_completion_code_on_the_page_and_in_the_api():
    study = checked_study()
    annotator = annotators_create(study=study, external_ids=["PIDOK"])[0]
    assert work_through(annotator, fail_checks=False) >= 2
    body = done_page(annotator)
    assert PASS in body and "cc=" + PASS in body and FAIL not in body and SCREENED not in body
    assert 'id="checks-note"' not in body
    resp = api_done(annotator)
    assert resp["X-Completion-Code"] == PASS and resp["X-Completion-Outcome"] == "passed"


def test_failing_annotator_gets_the_failed_code_page_and_api_agree_and_it_is_audited_once():
    study = checked_study()
    annotator = annotators_create(study=study, external_ids=["PIDBAD"])[0]
    assert work_through(annotator, fail_checks=True) >= 2
    body = done_page(annotator)
    assert FAIL in body and "cc=" + FAIL in body and PASS not in body
    assert 'id="checks-note"' in body and "lab@example.org" in body
    resp = api_done(annotator)
    assert resp["X-Completion-Code"] == FAIL and resp["X-Completion-Outcome"] == "failed"
    done_page(annotator)  # a revisit records nothing new
    events = list(AuditEvent.objects.filter(study=study, action=AUDIT_ACTION))
    assert len(events) == 1
    details = events[0].details
    assert details["annotator"] == annotator.code and details["external_id"] == "PIDBAD"
    assert details["outcome"] == "failed" and details["code"] == FAIL and details["via"] == "page"
    assert details["failed_checks"] == details["checks"] >= 2 and details["threshold"] == 0.25


def test_a_changed_outcome_is_recorded_again():
    study = checked_study(slug="changed")
    annotator = annotators_create(study=study)[0]
    work_through(annotator, fail_checks=True)
    done_page(annotator)
    # Revise every answer to a check (the page's "change your last answer" path, through the service).
    for assignment in annotator.assignments.filter(item__is_spam=True):
        cands = sorted(ordered_candidates(assignment), key=lambda c: c.is_spam)
        judgment_submit(assignment=assignment, payload={"ranks": {c.public_id: k + 1 for k, c in enumerate(cands)}})
    assert PASS in done_page(annotator)
    outcomes = [e.details["outcome"] for e in AuditEvent.objects.filter(study=study, action=AUDIT_ACTION).order_by("pk")]
    assert outcomes == ["failed", "passed"]


def test_failed_code_blank_falls_back_to_the_screened_out_code_then_to_no_code_with_the_contact():
    study = checked_study(slug="fallback", failed_code="")
    annotator = annotators_create(study=study)[0]
    work_through(annotator, fail_checks=True)
    assert SCREENED in done_page(annotator) and api_done(annotator)["X-Completion-Code"] == SCREENED

    study = checked_study(slug="nocode", failed_code="", screened_out_code="", contact="Write via Prolific.")
    annotator = annotators_create(study=study)[0]
    work_through(annotator, fail_checks=True)
    body = done_page(annotator)
    assert 'id="completion-code"' not in body and PASS not in body and "Write via Prolific." in body
    resp = api_done(annotator)
    assert "X-Completion-Code" not in resp and resp["X-Completion-Outcome"] == "failed"


def test_exclusion_share_is_the_rule_when_no_pass_share_is_set_and_few_checks_pass():
    study = checked_study(slug="excl", pass_max_failed_share=None, auto_exclude_share=1.0)
    annotator = annotators_create(study=study)[0]
    work_through(annotator, fail_checks=True)  # 100 % failed ≤ 1.0: passes, and never auto-excluded
    assert completion_for(annotator=annotator).passed and PASS in done_page(annotator)

    study = checked_study(slug="few", auto_exclude_min_checks=50)
    annotator = annotators_create(study=study)[0]
    work_through(annotator, fail_checks=True)  # fewer checks than the minimum
    assert completion_for(annotator=annotator).passed and PASS in done_page(annotator)


def test_no_code_can_be_read_before_finishing():
    """The codes are in no page or API answer an annotator sees while working (nothing to compute client-side)."""
    study = checked_study(slug="hidden")
    annotator = annotators_create(study=study)[0]
    client = Client()
    pages = [client.get(reverse("annotation:start", args=[annotator.token]), follow=True).content.decode()]
    api = annotator_client(annotator)
    first = api.get("/api/v1/annotate/next")
    assert first.status_code == 200 and "X-Completion-Code" not in first and "X-Completion-Outcome" not in first
    pages.append(first.content.decode())
    work_through(annotator, fail_checks=False, client=client, pages=pages)
    assert len(pages) > 5
    for page in pages:
        assert PASS not in page and FAIL not in page and SCREENED not in page
    assert not AuditEvent.objects.filter(study=study, action=AUDIT_ACTION).exists()  # nothing shown yet
    assert PASS in done_page(annotator)


def test_the_settings_are_checked_on_import_and_named():
    data = study_file(slug="badcodes", settings={"pass_max_failed_share": 1.5, "failed_code": "x" * 65})
    with pytest.raises(StudyFileError) as err:
        study_import(data=data)
    text = " | ".join(err.value.errors)
    assert "settings.pass_max_failed_share: must be between 0 and 1" in text
    assert "failed_code" in text and "65" in text
    assert not Study.objects.filter(slug="badcodes").exists()


def test_no_work_shows_no_code_on_the_page_and_the_api_says_no_work():
    study = make_study(slug="full", n_items=1, settings={"redundancy": 1, "completion_code": PASS})
    first, late = annotators_create(study=study, count=2)
    work_through(first, fail_checks=False)
    body = Client().get(reverse("annotation:done", args=[late.token])).content.decode()
    assert PASS not in body
    resp = api_done(late)
    # INTERFACES.md: a 204 carries the study's completion code when it has one; the outcome says there was no work.
    assert resp["X-Completion-Code"] == PASS and resp["X-Completion-Outcome"] == "no-work"
    assert api_done(first)["X-Completion-Code"] == PASS
