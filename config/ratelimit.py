"""Fixed-window rate limits per client address, counted where every app server sees the same count.

With ``REDIS_URL`` the counters live in the ``ratelimit`` cache alias (config/settings.py), so every
app server behind one Redis counts the same hits: ``cache.add`` then ``cache.incr``, atomic through
Redis' INCR. Without Redis there is no such alias and each counter is a row of
``config.models.RateLimitCounter`` in the database, which every gunicorn worker and every app server
on that database shares: one ``UPDATE … SET count = count + 1`` (``F()``), a row inserted when the
window has none (a unique key: of two workers inserting at once, the loser updates instead), and
the count read back in the same transaction, which holds the row's lock (PostgreSQL) or the write
lock (SQLite's IMMEDIATE transactions), so failures on two workers at the same moment are both
counted. A limit is ``"<count>/<seconds>"``: at most count events per address in each window of that
many seconds (windows are aligned on multiples of the length, so every server agrees on the window
without talking). A row outlives its window by nothing: whoever opens a new window deletes the
expired rows.

If the store itself fails the request is let through (and logged): a Redis or database outage
must not lock annotators out.
"""
from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.base import BaseCache
from django.db import IntegrityError, router, transaction
from django.db.models import F
from django.http import HttpRequest

from config.models import KEY_MAX_LENGTH, RateLimitCounter

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limit:
    count: int
    seconds: int

    @classmethod
    def parse(cls, text: str) -> "Limit":
        count, _, seconds = text.partition("/")
        return cls(count=int(count), seconds=int(seconds or 60))


def client_address(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or, behind N trusted proxies, the N-th address from the
    right of X-Forwarded-For (each proxy appends the address it saw; entries further left are the
    client's own claims and can be forged)."""
    proxies = settings.RATELIMIT_TRUSTED_PROXIES
    if proxies > 0:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
        if len(forwarded) >= proxies:
            return forwarded[-proxies]
    return request.META.get("REMOTE_ADDR", "") or "unknown"


def _key(bucket: str, address: str, limit: Limit, now: float) -> str:
    window = int(now // limit.seconds)
    key = f"{bucket}:{address}:{window}"
    if len(key) > KEY_MAX_LENGTH:  # an absurd forwarded address
        key = f"{bucket}:{hashlib.sha256(address.encode()).hexdigest()}:{window}"
    return key


def _cache() -> BaseCache | None:
    """The ``ratelimit`` cache when one is configured (Redis), else None: the counters are database rows."""
    return caches["ratelimit"] if "ratelimit" in caches else None


def ratelimit_count(*, bucket: str, address: str, limit: Limit, now: float | None = None) -> int:
    """Events counted so far in the current window (0 when the store is unreachable)."""
    key = _key(bucket, address, limit, now or time.time())
    try:
        cache = _cache()
        if cache is not None:
            return int(cache.get(key, 0))
        return RateLimitCounter.objects.filter(key=key).values_list("count", flat=True).first() or 0
    except Exception:  # noqa: BLE001 - any store failure: fail open, see the module docstring
        logger.exception("rate-limit store unreachable")
        return 0


def _add_and_incr(cache: BaseCache, key: str, timeout: int) -> int:
    cache.add(key, 0, timeout=timeout)
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=timeout)
        return 1


def _count_in_database(key: str, *, now: float, expires: float) -> int:
    db = router.db_for_write(RateLimitCounter)
    counters = RateLimitCounter.objects.using(db)
    with transaction.atomic(using=db):
        if not counters.filter(key=key).update(count=F("count") + 1):
            counters.filter(expires__lt=datetime.fromtimestamp(now, tz=timezone.utc)).delete()
            try:
                with transaction.atomic(using=db):
                    counters.create(key=key, count=1,
                                    expires=datetime.fromtimestamp(expires, tz=timezone.utc))
                return 1
            except IntegrityError:  # another worker opened the window at the same moment
                counters.filter(key=key).update(count=F("count") + 1)
        return counters.filter(key=key).values_list("count", flat=True).get()


def ratelimit_hit(*, bucket: str, address: str, limit: Limit, now: float | None = None) -> int:
    """Count one event; returns the window's count including it (atomically, see the module docstring)."""
    now = now or time.time()
    key = _key(bucket, address, limit, now)
    try:
        cache = _cache()
        if cache is not None:
            return _add_and_incr(cache, key, limit.seconds + 1)
        return _count_in_database(key, now=now, expires=(now // limit.seconds + 1) * limit.seconds)
    except Exception:  # noqa: BLE001
        logger.exception("rate-limit store unreachable")
        return 0


def retry_after(limit: Limit, now: float | None = None) -> int:
    now = now or time.time()
    return max(1, int(limit.seconds - now % limit.seconds + 0.999))
