"""Load benchmark of the annotation API (``make loadtest``; docs/load.md).

One run: a throwaway PostgreSQL cluster (bench/pgcluster.py); the app under
gunicorn with a generated ranking study of ``--items`` items and ``--clients``
invited annotators; ``--clients`` asyncio clients looping next → submit for
``--duration`` seconds over loopback (bench/loadtest_clients.py); optionally a
fault in the middle (``--fault kill-worker``: SIGKILL a busy gunicorn worker ``--kills``
times spread over the run; ``--fault stop-db``: stop PostgreSQL for ``--outage`` seconds);
the integrity of what the database holds afterwards (bench/loadtest_integrity.py) — a
fault run fails unless at least one submit failed and was retried with identical bytes,
and the integrity check holds (:func:`fault_untested`); then the same
clients against the bare baseline app (bench/baseline/) under the same gunicorn
settings. Prints one table and writes it as JSON.

Usage: ``python bench/loadtest.py [--items 2000] [--clients 100] [--duration 30]
[--workers 4] [--threads 1] [--fault none|kill-worker|stop-db] [--kills 4] [--explain]``
(``make loadtest FAULT=kill-worker LOADTEST_ARGS="--kills 6"``).
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
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
from bench.loadtest_clients import RunStats, app_target, baseline_target, run_clients  # noqa: E402
from bench.loadtest_integrity import integrity_check, percentile  # noqa: E402
from bench.loadtest_profile import profile_summary  # noqa: E402
from bench.loadtest_report import print_report  # noqa: E402
from bench.loadtest_servers import Server, gunicorn_command, postmaster_pid, server_errors, tree_cpu_seconds  # noqa: E402
from bench.pgcluster import Cluster, free_port, pg_bin  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "bench" / "baseline"
PY = sys.executable
WORDS = ("the council said it would review the decision after the hearing because they had not seen "
         "her report yet and the committee wants its members to agree before anyone signs").split()


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def study_file(*, n_items: int, redundancy: int, seed: int = 7) -> dict[str, Any]:
    """A ranking study: documents of 8 items, 3 candidates each (a reference and two systems), 1% spam."""
    rng = random.Random(seed)
    items = []
    for i in range(n_items):
        ref = _sentence(rng, 18)
        items.append({
            "id": f"s{i}", "document_id": f"doc{i // 8}", "position": i % 8, "phenomenon": ("it-sie", "it-er", "they-sie")[i % 3],
            "source": _sentence(rng, 18), "target_context": [_sentence(rng, 15), _sentence(rng, 15)],
            "candidates": [{"system": "reference", "text": ref, "is_reference": True, "highlights": [[0, 3]]},
                           {"system": "nmt-a", "text": _sentence(rng, 18)},
                           {"system": "nmt-b", "text": _sentence(rng, 18)}]})
    return {"slug": f"load-{n_items}", "title": f"Load benchmark, {n_items} items", "protocol": "ranking",
            "settings": {"redundancy": redundancy, "spam_rate": 0.01, "seed": seed, "min_seconds": 0},
            "items": items}


def _code_fingerprint() -> str:
    """Changes whenever a migration of the app does: a cached database dump is only reused for the same schema."""
    digest = hashlib.sha256()
    for path in sorted(ROOT.glob("*/migrations/*.py")):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()[:12]


def prepare_app_db(*, cluster: Cluster, env: dict[str, str], args: argparse.Namespace, log: Path) -> str:
    """Migrate and import the study (or restore a cached dump of exactly that); returns the study slug."""
    cache = Path(args.cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    data = study_file(n_items=args.items, redundancy=args.redundancy)
    name = f"study-{args.items}-r{args.redundancy}"
    study_path = cache / f"{name}.json"
    if not study_path.exists():
        study_path.write_text(json.dumps(data))
    dump = cache / f"{name}-{_code_fingerprint()}.dump"
    cluster.createdb("app")
    started = time.perf_counter()
    if dump.exists() and not args.no_cache:
        _check([pg_bin("pg_restore"), "--no-owner", "-h", "127.0.0.1", "-p", str(cluster.port), "-U", "postgres",
                "-d", "app", str(dump)], env, log)
        how = f"restored from {dump}"
    else:
        _check([PY, "manage.py", "migrate", "--noinput"], env, log)
        _check([PY, "manage.py", "createsuperuser", "--noinput", "--username", "bench", "--email", "bench@example.org"],
               env, log)
        _check([PY, "manage.py", "import_study", str(study_path), "--open", "--user", "bench"], env, log)
        _check([pg_bin("pg_dump"), "-Fc", "-h", "127.0.0.1", "-p", str(cluster.port), "-U", "postgres",
                "-f", str(dump), "app"], env, log)
        how = f"imported {study_path}"
    print(f"loadtest: study {data['slug']} ({args.items:,} items) {how} in {time.perf_counter() - started:.1f} s",
          flush=True)
    _check([PY, "manage.py", "invite", data["slug"], "--count", str(args.clients)], env, log)
    with psycopg.connect(cluster.url("app"), autocommit=True) as conn:
        analyze_filled_tables(conn)
    return str(data["slug"])


def analyze_filled_tables(conn: psycopg.Connection[Any]) -> None:
    """``VACUUM ANALYZE`` every table that has rows: what autovacuum would have done by the time a real study
    opens. The tables still empty (assignments, judgments: the run fills them) stay never analyzed, as
    autovacuum leaves an empty table. Analyzed empty, PostgreSQL would believe them empty until its next
    analyze (at most a minute and 50 rows later): every connection's prepared statements would keep the
    sequential scans planned on an empty table for index look-ups while the run grows it to thousands of rows
    (docs/load.md, "gthread workers, keep-alive and the plans of an empty table")."""
    tables = [name for (name,) in conn.execute(
        "SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relkind = 'r' AND n.nspname <> 'pg_toast' ORDER BY 1").fetchall()]
    # The system catalogs too (a restore or a migration changed them: autovacuum would otherwise work on them
    # during the run).
    filled = [name for name in tables if (conn.execute(f"SELECT EXISTS (SELECT 1 FROM {name})").fetchone() or [False])[0]]
    conn.execute("VACUUM ANALYZE " + ", ".join(filled))


def prepare_baseline_db(*, cluster: Cluster, env: dict[str, str], n_rows: int, log: Path) -> None:
    cluster.createdb("baseline")
    _check([PY, "manage.py", "migrate", "--noinput"], env, log, cwd=BASELINE)
    with psycopg.connect(cluster.url("baseline"), autocommit=True) as conn:
        # A payload of the real response's shape and size: context, source, three candidates.
        conn.execute(
            """INSERT INTO rows_row (key, payload) SELECT g, jsonb_build_object(
                 'protocol', 'ranking', 'allow_ties', false, 'options', '[]'::jsonb,
                 'context', jsonb_build_object('source', '[]'::jsonb, 'target', jsonb_build_array(repeat('context ', 12), repeat('context ', 12))),
                 'source', repeat('source ', 18),
                 'candidates', jsonb_build_array(
                    jsonb_build_object('id', md5(g::text || 'a'), 'text', repeat('word ', 18), 'highlights', '[[0, 3]]'::jsonb),
                    jsonb_build_object('id', md5(g::text || 'b'), 'text', repeat('word ', 18), 'highlights', '[]'::jsonb),
                    jsonb_build_object('id', md5(g::text || 'c'), 'text', repeat('word ', 18), 'highlights', '[]'::jsonb)),
                 'progress', jsonb_build_object('done', 0, 'total', 0))
               FROM generate_series(0, %s - 1) g""", [n_rows])
        conn.execute("VACUUM ANALYZE")


def _check(cmd: list[str], env: dict[str, str], log: Path, cwd: Path = ROOT) -> None:
    with log.open("ab") as fh:
        proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=fh, stderr=fh, timeout=3600)
    if proc.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
        raise RuntimeError(f"{' '.join(cmd[:3])} … failed ({proc.returncode}):\n{tail}")


def _client_connections(port: int) -> set[str]:
    """Socket inodes of the ESTABLISHED TCP connections whose local port is ``port`` (/proc/net/tcp, tcp6)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[3] == "01" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes


