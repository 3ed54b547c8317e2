"""Study lifecycle (studies/lifecycle/stages.py): draft refuses work, pilot serves pilot annotators only, pilot
judgments are flagged in the export and left out of reports unless asked; imports start as drafts."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.exporting.judgments import judgment_rows, judgments_frame
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from evaluators.reports.study_stats import study_report
from studies.importing.study_file import study_import
from studies.models import Status, Study
from tests.conftest import annotator_client
from tests.factories import make_study, study_file

# The imports are owned by the server's only superuser (no --user; docs/access.md).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_user")]


def judge_all(annotator) -> int:
    n = 0
    while (assignment := assignment_next(annotator=annotator)) is not None:
        cands = ordered_candidates(assignment)
        judgment_submit(assignment=assignment, payload={"ranks": {c.public_id: k + 1 for k, c in enumerate(cands)}})
        n += 1
    return n


# --- import defaults -----------------------------------------------------------------------

def test_an_import_is_a_draft_unless_the_file_or_the_importer_says_otherwise(tmp_path):
    assert study_import(data=study_file(slug="d1", n_items=2)).status == Status.DRAFT
    assert study_import(data={**study_file(slug="d2", n_items=2), "status": "pilot"}).status == Status.PILOT
    assert study_import(data={**study_file(slug="d3", n_items=2), "status": "pilot"}, status="open").status == "open"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(study_file(slug="d4", n_items=2)))
    call_command("import_study", str(path), "--open", stdout=io.StringIO())
    assert Study.objects.get(slug="d4").status == Status.OPEN


def test_the_import_command_opens_a_clean_file_without_status_and_obeys_status(tmp_path):
    """Scripts run import_study -> invite -> the annotation API (INTERFACES.md): a clean file without a
    status opens at once; the file's "status", --open and --status decide otherwise."""
    for slug, extra, args, expected in [("c1", {}, [], Status.OPEN), ("c2", {"status": "draft"}, [], Status.DRAFT),
                                        ("c5", {}, ["--open"], Status.OPEN), ("c6", {"status": "open"}, [], Status.OPEN),
                                        ("c3", {}, ["--status", "draft"], Status.DRAFT),
                                        ("c4", {"status": "pilot"}, ["--open"], Status.OPEN)]:
        path = tmp_path / f"{slug}.json"
        path.write_text(json.dumps({**study_file(slug=slug, n_items=2), **extra}))
        call_command("import_study", str(path), *args, stdout=io.StringIO(), stderr=io.StringIO())
        assert Study.objects.get(slug=slug).status == expected, slug


def leaky_file(slug: str) -> dict:
    """A study file whose human reference alone is typeset (curly quotes, '…'): the blinding lint warns."""
    data = study_file(slug=slug, n_items=6)
    for item in data["items"]:
        for cand in item["candidates"]:
            if cand.get("is_reference"):
                cand["text"] = "“Well…” " + cand["text"]
    return data


def test_the_import_command_makes_a_draft_of_a_leaky_file_unless_told_to_open(tmp_path):
    """A scripted import of a file with blinding warnings never goes live unseen: it is a draft, and
    stderr says why; --open (or the file's status) opens it anyway."""
    for slug, extra, args, expected in [("l1", {}, [], Status.DRAFT), ("l2", {}, ["--open"], Status.OPEN),
                                        ("l3", {"status": "open"}, [], Status.OPEN)]:
        path = tmp_path / f"{slug}.json"
        path.write_text(json.dumps({**leaky_file(slug), **extra}))
        err = io.StringIO()
        call_command("import_study", str(path), *args, stdout=io.StringIO(), stderr=err)
        assert Study.objects.get(slug=slug).status == expected, slug
        assert "blinding" in err.getvalue() or "quote" in err.getvalue().lower(), err.getvalue()
        if expected == Status.DRAFT:
            assert "is a draft because of" in err.getvalue() and "--open" in err.getvalue()


def test_an_unknown_status_in_the_file_is_a_named_error():
    from studies.importing.study_file import StudyFileError

    with pytest.raises(StudyFileError, match="status: 'live' is not one of draft, pilot, open, closed"):
        study_import(data={**study_file(slug="bad", n_items=2), "status": "live"})
    assert not Study.objects.filter(slug="bad").exists()


# --- draft ---------------------------------------------------------------------------------

def test_a_draft_study_refuses_work_on_every_annotator_path(client):
    study = make_study(slug="draft", n_items=3, status="draft")
    study.prolific_study_id = "s1"
    study.save(update_fields=["prolific_study_id"])
    annotator = annotators_create(study=study)[0]
    assert assignment_next(annotator=annotator) is None
    page = client.get(reverse("annotation:start", args=[annotator.token]), follow=True)
    assert "has not started yet" in page.content.decode()
    assert client.get(reverse("annotation:item-current", args=[annotator.token])).status_code == 200
    assert annotator_client(annotator).get("/api/v1/annotate/next").status_code == 204
    prolific = client.get(reverse("annotation:prolific", args=["draft"]) + "?PROLIFIC_PID=abc123&STUDY_ID=s1&SESSION_ID=x1")
    assert "has not started yet" in prolific.content.decode()
    assert not annotator.assignments.exists()


# --- pilot ---------------------------------------------------------------------------------

