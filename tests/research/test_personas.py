"""Every researcher page and researcher API endpoint of one study, walked as each persona (tests/conftest.py).

The expected answer comes from the role table of docs/access.md (parsed from the page, so the page, the code's
``ACTIONS`` and the endpoints are checked against each other): an outsider (staff, no role) gets 404 as for a
study that does not exist, a role too low 403, an allowed role 200 with the page or download itself. The owner
is a manager without a membership row; the superuser may do everything.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.exporting.judgments import FORMATS
from evaluators.judges.importing import judge_import
from evaluators.reports.paper import TABLE_NAMES
from evaluators.reports.tables import TABLES
from studies.access import rules as access
from studies.models import Role, Study, StudyMembership
from tests.factories import persona
from tests.report_study import ranking_study

pytestmark = pytest.mark.django_db

DOCS = Path(__file__).resolve().parents[2] / "docs" / "access.md"
PERSONAS = ("outsider", "member_viewer", "member_analyst", "member_manager", "owner", "superuser")
#: A persona's role on the study, as docs/access.md defines it ("the owner … is a manager of it").
ROLE_OF = {"outsider": None, "member_viewer": "viewer", "member_analyst": "analyst", "member_manager": "manager",
           "owner": "manager", "superuser": "manager"}
ORDER = ("viewer", "analyst", "manager")


def documented_actions() -> dict[str, str]:
    """The role table of docs/access.md: action → lowest role."""
    rows = re.findall(r"^\| `(\w+)` \| (viewer|analyst|manager) \|", DOCS.read_text(encoding="utf-8"), re.M)
    return dict(rows)


DOCUMENTED = documented_actions()


def expected(persona_name: str, action: str) -> int:
    if persona_name == "superuser":
        return 200
    role = ROLE_OF[persona_name]
    if role is None:
        return 404
    return 200 if ORDER.index(role) >= ORDER.index(DOCUMENTED[action]) else 403


@pytest.fixture
def study() -> Study:
    """A judged ranking study (spam items, ties, phenomena) with an LLM judge, owned by the owner persona
    (tests/factories.py)."""
    study = ranking_study("ps", n_items=6, n_annotators=2)
    lines = [json.dumps({"item": f"ext-{i}", "ranks": {"reference": 1, "sys1": 2, "sys2": 3}}) for i in range(6)]
    judge_import(study=study, name="gpt", file_name="gpt.jsonl", content="\n".join(lines) + "\n")
    return study


def _annotator_code(study: Study) -> str:
    return study.annotators.order_by("sequence").first().code


@dataclass
class Endpoint:
    name: str  # the URL name
    action: str  # the action of docs/access.md it needs
    args: Callable[[Study], list[Any]] = field(default=lambda s: [s.slug])
    api: bool = False
    label: str = ""

    def url(self, study: Study) -> str:
        return reverse(self.name, args=self.args(study))

    def __str__(self) -> str:
        return self.label or self.name


def slug_and(*rest: str) -> Callable[[Study], list[Any]]:
    """The URL arguments: the study's slug, then ``rest``."""
    return lambda s: [s.slug, *rest]


#: Every GET of a study: pages, downloads and the researcher API.
GETS = [
    Endpoint("studies:detail", "view"),
    Endpoint("evaluators:report", "report"),
    Endpoint("evaluators:report-json", "report"),
    Endpoint("evaluators:report-judges-json", "report"),
    Endpoint("evaluators:report-judge-labels", "export", lambda s: [s.slug, s.llm_judges.get().pk], label="judge.jsonl"),
    Endpoint("evaluators:report-plan", "report"),
    *[Endpoint("evaluators:report-csv", "report", slug_and(t), label=f"{t}.csv") for t in TABLES],
    Endpoint("evaluators:report-csv", "export", slug_and("ratings"), label="ratings.csv"),
    *[Endpoint("evaluators:report-paper", "report", slug_and(t, e), label=f"{t}.{e}")
      for t in TABLE_NAMES for e in ("tex", "md")],
    Endpoint("studies:preview", "preview"),
    Endpoint("studies:quality", "quality"),
    Endpoint("studies:annotator", "quality", lambda s: [s.slug, _annotator_code(s)]),
    Endpoint("compare-report", "compare"),
    Endpoint("compare-jobs", "compare"),
    Endpoint("compare-detail", "compare", slug_and("williams"), label="compare-detail williams"),
    *[Endpoint("studies:export", "export", slug_and(f), label=f"export.{f}") for f in FORMATS],
    Endpoint("studies:links-csv", "invite"),
    Endpoint("api-study-judgments", "export", api=True),
    Endpoint("api-study-agreement", "report", api=True),
    Endpoint("api-study-compare", "compare", api=True),
]

#: Every POST of a study (the forms); each changes something when allowed.
POSTS = [
    (Endpoint("studies:status", "lifecycle"), {"status": "closed"}),
    (Endpoint("studies:members", "members"), {"username": "p-outsider", "role": "viewer"}),
    (Endpoint("studies:normalise-typography", "settings"), {}),
    (Endpoint("studies:invite", "invite"), {"count": 1}),
    (Endpoint("studies:prolific", "invite"), {"prolific_study_id": "x"}),
    (Endpoint("studies:preview", "preview", label="preview (answer)"), {}),
    (Endpoint("studies:quality-apply-rule", "exclude"), {}),
    (Endpoint("studies:quality-exclude", "exclude", lambda s: [s.slug, _annotator_code(s)]), {"reason": "t"}),
    (Endpoint("studies:quality-include", "exclude", lambda s: [s.slug, _annotator_code(s)]), {}),
    (Endpoint("compare-run", "scores"), {}),
    (Endpoint("compare-import", "scores"), {}),
]