def _worker_sockets(pid: int) -> set[str]:
    inodes: set[str] = set()
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        pass
    return inodes


def _socket_count(pid: int) -> int:
    try:
        return sum(1 for fd in Path(f"/proc/{pid}/fd").iterdir() if _is_socket(fd))
    except OSError:
        return -1


def _is_socket(fd: Path) -> bool:
    try:
        return os.readlink(fd).startswith("socket:[")
    except OSError:
        return False


async def _busy_worker(server: Server) -> int:
    """A worker that is serving a request now, so the kill interrupts a request in flight.

    A sync worker holds one more socket while it serves (the client's connection) than while it
    waits in accept(): the idle count of each worker is its fewest sockets over a short sampling,
    and a worker seen above it is returned at once (a request lasts a few milliseconds on a quiet
    machine, so the kill must follow the sighting immediately). Else, a worker holding a client's
    connection by /proc/net/tcp; else one whose CPU time moves; else any."""
    workers = server.workers()
    idle = {pid: _socket_count(pid) for pid in workers}
    for _ in range(20):
        for pid in workers:
            n = _socket_count(pid)
            if 0 <= n < idle.get(pid, n + 1) or idle.get(pid, -1) < 0:
                idle[pid] = n
        await asyncio.sleep(0.002)
    for _try in range(4000):  # ~2 s of tight polling
        for pid in workers:
            if _socket_count(pid) > idle.get(pid, 1 << 30) >= 0:
                return pid
        if _try % 50 == 49:
            await asyncio.sleep(0)  # let the clients run
    for _try in range(100):
        connections = _client_connections(server.port)
        serving = [pid for pid in server.workers() if _worker_sockets(pid) & connections]
        if serving:
            return random.choice(serving)
        await asyncio.sleep(0.005)
    for _try in range(40):
        before = {pid: tree_cpu_seconds(pid) for pid in server.workers()}
        await asyncio.sleep(0.02)
        busy = [pid for pid, cpu in before.items() if tree_cpu_seconds(pid) > cpu]
        if busy:
            return random.choice(busy)
    workers = server.workers()
    return random.choice(workers) if workers else 0


