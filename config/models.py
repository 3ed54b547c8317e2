"""The project's tables: the rate-limit counters of config/ratelimit.py when REDIS_URL is not set."""
from __future__ import annotations

from django.db import models

#: A counter's key is ``<bucket>:<address>:<window>``; config/ratelimit.py hashes an address that would not fit.
KEY_MAX_LENGTH = 255


class RateLimitCounter(models.Model):
    """Events of one kind from one client address in one fixed window (config/ratelimit.py).

    ``key`` is ``<bucket>:<address>:<window number>``; a row is deleted once ``expires`` (the window's
    end) has passed, by the next request that opens a window.
    """

    key = models.CharField(max_length=KEY_MAX_LENGTH, unique=True)
    count = models.PositiveIntegerField(default=0)
    expires = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.key}: {self.count}"
