"""The audit log (studies/access/audit.py, docs/access.md): one row for every recorded action, read-only, exported."""
from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.access import audit as audit_module
from studies.access.audit import audit
from studies.models import AuditEvent, Role, Status, Study, StudyMembership
from tests.admin_forms import change_form_data
from tests.factories import make_study, study_file

pytestmark = pytest.mark.django_db


@pytest.fixture
def boss() -> Any:
    return get_user_model().objects.create_user("boss", password=None, is_staff=True)


@pytest.fixture
def study(boss: Any) -> Study:
    study = make_study(slug="aud", protocol="choice", n_items=4, n_candidates=2, status="draft",
                       settings={"redundancy": 2, "options": ["neither"]})
    Study.objects.filter(pk=study.pk).update(owner=boss)
    study.refresh_from_db()
    return study


@pytest.fixture
def manager(client: Any, boss: Any) -> Any:
    client.force_login(boss)
    return client


def _judge(study: Study, count: int = 1) -> None:
    Study.objects.filter(pk=study.pk).update(status=Status.OPEN)
    for annotator in annotators_create(study=study, count=count):
        while (assignment := assignment_next(annotator=annotator)) is not None:
            judgment_submit(assignment=assignment, payload={"choice": ordered_candidates(assignment)[0].public_id})


def _events(action: str, study: Study | None = None) -> list[AuditEvent]:
    qs = AuditEvent.objects.filter(action=action)
    return list(qs.filter(study=study) if study is not None else qs)


def test_status_change_on_the_page(study: Study, manager: Any) -> None:
    manager.post(reverse("studies:status", args=[study.slug]), {"status": "pilot"})
    [event] = _events("status_changed", study)
    assert (event.username, event.details["before"], event.details["after"]) == ("boss", "draft", "pilot")


def test_status_change_by_admin_action(study: Study, manager: Any) -> None:
    manager.post(reverse("admin:studies_study_changelist"), {"action": "open_studies", "_selected_action": [study.pk]})
    [event] = _events("status_changed", study)
    assert event.details["after"] == "open" and event.details["via"] == "admin action"


def test_settings_edit(study: Study, manager: Any) -> None:
    manager.post(reverse("studies:normalise-typography", args=[study.slug]))
    [event] = _events("settings_changed", study)
    assert event.details["fields"] == ["normalise_typography"] and event.user is not None


def test_settings_edit_in_the_admin_names_the_fields(study: Study, manager: Any) -> None:
    url = reverse("admin:studies_study_change", args=[study.pk])
    data = change_form_data(manager.get(url))
    data.update({"title": "A new title", "initial-seed": study.seed})  # the browser sends the callable default's hidden initial
    response = manager.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else response
    [event] = _events("settings_changed", study)
    assert event.details["fields"] == ["title"]


def test_invitations(study: Study, manager: Any) -> None:
    manager.post(reverse("studies:invite", args=[study.slug]), {"count": 3, "pilot": "1"})
    [event] = _events("invited", study)
    assert event.details == {"count": 3, "pilot": True, "via": "page"}


def test_invitations_by_command(study: Study) -> None:
    call_command("invite", study.slug, "--count", "2", "--user", "boss", stdout=io.StringIO(), stderr=io.StringIO())
    [event] = _events("invited", study)
    assert event.username == "boss" and event.details["count"] == 2


def test_exclusion_and_reinclusion(study: Study, manager: Any) -> None:
    _judge(study)
    code = study.annotators.get().code
    manager.post(reverse("studies:quality-exclude", args=[study.slug, code]), {"reason": "clicked through"})
    manager.post(reverse("studies:quality-include", args=[study.slug, code]))
    [excluded] = _events("excluded", study)
    [included] = _events("included", study)
    assert excluded.details["annotator"] == code and excluded.details["reason"] == "clicked through"
    assert included.details["annotator"] == code and included.username == "boss"


def test_a_refused_exclusion_is_not_recorded(study: Study, manager: Any) -> None:
    _judge(study)
    manager.post(reverse("studies:quality-exclude", args=[study.slug, study.annotators.get().code]), {"reason": ""})
    assert _events("excluded", study) == []