async def _kill_workers(*, start: float, duration: float, kills: int, stats: RunStats, server: Server,
                        info: dict[str, Any]) -> None:
    """SIGKILL a busy worker ``kills`` times, evenly spread from 20 % to 80 % of the run; then, while no
    submit has yet been retried (a kill may land between requests), once more every such interval
    until 90 % of the run. Each kill is recorded (time, pid)."""
    times = [start + duration * (0.2 + 0.6 * k / max(1, kills - 1)) for k in range(kills)] if kills > 1 \
        else [start + duration * 0.4]
    # Extra kills (only while no submit has been retried yet) come more often than the planned ones, so a run
    # whose planned kills all landed between requests still gets several more chances before 90 %.
    step = min(duration * 0.6 / max(1, kills - 1), duration * 0.04)
    extra = times[-1] + step
    while extra < start + duration * 0.9:
        times.append(extra)
        extra += step
    for k, at in enumerate(times):
        if k >= kills and stats.retried_identical["submit"]:
            break
        await asyncio.sleep(max(0.0, at - time.monotonic()))
        victim = await _busy_worker(server)
        if not victim:
            info.setdefault("errors", []).append("no worker found")
            continue
        os.kill(victim, signal.SIGKILL)
        info["kills"].append({"at": time.monotonic(), "pid": victim})


