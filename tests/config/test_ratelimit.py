"""Rate limits (config/ratelimit.py): invalid tokens and Prolific entries per client address,
429 JSON with Retry-After, shared by several app servers through one Redis or, without Redis,
by every worker through the database's counter rows (config/models.py); a limited address still serves valid tokens and sessions."""
from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from types import SimpleNamespace
from unittest import mock

import pytest
from django.core.cache.backends.redis import RedisCache
from django.db import OperationalError, connection
from django.test import Client, RequestFactory, override_settings

from rest_framework.authtoken.models import Token

from annotation.handout.services import annotators_create
from config import ratelimit
from config.models import RateLimitCounter
from tests.factories import make_study

pytestmark = pytest.mark.django_db

LIMIT = 20  # RATELIMIT_INVALID_TOKENS default, documented in docs/deploy.md


@pytest.fixture(autouse=True)
def _mid_window_clock():
    """The limits count in fixed windows aligned on the clock: a test whose requests straddled a window
    boundary would see the count start again (CI once did). Pin the limiter's clock mid-window."""
    with mock.patch.object(ratelimit, "time", SimpleNamespace(time=lambda: 1_800_000_030.0)):
        yield


def test_429_after_the_documented_number_of_invalid_tokens():
    study = make_study(n_items=2)
    good = annotators_create(study=study, count=1)[0]
    bad = Client(HTTP_AUTHORIZATION="Token not-a-real-token")
    for _ in range(LIMIT):
        assert bad.get("/api/v1/annotate/next").status_code == 401
    refused = bad.get("/api/v1/annotate/next")
    assert refused.status_code == 429
    assert refused["Content-Type"].startswith("application/json")
    assert "Too many requests" in refused.json()["detail"] and 0 < int(refused["Retry-After"]) <= 60
    # Invalid tokens stay refused from that address, on the researcher API too.
    assert bad.get("/api/v1/studies/").status_code == 429
    # Another address is not affected.
    other = Client(HTTP_AUTHORIZATION="Token not-a-real-token", REMOTE_ADDR="10.0.0.2")
    assert other.get("/api/v1/annotate/next").status_code == 401


def test_a_limited_address_still_serves_valid_tokens_and_sessions(admin_user):
    """Annotators and researchers behind one NAT as a token guesser keep working."""
    study = make_study(n_items=2)
    good = annotators_create(study=study, count=1)[0]
    bad = Client(HTTP_AUTHORIZATION="Token not-a-real-token")
    for _ in range(LIMIT):
        assert bad.get("/api/v1/annotate/next").status_code == 401
    assert bad.get("/api/v1/annotate/next").status_code == 429
    assert Client().get("/a/not-a-real-token/").status_code == 429

    assert Client(HTTP_AUTHORIZATION=f"Token {good.token}").get("/api/v1/annotate/next").status_code == 200
    assert Client().get(f"/a/{good.token}/").status_code in (200, 302)
    staff_token = Token.objects.create(user=admin_user).key
    assert Client(HTTP_AUTHORIZATION=f"Token {staff_token}").get("/api/v1/studies/").status_code == 200
    session = Client()
    session.force_login(admin_user)
    assert session.get("/api/v1/studies/").status_code == 200
    # ... and the guesser is still refused: the failures after the limit keep counting.
    assert bad.get("/api/v1/annotate/next").status_code == 429


@pytest.mark.django_db(transaction=True)
def test_the_database_counts_hits_of_concurrent_workers_together():
    """Without Redis the counters are rows of the database: hits counted at the same moment on several
    connections (workers) all count, each sees its own place in the window, and the window's row holds
    the total. Through two real gunicorn workers: tests/config/test_live_server.py."""
    workers, hits = 4, 10
    limit = ratelimit.Limit(count=5, seconds=60)
    start = threading.Barrier(workers)
    counts: list[int] = []

    def worker() -> None:
        try:
            start.wait()
            for _ in range(hits):
                counts.append(ratelimit.ratelimit_hit(bucket="t", address="198.51.100.7", limit=limit))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(counts) == list(range(1, workers * hits + 1))
    assert ratelimit.ratelimit_count(bucket="t", address="198.51.100.7", limit=limit) == workers * hits
    assert RateLimitCounter.objects.get().count == workers * hits


def test_a_new_window_starts_at_one_and_removes_the_expired_rows():
    limit = ratelimit.Limit(count=5, seconds=60)
    first = 1_800_000_030.0
    assert [ratelimit.ratelimit_hit(bucket="t", address="a", limit=limit, now=first) for _ in range(3)] == [1, 2, 3]
    assert ratelimit.ratelimit_hit(bucket="t", address="b", limit=limit, now=first) == 1
    assert RateLimitCounter.objects.count() == 2
    later = first + 60  # the next window: a's and b's rows have expired
    assert ratelimit.ratelimit_hit(bucket="t", address="a", limit=limit, now=later) == 1
    assert ratelimit.ratelimit_count(bucket="t", address="a", limit=limit, now=first) == 0
    assert list(RateLimitCounter.objects.values_list("count", flat=True)) == [1]


