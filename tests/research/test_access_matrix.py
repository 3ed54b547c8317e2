"""Per-study access (docs/access.md): every role × every kind of endpoint (page, API, admin, command).

The expected minimum role of each endpoint is written here from the issue's
definition (viewer: progress and reports; analyst: + quality, compare, exports;
manager: + settings, lifecycle, invitations, exclusions, scores, members), not
read from studies.access.rules, so a change of the rule table shows up as failures.
A user with no role gets 404 (the study does not exist for them); a role too low 403.
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any, Callable

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Annotator
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.models import AuditEvent, Role, Status, Study, StudyMembership
from tests.factories import make_study

pytestmark = pytest.mark.django_db


ROLES = ("outsider", "viewer", "analyst", "manager", "owner", "superuser")
RANK = {"outsider": 0, "viewer": 1, "analyst": 2, "manager": 3, "owner": 3, "superuser": 4}


@pytest.fixture
def study() -> Study:
    study = make_study(slug="acc", protocol="choice", n_items=4, n_candidates=2,
                       settings={"redundancy": 2, "seed": 3, "options": ["neither"]})
    for annotator in annotators_create(study=study, count=2):
        while (assignment := assignment_next(annotator=annotator)) is not None:
            judgment_submit(assignment=assignment, payload={"choice": ordered_candidates(assignment)[0].public_id})
    return study


def _user(name: str, **flags: Any) -> Any:
    return get_user_model().objects.create_user(name, password=None, is_staff=True, **flags)  # no hashing: fast


@pytest.fixture
def users(study: Study) -> dict[str, Any]:
    made = {"outsider": _user("outsider"), "superuser": _user("root", is_superuser=True), "owner": _user("own")}
    Study.objects.filter(pk=study.pk).update(owner=made["owner"])
    for role in (Role.VIEWER, Role.ANALYST, Role.MANAGER):
        made[role] = _user(f"u-{role}")
        StudyMembership.objects.create(study=study, user=made[role], role=role)
    return made


def _annotator(study: Study) -> Annotator:
    return study.annotators.order_by("sequence").first()


@dataclass
class Endpoint:
    name: str
    needs: str  # the lowest role allowed
    url: Callable[[Study], str]
    method: str = "get"
    data: Callable[[Study], dict] = field(default=lambda s: {})
    api: bool = False


PAGES = [
    Endpoint("study page", "viewer", lambda s: reverse("studies:detail", args=[s.slug])),
    Endpoint("report page", "viewer", lambda s: reverse("evaluators:report", args=[s.slug])),
    Endpoint("report json", "viewer", lambda s: reverse("evaluators:report-json", args=[s.slug])),
    Endpoint("planning page", "viewer", lambda s: reverse("evaluators:report-plan", args=[s.slug])),
    Endpoint("ratings table (raw)", "analyst", lambda s: reverse("evaluators:report-csv", args=[s.slug, "ratings"])),
    Endpoint("preview", "analyst", lambda s: reverse("studies:preview", args=[s.slug])),
    Endpoint("quality page", "analyst", lambda s: reverse("studies:quality", args=[s.slug])),
    Endpoint("annotator page", "analyst", lambda s: reverse("studies:annotator", args=[s.slug, _annotator(s).code])),
    Endpoint("compare page", "analyst", lambda s: reverse("compare-report", args=[s.slug])),
    Endpoint("compare jobs", "analyst", lambda s: reverse("compare-jobs", args=[s.slug])),
    Endpoint("export csv", "analyst", lambda s: reverse("studies:export", args=[s.slug, "csv"])),
    Endpoint("links csv", "manager", lambda s: reverse("studies:links-csv", args=[s.slug])),
    Endpoint("status", "manager", lambda s: reverse("studies:status", args=[s.slug]), "post",
             lambda s: {"status": "closed"}),
    Endpoint("normalise typography", "manager", lambda s: reverse("studies:normalise-typography", args=[s.slug]),
             "post"),
    Endpoint("invite", "manager", lambda s: reverse("studies:invite", args=[s.slug]), "post", lambda s: {"count": 1}),
    Endpoint("exclude", "manager", lambda s: reverse("studies:quality-exclude", args=[s.slug, _annotator(s).code]),
             "post", lambda s: {"reason": "test"}),
    Endpoint("include", "manager", lambda s: reverse("studies:quality-include", args=[s.slug, _annotator(s).code]),
             "post"),
    Endpoint("apply rule", "manager", lambda s: reverse("studies:quality-apply-rule", args=[s.slug]), "post"),
    Endpoint("run evaluators", "manager", lambda s: reverse("compare-run", args=[s.slug]), "post"),
    Endpoint("import scores", "manager", lambda s: reverse("compare-import", args=[s.slug]), "post"),
    Endpoint("members", "manager", lambda s: reverse("studies:members", args=[s.slug]), "post",
             lambda s: {"username": "outsider", "role": "viewer"}),
]
API = [
    Endpoint("api judgments", "analyst", lambda s: reverse("api-study-judgments", args=[s.slug]), api=True),
    Endpoint("api agreement", "viewer", lambda s: reverse("api-study-agreement", args=[s.slug]), api=True),
    Endpoint("api compare", "analyst", lambda s: reverse("api-study-compare", args=[s.slug]), api=True),
]


def _expected(role: str, needs: str) -> str:
    if role == "outsider":
        return "404"
    return "allowed" if RANK[role] >= RANK[needs] else "403"


def _call(endpoint: Endpoint, study: Study, user: Any, client: Any) -> int:
    if endpoint.api:
        api = APIClient()
        api.force_authenticate(user)
        return api.get(endpoint.url(study)).status_code
    client.force_login(user)
    return getattr(client, endpoint.method)(endpoint.url(study), endpoint.data(study)).status_code


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("endpoint", PAGES + API, ids=lambda e: e.name)
def test_page_and_api_matrix(endpoint: Endpoint, role: str, study: Study, users: dict, client: Any) -> None:
    status = _call(endpoint, study, users[role], client)
    expected = _expected(role, endpoint.needs)
    if expected == "allowed":
        assert status not in (403, 404), (endpoint.name, role, status)
        assert status < 500
    else:
        assert status == int(expected), (endpoint.name, role, status)


#: Endpoints whose URL does not name an annotator of the study (those need a real study to build).
BY_SLUG = [e for e in PAGES + API if "annotator" not in e.name and e.name not in ("exclude", "include")]


@pytest.mark.parametrize("endpoint", BY_SLUG, ids=lambda e: e.name)
def test_a_missing_study_is_404_too(endpoint: Endpoint, users: dict, client: Any) -> None:
    """The 404 an outsider gets is the one a slug that does not exist gets (here asked by a superuser)."""
    missing = Study(slug="no-such-study")
    assert _call(endpoint, missing, users["superuser"], client) == 404


def test_refused_writes_change_nothing(study: Study, users: dict, client: Any) -> None:
    client.force_login(users["analyst"])
    assert client.post(reverse("studies:status", args=[study.slug]), {"status": "closed"}).status_code == 403
    assert client.post(reverse("studies:invite", args=[study.slug]), {"count": 3}).status_code == 403
    client.force_login(users["outsider"])
    assert client.post(reverse("studies:quality-exclude", args=[study.slug, _annotator(study).code]),
                       {"reason": "x"}).status_code == 404
    study.refresh_from_db()
    assert study.status == Status.OPEN and study.annotators.count() == 2
    assert not study.annotators.filter(excluded=True).exists()


@pytest.mark.parametrize("role", ROLES)
def test_study_lists_show_only_ones_studies(role: str, study: Study, users: dict, client: Any) -> None:
    other = make_study(slug="someone-elses", n_items=2)
    Study.objects.filter(pk=other.pk).update(owner=_user("stranger"))  # claimed by another group
    client.force_login(users[role])
    page = client.get(reverse("studies:list")).content.decode()
    api = APIClient()
    api.force_authenticate(users[role])
    listed = {row["slug"] for row in api.get(reverse("api-studies")).json()}
    sees = role != "outsider"
    assert (study.slug in listed) is sees and (f"/studies/{study.slug}/" in page) is sees
    assert (other.slug in listed) is (role == "superuser")
    assert (f"/studies/{other.slug}/" in page) is (role == "superuser")


def test_study_page_shows_what_the_role_allows(study: Study, users: dict, client: Any) -> None:
    client.force_login(users["viewer"])
    page = client.get(reverse("studies:detail", args=[study.slug])).content.decode()
    assert 'id="audit-h"' not in page and 'id="export-h"' not in page and "studies/acc/invite/" not in page
    assert "/start/" not in page  # no invitation link (annotator token) for a viewer
    client.force_login(users["analyst"])
    page = client.get(reverse("studies:detail", args=[study.slug])).content.decode()
    assert 'id="audit-h"' in page and 'id="export-h"' in page and "studies/acc/invite/" not in page
    client.force_login(users["manager"])
    page = client.get(reverse("studies:detail", args=[study.slug])).content.decode()
    assert "studies/acc/invite/" in page and 'name="role"' in page


def test_quality_and_compare_pages_offer_writes_to_managers_only(study: Study, users: dict, client: Any) -> None:
    for role, shown in (("analyst", False), ("manager", True)):
        client.force_login(users[role])
        quality = client.get(reverse("studies:quality", args=[study.slug])).content.decode()
        compare = client.get(reverse("compare-report", args=[study.slug])).content.decode()
        assert ("/exclude/" in quality) is shown, role
        assert ('id="import-form"' in compare) is shown, role


# --- the admin -------------------------------------------------------------------

def _admin_action(client: Any, user: Any, action: str, studies: list[Study]) -> Any:
    client.force_login(user)
    return client.post(reverse("admin:studies_study_changelist"),
                       {"action": action, "_selected_action": [s.pk for s in studies]})


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("action,needs", [("open_studies", "manager"), ("close_studies", "manager"),
                                          ("invite_annotators", "manager"), ("export_judgments_csv", "analyst")])
def test_admin_action_matrix(action: str, needs: str, role: str, study: Study, users: dict, client: Any) -> None:
    Study.objects.filter(pk=study.pk).update(status=Status.PILOT)
    response = _admin_action(client, users[role], action, [study])
    study.refresh_from_db()
    allowed = role != "outsider" and RANK[role] >= RANK[needs]
    changed = {"open_studies": study.status == Status.OPEN, "close_studies": study.status == Status.CLOSED,
               "invite_annotators": study.annotators.count() == 7,
               "export_judgments_csv": response.get("Content-Type", "").startswith("text/csv")}[action]
    assert changed is allowed, (action, role, response.status_code)
    if not allowed and role != "outsider":  # a role too low on every study: the action is not even offered
        listing = client.get(reverse("admin:studies_study_changelist")).content.decode()
        assert f'value="{action}"' not in listing and "acc" in listing


def test_admin_action_on_a_study_with_a_lower_role_is_403(study: Study, users: dict, client: Any) -> None:
    """Manager of one study, viewer of another: the action is offered, but refused (nothing done) for the second."""
    mine = make_study(slug="mine", n_items=2, status="pilot")
    StudyMembership.objects.create(study=mine, user=users["viewer"], role=Role.MANAGER)
    Study.objects.filter(pk=study.pk).update(status=Status.PILOT)
    response = _admin_action(client, users["viewer"], "open_studies", [mine, study])
    assert response.status_code == 403
    assert set(Study.objects.filter(slug__in=["mine", "acc"]).values_list("status", flat=True)) == {Status.PILOT}
    assert _admin_action(client, users["viewer"], "open_studies", [mine]).status_code == 302
    assert Study.objects.get(slug="mine").status == Status.OPEN


@pytest.mark.parametrize("role", ROLES)
def test_admin_changelists_and_change_forms(role: str, study: Study, users: dict, client: Any) -> None:
    other = make_study(slug="hidden-study", n_items=2)
    Study.objects.filter(pk=other.pk).update(owner=_user("stranger"))  # claimed by another group
    client.force_login(users[role])
    from annotation.models import Judgment

    mine = Judgment.objects.filter(assignment__annotator__study=study).first().public_id
    theirs = annotators_create(study=other, count=1)[0].code
    for name in ("studies_study", "studies_item", "annotation_annotator", "annotation_judgment"):
        response = client.get(reverse(f"admin:{name}_changelist"))
        body = response.content.decode()
        assert theirs not in body or role == "superuser"
        marker = mine if name == "annotation_judgment" else "acc"
        assert "hidden-study" not in body or role == "superuser", name
        needs = {"studies_study": "viewer", "studies_item": "viewer", "annotation_annotator": "analyst",
                 "annotation_judgment": "analyst"}[name]
        if role != "outsider" and RANK[role] >= RANK[needs]:
            assert response.status_code == 200 and marker in body, (name, role)
        else:
            assert response.status_code == 403 or marker not in body, (name, role)
    change = client.get(reverse("admin:studies_study_change", args=[study.pk]))
    hidden = client.get(reverse("admin:studies_study_change", args=[other.pk]))
    missing = client.get(reverse("admin:studies_study_change", args=[999999]))
    if role == "superuser":
        assert hidden.status_code == 200
    else:  # a study without a role is answered like one that does not exist
        assert hidden.status_code == missing.status_code and hidden.status_code in (302, 403)
    if role == "outsider":
        assert change.status_code == missing.status_code
    else:
        assert change.status_code == 200
        can_edit = 'name="title"' in change.content.decode()
        assert can_edit is (RANK[role] >= RANK["manager"]), role


def test_admin_change_post_needs_manager(study: Study, users: dict, client: Any) -> None:
    client.force_login(users["viewer"])
    url = reverse("admin:studies_study_change", args=[study.pk])
    assert client.post(url, {"title": "renamed"}).status_code == 403
    study.refresh_from_db()
    assert study.title != "renamed"


def test_admin_delete_is_for_superusers_only(study: Study, users: dict, client: Any) -> None:
    client.force_login(users["owner"])
    assert client.get(reverse("admin:studies_study_delete", args=[study.pk])).status_code == 403


# --- management commands ---------------------------------------------------------

COMMANDS: list[tuple[str, str, Callable[[Study, Any], list[str]]]] = [
    ("export_judgments", "analyst", lambda s, tmp: ["export_judgments", s.slug]),
    ("export_judgments --audit", "analyst", lambda s, tmp: ["export_judgments", s.slug, "--audit"]),
    ("invite", "manager", lambda s, tmp: ["invite", s.slug, "--count", "1"]),
    ("agreement", "viewer", lambda s, tmp: ["agreement", s.slug, "--json", "--bootstrap", "10"]),
    ("compare", "analyst", lambda s, tmp: ["compare", s.slug, "--json", "--bootstrap", "10"]),
    ("evaluate", "manager", lambda s, tmp: ["evaluate", s.slug, "--evaluator", "chrf"]),
    ("import_scores", "manager", lambda s, tmp: ["import_scores", s.slug, str(tmp), "--name", "m",
                                                 "--higher-is-better"]),
    ("quality", "analyst", lambda s, tmp: ["quality", s.slug, "--json"]),
]


def _score_file(study: Study, tmp_path: Any) -> Any:
    path = tmp_path / "scores.csv"
    rows = ["item,system,score"] + [f"{i.external_id},{c.system},0.5" for i in study.items.filter(is_spam=False)
                                    for c in i.candidates.all()]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _run(argv: list[str], username: str | None) -> str | None:
    """None when the command ran; else its error message."""
    try:
        call_command(*argv, *(["--user", username] if username else []), stdout=io.StringIO(), stderr=io.StringIO())
    except CommandError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name,needs,argv", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_command_matrix(name: str, needs: str, argv: Callable, role: str, study: Study, users: dict,
                        tmp_path: Any) -> None:
    error = _run(argv(study, _score_file(study, tmp_path)), users[role].username)
    access_error = error is not None and (error.startswith("--user") or "no study" in error.lower())
    if role == "outsider":  # the very message of a study that does not exist
        missing = _run(argv(Study(slug="nope"), _score_file(study, tmp_path)), None)
        assert missing is not None and error == missing.replace("'nope'", f"'{study.slug}'"), (error, missing)
    elif RANK[role] >= RANK[needs]:
        assert not access_error, (name, role, error)
    else:
        assert error is not None and error.startswith(f"--user: {users[role].username} is {role}"), (name, error)


def test_a_command_without_user_runs_as_the_administrator(study: Study) -> None:
    assert _run(["export_judgments", study.slug], None) is None
    assert AuditEvent.objects.filter(action="judgments_exported", user=None, study=study).count() == 1


def test_an_unknown_user_is_named() -> None:
    make_study(slug="s1", n_items=2)
    assert _run(["export_judgments", "s1"], "ghost") == "--user: no active user 'ghost'"


def test_import_study_with_user_makes_the_owner(tmp_path: Any, users: dict) -> None:
    import json

    from tests.factories import study_file

    path = tmp_path / "s.json"
    path.write_text(json.dumps(study_file(slug="imported", n_items=2)), encoding="utf-8")
    call_command("import_study", str(path), "--user", "outsider", stdout=io.StringIO(), stderr=io.StringIO())
    study = Study.objects.get(slug="imported")
    assert study.owner == users["outsider"]
    event = AuditEvent.objects.get(action="study_imported", study=study)
    assert event.username == "outsider"


def test_admin_annotator_exclusion_needs_manager(study: Study, users: dict, client: Any) -> None:
    annotator = _annotator(study)
    url = reverse("admin:annotation_annotator_change", args=[annotator.pk])
    client.force_login(users["analyst"])
    assert client.get(url).status_code == 200  # analysts see annotators (read-only)
    assert client.post(url, {"excluded": "on", "exclusion_reason": "x"}).status_code == 403
    annotator.refresh_from_db()
    assert not annotator.excluded
    client.force_login(users["outsider"])  # answered as for an id that does not exist
    missing = reverse("admin:annotation_annotator_change", args=[999999])
    assert client.get(url).status_code == client.get(missing).status_code


def test_access_docs_page_is_served(users: dict, client: Any) -> None:
    client.force_login(users["viewer"])
    page = client.get(reverse("docs", args=["access.md"]))
    assert page.status_code == 200 and "404, not 403" in page.content.decode()


def test_a_new_staff_account_cannot_manage_or_claim_a_study_it_was_not_given(client: Any) -> None:
    """A study with no owner (legacy, or loaded by an old load_demo) used to be managed by every staff account: a
    new one downloaded its links.csv and claimed it by adding itself as manager, after which the study's creator
    (any other staff account) got 404. Now only superusers see it, and only they give it an owner."""
    legacy = make_study(slug="legacy", n_items=2, owner=None)
    annotators_create(study=legacy, count=1)
    owned = make_study(slug="owned", n_items=2)
    creator, newcomer, root = _user("creator"), _user("newcomer"), _user("root", is_superuser=True)
    Study.objects.filter(pk=owned.pk).update(owner=creator)
    client.force_login(newcomer)
    assert "legacy" not in client.get(reverse("studies:list")).content.decode()
    for slug in ("legacy", "owned"):
        assert client.get(reverse("studies:detail", args=[slug])).status_code == 404
        assert client.get(reverse("studies:links-csv", args=[slug])).status_code == 404
        claim = client.post(reverse("studies:members", args=[slug]), {"username": "newcomer", "role": "manager"})
        assert claim.status_code == 404
    assert not StudyMembership.objects.exists()
    assert client.get(reverse("admin:studies_study_changelist")).status_code == 403  # no study: no module
    api = APIClient()
    api.force_authenticate(newcomer)
    assert {row["slug"] for row in api.get(reverse("api-studies")).json()} == set()
    assert api.get(reverse("api-study-agreement", args=["legacy"])).status_code == 404
    client.force_login(creator)
    assert client.get(reverse("studies:detail", args=["owned"])).status_code == 200
    assert client.get(reverse("studies:detail", args=["legacy"])).status_code == 404
    # A superuser sees the ownerless study, is told it has none, and gives it one on the members form.
    client.force_login(root)
    page = client.get(reverse("studies:detail", args=["legacy"])).content.decode()
    assert 'data-testid="no-owner"' in page and '<option value="owner">' in page
    client.post(reverse("studies:members", args=["legacy"]), {"username": "creator", "role": "owner"})
    legacy.refresh_from_db()
    assert legacy.owner == creator
    client.force_login(creator)
    page = client.get(reverse("studies:detail", args=["legacy"])).content.decode()
    assert 'data-testid="no-owner"' not in page and '<option value="owner">' not in page
    refused = client.post(reverse("studies:members", args=["legacy"]), {"username": "newcomer", "role": "owner"},
                          follow=True).content.decode()
    assert "only a superuser gives a study its owner" in refused
    legacy.refresh_from_db()
    assert legacy.owner == creator


@pytest.mark.parametrize("role", ROLES[1:])
def test_secret_tokens_are_shown_to_managers_only(users: dict, study: Study, client: Any, role: str) -> None:
    """An annotator's token is the key to their work: analysts (who read the annotator list, the change form and
    the annotator page) used to see every one of them in the admin and on the annotator page."""
    annotator = _annotator(study)
    client.force_login(users[role])
    pages = [reverse("admin:annotation_annotator_changelist"),
             reverse("admin:annotation_annotator_change", args=[annotator.pk]),
             reverse("studies:annotator", args=[study.slug, annotator.code]),
             reverse("studies:detail", args=[study.slug])]
    may_invite = RANK[role] >= RANK["manager"]
    for url in pages:
        response = client.get(url)
        if response.status_code == 403 or (role == "viewer" and "annotator" in url):
            continue  # the page itself is not theirs (viewers: quality pages)
        assert response.status_code == 200, url
        assert (annotator.token in response.content.decode()) == may_invite, (role, url)
    links = client.get(reverse("studies:links-csv", args=[study.slug]))
    assert (links.status_code == 200) == may_invite and (annotator.token in links.content.decode()) == may_invite
