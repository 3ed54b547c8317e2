"""Open-loop crowd benchmark of the annotation API (``make crowdbench N=2000``; docs/load.md).

One run: a throwaway PostgreSQL cluster (bench/pgcluster.py); a generated ranking study big enough
for N annotators, imported once and cached (bench/loadtest.py's ``prepare_app_db``); the app
under gunicorn with docs/deploy.md's command; N annotators in one asyncio process
(bench/crowdbench_clients.py) arriving over ``--ramp`` seconds, each repeating next → think
Exp(10 s) → submit → pause Exp(2 s); a measured window of ``--duration`` seconds once the crowd
has settled: offered and achieved judgments/s, latency percentiles, errors by status and
content type, the CPU of the gunicorn and PostgreSQL process trees from /proc per judgment, the
load generator's own CPU, the machine's load; then the integrity of what the database holds;
then the same crowd against the bare baseline app (bench/baseline/) under the same gunicorn
command. Prints a table and writes JSON to bench/results/crowdbench-N.json.

Usage: ``python bench/crowdbench.py [--annotators 2000] [--duration 60] [--workers 5] [--threads 1]
[--worker-class sync|gthread] [--explain] [--profile] [--no-baseline]``.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import crowdbench_stats as cs  # noqa: E402
from bench.crowdbench_clients import Api, CrowdStats, app_api, baseline_api, run_crowd  # noqa: E402
from bench.crowdbench_report import print_table, side_result  # noqa: E402
from bench.loadtest import prepare_app_db, prepare_baseline_db, top_statements  # noqa: E402
from bench.loadtest_integrity import integrity_check  # noqa: E402
from bench.loadtest_profile import profile_summary  # noqa: E402
from bench.loadtest_servers import Server, postmaster_pid, server_errors  # noqa: E402
from bench.pgcluster import Cluster, free_port  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "bench" / "baseline"
#: docs/deploy.md's access log format: the path with the token cut (the X-Log-Path response header).
#: Seconds the warm server is watched idle before the crowd starts.
IDLE_S = 5.0
#: docs/deploy.md's --keep-alive (seconds an idle connection stays open: longer than the proxy keeps one idle).
KEEP_ALIVE_S = "75"
ACCESS_LOG_FORMAT = '%(h)s %(t)s "%(m)s %({x-log-path}o)s %(H)s" %(s)s %(B)s %(D)sus "%(a)s"'


def gunicorn_command(*, wsgi: str, port: int, workers: int, threads: int, worker_class: str,
                     access_log: str) -> list[str]:
    """docs/deploy.md's gunicorn command (section 2) on a loopback port, plus bench/gunicorn_conf.py, which
    loads the URL configuration as a worker starts instead of on its first request."""
    return [sys.executable, "-m", "gunicorn", wsgi, "--config", str(ROOT / "bench" / "gunicorn_conf.py"),
            "--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--threads", str(threads),
            "--worker-class", worker_class, "--keep-alive", KEEP_ALIVE_S, "--timeout", "60", "--graceful-timeout", "5",
            "--access-logfile", access_log, "--access-logformat", ACCESS_LOG_FORMAT,
            "--forwarded-allow-ips", "127.0.0.1", "--limit-request-line", "8190",
            "--limit-request-field_size", "8190", "--limit-request-fields", "32768", "--log-level", "warning"]


def items_needed(*, annotators: int, end: float, think: float, pause: float, redundancy: int) -> int:
    """Items enough that nobody runs out: twice the judgments the crowd can make by ``end``, over the
    redundancy, in whole documents of 8, at least 2,000."""
    judgments = annotators * end / (think + pause)
    return max(2000, 8 * math.ceil(2 * judgments / redundancy / 8))


def snapshot(server: Server, cluster: Cluster) -> cs.CpuSnapshot:
    tck = cs.clock_ticks_per_s()
    busy, steal, total = cs.machine_ticks()
    return cs.CpuSnapshot(
        gunicorn=cs.tree_ticks(server.proc.pid if server.proc else 0) / tck,
        postgres=cs.tree_ticks(postmaster_pid(cluster.data)) / tck,
        client=time.process_time(), machine_busy=busy / tck, machine_steal=steal / tck, machine_total=total / tck,
        load_1m=os.getloadavg()[0])


async def _measure(*, api: Api, tokens: list[str], schedule: cs.Schedule, args: argparse.Namespace,
                   server: Server, cluster: Cluster, reset_statements: bool) -> dict[str, Any]:
    """Run the crowd; snapshot the CPU at the window's start and end and sample the load every 5 s."""
    start, end = args.ramp + args.settle, args.ramp + args.settle + args.duration
    # The server idle (warm, nobody asking) for a few seconds: its fixed CPU a second (gunicorn's heartbeats,
    # PostgreSQL's background processes), reported beside the figures so low rates can be read net of it.
    idle_before = snapshot(server, cluster)
    await asyncio.sleep(IDLE_S)
    idle = cs.cpu_delta(idle_before, snapshot(server, cluster))
    t0 = time.monotonic() + 0.5
    stats = CrowdStats()
    crowd = asyncio.create_task(run_crowd(api=api, tokens=tokens, schedule=schedule, end=end, seed=args.seed,
                                          t0=t0, stats=stats))
    await asyncio.sleep(max(0.0, t0 + start - time.monotonic()))
    if reset_statements:
        await asyncio.to_thread(_reset_statements, cluster)
    before = snapshot(server, cluster)
    window_start = time.monotonic() - t0  # the CPU figures cover exactly the snapshots' interval
    loads = [before.load_1m]
    for _tick in range(int(args.duration / 5) + 2):
        remaining = t0 + end - time.monotonic()
        if remaining <= 0:
            break
        await asyncio.sleep(min(5.0, remaining))
        loads.append(os.getloadavg()[0])
    after = snapshot(server, cluster)
    window_end = time.monotonic() - t0
    loads.append(after.load_1m)
    await crowd
    return {"stats": stats, "cpu": cs.cpu_delta(before, after), "window": (window_start, window_end),
            "idle_server_cpu_per_s": round(idle["server"] / IDLE_S, 4),
            "load_1m": {"min": min(loads), "mean": round(sum(loads) / len(loads), 2), "max": max(loads)}}