def test_an_address_too_long_for_the_key_is_counted_under_its_hash():
    limit = ratelimit.Limit(count=5, seconds=60)
    long_address = "x" * 400
    assert [ratelimit.ratelimit_hit(bucket="t", address=long_address, limit=limit) for _ in range(2)] == [1, 2]
    assert ratelimit.ratelimit_hit(bucket="t", address="x" * 399, limit=limit) == 1
    assert all(len(key) <= 255 for key in RateLimitCounter.objects.values_list("key", flat=True))


def test_successful_requests_are_not_counted():
    study = make_study(n_items=3)
    good = Client(HTTP_AUTHORIZATION=f"Token {annotators_create(study=study, count=1)[0].token}")
    for _ in range(LIMIT + 5):
        assert good.get("/api/v1/annotate/next").status_code == 200


def test_unknown_invitation_links_count_as_invalid_tokens():
    client = Client()
    for k in range(LIMIT):
        assert client.get(f"/a/guess{k}/").status_code == 404
    assert client.get("/a/guess-again/").status_code == 429
    # Pages that take no token stay open.
    assert client.get("/admin/login/").status_code == 200


@override_settings(RATELIMIT_PROLIFIC="3/60")
def test_prolific_entries_are_limited_per_address():
    study = make_study(n_items=2)
    study.prolific_study_id = "s1"
    study.save(update_fields=["prolific_study_id"])
    statuses = [Client().get(f"/p/{study.slug}/?PROLIFIC_PID=p{k}&STUDY_ID=s1&SESSION_ID=x{k}").status_code
                for k in range(4)]
    assert 429 not in statuses[:3] and statuses[3] == 429


@override_settings(RATELIMIT_TRUSTED_PROXIES=1)
def test_behind_one_proxy_the_address_is_the_one_the_proxy_saw():
    factory = RequestFactory()
    request = factory.get("/", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.9", REMOTE_ADDR="10.0.0.1")
    assert ratelimit.client_address(request) == "203.0.113.9"  # the forged left entry is ignored


def test_without_trusted_proxies_x_forwarded_for_is_ignored():
    request = RequestFactory().get("/", HTTP_X_FORWARDED_FOR="6.6.6.6", REMOTE_ADDR="10.0.0.1")
    assert ratelimit.client_address(request) == "10.0.0.1"


def test_a_failing_cache_lets_requests_through():
    class Broken:
        def __getattr__(self, name):
            raise ConnectionError("redis down")
    with mock.patch.object(ratelimit, "caches", {"ratelimit": Broken()}):
        limit = ratelimit.Limit(count=1, seconds=60)
        assert ratelimit.ratelimit_hit(bucket="t", address="a", limit=limit) == 0
        assert ratelimit.ratelimit_count(bucket="t", address="a", limit=limit) == 0


def test_a_failing_database_lets_requests_through():
    limit = ratelimit.Limit(count=1, seconds=60)
    down = OperationalError("could not connect to server")
    with mock.patch.object(ratelimit.RateLimitCounter.objects, "using", side_effect=down), \
            mock.patch.object(ratelimit.RateLimitCounter.objects, "filter", side_effect=down):
        assert ratelimit.ratelimit_hit(bucket="t", address="a", limit=limit) == 0
        assert ratelimit.ratelimit_count(bucket="t", address="a", limit=limit) == 0
    assert not RateLimitCounter.objects.exists()


@pytest.fixture
def redis_url():
    binary = shutil.which("redis-server")
    assert binary, "redis-server is required (apt-get install redis-server)"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_two_app_servers_share_the_limit_through_redis(redis_url):
    """Two cache clients (two app servers' connections to one Redis): failures counted on
    either add up, so the limit is not multiplied by the number of servers."""
    servers = [RedisCache(redis_url, {"KEY_PREFIX": "ratelimit"}) for _ in range(2)]
    client = Client(HTTP_AUTHORIZATION="Token wrong")
    for k in range(LIMIT):
        with mock.patch.object(ratelimit, "caches", {"ratelimit": servers[k % 2]}):
            assert client.get("/api/v1/annotate/next").status_code == 401
    for server in servers:
        with mock.patch.object(ratelimit, "caches", {"ratelimit": server}):
            assert client.get("/api/v1/annotate/next").status_code == 429
    servers[0].clear()


def test_answered_requests_never_touch_the_counters():
    """Valid tokens cost no counter read or write (without Redis that would be a query a request)."""
    study = make_study(n_items=2)
    good = Client(HTTP_AUTHORIZATION=f"Token {annotators_create(study=study, count=1)[0].token}")
    with mock.patch.object(ratelimit, "_cache", side_effect=AssertionError("counter touched")) as spy:
        assert good.get("/api/v1/annotate/next").status_code == 200
        assert spy.call_count == 0
        assert Client(HTTP_AUTHORIZATION="Token wrong").get("/api/v1/annotate/next").status_code == 401
        assert spy.call_count == 1  # the failure is counted (the spy's error is logged and let through)
