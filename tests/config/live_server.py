"""A real gunicorn serving the project on a free loopback port, on a temporary SQLite database.

Used by the tests that must go through a real HTTP server rather than Django's test client
(chunked bodies decoded by gunicorn, rate limits shared by several worker processes,
schemathesis over HTTP). The database is migrated and seeded by a child process
(tests/config/live_seed.py), so the test process's own test database is untouched; the
server's environment sets the limits the test wants. Every wait is bounded, and ``stop``
kills the whole process group (gunicorn's workers included).
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveServer:
    def __init__(self, *, workers: int = 2, env: dict[str, str] | None = None) -> None:
        self.directory = tempfile.TemporaryDirectory(prefix="dmt-live-")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "SQLITE_PATH": str(Path(self.directory.name) / "db.sqlite3"),
                    "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "0", "SECRET_KEY": "live-server-test",
                    "TASKS_BACKEND": "immediate", **(env or {})}
        self.env.pop("DATABASE_URL", None)  # always the temporary SQLite file
        self.env.pop("REDIS_URL", None)
        self.workers = workers
        self.log = Path(self.directory.name) / "gunicorn.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.world: dict[str, Any] = {}

    @property
    def log_dir(self) -> Path:
        return Path(self.directory.name)

    def start(self, timeout: float = 90) -> None:
        seeded = subprocess.run([sys.executable, str(Path(__file__).with_name("live_seed.py"))], cwd=ROOT,
                                env=self.env, capture_output=True, text=True, timeout=timeout)
        assert seeded.returncode == 0, seeded.stderr[-3000:]
        self.world = json.loads(seeded.stdout.strip().splitlines()[-1])
        with self.log.open("ab") as fh:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{self.port}",
                 "--workers", str(self.workers), "--timeout", "60", "--graceful-timeout", "2",
                 "--log-level", "warning", "--config", str(ROOT / "bench" / "gunicorn_conf.py"),
                 # Which worker (pid) answered which token: tests check that both workers served.
                 "--access-logfile", str(self.log_dir / "access.log"),
                 "--access-logformat", "%(p)s %(s)s %({authorization}i)s"],
                cwd=ROOT, env=self.env, stdout=fh, stderr=fh, start_new_session=True)
        end = time.monotonic() + timeout
        while True:
            assert self.proc.poll() is None, f"gunicorn exited; log:\n{self.log_tail()}"
            try:
                urllib.request.urlopen(self.url + "/api/v1/annotate/next", timeout=5).close()
                return
            except urllib.error.HTTPError:
                return  # answered (401): a worker is serving
            except OSError:
                assert time.monotonic() < end, f"gunicorn not ready after {timeout:.0f} s; log:\n{self.log_tail()}"
                time.sleep(0.2)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=15)
            except ProcessLookupError:
                pass
        self.directory.cleanup()

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def raw(self, request: bytes, timeout: float = 20) -> tuple[int, dict[str, str], bytes]:
        """Send raw bytes over one connection (``Connection: close``); (status, headers, body)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            sock.sendall(request)
            chunks = []
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                data = sock.recv(65536)
                if not data:
                    break
                chunks.append(data)
        head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        if "chunked" in headers.get("transfer-encoding", ""):
            body = dechunked(body)
        return status, headers, body


def dechunked(data: bytes) -> bytes:
    out, rest = [], data
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out.append(rest[:size])
        rest = rest[size + 2:]
    return b"".join(out)


def chunked(body: bytes, size: int = 1000) -> bytes:
    """``body`` in the chunked transfer coding, ``size`` bytes a chunk."""
    parts = [b"%x\r\n%s\r\n" % (len(body[k:k + size]), body[k:k + size]) for k in range(0, len(body), size)]
    return b"".join(parts) + b"0\r\n\r\n"