async def _inject(fault: str, *, at: float, latest: float, stats: RunStats, server: Server, cluster: Cluster,
                  outage: float, start: float, duration: float, kills: int) -> dict[str, Any]:
    """Inject the fault once judgments flow (waiting no later than ``latest``): kill-worker from 20 % of the
    run, several times (:func:`_kill_workers`); stop-db at ``at`` (time.monotonic())."""
    await asyncio.sleep(max(0.0, min(at, start + duration * 0.2) - time.monotonic()))
    for _wait in range(1000):  # a fault before the first judgment would test nothing but start-up
        if stats.ack_times or time.monotonic() >= latest:
            break
        await asyncio.sleep(0.1)
    info: dict[str, Any] = {"kind": fault, "injected_at": time.monotonic()}
    if fault == "kill-worker":
        info["kills"] = []
        await _kill_workers(start=start, duration=duration, kills=kills, stats=stats, server=server, info=info)
        if not info["kills"]:
            return info
        info.update(injected_at=info["kills"][0]["at"], ended_at=info["kills"][-1]["at"],
                    pid=info["kills"][-1]["pid"])
    elif fault == "stop-db":
        await asyncio.sleep(max(0.0, at - time.monotonic()))
        info["injected_at"] = time.monotonic()
        await asyncio.to_thread(cluster.stop, "fast")
        info["stopped_at"] = time.monotonic()
        await asyncio.sleep(outage)
        await asyncio.to_thread(cluster.start)
        info["ended_at"] = time.monotonic()
    return info


async def _measure(*, target: Any, tokens: list[str], duration: float, fault: str, server: Server,
                   cluster: Cluster, outage: float, kills: int = 4) -> tuple[Any, float, dict[str, Any] | None]:
    start = time.monotonic()
    live = RunStats()
    clients = asyncio.create_task(run_clients(target=target, tokens=tokens, duration=duration, stats=live))
    info = None
    if fault != "none":
        info = await _inject(fault, at=start + duration * 0.4, latest=start + duration * 0.6, stats=live,
                             server=server, cluster=cluster, outage=outage, start=start, duration=duration,
                             kills=kills)
    stats, t0 = await clients
    if info is not None:
        for key in ("injected_at", "stopped_at", "ended_at"):
            if key in info:
                info[key] = round(info[key] - t0, 2)
        for kill in info.get("kills", []):
            kill["at"] = round(kill["at"] - t0, 2)
        after = [t for t in stats.ack_times if t >= info.get("ended_at", info["injected_at"])]
        # Recovery: from the end of the fault (worker killed / database back) to the next acknowledged judgment.
        info["recovery_s"] = round(min(after) - info.get("ended_at", info["injected_at"]), 2) if after else None
    return stats, t0, info


def run_app(*, cluster: Cluster, env: dict[str, str], tokens: list[str], args: argparse.Namespace, tmp: Path,
            slug: str) -> dict[str, Any]:
    port = free_port()
    wsgi = "config.wsgi:application"
    if args.profile:
        env = dict(env, LOADTEST_PROFILE_DIR=str(tmp / "profile"))
        (tmp / "profile").mkdir(exist_ok=True)
        wsgi = "bench.loadtest_profile:application"
    server = Server(name="app", command=gunicorn_command(wsgi=wsgi, port=port,
                                                         workers=args.workers, threads=args.threads),
                    cwd=ROOT, env=env, log=tmp / "gunicorn-app.log", port=port, probe_path="/api/v1/annotate/next")
    server.start()
    warm = server.warm_up(workers=args.workers * max(1, args.threads))
    print(f"loadtest: app workers warmed up in {warm:.1f} s", flush=True)
    try:
        cpu0 = (tree_cpu_seconds(server.proc.pid) if server.proc else 0, tree_cpu_seconds(postmaster_pid(cluster.data)),
                time.process_time())
        stats, _t0, fault = asyncio.run(_measure(target=app_target(server.url), tokens=tokens, duration=args.duration,
                                                 fault=args.fault, server=server, cluster=cluster, outage=args.outage,
                                                 kills=args.kills))
        cpu = {"app": (tree_cpu_seconds(server.proc.pid) if server.proc else 0) - cpu0[0],
               "postgres": (tree_cpu_seconds(postmaster_pid(cluster.data)) - cpu0[1]) if args.fault != "stop-db" else None,
               "clients": time.process_time() - cpu0[2]}
    finally:
        server.stop()
    with psycopg.connect(cluster.url("app")) as conn, conn.cursor() as cur:
        integrity = integrity_check(cur, slug=slug, acked=stats.acked)
    return {"stats": stats, "fault": fault, "integrity": integrity, "cpu": cpu, "warm_up_s": round(warm, 1),
            "server_log": server_errors(server.log),
            "profile": profile_summary(tmp / "profile") if args.profile else ""}


