"""Fixed-window rate limits per client address, counted in a shared cache.

The counters live in the ``ratelimit`` cache alias (config/settings.py): Redis when
``REDIS_URL`` is set, so every app server behind one Redis counts the same hits, else
the ``ratelimit_cache`` table of the database (Django's database cache), which every
gunicorn worker and every app server on that database shares. A limit is
``"<count>/<seconds>"``: at most count events per address in each window of that many
seconds (windows are aligned on multiples of the length, so every server agrees on the
window without talking).

Counting is atomic on both: Redis' INCR; in the database, ``add`` then ``incr`` inside one
transaction that holds the counter's row (SQLite's IMMEDIATE transactions take the write
lock at BEGIN; PostgreSQL locks the row with SELECT … FOR UPDATE), so failures on two
workers at the same moment are both counted. The table is created on first use if
``createcachetable`` was not run (docs/deploy.md).

If the cache itself fails the request is let through (and logged): a Redis outage
must not lock annotators out.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.db import DatabaseCache
from django.core.management import call_command
from django.db import connections, router, transaction
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


_tables_ready: set[str] = set()


def _cache() -> BaseCache:
    """The ``ratelimit`` cache; a database cache's table is created the first time a process needs it."""
    cache = caches["ratelimit"]
    if isinstance(cache, DatabaseCache):
        db = router.db_for_write(cache.cache_model_class)
        if db not in _tables_ready:
            table = cache.cache_model_class._meta.db_table
            if table not in connections[db].introspection.table_names():
                try:
                    call_command("createcachetable", database=db, verbosity=0)
                except Exception:  # noqa: BLE001 - another worker created it at the same moment?
                    if table not in connections[db].introspection.table_names():
                        raise
            _tables_ready.add(db)
    return cache


def ratelimit_count(*, bucket: str, address: str, limit: Limit, now: float | None = None) -> int:
    """Events counted so far in the current window (0 when the cache is unreachable)."""
    try:
        return int(_cache().get(_key(bucket, address, limit, now or time.time()), 0))
    except Exception:  # noqa: BLE001 - any cache failure: fail open, see the module docstring
        logger.exception("rate-limit cache unreachable")
        return 0


def _add_and_incr(cache: BaseCache, key: str, timeout: int) -> int:
    cache.add(key, 0, timeout=timeout)
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=timeout)
        return 1


def ratelimit_hit(*, bucket: str, address: str, limit: Limit, now: float | None = None) -> int:
    """Count one event; returns the window's count including it (atomically, see the module docstring)."""
    key = _key(bucket, address, limit, now or time.time())
    try:
        cache = _cache()
        if not isinstance(cache, DatabaseCache):
            return _add_and_incr(cache, key, limit.seconds + 1)
        db = router.db_for_write(cache.cache_model_class)
        connection = connections[db]
        with transaction.atomic(using=db):
            cache.add(key, 0, timeout=limit.seconds + 1)
            if connection.features.has_select_for_update:
                table = connection.ops.quote_name(cache.cache_model_class._meta.db_table)
                with connection.cursor() as cursor:
                    cursor.execute(f"SELECT cache_key FROM {table} WHERE cache_key = %s FOR UPDATE",
                                   [cache.make_and_validate_key(key)])
            return _add_and_incr(cache, key, limit.seconds + 1)
    except Exception:  # noqa: BLE001
        logger.exception("rate-limit cache unreachable")
        return 0


def retry_after(limit: Limit, now: float | None = None) -> int:
    now = now or time.time()
    return max(1, int(limit.seconds - now % limit.seconds + 0.999))
