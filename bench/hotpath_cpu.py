"""CPU and statements per judgment of the annotation API, one client at a time (``make hotpath``; docs/load.md).

What ``make loadtest`` measures under 100 concurrent clients, without the concurrency: on a
shared machine its throughput moves with the other load, while the CPU a judgment costs and
the statements it sends do not. One run:

1. its own PostgreSQL cluster (bench/pgcluster.py, the settings of ``make loadtest``) with the
   load benchmark's 2,000-item ranking study (``bench/loadtest.py``'s cached dump) and
   ``--annotators`` invited annotators;
2. in this process, the app's WSGI handler (``config.wsgi``, ``DEBUG=False``, the full middleware
   stack, ``CONN_MAX_AGE=60``) called with request environs as gunicorn builds them: the annotators
   take turns, ``GET /api/v1/annotate/next`` then ``POST …/judgment`` with a valid ranking;
   ``--warm-up`` judgments first, then ``--judgments`` measured;
3. the figures: CPU milliseconds per judgment of this process (``time.process_time``: Python,
   Django, psycopg) and of PostgreSQL (the postmaster's process tree from ``/proc``), and every
   statement PostgreSQL ran for them (``pg_stat_statements``, transaction control and
   connection health checks included: each is a round trip; the foreign-key checks that run inside
   an INSERT are listed too), per judgment, each with its execution time. The PostgreSQL figure is the whole cluster's; the
   per-process line shows the live processes only (an autovacuum worker that ended during the run
   is in the total alone).

No network between client and app and no gunicorn: the app's own cost. ``--profile`` prints a
cProfile of the measured judgments by CPU time (``time.process_time`` as its clock).

Usage: ``python bench/hotpath_cpu.py [--judgments 1000] [--warm-up 200] [--annotators 20] [--profile]``.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.loadtest import prepare_app_db  # noqa: E402
from bench.loadtest_servers import children, postmaster_pid, tree_cpu_seconds  # noqa: E402
from bench.pgcluster import Cluster  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _environ(method: str, path: str, token: str, body: bytes = b"") -> dict[str, Any]:
    """A WSGI environ as gunicorn gives it for a request from the load benchmark's clients."""
    return {
        "REQUEST_METHOD": method, "SCRIPT_NAME": "", "PATH_INFO": path, "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1", "REMOTE_PORT": "40000", "HTTP_HOST": "127.0.0.1:8000",
        "HTTP_AUTHORIZATION": f"Token {token}", "HTTP_ACCEPT": "*/*", "HTTP_USER_AGENT": "hotpath",
        "HTTP_CONNECTION": "close",
        **({"CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body))} if method == "POST" else {}),
        "wsgi.input": io.BytesIO(body), "wsgi.errors": sys.stderr, "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http", "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False,
    }


def _call(app: Callable[..., Any], environ: dict[str, Any]) -> tuple[int, bytes]:
    status: list[str] = []
    result = app(environ, lambda s, headers, exc_info=None: status.append(s))
    try:
        body = b"".join(result)
    finally:
        if hasattr(result, "close"):
            result.close()
    return int(status[0].split()[0]), body


def judge(app: Callable[..., Any], token: str) -> bool:
    """One next → submit of an annotator; False when the study has nothing left for them."""
    code, body = _call(app, _environ("GET", "/api/v1/annotate/next", token))
    if code == 204:
        return False
    if code != 200:
        raise SystemExit(f"hotpath: next answered {code}: {body[:300]!r}")
    data = json.loads(body)
    ranks = {c["id"]: k + 1 for k, c in enumerate(data["candidates"])}
    payload = json.dumps({"ranks": ranks}).encode()
    code, body = _call(app, _environ("POST", f"/api/v1/annotate/{data['assignment']}/judgment", token, payload))
    if code != 201:
        raise SystemExit(f"hotpath: submit answered {code}: {body[:300]!r}")
    return True


def _processes(postmaster: int) -> dict[str, float]:
    """CPU seconds (utime + stime) of each live PostgreSQL process by its title (backend, WAL writer, …)."""
    out: dict[str, float] = {}
    for pid in children(postmaster):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        title = " ".join(title.removeprefix("postgres: ").split()[:2])
        out[f"{title} [{pid}]"] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return out


def statements(url: str) -> list[tuple[int, float, str]]:
    """(calls, total execution ms, text) of every statement since the last reset."""
    with psycopg.connect(url, autocommit=True) as conn:
        return [(int(calls), float(ms), " ".join(query.split())) for calls, ms, query in conn.execute(
            "SELECT calls, total_exec_time, query FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database "
            "WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%' "
            "ORDER BY calls DESC, query").fetchall()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judgments", type=int, default=1000)
    parser.add_argument("--warm-up", type=int, default=200)
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the measured judgments (CPU time)")
    parser.add_argument("--cache-dir", default=os.path.join(tempfile.gettempdir(), "dmt-loadtest-cache"))
    args = parser.parse_args()
    # Each item takes 3 judgments (redundancy 3): the run must not exhaust the study.
    if not 1 <= args.judgments + args.warm_up <= args.items * 2 or not 1 <= args.annotators <= 1000:
        parser.error("--judgments + --warm-up: 1 to 2 x --items; --annotators 1-1000")
    setup = argparse.Namespace(items=args.items, redundancy=3, cache_dir=args.cache_dir, no_cache=False,
                               clients=args.annotators)
    cluster = Cluster()
    tmp = Path(tempfile.mkdtemp(prefix="dmt-hotpath-"))
    try:
        cluster.init()
        cluster.start()
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "DEBUG")}
        env.update(SECRET_KEY=secrets.token_urlsafe(32), DEBUG="False", ALLOWED_HOSTS="127.0.0.1,localhost",
                   LOG_LEVEL="WARNING", CONN_MAX_AGE="60", DATABASE_URL=cluster.url("app"),
                   DJANGO_SETTINGS_MODULE="config.settings")
        slug = prepare_app_db(cluster=cluster, env=env, args=setup, log=tmp / "setup.log")
        with psycopg.connect(cluster.url("app"), autocommit=True) as conn:
            tokens = [r[0] for r in conn.execute(
                "SELECT n.token FROM annotation_annotator n JOIN studies_study s ON s.id = n.study_id "
                "WHERE s.slug = %s ORDER BY n.sequence", [slug]).fetchall()]
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        os.environ.update(env)
        from django.urls import get_resolver

        from config.wsgi import application as app
        get_resolver().url_patterns  # noqa: B018 — as bench/gunicorn_conf.py: the URLconf loaded before measuring

        done = 0
        for k in range(args.warm_up):
            done += judge(app, tokens[k % len(tokens)])
        collections = [0, 0, 0]
        gc_seconds = 0.0
        gc_started = 0.0

        def gc_timer(phase: str, info: dict[str, int]) -> None:
            nonlocal gc_seconds, gc_started
            if phase == "start":
                gc_started = time.process_time()
            else:
                gc_seconds += time.process_time() - gc_started
                collections[info["generation"]] += 1
        with psycopg.connect(cluster.url("app"), autocommit=True) as conn:
            conn.execute("SELECT pg_stat_statements_reset()")
        postmaster = postmaster_pid(cluster.data)
        profiler = cProfile.Profile(time.process_time) if args.profile else None
        procs0 = _processes(postmaster)
        pg0, py0, wall0 = tree_cpu_seconds(postmaster), time.process_time(), time.perf_counter()
        if profiler:
            profiler.enable()
        gc.callbacks.append(gc_timer)
        measured = 0
        for k in range(args.judgments):
            measured += judge(app, tokens[(args.warm_up + k) % len(tokens)])
        gc.callbacks.remove(gc_timer)
        if profiler:
            profiler.disable()
        py, pg, wall = time.process_time() - py0, tree_cpu_seconds(postmaster) - pg0, time.perf_counter() - wall0
        procs = {title: cpu - procs0.get(title, 0.0) for title, cpu in _processes(postmaster).items()}
        from django.db import connections
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_prepared_statements")
            prepared = cursor.fetchone()[0]
        connections.close_all()
        ran = statements(cluster.url("app"))
        n = max(measured, 1)
        print(f"hotpath: {measured} judgments (next + submit) by {len(tokens)} annotators taking turns, "
              f"after {done} to warm up; {args.items:,}-item study; load average {os.getloadavg()[0]:.2f}")
        print(f"CPU per judgment: app {1000 * py / n:.2f} ms + PostgreSQL {1000 * pg / n:.2f} ms = "
              f"{1000 * (py + pg) / n:.2f} ms (wall {1000 * wall / n:.2f} ms)")
        print(f"  of the app's: the garbage collector {1000 * gc_seconds / n:.3f} ms ({collections[0]}, "
              f"{collections[1]} and {collections[2]} collections of generations 0, 1 and 2)")
        print("  PostgreSQL by process: " + ", ".join(
            f"{title} {1000 * cpu / n:.2f} ms" for title, cpu in sorted(procs.items(), key=lambda kv: -kv[1]) if cpu))
        total = sum(calls for calls, _ms, _query in ran)
        print(f"statements per judgment (round trips to PostgreSQL, foreign-key checks inside them "
              f"included): {total / n:.2f}; prepared statements on the app's connection: {prepared}")
        print(f"  per judgment: calls, execution ms (pg_stat_statements), statement; execution in all "
              f"{sum(ms for _calls, ms, _query in ran) / n:.3f} ms")
        for calls, ms, query in ran:
            print(f"  {calls / n:5.2f}  {ms / n:6.3f}  {query[:150]}")
        if profiler:
            out = io.StringIO()
            stats = pstats.Stats(profiler, stream=out)
            stats.strip_dirs().sort_stats("cumulative").print_stats(40)
            stats.sort_stats("tottime").print_stats(30)
            print(out.getvalue())
    finally:
        cluster.remove()


if __name__ == "__main__":
    main()
