"""A throwaway PostgreSQL cluster for the load benchmark (``bench/loadtest.py``).

The benchmark never touches the shared server on port 5432: it runs ``initdb``
into a temporary directory, starts that cluster on a free loopback port, and
removes it at the end — also on an error or Ctrl-C. Its own cluster is what
makes the "stop PostgreSQL for ~10 s" fault run possible.

initdb and the server refuse to run as root; as root, every PostgreSQL program
runs as the ``postgres`` system user (``runuser -u postgres --``) and the
temporary directory is handed to that user.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

#: Settings of the benchmark cluster (docs/load.md explains each). Durability stays
#: on (fsync, synchronous_commit, full_page_writes): "zero lost" must mean committed.
SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "max_connections": "300",
    "shared_buffers": "512MB",
    "work_mem": "8MB",
    "maintenance_work_mem": "256MB",
    "effective_cache_size": "4GB",
    "max_wal_size": "4GB",  # no forced checkpoint in the middle of a run or an import
    "checkpoint_timeout": "30min",
    "random_page_cost": "1.1",
    "fsync": "on",
    "synchronous_commit": "on",
    "full_page_writes": "on",
    "shared_preload_libraries": "'pg_stat_statements'",  # the top statements, printed with --explain
    "pg_stat_statements.track": "top",
    "log_min_messages": "warning",
    "log_line_prefix": "'%m [%p] '",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pg_bin(name: str) -> str:
    """Path of a PostgreSQL program: on PATH, else the newest /usr/lib/postgresql/*/bin."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if not candidates:
        raise SystemExit(f"PostgreSQL program {name!r} not found (install postgresql)")
    return candidates[-1]


class Cluster:
    """initdb + pg_ctl start/stop of a temporary cluster; ``remove()`` always cleans up."""

    def __init__(self, *, explain: bool = False) -> None:
        self.explain = explain
        self.as_root = os.geteuid() == 0
        self.dir = Path(tempfile.mkdtemp(prefix="dmt-loadtest-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "server.log"
        self.port = free_port()
        self.running = False
        if self.as_root:
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)

    def _run(self, args: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
        cmd = (["runuser", "-u", "postgres", "--"] if self.as_root else []) + args
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=self.dir)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip() or proc.stdout.strip()}")
        return proc

    def init(self) -> None:
        self._run([pg_bin("initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                   "--encoding=UTF8", "--locale=C.UTF-8", "--no-instructions"])
        settings = dict(SETTINGS, port=str(self.port), unix_socket_directories=f"'{self.dir}'")
        if self.explain:
            # Plans of slow statements with their real row counts (EXPLAIN ANALYZE, without
            # per-node timing, which would slow every query): read back by Cluster.slow_plans().
            settings["shared_preload_libraries"] = "'pg_stat_statements,auto_explain'"
            settings.update({"auto_explain.log_min_duration": "'20ms'", "auto_explain.log_analyze": "on",
                             "auto_explain.log_timing": "off", "auto_explain.log_buffers": "on",
                             "auto_explain.log_nested_statements": "on"})
        with (self.data / "postgresql.conf").open("a") as fh:
            fh.write("\n# dmt load benchmark\n")
            fh.writelines(f"{key} = {value}\n" for key, value in settings.items())

    def start(self) -> None:
        self._run([pg_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "start"])
        self.running = True

    def stop(self, mode: str = "fast") -> None:
        self._run([pg_bin("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop"])
        self.running = False

    def url(self, dbname: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{dbname}"

    def createdb(self, name: str) -> None:
        self._run([pg_bin("createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name])

    def wait_ready(self, timeout: float = 30) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                self._run([pg_bin("pg_isready"), "-h", "127.0.0.1", "-p", str(self.port), "-t", "2"], timeout=5)
                return True
            except (RuntimeError, subprocess.TimeoutExpired):
                time.sleep(0.2)
        return False

    def slow_plans(self, *, needle: str, limit: int = 1) -> list[str]:
        """The slowest auto_explain plans in the server log whose text mentions ``needle``."""
        if not self.log.exists():
            return []
        text = self.log.read_text(errors="replace")
        plans: list[tuple[float, str]] = []
        for chunk in text.split("LOG:  duration: ")[1:]:
            head, _, _ = chunk.partition(" ms")
            body = chunk.split("\n20")[0]  # up to the next log line (timestamps start with the year)
            if needle in body and "plan:" in body:
                try:
                    plans.append((float(head), "duration: " + body.strip()))
                except ValueError:
                    continue
        plans.sort(key=lambda p: -p[0])
        return [p for _, p in plans[:limit]]

    def remove(self) -> None:
        if self.running:
            try:
                self.stop("immediate")
            except (RuntimeError, subprocess.TimeoutExpired):
                pass
        shutil.rmtree(self.dir, ignore_errors=True)
