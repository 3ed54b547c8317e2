"""The load benchmark's fault runs prove something (bench/loadtest.py, bench/loadtest_clients.py).

A fault run fails unless a submit failed and was retried with identical bytes; the clients count
such retries by comparing each attempt's bytes. Here against a tiny server that drops the first
connection of each submit without answering, as a SIGKILLed worker does.
"""
from __future__ import annotations

import asyncio
import threading
import json
import time
from collections import Counter

import pytest

from bench.loadtest import fault_untested
from bench.loadtest_clients import RunStats, _request, client_session


def test_a_fault_run_without_a_retried_submit_tested_nothing():
    stats = RunStats()
    assert fault_untested("none", stats, None) == ""
    assert "no worker was killed" in fault_untested("kill-worker", stats, {"kills": []})
    stats.retried_identical["next"] = 3
    assert "no submit failed and was retried" in fault_untested("kill-worker", stats, {"kills": [{"at": 1.0, "pid": 9}]})
    stats.retried_identical["submit"] = 1
    assert fault_untested("kill-worker", stats, {"kills": [{"at": 1.0, "pid": 9}]}) == ""
    assert fault_untested("stop-db", stats, {"kind": "stop-db"}) == ""
    stats.retried_changed["submit"] = 1
    assert "different bytes" in fault_untested("stop-db", stats, {"kind": "stop-db"})


def _dropping_server(bodies: list[bytes]):
    """A handler that drops the first connection without an answer (as a SIGKILLed worker does), then answers."""
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length")), 0)
        bodies.append(await asyncio.wait_for(reader.readexactly(length), 5))
        if len(bodies) == 1:
            writer.transport.abort()  # connection reset, no answer
            return
        answer = json.dumps({"judgment": "j1", "revision": 1}).encode()
        writer.write(b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nConnection: close\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(answer), answer))
        await writer.drain()
        writer.close()
    return handle


@pytest.mark.parametrize("method, op, body", [("POST", "submit", b'{"ranks": {"a": 1}}'), ("GET", "next", None)])
def test_a_dropped_request_is_retried_with_identical_bytes_and_counted(method, op, body):
    """Also a GET: aiohttp would resend it once by itself, unseen, if client_session did not turn that off."""
    bodies: list[bytes] = []

    async def scenario() -> tuple[tuple[int, dict | None] | None, RunStats]:
        server = await asyncio.start_server(_dropping_server(bodies), "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        stats = RunStats()
        try:
            async with client_session(1, timeout=10) as session:
                got = await _request(session, method, f"http://127.0.0.1:{port}/x", op=op,
                                     headers={"Content-Type": "application/json"}, body=body,
                                     stop_at=time.monotonic() + 30, stats=stats)
        finally:
            server.close()
            await server.wait_closed()
        return got, stats

    # In a thread of its own: after the browser tests, Playwright's sync API keeps an event loop running in
    # the main thread, where asyncio.run() refuses to start another.
    results: list = []
    worker = threading.Thread(target=lambda: results.append(asyncio.run(asyncio.wait_for(scenario(), 60))))
    worker.start()
    worker.join(90)
    assert results, "the scenario did not finish"
    got, stats = results[0]
    assert got is not None and got[0] == 201
    assert bodies == [body or b""] * 2
    assert stats.retried_identical == Counter({op: 1}) and not stats.retried_changed
    assert sum(stats.errors.values()) == 1


def test_the_kill_finds_the_process_holding_a_client_connection():
    """The victim of a kill is a worker that holds an accepted client connection (a request in flight)."""
    import os
    import socket

    from bench.loadtest import _client_connections, _worker_sockets

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert not _client_connections(port) & _worker_sockets(os.getpid())
        with socket.create_connection(("127.0.0.1", port)) as _client:
            accepted, _ = listener.accept()
            with accepted:
                held = _client_connections(port) & _worker_sockets(os.getpid())
                assert len(held) == 1
                assert held == {str(os.fstat(accepted.fileno()).st_ino)}
