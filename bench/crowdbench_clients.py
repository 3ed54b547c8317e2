"""The crowd of the open-loop benchmark: N annotators in one asyncio process (``bench/crowdbench.py``).

Each annotator arrives at its time of the schedule, then repeats ``GET next`` → think Exp(10 s) →
``POST judgment`` → pause Exp(2 s), until the end of the measured window. The server's speed
does not set the pace: an annotator sends its next request when its think or pause time is up.
(It does wait for the answer it needs, as a person does: a slow server therefore lowers the
achieved rate below the offered one, and the report shows both.)

The load generator must stay cheap at 2,000 annotators on a shared 2-core machine: one process,
one aiohttp session whose connection pool all annotators share (keep-alive where the server
allows it: gthread workers, docs/deploy.md's; sync workers close every connection), a request's body serialised once
and sent again unchanged on retry, and only the two small JSON answers parsed. Every loop is
bounded (cycles per annotator, attempts per request, a hard deadline for submits in flight).
"""
from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from bench.crowdbench_stats import Schedule, exp_delay

MAX_CYCLES = 10_000  # per annotator; the end of the window stops them long before
MAX_ATTEMPTS = 20  # per request
REQUEST_TIMEOUT = 30.0  # seconds per attempt
#: Idle pooled connections are dropped long before gunicorn's --keep-alive (bench/crowdbench.py, KEEP_ALIVE_S)
#: would close them under us.
KEEPALIVE_S = 1.0


@dataclass(frozen=True)
class Api:
    """Where the annotators go: the app's annotation API, or the baseline app (same shape)."""
    name: str
    base_urls: tuple[str, ...]  # several: round-robin over them, request by request
    next_path: str
    submit_prefix: str
    submit_suffix: str

    def submit_path(self, assignment: str) -> str:
        return f"{self.submit_prefix}{assignment}{self.submit_suffix}"


def app_api(*base_urls: str) -> Api:
    return Api("app", tuple(base_urls), "/api/v1/annotate/next", "/api/v1/annotate/", "/judgment")


def baseline_api(*base_urls: str) -> Api:
    return Api("baseline", tuple(base_urls), "/next", "/submit/", "")


@dataclass
class CrowdStats:
    """What the annotators saw; times are seconds since the crowd's start (t0)."""
    cycle_at: list[float] = field(default_factory=list)  # each `next` an annotator decided to send
    next_at: list[float] = field(default_factory=list)  # start of the answered attempt
    next_ms: list[float] = field(default_factory=list)
    submit_at: list[float] = field(default_factory=list)
    submit_ms: list[float] = field(default_factory=list)
    ack_at: list[float] = field(default_factory=list)  # when a 201/200 {"judgment": id} arrived
    acked: dict[str, str] = field(default_factory=dict)  # judgment id -> assignment id
    errors: Counter[str] = field(default_factory=Counter)  # "op status content-type" or "op ExceptionName"
    created: int = 0
    replayed: int = 0  # 200: a retried submit the server had already stored
    exhausted: int = 0  # annotators told (204) that nothing is left for them
    gave_up: int = 0  # requests abandoned after MAX_ATTEMPTS or their deadline
    held_at_end: int = 0  # items an annotator was still thinking about when the window ended
    retried: Counter[str] = field(default_factory=Counter)  # requests answered after at least one failure


def _backoff(attempt: int, rng: random.Random) -> float:
    return min(5.0, 0.1 * 2 ** attempt) * rng.uniform(0.75, 1.25)


def _ctype(resp: aiohttp.ClientResponse) -> str:
    return resp.headers.get("Content-Type", "-").split(";", 1)[0].strip() or "-"


async def _request(session: aiohttp.ClientSession, urls: itertools.cycle[str], method: str, path: str, *, op: str,
                   headers: dict[str, str], body: bytes | None, stop_at: float, t0: float, stats: CrowdStats,
                   rng: random.Random) -> tuple[int, Any] | None:
    """(status, parsed JSON or None) of the first attempt answered 200/201/204 with JSON; None if retrying ran out.

    5xx, timeouts and connection failures are retried with the same bytes after a growing pause, on the
    next server of the round-robin; a 4xx, or a success that is not JSON, is counted and not retried.
    Every failed attempt is counted by operation, status and content type."""
    for attempt in range(MAX_ATTEMPTS):
        if attempt and time.monotonic() >= stop_at:
            break
        started = time.monotonic()
        try:
            async with session.request(method, next(urls) + path, data=body, headers=headers) as resp:
                raw = await resp.read()
                status, ctype = resp.status, _ctype(resp)
        except asyncio.TimeoutError:
            stats.errors[f"{op} timeout"] += 1
        except aiohttp.ClientError as exc:
            stats.errors[f"{op} {type(exc).__name__}"] += 1
        else:
            if status in (200, 201, 204) and (status == 204 or ctype == "application/json"):
                elapsed_ms = (time.monotonic() - started) * 1000
                if op == "next":
                    stats.next_at.append(started - t0)
                    stats.next_ms.append(elapsed_ms)
                else:
                    stats.submit_at.append(started - t0)
                    stats.submit_ms.append(elapsed_ms)
                if attempt:
                    stats.retried[op] += 1
                return status, (json.loads(raw) if raw else None)
            stats.errors[f"{op} {status} {ctype}"] += 1
            if status < 500:
                return None
        await asyncio.sleep(_backoff(attempt, rng))
    stats.gave_up += 1
    return None


