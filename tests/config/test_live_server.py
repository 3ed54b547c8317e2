"""Through a real gunicorn (tests/config/live_server.py): chunked bodies, rate limits shared by workers.

Two sync workers on a temporary SQLite database, with a small body limit and a small
invalid-token limit set for the test. Requests are raw bytes over sockets, so the chunked
transfer coding is exactly what a streaming client sends.
"""
from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.config.live_server import LiveServer, chunked

BODY_LIMIT = 4096
TOKEN_LIMIT = 4


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    server = LiveServer(workers=2, env={"DATA_UPLOAD_MAX_MEMORY_SIZE": str(BODY_LIMIT),
                                        "RATELIMIT_INVALID_TOKENS": f"{TOKEN_LIMIT}/600"})
    try:
        server.start()
        yield server
    finally:
        server.stop()


def _submit(live: LiveServer, body: bytes) -> bytes:
    world = live.world
    return (f"POST /api/v1/annotate/{world['assignment']}/judgment HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Token {world['annotator_token']}\r\nContent-Type: application/json\r\n"
            f"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n").encode() + chunked(body, size=100)


def test_a_chunked_body_over_the_limit_is_a_413_json(live: LiveServer) -> None:
    ranks = {cid: k + 1 for k, cid in enumerate(live.world["candidates"])}
    status, headers, body = live.raw(_submit(live, json.dumps({"ranks": ranks, "pad": "x" * BODY_LIMIT}).encode()))
    assert status == 413, body
    assert headers["content-type"] == "application/json"
    assert f"{BODY_LIMIT} bytes" in json.loads(body)["detail"]


def test_a_chunked_valid_submit_through_gunicorn_is_201(live: LiveServer) -> None:
    ranks = {cid: k + 1 for k, cid in enumerate(live.world["candidates"])}
    status, _headers, body = live.raw(_submit(live, json.dumps({"ranks": ranks}).encode()))
    assert status == 201, body
    assert json.loads(body)["revision"] == 1


def _get(path: str, token: str) -> bytes:
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token {token}\r\n"
            f"Connection: close\r\n\r\n").encode()


def _status_while_the_other_worker_is_busy(live: LiveServer, request: bytes) -> tuple[int, int]:
    """Two bad-token requests answered by the two different workers: the first connection sends an
    incomplete request, which holds one sync worker, so the second is served by the other worker."""
    with socket.create_connection(("127.0.0.1", live.port), timeout=20) as held:
        held.sendall(request[:-2])  # the final CRLF missing: the worker waits for the rest
        time.sleep(0.3)
        second = live.raw(request)[0]
        held.sendall(request[-2:])
        held.settimeout(20)
        first = int(held.recv(65536).split(b" ", 2)[1])
    return first, second


def test_the_invalid_token_limit_is_shared_by_the_workers_and_spares_valid_tokens(live: LiveServer) -> None:
    bad = _get("/api/v1/annotate/next", "not-a-real-token")
    statuses: list[int] = []
    for _pair in range(TOKEN_LIMIT // 2):
        statuses.extend(_status_while_the_other_worker_is_busy(live, bad))
    assert statuses == [401] * TOKEN_LIMIT
    # Each worker has seen TOKEN_LIMIT/2 failures: only a count both share reaches the limit.
    served_by = {line.split()[0] for line in Path(live.log_dir, "access.log").read_text().splitlines()
                 if line.endswith("not-a-real-token") and " 401 " in line}
    assert len(served_by) == 2, served_by
    assert live.raw(bad)[0] == 429
    assert live.raw(bad)[0] == 429
    # The same address with a valid annotator token or staff token is still served.
    assert live.raw(_get("/api/v1/annotate/next", live.world["annotator_token"]))[0] == 200
    assert live.raw(_get("/api/v1/studies/", live.world["staff_token"]))[0] == 200
