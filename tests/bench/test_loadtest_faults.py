"""The load benchmark's fault runs prove something (bench/loadtest.py, bench/loadtest_clients.py).

A fault run fails unless a submit failed and was retried with identical bytes; the clients count
such retries by comparing each attempt's bytes. Here against a tiny server that drops the first
connection of each submit without answering, as a SIGKILLed worker does.
"""
from __future__ import annotations

import asyncio
import json
from collections import Counter

import aiohttp

from bench.loadtest import fault_untested
from bench.loadtest_clients import RunStats, _request


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


def test_a_dropped_submit_is_retried_with_identical_bytes_and_counted():
    bodies: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        bodies.append(await asyncio.wait_for(reader.readexactly(length), 5))
        if len(bodies) == 1:
            writer.transport.abort()  # the worker dies mid-request: no answer, connection reset
            return
        answer = json.dumps({"judgment": "j1", "revision": 1}).encode()
        writer.write(b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nConnection: close\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(answer), answer))
        await writer.drain()
        writer.close()

    async def scenario() -> tuple[tuple[int, dict] | None, RunStats]:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        stats = RunStats()
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10),
                                             connector=aiohttp.TCPConnector(force_close=True)) as session:
                got = await _request(session, "POST", f"http://127.0.0.1:{port}/submit", op="submit",
                                     headers={"Content-Type": "application/json"}, body=b'{"ranks": {"a": 1}}',
                                     stop_at=asyncio.get_running_loop().time() + 30, stats=stats)
        finally:
            server.close()
            await server.wait_closed()
        return got, stats

    got, stats = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert got is not None and got[0] == 201
    assert bodies == [b'{"ranks": {"a": 1}}'] * 2
    assert stats.retried_identical == Counter({"submit": 1}) and not stats.retried_changed
    assert sum(stats.errors.values()) == 1
