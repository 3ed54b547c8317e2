"""The load benchmark's printed table and JSON result (targets of issue 8 checked beside the figures)."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable

TARGETS = "≥ 150 judgments/s, p95 < 300 ms, ≥ 0.5 of the baseline, zero integrity violations"


def _latency(values: list[float], percentile: Callable[[list[float], float], float]) -> dict[str, Any]:
    return {"n": len(values), **{f"p{q}": round(percentile(values, q), 1) for q in (50, 95, 99)}}


def _side(stats: Any, duration: float, percentile: Callable[[list[float], float], float],
          cpu: dict[str, float | None]) -> dict[str, Any]:
    n = stats.judgments_in(duration)
    acked = len(stats.ack_times)
    # CPU per judgment hardly depends on what else the machine runs, unlike judgments/s: with it the
    # figures of a shared machine still say what 2 idle cores would sustain (1,000 CPU-ms a second a core).
    server_cpu = (cpu["app"] or 0) + (cpu["postgres"] or 0) if cpu["postgres"] is not None else None
    per = round(1000 * server_cpu / acked, 1) if acked and server_cpu is not None else None
    all_cpu = per + 1000 * (cpu["clients"] or 0) / acked if per is not None else None
    return {"judgments": n, "cpu_ms_per_judgment": per,
            "capacity_idle_machine": round((os.cpu_count() or 1) * 1000 / all_cpu, 1) if all_cpu else None,
            "judgments_per_s": round(n / duration, 1), "after_deadline": len(stats.ack_times) - n,
            "next_ms": _latency(stats.next_ms, percentile), "submit_ms": _latency(stats.submit_ms, percentile),
            "errors": dict(sorted(stats.errors.items())), "created_201": stats.created, "replayed_200": stats.replayed,
            "gave_up": stats.gave_up, "clients_exhausted": stats.exhausted,
            "retried_identical_bytes": dict(stats.retried_identical), "retried_changed_bytes": dict(stats.retried_changed)}


def _timeline(ack_times: list[float], duration: float) -> list[int]:
    counts = [0] * (int(duration) + 1)
    for t in ack_times:
        if t <= duration:
            counts[min(int(t), len(counts) - 1)] += 1
    return counts


def print_report(*, args: argparse.Namespace, app: dict[str, Any], baseline: Any, explain: dict[str, Any],
                 percentile: Callable[[list[float], float], float]) -> dict[str, Any]:
    d = args.duration
    a = _side(app["stats"], d, percentile, app["cpu"])
    b = _side(baseline[0], d, percentile, baseline[1]) if baseline is not None else None
    ratio = round(a["judgments_per_s"] / b["judgments_per_s"], 3) if b and b["judgments_per_s"] else None
    integ = app["integrity"]
    p95 = max(a["next_ms"]["p95"], a["submit_ms"]["p95"])
    targets = {"judgments_per_s >= 150": a["judgments_per_s"] >= 150, "p95 < 300 ms": p95 < 300,
               "ratio >= 0.5": ratio is not None and ratio >= 0.5, "zero integrity violations": integ["violations"] == 0}
    result = {
        "config": {"items": args.items, "clients": args.clients, "duration_s": d, "workers": args.workers,
                   "worker_class": "sync" if args.threads <= 1 else f"gthread x{args.threads}", "fault": args.fault,
                   "redundancy": args.redundancy, "cpus": os.cpu_count(),
                   "load_average_1m": round(os.getloadavg()[0], 2), "python": sys.version.split()[0]},
        "app": a, "app_warm_up_s": app["warm_up_s"], "baseline": b, "ratio_to_baseline": ratio,
        "capacity_ratio": (round(a["capacity_idle_machine"] / b["capacity_idle_machine"], 3)
                           if b and a["capacity_idle_machine"] and b["capacity_idle_machine"] else None),
        "integrity": integ, "fault": app["fault"],
        "cpu_seconds": {k: (round(v, 1) if v is not None else None) for k, v in app["cpu"].items()},
        "timeline_judgments_per_s": _timeline(app["stats"].ack_times, d), "targets": targets, "explain": explain,
    }
    line = "-" * 78
    print()
    print(line)
    print(f"load benchmark: {args.items:,} items, {args.clients} clients, {args.workers} gunicorn workers "
          f"({result['config']['worker_class']}), {d:.0f} s, fault {args.fault}; "
          f"load average {result['config']['load_average_1m']} on {os.cpu_count()} CPUs")
    print(line)
    print(f"{'':22}{'judgments/s':>12}{'next p50/p95/p99 ms':>24}{'submit p50/p95/p99 ms':>24}")
    for name, side in (("app", a), ("baseline", b)):
        if side is None:
            continue
        n, s = side["next_ms"], side["submit_ms"]
        print(f"{name:22}{side['judgments_per_s']:>12.1f}"
              f"{n['p50']:>10.0f}/{n['p95']:.0f}/{n['p99']:.0f}".ljust(58) + f"{s['p50']:>8.0f}/{s['p95']:.0f}/{s['p99']:.0f}")
    print(f"ratio to the baseline: {ratio if ratio is not None else 'n/a'}")
    for name, side in (("app", a), ("baseline", b)):
        if side is not None and side["cpu_ms_per_judgment"] is not None:
            print(f"CPU per judgment ({name}): {side['cpu_ms_per_judgment']} ms of gunicorn + PostgreSQL; "
                  f"with the clients' share, {os.cpu_count()} idle cores would sustain ~{side['capacity_idle_machine']} judgments/s")
    if a["capacity_idle_machine"] and b and b["capacity_idle_machine"]:
        result_ratio_cpu = round(a["capacity_idle_machine"] / b["capacity_idle_machine"], 3)
        print(f"ratio of those capacities (independent of the machine's other load): {result_ratio_cpu}")
    for name, side in (("app", a), ("baseline", b)):
        if side is not None:
            errors = ", ".join(f"{k}: {v}" for k, v in side["errors"].items()) or "none"
            print(f"errors ({name}): {errors}; gave up: {side['gave_up']}; 200 replays: {side['replayed_200']}; "
                  f"clients with nothing left: {side['clients_exhausted']}")
    print(f"integrity: {integ['violations']} violations; lost {integ['lost']}, doubled {integ['doubled']}; "
          f"rows {integ['rows']} vs acknowledged {integ['acknowledged']} "
          f"(stored but never acknowledged: {integ['unacknowledged']}); annotator twice on an item "
          f"{integ['annotator_twice']}, two current judgments {integ['two_current']}, items over redundancy "
          f"{integ['over_redundancy']} (judgments) / {integ['over_handed_out']} (handed out)")
    cpu = result["cpu_seconds"]
    print(f"CPU seconds during the app run (of {os.cpu_count()} x {d:.0f} = {(os.cpu_count() or 1) * d:.0f}): "
          f"gunicorn {cpu['app']}, postgres {cpu['postgres'] if cpu['postgres'] is not None else 'n/a'}, "
          f"clients {cpu['clients']}")
    fault = app["fault"]
    if fault:
        kills = fault.get("kills", [])
        print(f"fault {fault['kind']}: injected at {fault['injected_at']} s"
              + (f", PostgreSQL back at {fault['ended_at']} s" if fault["kind"] == "stop-db" else
                 f"; {len(kills)} SIGKILLs at " + ", ".join(f"{k['at']} s" for k in kills))
              + f"; first judgment acknowledged {fault['recovery_s']} s after the fault ended")
        print(f"requests that failed and were retried until answered: identical bytes {a['retried_identical_bytes'] or 'none'}"
              f", changed bytes {a['retried_changed_bytes'] or 'none'}")
        print("judgments per second: " + " ".join(str(c) for c in result["timeline_judgments_per_s"]))
    print(f"targets ({TARGETS}): " + "; ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in targets.items()))
    print("(the same throughput at 100,000 items as at 2,000 is checked across two runs: see docs/load.md)")
    if app.get("server_log"):
        print("last lines of the app's gunicorn log:\n" + app["server_log"])
    if explain:
        print(line)
        print("top statements by total execution time (pg_stat_statements, app database):")
        for s in explain.get("top_statements", []):
            print(f"  {s['total_ms']:>10.0f} ms  {s['calls']:>7} calls  {s['mean_ms']:>8.2f} ms/call  {s['query'][:230]}")
        for plan in explain.get("slowest_plan", []):
            print("slowest statement on studies_item (auto_explain, EXPLAIN ANALYZE without per-node timing):")
            print(plan[:6000])
    if app.get("profile"):
        print(line)
        print("profile of the app's gunicorn workers (cProfile, merged; profiling slows the app down):")
        print(app["profile"])
        result["profile"] = app["profile"]
    print(line, flush=True)
    return result
