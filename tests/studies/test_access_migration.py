"""studies/0011: existing studies are owned by the first superuser (no creator was recorded before)."""
from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model

from studies.models import Study
from tests.factories import make_study

pytestmark = pytest.mark.django_db

migration = importlib.import_module("studies.migrations.0011_study_owner_memberships_audit")


def test_ownerless_studies_go_to_the_first_superuser() -> None:
    User = get_user_model()
    User.objects.create_user("staff", is_staff=True)
    first = User.objects.create_superuser("first", password=None)
    User.objects.create_superuser("second", password=None)
    owned_by = User.objects.create_user("keeper", is_staff=True)
    a, b = make_study(slug="a", n_items=1, owner=None), make_study(slug="b", n_items=1, owner=None)
    Study.objects.filter(pk=b.pk).update(owner=owned_by)
    migration.owners_set(apps, None)
    assert Study.objects.get(pk=a.pk).owner == first
    assert Study.objects.get(pk=b.pk).owner == owned_by  # an owner already set is kept


def test_without_a_superuser_studies_stay_ownerless() -> None:
    get_user_model().objects.create_user("staff", is_staff=True)
    study = make_study(slug="c", n_items=1, owner=None)
    migration.owners_set(apps, None)
    assert Study.objects.get(pk=study.pk).owner is None
