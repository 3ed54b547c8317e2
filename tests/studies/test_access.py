"""studies/access/rules.py: the role order and the object-level rule, unit by unit."""
from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404

from studies.access import rules as access
from studies.models import Role, Study, StudyMembership
from tests.factories import make_study

pytestmark = pytest.mark.django_db


def _user(name: str, **flags: Any) -> Any:
    return get_user_model().objects.create_user(name, password=None, is_staff=True, **flags)


@pytest.fixture
def study() -> Study:
    return make_study(slug="x", n_items=1, owner=None)  # ownerless: each test gives the roles it checks


def test_role_order_and_actions() -> None:
    assert access.ROLE_ORDER == ("viewer", "analyst", "manager")
    assert access.role_allows("manager", "export") and access.role_allows("analyst", "export")
    assert not access.role_allows("viewer", "export") and not access.role_allows(None, "view")
    assert access.role_allows("viewer", "report") and not access.role_allows("analyst", "invite")
    with pytest.raises(KeyError):
        access.role_allows("manager", "launch")


def test_roles_of_owner_member_superuser_and_others(study: Study) -> None:
    owner, member, root, other = _user("o"), _user("m"), _user("r", is_superuser=True), _user("n")
    Study.objects.filter(pk=study.pk).update(owner=owner)
    study.refresh_from_db()
    StudyMembership.objects.create(study=study, user=member, role=Role.ANALYST)
    assert [access.role_of(u, study) for u in (owner, member, root, other)] == ["manager", "analyst", "manager", None]
    assert access.role_of(AnonymousUser(), study) is None and access.role_of(None, study) is None
    member.is_active = False
    assert access.role_of(member, study) is None  # a deactivated account loses its roles at once


def test_visible_studies(study: Study) -> None:
    other = make_study(slug="y", n_items=1, owner=None)
    viewer, root = _user("v"), _user("r", is_superuser=True)
    Study.objects.filter(pk=study.pk).update(owner=root)  # claimed: no longer shared by every staff account
    StudyMembership.objects.create(study=other, user=viewer, role=Role.VIEWER)
    assert list(access.studies_visible_to(viewer)) == [other]
    assert set(access.studies_visible_to(root)) == {study, other}
    assert list(access.studies_visible_to(AnonymousUser())) == []
    assert list(access.studies_with_role(viewer, "export")) == []
    assert not access.has_any_role(viewer, "settings") and access.has_any_role(viewer, "view")


def test_study_for_404_then_403(study: Study) -> None:
    viewer = _user("v")
    Study.objects.filter(pk=study.pk).update(owner=_user("o"))  # claimed by another account
    with pytest.raises(Http404):
        access.study_for(viewer, "x", "view")
    StudyMembership.objects.create(study=study, user=viewer, role=Role.VIEWER)
    assert access.study_for(viewer, "x", "view") == study
    with pytest.raises(PermissionDenied):
        access.study_for(viewer, "x", "export")
    with pytest.raises(Http404):
        access.study_for(viewer, "missing", "view")


def test_membership_set_refuses_the_owner_and_non_staff(study: Study) -> None:
    owner = _user("o")
    Study.objects.filter(pk=study.pk).update(owner=owner)
    study.refresh_from_db()
    with pytest.raises(ValidationError) as refused:
        access.membership_set(study=study, username="o", role="viewer", by=owner)
    assert "owns this study" in str(refused.value)
    get_user_model().objects.create_user("plain", password=None)
    with pytest.raises(ValidationError) as refused:
        access.membership_set(study=study, username="plain", role="viewer", by=owner)
    assert "not an active staff account" in str(refused.value)
    with pytest.raises(ValidationError):
        access.membership_set(study=study, username="plain", role="remove", by=owner)
    assert not StudyMembership.objects.exists()


def test_an_ownerless_study_is_seen_by_superusers_only(study: Study) -> None:
    """It used to be managed by every staff account (the unclaimed, shared study)."""
    staff, root = _user("s"), _user("r", is_superuser=True)
    assert study.owner_id is None
    assert access.role_of(staff, study) is None and list(access.studies_visible_to(staff)) == []
    assert list(access.studies_with_role(staff, "invite")) == [] and not access.has_any_role(staff, "view")
    assert access.role_of(root, study) == "manager" and list(access.studies_visible_to(root)) == [study]
    member = _user("m")
    StudyMembership.objects.create(study=study, user=member, role=Role.VIEWER)
    assert access.role_of(member, study) == "viewer" and access.role_of(staff, study) is None


def test_only_a_superuser_gives_a_study_its_owner(study: Study) -> None:
    manager, root, alice = _user("m"), _user("r", is_superuser=True), _user("alice")
    StudyMembership.objects.create(study=study, user=manager, role=Role.MANAGER)
    for by in (manager, None):
        with pytest.raises(ValidationError) as refused:
            access.membership_set(study=study, username="m", role="owner", by=by)
        assert "only a superuser" in str(refused.value)
    study.refresh_from_db()
    assert study.owner_id is None
    assert access.membership_set(study=study, username="alice", role="owner", by=root) == "alice now owns x."
    study.refresh_from_db()
    assert study.owner == alice and access.role_of(alice, study) == "manager"
    event = study.audit_events.get(action="settings_changed")
    assert event.details["fields"] == ["owner"] and event.details["owner"] == "alice" and event.username == "r"
