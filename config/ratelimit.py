"""Fixed-window rate limits per client address, counted in a shared cache.

The counters live in the ``ratelimit`` cache alias (config/settings.py): Redis when
``REDIS_URL`` is set, so every app server behind one Redis counts the same hits,
per-process memory otherwise. A limit is ``"<count>/<seconds>"``: at most count
events per address in each window of that many seconds (windows are aligned on
multiples of the length, so every server agrees on the window without talking).

If the cache itself fails the request is let through (and logged): a Redis outage
must not lock annotators out.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest

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
    return f"{bucket}:{address}:{int(now // limit.seconds)}"


def ratelimit_count(*, bucket: str, address: str, limit: Limit, now: float | None = None) -> int:
    """Events counted so far in the current window (0 when the cache is unreachable)."""
    try:
        return int(caches["ratelimit"].get(_key(bucket, address, limit, now or time.time()), 0))
    except Exception:  # noqa: BLE001 - any cache failure: fail open, see the module docstring
        logger.exception("rate-limit cache unreachable")
        return 0


def ratelimit_hit(*, bucket: str, address: str, limit: Limit, now: float | None = None) -> int:
    """Count one event; returns the window's count including it. ``add`` then ``incr`` is atomic
    in Redis (INCR) and under the lock of the local-memory cache."""
    cache = caches["ratelimit"]
    key = _key(bucket, address, limit, now or time.time())
    try:
        cache.add(key, 0, timeout=limit.seconds + 1)
        try:
            return int(cache.incr(key))
        except ValueError:  # expired between add and incr
            cache.add(key, 1, timeout=limit.seconds + 1)
            return 1
    except Exception:  # noqa: BLE001
        logger.exception("rate-limit cache unreachable")
        return 0


def retry_after(limit: Limit, now: float | None = None) -> int:
    now = now or time.time()
    return max(1, int(limit.seconds - now % limit.seconds + 0.999))
