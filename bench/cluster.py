"""Several nodes on one machine, tested (``make cluster``; docs/deploy.md, "Several app servers").

One run: one PostgreSQL (bench/pgcluster.py), one Redis of its own on a free port (cache and rate
limits through ``REDIS_URL``, task queue with ``TASKS_BACKEND=rq``), two app servers (gunicorn,
docs/deploy.md's command) on two ports, two task workers (``manage.py rqworker default --job-class django_tasks_rq.Job``), and the
open-loop crowd of bench/crowdbench.py sending its requests round-robin to both servers (a failed
attempt goes to the other one). While the crowd works, evaluation jobs are queued every few
seconds; at 40 % of the window a task worker is killed (SIGKILL, its work-horse included), at
60 % app server 2 is restarted (SIGTERM, then started again on its port). Afterwards:

- the integrity of the judgments (bench/loadtest_integrity.py): nothing lost, nothing doubled;
- every queued job ended done or failed, except at most one per killed worker left ``running``
  (docs/deploy.md: a worker killed mid-job leaves its job running);
- the rate limit is one limit across both servers: invalid-token requests alternating between
  them get 401 until the limit (``RATELIMIT_INVALID_TOKENS``, 20 a minute), then 429.

Prints a table and writes bench/results/cluster-N.json; exits non-zero when an invariant fails.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import crowdbench_stats as cs  # noqa: E402
from bench.crowdbench import gunicorn_command  # noqa: E402
from bench.crowdbench_clients import CrowdStats, app_api, run_crowd  # noqa: E402
from bench.loadtest import prepare_app_db  # noqa: E402
from bench.loadtest_integrity import integrity_check  # noqa: E402
from bench.loadtest_servers import Server, postmaster_pid, server_errors, stop_group  # noqa: E402
from bench.pgcluster import Cluster, free_port  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
RATE_LIMIT = 20  # RATELIMIT_INVALID_TOKENS' default count (docs/deploy.md, section 6)

#: Queues an evaluation job (BLEU on the study) every ``gap`` seconds, ``count`` times: run as one process.
QUEUE_JOBS = """
import sys, time, django
django.setup()
from evaluators.jobs import job_submit
from studies.models import Study
study = Study.objects.get(slug=sys.argv[1])
for k in range(int(sys.argv[2])):
    print(job_submit(study=study, kind="evaluate", params={"evaluators": ["bleu"]}).pk, flush=True)
    time.sleep(float(sys.argv[3]))