def test_automatic_exclusion_is_recorded_as_the_server(boss: Any) -> None:
    study = make_study(slug="auto", protocol="choice", n_items=10, n_candidates=2,
                       settings={"spam_rate": 0.5, "seed": 8, "redundancy": 1, "options": ["neither"],
                                 "auto_exclude_share": 0.1, "auto_exclude_min_checks": 1})
    [annotator] = annotators_create(study=study, count=1)
    while (assignment := assignment_next(annotator=annotator)) is not None:
        spam = next((c for c in ordered_candidates(assignment) if c.is_spam), ordered_candidates(assignment)[0])
        judgment_submit(assignment=assignment, payload={"choice": spam.public_id})
    [event] = _events("excluded", study)
    assert event.user is None and event.details["via"] == "automatic rule"


def test_study_import_by_page(client: Any, boss: Any) -> None:
    client.force_login(boss)
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("s.json", json.dumps(study_file(slug="paged", n_items=2)).encode())
    client.post(reverse("studies:import"), {"study_file": upload})
    client.post(reverse("studies:import"), {"step": "create"})
    study = Study.objects.get(slug="paged")
    assert study.owner == boss
    [event] = _events("study_imported", study)
    assert event.username == "boss" and event.details["how"] == "import page"


def test_study_import_by_command_without_user(tmp_path: Any, admin_user: Any) -> None:
    """Without --user the server's only superuser owns the study (no study is ownerless) and the log names it."""
    path = tmp_path / "s.json"
    path.write_text(json.dumps(study_file(slug="cmd", n_items=2)), encoding="utf-8")
    call_command("import_study", str(path), stdout=io.StringIO(), stderr=io.StringIO())
    study = Study.objects.get(slug="cmd")
    [event] = _events("study_imported", study)
    assert study.owner == admin_user and event.user == admin_user and event.details["file"] == "s.json"


@pytest.mark.parametrize("via", ["page", "api", "admin action", "command"])
def test_judgment_exports(via: str, study: Study, manager: Any, boss: Any) -> None:
    _judge(study)
    if via == "page":
        b"".join(manager.get(reverse("studies:export", args=[study.slug, "csv"])).streaming_content)
    elif via == "api":
        api = APIClient()
        api.force_authenticate(boss)
        assert api.get(reverse("api-study-judgments", args=[study.slug])).status_code == 200
    elif via == "admin action":
        manager.post(reverse("admin:studies_study_changelist"),
                     {"action": "export_judgments_csv", "_selected_action": [study.pk]})
    else:
        call_command("export_judgments", study.slug, "--user", "boss", stdout=io.StringIO())
    [event] = _events("judgments_exported", study)
    assert event.username == "boss"


def test_score_import(study: Study, tmp_path: Any) -> None:
    path = tmp_path / "scores.csv"
    rows = ["item,system,score"] + [f"{i.external_id},{c.system},0.5" for i in study.items.filter(is_spam=False)
                                    for c in i.candidates.all()]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    call_command("import_scores", study.slug, str(path), "--name", "m", "--higher-is-better", "--user", "boss",
                 stdout=io.StringIO())
    [event] = _events("scores_imported", study)
    assert event.details["evaluators"] == {"m": 8} and event.username == "boss"


def test_api_token_creation(boss: Any) -> None:
    call_command("create_api_token", "boss", stdout=io.StringIO())
    call_command("create_api_token", "boss", stdout=io.StringIO())  # the same token again: nothing new
    [event] = _events("api_token_created")
    assert event.details["for_user"] == "boss" and event.study is None


def test_membership_changes(study: Study, manager: Any) -> None:
    get_user_model().objects.create_user("ana", password=None, is_staff=True)
    url = reverse("studies:members", args=[study.slug])
    manager.post(url, {"username": "ana", "role": "viewer"})
    manager.post(url, {"username": "ana", "role": "analyst"})
    assert StudyMembership.objects.get(study=study).role == Role.ANALYST
    manager.post(url, {"username": "ana", "role": "remove"})
    assert not StudyMembership.objects.filter(study=study).exists()
    assert [e.action for e in AuditEvent.objects.filter(study=study).order_by("pk")] == [
        "member_added", "member_changed", "member_removed"]


def test_membership_form_names_bad_input(study: Study, manager: Any) -> None:
    url = reverse("studies:members", args=[study.slug])
    response = manager.post(url, {"username": "ghost", "role": "viewer"}, follow=True)
    assert "username: no user &#x27;ghost&#x27;" in response.content.decode()
    get_user_model().objects.create_user("ann", password=None)  # not staff: could never sign in
    response = manager.post(url, {"username": "ann", "role": "boss"}, follow=True)
    assert "role: &#x27;boss&#x27; is not one of" in response.content.decode()
    assert not StudyMembership.objects.exists() and not AuditEvent.objects.exists()