def run_baseline(*, cluster: Cluster, env: dict[str, str], tokens: list[str], args: argparse.Namespace,
                 tmp: Path) -> Any:
    port = free_port()
    server = Server(name="baseline", command=gunicorn_command(wsgi="baseline_project.wsgi:application", port=port,
                                                              workers=args.workers, threads=args.threads),
                    cwd=BASELINE, env=env, log=tmp / "gunicorn-baseline.log", port=port, probe_path="/next")
    server.start()
    server.warm_up(workers=args.workers * max(1, args.threads))
    try:
        cpu0 = (tree_cpu_seconds(server.proc.pid) if server.proc else 0, tree_cpu_seconds(postmaster_pid(cluster.data)),
                time.process_time())
        stats, _t0 = asyncio.run(run_clients(target=baseline_target(server.url), tokens=tokens,
                                             duration=args.duration))
        cpu = {"app": (tree_cpu_seconds(server.proc.pid) if server.proc else 0) - cpu0[0],
               "postgres": tree_cpu_seconds(postmaster_pid(cluster.data)) - cpu0[1],
               "clients": time.process_time() - cpu0[2]}
    finally:
        server.stop()
    return stats, cpu


def top_statements(url: str, limit: int = 6) -> list[dict[str, Any]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            """SELECT calls, total_exec_time, mean_exec_time, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 400)
               FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'app')
               ORDER BY total_exec_time DESC LIMIT %s""", [limit]).fetchall()
    return [{"calls": c, "total_ms": round(t, 1), "mean_ms": round(m, 3), "rows": r, "query": q}
            for c, t, m, r, q in rows]


