"""The load benchmark's clients: N asyncio annotators looping next → submit over loopback.

Each client asks for its item (``GET next``), ranks the candidates at random
and submits (``POST judgment``), until the run's time is up. A failed request
— timeout, refused or reset connection, 5xx — is retried with the *identical*
payload after a growing pause: that is how the fault runs check that nothing is
lost or stored twice. Every loop is bounded: cycles per client, attempts per
request, and a hard deadline after the run for a submit still being retried.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import aiohttp

MAX_CYCLES = 100_000  # per client; the deadline ends a run long before
MAX_ATTEMPTS = 40  # per request; with the pauses below about 70 s of retrying
#: Seconds per attempt: gunicorn's worker timeout. Shorter, an overloaded app gets a retry storm: a
#: sync worker still serves the request its client gave up on, and the retry queues behind it.
REQUEST_TIMEOUT = 30.0


@dataclass
class Target:
    """Where the clients go: the app's annotation API, or the baseline app."""
    name: str
    base_url: str
    next_path: str
    submit_path: Callable[[str], str]


def app_target(base_url: str) -> Target:
    return Target("app", base_url, "/api/v1/annotate/next", lambda a: f"/api/v1/annotate/{a}/judgment")


def baseline_target(base_url: str) -> Target:
    return Target("baseline", base_url, "/next", lambda a: f"/submit/{a}")


@dataclass
class RunStats:
    next_ms: list[float] = field(default_factory=list)
    submit_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    acked: dict[str, str] = field(default_factory=dict)  # judgment id -> assignment id
    ack_times: list[float] = field(default_factory=list)  # seconds since the start
    created: int = 0  # 201
    replayed: int = 0  # 200: a retry whose first attempt had been stored
    gave_up: int = 0  # submits abandoned after MAX_ATTEMPTS or the hard deadline
    exhausted: int = 0  # clients told (204) that nothing is left
    # Requests that failed at least once and then got an answer, per operation ("next", "submit"),
    # split by whether every attempt sent the same bytes (the body's SHA-256 compared across attempts).
    retried_identical: Counter[str] = field(default_factory=Counter)
    retried_changed: Counter[str] = field(default_factory=Counter)

    def judgments_in(self, seconds: float) -> int:
        return sum(1 for t in self.ack_times if t <= seconds)


def _pause(attempt: int) -> float:
    return min(2.0, 0.05 * 2 ** attempt) * random.uniform(0.75, 1.25)


async def _request(session: aiohttp.ClientSession, method: str, url: str, *, op: str, headers: dict[str, str],
                   body: bytes | None, stop_at: float, stats: RunStats) -> tuple[int, dict | None] | None:
    """(status, JSON body) of the first attempt that is not a failure; None when retrying ran out.

    Latency is recorded for that attempt only; failures count by kind. An answer after failures counts
    as a retry, with identical or changed bytes (``RunStats.retried_*``).
    """
    sent: set[str] = set()
    for attempt in range(MAX_ATTEMPTS):
        if attempt and time.monotonic() >= stop_at:
            break
        started = time.perf_counter()
        sent.add(hashlib.sha256(body or b"").hexdigest())
        try:
            async with session.request(method, url, data=body, headers=headers) as resp:
                raw = await resp.read()
                elapsed = (time.perf_counter() - started) * 1000
                if resp.status >= 500:
                    stats.errors[f"{op} {resp.status}"] += 1
                elif resp.status in (200, 201, 204):
                    (stats.next_ms if op == "next" else stats.submit_ms).append(elapsed)
                    if attempt:
                        (stats.retried_identical if len(sent) == 1 else stats.retried_changed)[op] += 1
                    return resp.status, (json.loads(raw) if raw else None)
                else:  # 4xx: the benchmark's own bug or the app's; retrying will not help
                    stats.errors[f"{op} {resp.status}"] += 1
                    return None
        except asyncio.TimeoutError:
            stats.errors[f"{op} timeout"] += 1
        except aiohttp.ClientConnectionError as exc:
            stats.errors[f"{op} {type(exc).__name__}"] += 1
        except aiohttp.ClientError as exc:  # e.g. a malformed response from a dying worker
            stats.errors[f"{op} {type(exc).__name__}"] += 1
        await asyncio.sleep(_pause(attempt))
    return None


async def _client(session: aiohttp.ClientSession, target: Target, token: str, *, t0: float, deadline: float,
                  hard_deadline: float, stats: RunStats, rng: random.Random) -> None:
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    for _cycle in range(MAX_CYCLES):
        if time.monotonic() >= deadline:
            return
        got = await _request(session, "GET", target.base_url + target.next_path, op="next", headers=headers,
                             body=None, stop_at=deadline, stats=stats)
        if got is None:
            continue
        status, data = got
        if status == 204 or data is None:
            stats.exhausted += 1
            return
        ids = [c["id"] for c in data["candidates"]]
        ranks = list(range(1, len(ids) + 1))
        rng.shuffle(ranks)
        # Serialised once: every retry sends these very bytes.
        body = json.dumps({"ranks": dict(zip(ids, ranks))}).encode()
        # A submit started before the deadline is seen through (retries included) until the hard deadline.
        done = await _request(session, "POST", target.base_url + target.submit_path(data["assignment"]), op="submit",
                              headers=headers, body=body, stop_at=hard_deadline, stats=stats)
        if done is None or done[1] is None:
            stats.gave_up += 1
            continue
        status, answer = done
        stats.acked[answer["judgment"]] = data["assignment"]  # type: ignore[index]
        stats.ack_times.append(time.monotonic() - t0)
        if status == 201:
            stats.created += 1
        else:
            stats.replayed += 1


def client_session(connections: int, timeout: float = REQUEST_TIMEOUT) -> aiohttp.ClientSession:
    """The clients' HTTP session (inside a running event loop)."""
    # force_close: gunicorn's sync workers close every connection anyway; one fresh
    # connection a request keeps both apps and every worker class on equal terms.
    session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout),
                                    connector=aiohttp.TCPConnector(limit=connections, force_close=True))
    # aiohttp silently resends a GET once when the server drops the connection (RFC 9112's retry of
    # idempotent requests); its only switch is this private attribute. Off, so every failure — a
    # `next` cut by a killed worker included — goes through _request's own, counted retries.
    session._retry_connection = False
    return session


async def run_clients(*, target: Target, tokens: list[str], duration: float, grace: float = 75.0,
                      seed: int = 1, stats: RunStats | None = None) -> tuple[RunStats, float]:
    """Run one client per token for ``duration`` seconds; returns the stats and the start (time.monotonic()).

    ``stats``, when given, is filled as the run goes (the fault injector watches it).
    """
    stats = stats if stats is not None else RunStats()
    async with client_session(len(tokens)) as session:
        t0 = time.monotonic()
        deadline = t0 + duration
        tasks = [_client(session, target, token, t0=t0, deadline=deadline, hard_deadline=deadline + grace,
                         stats=stats, rng=random.Random(seed * 100_003 + k)) for k, token in enumerate(tokens)]
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=duration + grace + 2 * REQUEST_TIMEOUT)
    return stats, t0
