"""gunicorn servers of the load benchmark: start, wait until ready, find workers, stop; CPU accounting.

Both the application and the baseline run under exactly the same gunicorn
command (``gunicorn_command``), bound to a free loopback port, in their own
process group so that stopping them never leaves a worker behind.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")


def stop_group(proc: subprocess.Popen | None, *, grace: float) -> None:
    """SIGTERM the process group of ``proc`` (started with ``start_new_session``), SIGKILL after ``grace`` s."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


def gunicorn_command(*, wsgi: str, port: int, workers: int, threads: int) -> list[str]:
    """The one gunicorn command line of both apps.

    threads == 1: gunicorn's default sync workers (one request at a time each; the
    app is CPU-bound Python on 2 cores). threads > 1: gthread workers, which also
    keep working while one request waits for a row lock or the database.
    """
    return [sys.executable, "-m", "gunicorn", wsgi, "--config", str(Path(__file__).with_name("gunicorn_conf.py")),
            "--bind", f"127.0.0.1:{port}", "--workers", str(workers),
            "--worker-class", "sync" if threads <= 1 else "gthread", "--threads", str(max(1, threads)),
            "--backlog", "2048", "--timeout", "30", "--graceful-timeout", "5", "--keep-alive", "2",
            "--log-level", "warning", "--access-logfile", "-" if os.getenv("LOADTEST_ACCESS_LOG") else "/dev/null"]


class Server:
    def __init__(self, *, name: str, command: list[str], cwd: Path, env: dict[str, str], log: Path, port: int,
                 probe_path: str) -> None:
        self.name, self.command, self.cwd, self.env, self.log = name, command, cwd, env, log
        self.port, self.probe_path = port, probe_path
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60) -> None:
        with self.log.open("ab") as fh:
            self.proc = subprocess.Popen(self.command, cwd=self.cwd, env=self.env, stdout=fh, stderr=fh,
                                         start_new_session=True)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name}: gunicorn exited ({self.proc.returncode}); log:\n{self.log_tail()}")
            try:
                urllib.request.urlopen(self.url + self.probe_path, timeout=5).close()
                return
            except urllib.error.HTTPError:
                return  # any HTTP answer (401, 403, 404) means a worker is serving
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"{self.name}: not ready after {timeout:.0f} s; log:\n{self.log_tail()}")

    def _probe(self) -> float:
        started = time.perf_counter()
        try:
            urllib.request.urlopen(self.url + self.probe_path, timeout=30).close()
        except OSError:  # HTTPError (401, 404) included: the worker answered
            pass
        return time.perf_counter() - started

    def warm_up(self, *, workers: int, rounds: int = 30, timeout: float = 120) -> float:
        """Send rounds of concurrent requests until every worker answers fast; returns the seconds it took.

        Each worker loads the URL configuration — and with it every view module and
        what they import — on its first request, which costs seconds of CPU; the
        measurement is of workers that have done so (a real server's steady state).
        """
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=2 * workers) as pool:
            fast_rounds = 0
            for _round in range(rounds):
                slowest = max(pool.map(lambda _k: self._probe(), range(2 * workers)))
                fast_rounds = fast_rounds + 1 if slowest < 0.25 else 0
                if fast_rounds >= 3 or time.monotonic() - started > timeout:
                    break
        return time.monotonic() - started

    def workers(self) -> list[int]:
        return children(self.proc.pid) if self.proc else []

    def stop(self) -> None:
        stop_group(self.proc, grace=10)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _stat(pid: int) -> list[int]:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return [0, 0, 0, 0]
    return [int(fields[k]) for k in (11, 12, 13, 14)]  # utime stime cutime cstime


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of a process, its finished children (reaped) and its live children."""
    own = sum(_stat(pid))
    live = sum(sum(_stat(child)[:2]) for child in children(pid))
    return (own + live) / CLK_TCK


def postmaster_pid(data_dir: Path) -> int:
    try:
        return int((data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def server_errors(log: Path, limit: int = 12) -> str:
    """gunicorn's own messages and the last line of each traceback in a server log, counted."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    counts: dict[str, int] = {}
    for line in lines:
        if re.match(r"^\[[^]]+\] \[\d+\] \[(ERROR|CRITICAL|WARNING)\]", line):
            key = re.sub(r"^\[[^]]+\] ", "", line)  # drop the timestamp so repeats collapse
        elif re.match(r"^[\w.]+(Error|Exception): ", line) and not line.startswith("psycopg."):
            key = line[:300]
        else:
            continue
        counts[key] = counts.get(key, 0) + 1
    return "\n".join(f"{n:>5} x {key}" for key, n in list(counts.items())[-limit:])