"""


class Redis:
    """A redis-server of the run's own on a free loopback port, nothing saved to disk."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.dir = directory
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 20) -> None:
        import redis

        self.proc = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no", "--dir", str(self.dir), "--protected-mode", "yes"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                if redis.Redis.from_url(self.url, socket_timeout=1).ping():
                    return
            except redis.RedisError:
                time.sleep(0.1)
        raise RuntimeError(f"redis-server on port {self.port} not ready after {timeout:.0f} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


class TaskWorker:
    """``manage.py rqworker default --job-class django_tasks_rq.Job`` in its own process group (a job runs in a
    forked work-horse). Without django-tasks-rq's job class RQ cannot call the task ("'Task' object is not
    callable") and every job stays queued."""

    def __init__(self, name: str, env: dict[str, str], log: Path) -> None:
        self.name, self.env, self.log = name, env, log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as fh:
            self.proc = subprocess.Popen([PY, "manage.py", "rqworker", "default", "--job-class", "django_tasks_rq.Job",
                                          "--name", self.name], cwd=ROOT,
                                         env=self.env, stdout=fh, stderr=fh, start_new_session=True)

    def busy(self) -> bool:
        """A work-horse (the worker's child) exists: the worker is running a job now."""
        return bool(self.proc and cs.children(self.proc.pid))

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        stop_group(self.proc, grace=15)


async def _events(*, args: argparse.Namespace, t0: float, start: float, servers: list[Server],
                  workers: list[TaskWorker], env: dict[str, str], tmp: Path, log: list[dict[str, Any]]) -> None:
    """The mid-run events: queue jobs from the window's start, kill a task worker at 40 %, restart server 2 at 60 %."""
    async def at(fraction: float) -> None:
        await asyncio.sleep(max(0.0, t0 + start + fraction * args.duration - time.monotonic()))

    await at(0.0)
    gap = args.duration * 0.8 / max(1, args.jobs)
    with (tmp / "queue-jobs.log").open("ab") as fh:
        queuer = subprocess.Popen([PY, "-c", QUEUE_JOBS, args.slug, str(args.jobs), f"{gap:.2f}"], cwd=ROOT, env=env,
                                  stdout=fh, stderr=fh)
    log.append({"at": round(time.monotonic() - t0, 2), "event": f"queueing {args.jobs} evaluation jobs, one every {gap:.1f} s"})
    await at(0.4)
    # The victim: a worker running a job if one is (up to 5 s of looking), else worker 1.
    victim = workers[0]
    for _look in range(100):
        busy = [w for w in workers if w.busy()]
        if busy:
            victim = busy[0]
            break
        await asyncio.sleep(0.05)
    was_busy = victim.busy()
    victim.kill()
    log.append({"at": round(time.monotonic() - t0, 2), "event": f"SIGKILL task worker {victim.name}"
                + (" while it ran a job" if was_busy else " (idle)")})
    await at(0.6)
    log.append({"at": round(time.monotonic() - t0, 2), "event": "SIGTERM app server 2"})
    await asyncio.to_thread(servers[1].stop)
    await asyncio.to_thread(servers[1].start)
    log.append({"at": round(time.monotonic() - t0, 2), "event": "app server 2 serving again"})
    await asyncio.to_thread(queuer.wait, args.duration + 60)


async def _measure(*, args: argparse.Namespace, tokens: list[str], servers: list[Server], workers: list[TaskWorker],
                   cluster: Cluster, env: dict[str, str], tmp: Path) -> dict[str, Any]:
    start, end = args.ramp + args.settle, args.ramp + args.settle + args.duration
    schedule = cs.Schedule(cs.arrivals(len(tokens), ramp=args.ramp, seed=args.seed), args.think, args.pause)
    t0 = time.monotonic() + 0.5
    stats = CrowdStats()
    events: list[dict[str, Any]] = []
    crowd = asyncio.create_task(run_crowd(api=app_api(*(s.url for s in servers)), tokens=tokens, schedule=schedule,
                                          end=end, seed=args.seed, t0=t0, stats=stats))
    happenings = asyncio.create_task(_events(args=args, t0=t0, start=start, servers=servers, workers=workers, env=env,
                                             tmp=tmp, log=events))
    await asyncio.sleep(max(0.0, t0 + start - time.monotonic()))
    pg_before = cs.tree_ticks(postmaster_pid(cluster.data))
    await crowd
    await happenings
    return {"stats": stats, "schedule": schedule, "window": (start, end), "events": events,
            "postgres_cpu_s": (cs.tree_ticks(postmaster_pid(cluster.data)) - pg_before) / cs.clock_ticks_per_s()}


def job_states(url: str, *, queued: int, wait_s: float) -> dict[str, int]:
    """The evaluation jobs' states once none is queued any more (or after ``wait_s``)."""
    end = time.monotonic() + wait_s
    while True:
        with psycopg.connect(url) as conn:
            rows = conn.execute("SELECT state, COUNT(*) FROM evaluators_evaluationjob GROUP BY state").fetchall()
        states = {state: n for state, n in rows}
        if not states.get("queued") and sum(states.values()) >= queued or time.monotonic() >= end:
            return states
        time.sleep(1.0)


def rate_limit_across(servers: list[Server], *, requests: int = RATE_LIMIT + 5) -> list[int]:
    """Statuses of ``requests`` API calls with an unknown token, alternating between the servers."""
    statuses = []
    for k in range(requests):
        req = urllib.request.Request(servers[k % len(servers)].url + "/api/v1/annotate/next",
                                     headers={"Authorization": f"Token not-a-token-{k}"})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                statuses.append(resp.status)
        except urllib.error.HTTPError as exc:
            statuses.append(exc.code)
    return statuses


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--annotators", "-n", type=int, default=300)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of the window with the events")
    parser.add_argument("--ramp", type=float, default=20.0)
    parser.add_argument("--settle", type=float, default=10.0)
    parser.add_argument("--think", type=float, default=10.0)
    parser.add_argument("--pause", type=float, default=2.0)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers per app server")
    parser.add_argument("--jobs", type=int, default=10, help="evaluation jobs queued during the window")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cache-dir", default=os.path.join(tempfile.gettempdir(), "dmt-loadtest-cache"))
    parser.add_argument("--json", help="default bench/results/cluster-N.json")
    args = parser.parse_args(argv)
    if not 1 <= args.annotators <= 5000 or not 10 <= args.duration <= 600 or not 1 <= args.workers <= 16:
        parser.error("--annotators 1-5000, --duration 10-600 s, --workers 1-16")
    if not 0 <= args.jobs <= 100:
        parser.error("--jobs 0-100")
    args.items = max(2000, 8 * int(2 * args.annotators * (args.ramp + args.settle + args.duration)
                                   / (args.think + args.pause) / 3 / 8 + 1))
    args.redundancy, args.no_cache, args.clients = 3, False, args.annotators
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)
    tmp = Path(tempfile.mkdtemp(prefix="dmt-cluster-"))
    cluster, redis_server = Cluster(), Redis(tmp)
    servers: list[Server] = []
    workers: list[TaskWorker] = []
    try:
        cluster.init()
        cluster.start()
        redis_server.start()
        print(f"cluster: PostgreSQL on 127.0.0.1:{cluster.port}, Redis on 127.0.0.1:{redis_server.port}; logs in {tmp}",
              flush=True)
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "DEBUG")}
        env.update(SECRET_KEY=secrets.token_urlsafe(50), DEBUG="False", ALLOWED_HOSTS="127.0.0.1,localhost",
                   LOG_LEVEL="WARNING", CONN_MAX_AGE="60", PYTHONDONTWRITEBYTECODE="1", DATABASE_URL=cluster.url("app"),
                   DJANGO_SETTINGS_MODULE="config.settings", REDIS_URL=redis_server.url, TASKS_BACKEND="rq")
        args.slug = prepare_app_db(cluster=cluster, env=env, args=args, log=tmp / "setup.log")
        with psycopg.connect(cluster.url("app")) as conn:
            tokens = [r[0] for r in conn.execute(
                """SELECT n.token FROM annotation_annotator n JOIN studies_study s ON s.id = n.study_id
                   WHERE s.slug = %s ORDER BY n.sequence""", [args.slug]).fetchall()]
        for k in (1, 2):
            port = free_port()
            servers.append(Server(name=f"app{k}", command=gunicorn_command(
                wsgi="config.wsgi:application", port=port, workers=args.workers, threads=1, worker_class="sync",
                access_log=str(tmp / f"access-app{k}.log")), cwd=ROOT, env=env, log=tmp / f"gunicorn-app{k}.log",
                port=port, probe_path="/api/v1/annotate/next"))
            servers[-1].start()
            servers[-1].warm_up(workers=args.workers)
        for k in (1, 2):
            workers.append(TaskWorker(f"worker{k}", env, tmp / f"rqworker{k}.log"))
            workers[-1].start()
        print(f"cluster: app servers on {', '.join(s.url for s in servers)}, 2 task workers; {args.annotators} "
              f"annotators round-robin, window {args.duration:.0f} s from {args.ramp + args.settle:.0f} s", flush=True)
        run = asyncio.run(_measure(args=args, tokens=tokens, servers=servers, workers=workers, cluster=cluster,
                                   env=env, tmp=tmp))
        jobs = job_states(cluster.url("app"), queued=args.jobs, wait_s=120)
        statuses = rate_limit_across(servers)
        with psycopg.connect(cluster.url("app")) as conn, conn.cursor() as cur:
            integrity = integrity_check(cur, slug=args.slug, acked=run["stats"].acked)
        result = build_result(args=args, run=run, jobs=jobs, statuses=statuses, integrity=integrity,
                              logs={s.name: server_errors(s.log) for s in servers})
        print_table(result)
        out = Path(args.json) if args.json else ROOT / "bench" / "results" / f"cluster-{args.annotators}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"cluster: results written to {out}")
        if result["failed_invariants"]:
            raise SystemExit("cluster: invariants failed: " + "; ".join(result["failed_invariants"]))
    except KeyboardInterrupt:
        print("cluster: interrupted; cleaning up", file=sys.stderr)
        raise SystemExit(130)
    except (RuntimeError, subprocess.SubprocessError) as exc:
        raise SystemExit(f"cluster: {exc}")
    finally:
        for worker in workers:
            worker.stop()
        for server in servers:
            server.stop()
        redis_server.stop()
        cluster.remove()
        print(f"cluster: servers, workers, Redis and PostgreSQL stopped; logs kept in {tmp}", flush=True)