async def _annotator(session: aiohttp.ClientSession, api: Api, urls: itertools.cycle[str], token: str, *,
                     arrival: float, think: float, pause: float, t0: float, end: float, hard_end: float,
                     stats: CrowdStats, rng: random.Random) -> None:
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    await asyncio.sleep(max(0.0, t0 + arrival - time.monotonic()))
    for _cycle in range(MAX_CYCLES):
        if time.monotonic() >= end:
            return
        stats.cycle_at.append(time.monotonic() - t0)
        got = await _request(session, urls, "GET", api.next_path, op="next", headers=headers, body=None,
                             stop_at=end, t0=t0, stats=stats, rng=rng)
        if got is None:
            await _sleep_until_end(exp_delay(rng, pause), end)
            continue
        status, data = got
        if status == 204 or not isinstance(data, dict):
            stats.exhausted += 1
            return
        await _sleep_until_end(exp_delay(rng, think), end)
        if time.monotonic() >= end:
            stats.held_at_end += 1
            return
        ids = [c["id"] for c in data["candidates"]]
        ranks = list(range(1, len(ids) + 1))
        rng.shuffle(ranks)
        body = json.dumps({"ranks": dict(zip(ids, ranks))}).encode()  # every retry sends these bytes
        done = await _request(session, urls, "POST", api.submit_path(str(data["assignment"])), op="submit",
                              headers=headers, body=body, stop_at=hard_end, t0=t0, stats=stats, rng=rng)
        if done is not None and isinstance(done[1], dict) and "judgment" in done[1]:
            stats.acked[str(done[1]["judgment"])] = str(data["assignment"])
            stats.ack_at.append(time.monotonic() - t0)
            if done[0] == 201:
                stats.created += 1
            else:
                stats.replayed += 1
        await _sleep_until_end(exp_delay(rng, pause), end)


async def _sleep_until_end(delay: float, end: float) -> None:
    """Sleep ``delay`` seconds, but no later than ``end``: a think time running past the window is cut, so the
    run ends with the window instead of waiting for the longest exponential draw."""
    await asyncio.sleep(max(0.0, min(delay, end - time.monotonic())))


def crowd_session(connections: int) -> aiohttp.ClientSession:
    """One session for the whole crowd (inside a running event loop): a shared connection pool."""
    connector = aiohttp.TCPConnector(limit=connections, keepalive_timeout=KEEPALIVE_S, use_dns_cache=False)
    session = aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT),
                                    auto_decompress=False, skip_auto_headers=("User-Agent",))
    # aiohttp silently resends an idempotent request once when a pooled connection turns out closed;
    # off, so every failure goes through _request's own counted retries.
    session._retry_connection = False
    return session


async def run_crowd(*, api: Api, tokens: list[str], schedule: Schedule, end: float, grace: float = 45.0,
                    seed: int = 1, t0: float | None = None, stats: CrowdStats | None = None) -> tuple[CrowdStats, float]:
    """Run one annotator per token; ``end`` is seconds after t0 when annotators stop starting cycles
    (submits already sent are seen through for up to ``grace`` more seconds). Returns the stats and t0."""
    if len(tokens) != len(schedule.arrivals):
        raise ValueError(f"{len(tokens)} tokens for {len(schedule.arrivals)} arrivals")
    stats = stats if stats is not None else CrowdStats()
    urls = itertools.cycle(api.base_urls)
    async with crowd_session(max(1, len(tokens))) as session:
        t0 = time.monotonic() if t0 is None else t0
        tasks = [_annotator(session, api, urls, token, arrival=schedule.arrivals[k], think=schedule.think,
                            pause=schedule.pause, t0=t0, end=t0 + end, hard_end=t0 + end + grace, stats=stats,
                            rng=random.Random(seed * 1_000_003 + k))
                 for k, token in enumerate(tokens)]
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=end + grace + 2 * REQUEST_TIMEOUT)
    return stats, t0