def fault_untested(fault: str, stats: RunStats, info: dict[str, Any] | None) -> str:
    """Why a fault run proves nothing ('' when it does): it must have made at least one submit fail and
    be retried with identical bytes (and no retry may have changed its bytes). Integrity is checked apart."""
    if fault == "none":
        return ""
    if fault == "kill-worker" and not (info or {}).get("kills"):
        return "no worker was killed"
    if sum(stats.retried_changed.values()):
        return f"retries sent different bytes: {dict(stats.retried_changed)}"
    if not stats.retried_identical["submit"]:
        return (f"no submit failed and was retried (retried: {dict(stats.retried_identical) or 'none'}; "
                f"errors: {dict(stats.errors) or 'none'})")
    return ""


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load (each app)")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers (both apps)")
    parser.add_argument("--threads", type=int, default=1, help="threads per worker: 1 = sync workers, more = gthread")
    parser.add_argument("--fault", choices=("none", "kill-worker", "stop-db"), default="none")
    parser.add_argument("--outage", type=float, default=10.0, help="seconds PostgreSQL stays down (--fault stop-db)")
    parser.add_argument("--kills", type=int, default=4,
                        help="SIGKILLs of a busy worker spread over the run (--fault kill-worker; more follow, up to "
                             "90%% of the run, until a submit has been retried)")
    parser.add_argument("--redundancy", type=int, default=3)
    parser.add_argument("--no-baseline", action="store_true", help="skip the baseline app")
    parser.add_argument("--explain", action="store_true",
                        help="print the top statements (pg_stat_statements) and the slowest hand-out plan (auto_explain)")
    parser.add_argument("--profile", action="store_true",
                        help="profile the app's gunicorn workers (cProfile) and print the merged profile")
    parser.add_argument("--cache-dir", default=os.path.join(tempfile.gettempdir(), "dmt-loadtest-cache"),
                        help="generated study files and database dumps, reused across runs")
    parser.add_argument("--no-cache", action="store_true", help="import the study even when a dump is cached")
    parser.add_argument("--json", help="write the results here (default bench/results/loadtest-ITEMS-FAULT.json)")
    args = parser.parse_args()
    if not 1 <= args.clients <= 1000 or not 1 <= args.duration <= 600 or not 1 <= args.workers <= 32:
        parser.error("--clients 1-1000, --duration 1-600 s, --workers 1-32")
    if args.fault == "stop-db" and args.duration < args.outage * 2:
        parser.error(f"--fault stop-db needs --duration of at least twice --outage ({args.outage * 2:.0f} s)")

    # Ctrl-C and SIGTERM both unwind through the finally below: servers and cluster are always removed.
    signal.signal(signal.SIGTERM, _interrupt)
    cluster = Cluster(explain=args.explain)
    tmp = Path(tempfile.mkdtemp(prefix="dmt-loadtest-"))
    log = tmp / "setup.log"
    try:
        t = time.perf_counter()
        cluster.init()
        cluster.start()
        print(f"loadtest: PostgreSQL cluster {cluster.dir} on 127.0.0.1:{cluster.port} (setup log {log})", flush=True)
        base_env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "DEBUG")}
        base_env.update(SECRET_KEY=secrets.token_urlsafe(32), DEBUG="False", ALLOWED_HOSTS="127.0.0.1,localhost",
                        LOG_LEVEL="WARNING", CONN_MAX_AGE="60", PYTHONDONTWRITEBYTECODE="1")
        app_env = dict(base_env, DATABASE_URL=cluster.url("app"), DJANGO_SETTINGS_MODULE="config.settings")
        slug = prepare_app_db(cluster=cluster, env=app_env, args=args, log=log)
        with psycopg.connect(cluster.url("app")) as conn:
            tokens = [r[0] for r in conn.execute(
                """SELECT n.token FROM annotation_annotator n JOIN studies_study s ON s.id = n.study_id
                   WHERE s.slug = %s ORDER BY n.sequence""", [slug]).fetchall()]
        if args.explain:
            with psycopg.connect(cluster.url("app"), autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                conn.execute("SELECT pg_stat_statements_reset()")
        print(f"loadtest: setup done in {time.perf_counter() - t:.1f} s; app: {args.clients} clients for "
              f"{args.duration:.0f} s, fault {args.fault}", flush=True)
        app = run_app(cluster=cluster, env=app_env, tokens=tokens, args=args, tmp=tmp, slug=slug)
        explain: dict[str, Any] = {}
        if args.explain:
            explain["top_statements"] = top_statements(cluster.url("app"))
            explain["slowest_plan"] = cluster.slow_plans(needle="studies_item", limit=1)
        baseline = None
        if not args.no_baseline:
            baseline_env = dict(base_env, DATABASE_URL=cluster.url("baseline"),
                                DJANGO_SETTINGS_MODULE="baseline_project.settings", BASELINE_ROWS=str(args.items))
            prepare_baseline_db(cluster=cluster, env=baseline_env, n_rows=args.items, log=log)
            print(f"loadtest: baseline: {args.clients} clients for {args.duration:.0f} s", flush=True)
            baseline = run_baseline(cluster=cluster, env=baseline_env, tokens=tokens, args=args, tmp=tmp)
        result = print_report(args=args, app=app, baseline=baseline, explain=explain, percentile=percentile)
        out = Path(args.json) if args.json else ROOT / "bench" / "results" / f"loadtest-{args.items}-{args.fault}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"loadtest: results written to {out}")
        if result["integrity"]["violations"]:
            raise SystemExit("loadtest: integrity violations (see above)")
        untested = fault_untested(args.fault, app["stats"], app["fault"])
        if untested:
            raise SystemExit(f"loadtest: the fault run tested nothing: {untested}")
    except KeyboardInterrupt:
        print("loadtest: interrupted; cleaning up", file=sys.stderr)
        raise SystemExit(130)
    finally:
        cluster.remove()
        print(f"loadtest: PostgreSQL cluster stopped and removed; logs kept in {tmp}", flush=True)


if __name__ == "__main__":
    main()