def rate_limit_verdict(statuses: list[int], limit: int = RATE_LIMIT) -> str:
    """'' when the first ``limit`` unknown-token requests got 401 and every later one 429, else what differs."""
    if statuses[:limit] != [401] * limit:
        return f"the first {limit} unknown-token requests should get 401: {statuses[:limit]}"
    if any(s != 429 for s in statuses[limit:]):
        return f"requests after the first {limit} should get 429 on either server: {statuses[limit:]}"
    return ""


def build_result(*, args: argparse.Namespace, run: dict[str, Any], jobs: dict[str, int], statuses: list[int],
                 integrity: dict[str, Any], logs: dict[str, str]) -> dict[str, Any]:
    stats: CrowdStats = run["stats"]
    start, end = run["window"]
    judgments = cs.count_in_window(stats.ack_at, start, end)
    failed: list[str] = []
    if integrity["violations"]:
        failed.append(f"{integrity['violations']} integrity violations")
    kills = sum(1 for e in run["events"] if e["event"].startswith("SIGKILL"))
    if jobs.get("queued") or jobs.get("running", 0) > kills or sum(jobs.values()) < args.jobs:
        failed.append(f"jobs not all finished: {jobs}")
    verdict = rate_limit_verdict(statuses)
    if verdict:
        failed.append(verdict)
    if stats.gave_up:
        failed.append(f"{stats.gave_up} requests given up")
    return {
        "config": {"annotators": args.annotators, "duration_s": args.duration, "ramp_s": args.ramp,
                   "settle_s": args.settle, "app_servers": 2, "gunicorn_workers_each": args.workers,
                   "task_workers": 2, "tasks_backend": "rq", "items": args.items, "cpus": os.cpu_count(),
                   "load_1m_at_end": os.getloadavg()[0],
                   "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
        "offered_per_s": round(run["schedule"].offered_per_s, 1),
        "achieved_per_s": round(judgments / (end - start), 1), "judgments_in_window": judgments,
        "acknowledged_total": len(stats.ack_at),
        "next_ms": cs.latency_summary(cs.in_window(stats.next_at, stats.next_ms, start, end)),
        "submit_ms": cs.latency_summary(cs.in_window(stats.submit_at, stats.submit_ms, start, end)),
        "failed_attempts": dict(sorted(stats.errors.items())), "retried_and_answered": dict(stats.retried),
        "gave_up": stats.gave_up, "replayed_200": stats.replayed, "events": run["events"],
        "p95_ms_by_10s": p95_by_bin(stats, start=start, end=end),
        "jobs": jobs, "rate_limit_statuses": statuses, "integrity": integrity,
        "postgres_cpu_s": round(run["postgres_cpu_s"], 1), "server_logs": logs, "failed_invariants": failed,
    }


def p95_by_bin(stats: CrowdStats, *, start: float, end: float, step: float = 10.0) -> list[float | None]:
    """p95 of next and submit together, by the ``step``-second bin of the window in which the request started."""
    out: list[float | None] = []
    t = start
    while t + step <= end + 1e-9:
        values = (cs.in_window(stats.next_at, stats.next_ms, t, t + step)
                  + cs.in_window(stats.submit_at, stats.submit_ms, t, t + step))
        out.append(cs.latency_summary(values)["p95"])
        t += step
    return out


def print_table(r: dict[str, Any]) -> None:
    line = "-" * 100
    c, i = r["config"], r["integrity"]
    print(f"\n{line}\ntwo app servers x {c['gunicorn_workers_each']} sync workers, 2 rq task workers, one PostgreSQL, "
          f"one Redis; {c['annotators']} annotators round-robin; window {c['duration_s']:g} s\n{line}")
    for event in r["events"]:
        print(f"  {event['at']:>7.1f} s  {event['event']}")
    n, s = r["next_ms"], r["submit_ms"]
    print(f"judgments: offered {r['offered_per_s']}/s, achieved {r['achieved_per_s']}/s "
          f"({r['judgments_in_window']} in the window, {r['acknowledged_total']} in all); next p50/p95/p99 "
          f"{n['p50']}/{n['p95']}/{n['p99']} ms, submit {s['p50']}/{s['p95']}/{s['p99']} ms")
    print("p95 of next and submit by 10 s of the window: " + " ".join(f"{v:.0f}" if v is not None else "-"
                                                                   for v in r["p95_ms_by_10s"]) + " ms")
    attempts = ", ".join(f"{k} x{v}" for k, v in r["failed_attempts"].items()) or "none"
    print(f"failed attempts (each retried on the other server): {attempts}; answered after a retry: "
          f"{r['retried_and_answered'] or 'none'}; given up: {r['gave_up']}; 200 replays: {r['replayed_200']}")
    print(f"integrity: lost {i['lost']}, doubled {i['doubled']}, {i['violations']} violations; rows {i['rows']} = "
          f"acknowledged {i['acknowledged']}")
    print(f"evaluation jobs: {r['jobs']}")
    print(f"unknown token, alternating servers: {' '.join(map(str, r['rate_limit_statuses']))}")
    print("invariants: " + ("all hold" if not r["failed_invariants"] else "FAILED: " + "; ".join(r["failed_invariants"])))
    print(line, flush=True)


if __name__ == "__main__":
    main()