def _persona_user(request: pytest.FixtureRequest, name: str) -> Any:
    return request.getfixturevalue(name)


def _get(endpoint: Endpoint, study: Study, user: Any, login_as: Callable[[Any], Client]) -> Any:
    if endpoint.api:  # as a script would: the user's API token
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
        return api.get(endpoint.url(study))
    return login_as(user).get(endpoint.url(study))


def test_the_documented_roles_are_the_code_s() -> None:
    """docs/access.md's table and studies.access.rules.ACTIONS name the same actions with the same lowest role."""
    assert DOCUMENTED == dict(access.ACTIONS)


def test_the_personas_are_what_they_say(study: Study, owner, outsider, member_viewer, member_analyst,
                                        member_manager, superuser) -> None:
    assert study.owner == owner and not owner.is_superuser and owner.is_staff
    assert not StudyMembership.objects.filter(user__in=[owner, outsider, superuser]).exists()
    assert {m.user_id: m.role for m in study.memberships.all()} == {
        member_viewer.pk: Role.VIEWER, member_analyst.pk: Role.ANALYST, member_manager.pk: Role.MANAGER}
    assert all(u.is_staff and not u.is_superuser for u in (outsider, member_viewer, member_analyst, member_manager))
    assert superuser.is_superuser
    for name, user in (("outsider", outsider), ("member_viewer", member_viewer), ("member_analyst", member_analyst),
                       ("member_manager", member_manager), ("owner", owner), ("superuser", superuser)):
        assert access.role_of(user, study) == ROLE_OF[name], name


@pytest.mark.parametrize("who", PERSONAS)
@pytest.mark.parametrize("endpoint", GETS, ids=str)
def test_every_page_and_download(endpoint: Endpoint, who: str, study: Study, request, login_as) -> None:
    response = _get(endpoint, study, _persona_user(request, who), login_as)
    want = expected(who, endpoint.action)
    assert response.status_code == want, (str(endpoint), who, response.status_code)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    if want == 404:
        assert study.slug.encode() not in body  # nothing tells an outsider the study exists
    elif want == 200:
        assert body.strip(), (str(endpoint), who)


@pytest.mark.parametrize("who", PERSONAS)
@pytest.mark.parametrize("endpoint,data", POSTS, ids=lambda e: str(e) if isinstance(e, Endpoint) else "")
def test_every_form(endpoint: Endpoint, data: dict, who: str, study: Study, request, login_as) -> None:
    """Refused: exactly 404 or 403; allowed: whatever the form answers (a redirect, a page, a form error)."""
    response = login_as(_persona_user(request, who)).post(endpoint.url(study), data)
    want = expected(who, endpoint.action)
    if want == 200:
        assert response.status_code not in (403, 404) and response.status_code < 500, (str(endpoint), who)
    else:
        assert response.status_code == want, (str(endpoint), who, response.status_code)


def test_a_refused_form_changes_nothing(study: Study, member_analyst, outsider, login_as) -> None:
    before = (study.status, study.annotators.count(), study.memberships.count())
    analyst = login_as(member_analyst)
    assert analyst.post(reverse("studies:status", args=[study.slug]), {"status": "closed"}).status_code == 403
    assert analyst.post(reverse("studies:invite", args=[study.slug]), {"count": 3}).status_code == 403
    assert analyst.post(reverse("studies:members", args=[study.slug]),
                        {"username": "p-outsider", "role": "manager"}).status_code == 403
    assert login_as(outsider).post(reverse("studies:quality-exclude", args=[study.slug, _annotator_code(study)]),
                                   {"reason": "x"}).status_code == 404
    study.refresh_from_db()
    assert (study.status, study.annotators.count(), study.memberships.count()) == before
    assert not study.annotators.filter(excluded=True).exists()


def _study_routes() -> set[str]:
    """The names of every researcher URL that takes a study's slug."""
    names: set[str] = set()

    def walk(patterns: list, namespace: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, f"{namespace}{p.namespace}:" if p.namespace else namespace)
            elif isinstance(p, URLPattern) and "slug" in p.pattern.regex.groupindex and p.name:
                names.add(namespace + p.name)

    walk(get_resolver("research.urls").url_patterns, "")
    return names


def test_the_walk_covers_every_study_url() -> None:
    """A new researcher URL of a study must be added here (and so get its row in docs/access.md)."""
    assert _study_routes() == {e.name for e in GETS} | {e.name for e, _ in POSTS}


# --- the admin's study and item pages, as the owner and the members ------------------------------------------

@pytest.mark.parametrize("who", ["member_viewer", "member_manager", "owner"])
def test_admin_change_forms_show_the_members_and_the_candidates(who: str, study: Study, request, login_as,
                                                                member_viewer) -> None:
    """A researcher's admin study form lists the study's members and the item page its candidates (Django's
    inline asked for a model permission without an object, so a non-superuser saw empty inlines)."""
    client = login_as(_persona_user(request, who))
    form = client.get(reverse("admin:studies_study_change", args=[study.pk]))
    assert form.status_code == 200
    members = form.context["inline_admin_formsets"][0].formset
    assert [f.instance.user for f in members.initial_forms] == [member_viewer] + (
        [persona("manager")] if who == "member_manager" else [])
    item = study.items.filter(is_spam=False).first()
    page = client.get(reverse("admin:studies_item_change", args=[item.pk]))
    assert page.status_code == 200
    assert len(page.context["inline_admin_formsets"][0].formset.forms) == item.candidates.count() == 3