def _reset_statements(cluster: Cluster) -> None:
    with psycopg.connect(cluster.url("app"), autocommit=True) as conn:
        conn.execute("SELECT pg_stat_statements_reset()")


def run_side(*, name: str, cluster: Cluster, env: dict[str, str], tokens: list[str], schedule: cs.Schedule,
             args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """Serve one app (``app`` or ``baseline``) under gunicorn and run the crowd against it."""
    port = free_port()
    wsgi, cwd, probe = "config.wsgi:application", ROOT, "/api/v1/annotate/next"
    if name == "baseline":
        wsgi, cwd, probe = "baseline_project.wsgi:application", BASELINE, "/next"
    elif args.profile:
        env = dict(env, LOADTEST_PROFILE_DIR=str(tmp / "profile"))
        (tmp / "profile").mkdir(exist_ok=True)
        wsgi = "bench.loadtest_profile:application"
    access_log = "/dev/null" if args.no_access_log else str(tmp / f"access-{name}.log")
    server = Server(name=name, command=gunicorn_command(wsgi=wsgi, port=port, workers=args.workers,
                                                        threads=args.threads, worker_class=args.worker_class,
                                                        access_log=access_log),
                    cwd=cwd, env=env, log=tmp / f"gunicorn-{name}.log", port=port, probe_path=probe)
    server.start()
    try:
        warm = server.warm_up(workers=args.workers * args.threads)
        print(f"crowdbench: {name}: workers warmed up in {warm:.1f} s; {len(tokens)} annotators arriving over "
              f"{args.ramp:.0f} s, measured from {args.ramp + args.settle:.0f} s for {args.duration:.0f} s", flush=True)
        api = app_api(server.url) if name == "app" else baseline_api(server.url)
        run = asyncio.run(_measure(api=api, tokens=tokens, schedule=schedule, args=args, server=server,
                                   cluster=cluster, reset_statements=name == "app" and args.explain))
    finally:
        server.stop()
    run["server_log"] = server_errors(server.log)
    if name == "app":
        with psycopg.connect(cluster.url("app")) as conn, conn.cursor() as cur:
            run["integrity"] = integrity_check(cur, slug=args.slug, acked=run["stats"].acked)
    return run


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--annotators", "-n", type=int, default=2000, help="annotators at once (N)")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of the measured window")
    parser.add_argument("--ramp", type=float, default=20.0, help="seconds over which the annotators arrive")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds after the ramp before the window")
    parser.add_argument("--think", type=float, default=10.0, help="mean think time (s), exponential")
    parser.add_argument("--pause", type=float, default=2.0, help="mean pause after a submit (s), exponential")
    parser.add_argument("--workers", type=int, default=5, help="gunicorn workers (docs/deploy.md: 2 x cores + 1)")
    parser.add_argument("--threads", type=int, help="threads per worker (default: 1 for sync, 2 for gthread)")
    parser.add_argument("--worker-class", choices=("sync", "gthread"), default="sync",
                        help="gunicorn worker class (docs/deploy.md: sync; gthread keeps connections alive)")
    parser.add_argument("--redundancy", type=int, default=3)
    parser.add_argument("--items", type=int, help="study size (default: enough for the crowd, see items_needed)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-baseline", action="store_true", help="skip the bare baseline app")
    parser.add_argument("--no-access-log", action="store_true", help="gunicorn access log to /dev/null")
    parser.add_argument("--explain", action="store_true", help="top statements of the window (pg_stat_statements)")
    parser.add_argument("--profile", action="store_true", help="cProfile the app's workers (slows them down)")
    parser.add_argument("--cache-dir", default=os.path.join(tempfile.gettempdir(), "dmt-loadtest-cache"))
    parser.add_argument("--no-cache", action="store_true", help="import the study even when a dump is cached")
    parser.add_argument("--json", help="write the result here (default bench/results/crowdbench-N.json)")
    args = parser.parse_args(argv)
    if not 1 <= args.annotators <= 5000:
        parser.error("--annotators: 1 to 5000 (one client process; ulimit -n must allow that many sockets)")
    if not 5 <= args.duration <= 600 or not 0 <= args.ramp <= 300 or not 0 <= args.settle <= 300:
        parser.error("--duration 5-600 s, --ramp 0-300 s, --settle 0-300 s")
    if args.threads is None:
        args.threads = 2 if args.worker_class == "gthread" else 1
    if not 1 <= args.workers <= 32 or not 1 <= args.threads <= 64:
        parser.error("--workers 1-32, --threads 1-64")
    if args.think <= 0 or args.pause < 0:
        parser.error("--think must be > 0 and --pause >= 0 seconds")
    if args.worker_class == "sync" and args.threads > 1:
        parser.error("--worker-class sync serves one request at a time: use --threads 1, or gthread")
    end = args.ramp + args.settle + args.duration
    args.items = args.items or items_needed(annotators=args.annotators, end=end, think=args.think, pause=args.pause,
                                            redundancy=args.redundancy)
    args.clients = args.annotators  # prepare_app_db invites this many
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM unwinds like Ctrl-C: servers and cluster removed
    cluster = Cluster()  # pg_stat_statements is always loaded; --explain only reads it (no auto_explain)
    tmp = Path(tempfile.mkdtemp(prefix="dmt-crowdbench-"))
    log = tmp / "setup.log"
    try:
        started = time.perf_counter()
        cluster.init()
        cluster.start()
        print(f"crowdbench: PostgreSQL cluster on 127.0.0.1:{cluster.port}; logs in {tmp}", flush=True)
        base_env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "DEBUG")}
        base_env.update(SECRET_KEY=secrets.token_urlsafe(50), DEBUG="False", ALLOWED_HOSTS="127.0.0.1,localhost",
                        LOG_LEVEL="WARNING", CONN_MAX_AGE="60", PYTHONDONTWRITEBYTECODE="1")
        base_env.pop("REDIS_URL", None)
        app_env = dict(base_env, DATABASE_URL=cluster.url("app"), DJANGO_SETTINGS_MODULE="config.settings")
        args.slug = prepare_app_db(cluster=cluster, env=app_env, args=args, log=log)
        with psycopg.connect(cluster.url("app")) as conn:
            tokens = [r[0] for r in conn.execute(
                """SELECT n.token FROM annotation_annotator n JOIN studies_study s ON s.id = n.study_id
                   WHERE s.slug = %s ORDER BY n.sequence""", [args.slug]).fetchall()]
            if args.explain:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                conn.commit()
        schedule = cs.Schedule(cs.arrivals(args.annotators, ramp=args.ramp, seed=args.seed), args.think, args.pause)
        print(f"crowdbench: setup done in {time.perf_counter() - started:.1f} s ({args.items:,} items); offered "
              f"{schedule.offered_per_s:.1f} judgments/s", flush=True)
        app = run_side(name="app", cluster=cluster, env=app_env, tokens=tokens, schedule=schedule, args=args, tmp=tmp)
        if args.explain:
            app["top_statements"] = top_statements(cluster.url("app"), limit=10)
        if args.profile:
            app["profile"] = profile_summary(tmp / "profile")
        baseline = None
        if not args.no_baseline:
            baseline_env = dict(base_env, DATABASE_URL=cluster.url("baseline"),
                                DJANGO_SETTINGS_MODULE="baseline_project.settings", BASELINE_ROWS=str(args.items))
            prepare_baseline_db(cluster=cluster, env=baseline_env, n_rows=args.items, log=log)
            baseline = run_side(name="baseline", cluster=cluster, env=baseline_env, tokens=tokens,
                                schedule=schedule, args=args, tmp=tmp)
        result = build_result(args=args, schedule=schedule, app=app, baseline=baseline)
        print_table(result)
        out = Path(args.json) if args.json else ROOT / "bench" / "results" / f"crowdbench-{args.annotators}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"crowdbench: results written to {out}")
        if result["integrity"]["violations"]:
            raise SystemExit("crowdbench: integrity violations (see above)")
    except KeyboardInterrupt:
        print("crowdbench: interrupted; cleaning up", file=sys.stderr)
        raise SystemExit(130)
    except (RuntimeError, subprocess.SubprocessError) as exc:
        raise SystemExit(f"crowdbench: {exc}")
    finally:
        cluster.remove()
        print(f"crowdbench: PostgreSQL cluster stopped and removed; logs kept in {tmp}", flush=True)


def build_result(*, args: argparse.Namespace, schedule: cs.Schedule, app: dict[str, Any],
                 baseline: dict[str, Any] | None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "config": {"annotators": args.annotators, "duration_s": args.duration, "ramp_s": args.ramp,
                   "settle_s": args.settle, "think_mean_s": args.think, "pause_mean_s": args.pause,
                   "items": args.items, "redundancy": args.redundancy, "workers": args.workers,
                   "threads": args.threads, "worker_class": args.worker_class, "seed": args.seed,
                   "access_log": not args.no_access_log, "cpus": os.cpu_count(), "python": sys.version.split()[0],
                   "command": "python bench/crowdbench.py " + " ".join(sys.argv[1:]),
                   "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
        "offered_per_s": round(schedule.offered_per_s, 1),
        "app": side_result(app, schedule=schedule),
        "baseline": side_result(baseline, schedule=schedule) if baseline else None,
        "integrity": app["integrity"],
    }
    for key in ("top_statements", "profile"):
        if key in app:
            result[key] = app[key]
    return result


if __name__ == "__main__":
    main()
