from __future__ import annotations

import subprocess
from pathlib import Path

from typing import Any, Callable

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.factories import member_of, persona

LOCALE = Path(__file__).resolve().parents[1] / "locale"


def pytest_configure(config) -> None:
    """Compile the interface translations when a .po is newer than its .mo (make does it too).

    The .mo files are build products (not in git); translated pages in tests need them.
    """
    for po in sorted(LOCALE.glob("*/LC_MESSAGES/django.po")):
        mo = po.with_suffix(".mo")
        if not mo.exists() or mo.stat().st_mtime < po.stat().st_mtime:
            subprocess.run(["msgfmt", "--check-format", "-o", str(mo), str(po)], check=True)


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    """Every test starts with empty rate-limit counters (config/ratelimit.py): the test client's
    address is always 127.0.0.1, so 401s of earlier tests would otherwise add up to a 429.
    With Redis they are the ``ratelimit`` cache, cleared here; without, rows of the test database,
    which vanish with each test's rolled-back transaction (or flushed tables)."""
    from django.core.cache import caches

    if "ratelimit" in caches:
        caches["ratelimit"].clear()
    yield


@pytest.fixture(autouse=True)
def _fresh_default_cache():
    """Every test starts with an empty default cache: the report, comparison and blinding caches are
    keyed by study pk and content, and a rolled-back test's pks are reused by the next test's studies."""
    from django.core.cache import caches

    caches["default"].clear()
    yield


@pytest.fixture(autouse=True)
def _immediate_tasks():
    """Background tasks run inside the call that queues them (Django's immediate task backend);
    tests/evaluators/jobs/test_worker.py runs them through the database backend and a real worker.
    (override_settings, not the ``settings`` fixture: some tests parametrize a ``settings`` argument.)"""
    from django.test import override_settings

    with override_settings(TASKS={"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}):
        yield


@pytest.fixture
def api() -> APIClient:
    return APIClient()


# --- Personas (docs/access.md) ------------------------------------------------------------------------------
# A researcher page or API endpoint is opened as one of these, so that every test goes through the per-study
# access rule (studies/access/rules.py) as the role it means; a test needing a superuser asks for ``superuser``.


@pytest.fixture
def owner(db):
    """The staff account (not a superuser) that owns every study tests.factories.make_study makes: a manager."""
    return persona("owner")


@pytest.fixture
def outsider(db):
    """A staff account with no role on any study: every study is a 404 for it."""
    return persona("outsider")


def _member(request, role: str):
    if "study" not in request.fixturenames:
        raise pytest.UsageError(f"member_{role} is a member of the test's `study` fixture, and this test has none; "
                                f"use tests.factories.member_of(study, {role!r})")
    return member_of(request.getfixturevalue("study"), role)


@pytest.fixture
def member_viewer(request):
    """A staff account that is a viewer of the test's ``study``."""
    return _member(request, "viewer")


@pytest.fixture
def member_analyst(request):
    """A staff account that is an analyst of the test's ``study``."""
    return _member(request, "analyst")


@pytest.fixture
def member_manager(request):
    """A staff account that is a manager of the test's ``study`` (a member row, unlike the owner)."""
    return _member(request, "manager")


@pytest.fixture
def superuser(admin_user):
    """Django's ``admin`` superuser: every study, every admin page (the server's administrators)."""
    return admin_user


@pytest.fixture
def login_as(db) -> Callable[[Any], Client]:
    """``login_as(user)``: a new test client signed in as ``user`` (one per call, so personas can be compared)."""

    def signed_in(user) -> Client:
        client = Client()
        client.force_login(user)
        return client

    return signed_in


@pytest.fixture
def staff(client, owner):
    """Django's test client signed in as the ``owner`` persona, who owns the studies the test makes."""
    client.force_login(owner)
    return client


def annotator_client(annotator) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {annotator.token}")
    return client
