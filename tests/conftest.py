from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from rest_framework.test import APIClient

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


@pytest.fixture
def staff(client, admin_user):
    """Django's test client logged in as a superuser (the researcher pages and the admin)."""
    client.force_login(admin_user)
    return client


def annotator_client(annotator) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {annotator.token}")
    return client