def test_pilot_hands_out_work_to_pilot_annotators_only(client):
    study = make_study(slug="pilot", n_items=3, status="pilot")
    regular = annotators_create(study=study)[0]
    pilot = annotators_create(study=study, is_pilot=True)[0]
    assert assignment_next(annotator=regular) is None
    assert "has not started yet" in client.get(reverse("annotation:start", args=[regular.token]), follow=True).content.decode()
    assert annotator_client(pilot).get("/api/v1/annotate/next").status_code == 200
    study.status = Status.OPEN
    study.save()
    assert assignment_next(annotator=regular) is not None


def test_invite_pilot_flag_from_the_command_and_the_study_page(staff):
    study = make_study(slug="inv", n_items=2, status="pilot")
    call_command("invite", "inv", "--count", "2", "--pilot", stdout=io.StringIO())
    assert study.annotators.filter(is_pilot=True).count() == 2
    staff.post(reverse("studies:invite", args=["inv"]), {"count": 1, "pilot": "1"})
    staff.post(reverse("studies:invite", args=["inv"]), {"count": 1})
    assert study.annotators.filter(is_pilot=True).count() == 3 and study.annotators.count() == 4
    staff.post(reverse("admin:studies_study_changelist"),
               {"action": "invite_pilot_annotators", "_selected_action": [study.pk]})
    assert study.annotators.filter(is_pilot=True).count() == 8


def _piloted_study() -> Study:
    """Two pilot annotators who agree, then two regular ones who disagree on everything."""
    study = make_study(slug="piloted", n_items=4, status="pilot", settings={"redundancy": 4})
    for annotator in annotators_create(study=study, count=2, is_pilot=True):
        judge_all(annotator)
    study.status = Status.OPEN
    study.save()
    for k, annotator in enumerate(annotators_create(study=study, count=2)):
        while (assignment := assignment_next(annotator=annotator)) is not None:
            cands = ordered_candidates(assignment)
            order = sorted(cands, key=lambda c: c.system, reverse=bool(k))
            judgment_submit(assignment=assignment, payload={"ranks": {c.public_id: r + 1 for r, c in enumerate(order)}})
    return study


def test_pilot_judgments_are_flagged_in_the_export():
    study = _piloted_study()
    rows = list(judgment_rows(study))
    pilots = {a.code for a in study.annotators.filter(is_pilot=True)}
    assert rows and all(row["pilot"] == (row["annotator"] in pilots) for row in rows)
    assert judgments_frame(study)["pilot"].sum() == sum(1 for r in rows if r["pilot"])
    out = io.StringIO()
    call_command("export_judgments", "piloted", "--format", "csv", stdout=out)
    assert "pilot" in out.getvalue().splitlines()[0].split(",")


def test_reports_drop_pilot_judgments_unless_asked(api, admin_user):
    study = _piloted_study()
    dropped = study_report(study)
    kept = study_report(study, pilot="keep")
    assert dropped["policies"]["pilot"] == "drop" and kept["policies"]["pilot"] == "keep"
    assert dropped["n_raters"] == 2 and kept["n_raters"] == 4
    assert dropped["policies"]["n_pilot_judgments_dropped"] == 8
    api.force_authenticate(admin_user)
    url = reverse("api-study-agreement", args=["piloted"])
    assert api.get(url).json()["n_raters"] == 2
    assert api.get(url + "?pilot=keep").json()["n_raters"] == 4
    assert api.get(url + "?pilot=maybe").status_code == 400
    out = io.StringIO()
    call_command("agreement", "piloted", "--pilot", "keep", "--json", "--bootstrap", "10", stdout=out)
    assert json.loads(out.getvalue())["n_raters"] == 4


# --- the study page's status buttons ---------------------------------------------------------

def test_status_buttons_move_the_study_and_refuse_unknown_values(staff):
    study = make_study(slug="btn", n_items=2, status="draft")
    page = staff.get(reverse("studies:detail", args=["btn"])).content.decode()
    assert 'data-status="pilot"' in page and 'data-status="open"' in page
    assert reverse("studies:preview", args=["btn"]) in page
    assert staff.post(reverse("studies:status", args=["btn"]), {"status": "pilot"}).status_code == 302
    study.refresh_from_db()
    assert study.status == Status.PILOT
    staff.post(reverse("studies:status", args=["btn"]), {"status": "live"})
    study.refresh_from_db()
    assert study.status == Status.PILOT
    assert staff.get(reverse("studies:status", args=["btn"])).status_code == 405


def test_status_buttons_are_staff_only(client):
    make_study(slug="btn2", n_items=2, status="draft")
    response = client.post(reverse("studies:status", args=["btn2"]), {"status": "open"})
    assert response.status_code == 302 and "/login" in response["Location"]
    assert Study.objects.get(slug="btn2").status == Status.DRAFT


def test_the_comparison_leaves_pilot_judgments_out():
    from evaluators.comparison.core import human_pairs

    study = _piloted_study()
    frame = judgments_frame(study)
    pairs, _ = human_pairs(frame, "ranking")
    everyone, _ = human_pairs(frame.assign(pilot=False), "ranking")
    assert pairs is not None and everyone is not None
    assert 0 < len(pairs) < len(everyone)