def test_membership_by_admin_inline(study: Study, client: Any, admin_user: Any) -> None:
    ana = get_user_model().objects.create_user("ana", password=None, is_staff=True)
    client.force_login(admin_user)
    url = reverse("admin:studies_study_change", args=[study.pk])
    data = change_form_data(client.get(url))
    data.update({"memberships-0-user": ana.pk, "memberships-0-role": "analyst"})
    response = client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else response
    assert StudyMembership.objects.get(study=study, user=ana).role == Role.ANALYST
    [event] = _events("member_added", study)
    assert event.details == {"member": "ana", "role": "analyst", "via": "admin"}


def test_unknown_action_is_refused() -> None:
    with pytest.raises(ValidationError):
        audit(None, "deleted_everything")
    assert set(audit_module.ACTIONS) >= {"status_changed", "settings_changed", "invited", "excluded", "included",
                                         "study_imported", "judgments_exported", "scores_imported",
                                         "api_token_created", "member_added", "member_removed"}


def test_the_admin_is_read_only_even_for_superusers(study: Study, client: Any, admin_user: Any) -> None:
    event = audit(None, "status_changed", study, before="draft", after="open")
    client.force_login(admin_user)
    assert client.get(reverse("admin:studies_auditevent_changelist")).status_code == 200
    assert client.get(reverse("admin:studies_auditevent_add")).status_code == 403
    assert client.post(reverse("admin:studies_auditevent_change", args=[event.pk]), {"action": "x"}).status_code == 403
    assert client.post(reverse("admin:studies_auditevent_delete", args=[event.pk]), {"post": "yes"}).status_code == 403
    event.refresh_from_db()
    assert event.action == "status_changed"


def test_a_deleted_study_keeps_its_events_by_slug(study: Study) -> None:
    audit(None, "status_changed", study, before="draft", after="open")
    Study.objects.filter(pk=study.pk).delete()
    event = AuditEvent.objects.get()
    assert event.study is None and event.study_slug == "aud"


def test_the_study_page_shows_the_last_20_events(study: Study, manager: Any) -> None:
    for k in range(25):
        audit(None, "invited", study, count=k, pilot=False)
    page = manager.get(reverse("studies:detail", args=[study.slug])).content.decode()
    assert page.count("<td>invited</td>") == 20
    # details read as text (label, value), not as a Python dict
    assert '<span class="muted">count</span> 24</li>' in page and '<span class="muted">count</span> 4</li>' not in page
    assert '<span class="muted">pilot</span> no</li>' in page and "&#x27;count&#x27;" not in page


def test_audit_details_are_rendered_as_label_and_text() -> None:
    from research.views.studies import audit_details

    assert audit_details({"count": 3, "pilot": True, "via": "page"}) == [
        ("count", "3"), ("pilot", "yes"), ("via", "page")]
    assert audit_details({"fields": ["redundancy", "spam_rate"], "reason": None, "over_redundancy": False,
                          "changes": {"before": "draft", "after": "open"}, "ids": []}) == [
        ("fields", "redundancy, spam_rate"), ("reason", "—"), ("over redundancy", "no"),
        ("changes", "before draft; after open"), ("ids", "none")]
    assert audit_details({}) == [] and audit_details(None) == [] and audit_details("text") == [("", "text")]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_judgments_audit(fmt: str, study: Study, tmp_path: Any) -> None:
    other = make_study(slug="other", n_items=2)
    audit(None, "status_changed", other, before="draft", after="open")
    call_command("invite", study.slug, "--count", "2", "--user", "boss", stdout=io.StringIO(), stderr=io.StringIO())
    out = io.StringIO()
    call_command("export_judgments", study.slug, "--audit", "--format", fmt, stdout=out)
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out.getvalue())))
        details = [json.loads(r["details"]) for r in rows]
    else:
        rows = [json.loads(line) for line in out.getvalue().splitlines()]
        details = [r["details"] for r in rows]
    assert [(r["user"], r["study"], r["action"]) for r in rows] == [("boss", "aud", "invited")]
    assert details == [{"count": 2, "pilot": False, "via": "invite"}]
    path = tmp_path / "audit.jsonl"
    call_command("export_judgments", study.slug, "--audit", "--format", "jsonl", "--output", str(path),
                 stderr=io.StringIO())
    assert json.loads(path.read_text().splitlines()[0])["action"] == "invited"
    assert _events("judgments_exported") == []  # exporting the log is not a judgment export
