"""The crowd benchmark's figures (one side: the app or the baseline) and its printed table.

Definitions (docs/load.md, "Open-loop crowd benchmark"):
- *offered* judgments/s: N / (E[think] + E[pause]) — what the crowd asks for; *measured offered*:
  the `next` requests the annotators decided to send in the window, a second;
- *achieved* judgments/s: judgments acknowledged (201/200 with an id) in the window, a second;
- latency percentiles: of the answered attempt of every request started in the window;
- errors: every failed attempt of the whole run (ramp, window and drain), by operation, status and
  content type (or the client-side exception);
- CPU per judgment: utime + stime of the gunicorn and the PostgreSQL process trees over the window
  (/proc), divided by the window's achieved judgments; the baseline's per request is half its per pair.
"""
from __future__ import annotations

import os
from typing import Any

from bench import crowdbench_stats as cs
from bench.crowdbench_clients import CrowdStats

P95_TARGET_MS = 100.0


def side_result(run: dict[str, Any], *, schedule: cs.Schedule) -> dict[str, Any]:
    """The figures of one side from its run (``stats``, ``cpu``, ``window``, ``load_1m``)."""
    stats: CrowdStats = run["stats"]
    start, end = run["window"]
    seconds = end - start
    cpu = run["cpu"]
    judgments = cs.count_in_window(stats.ack_at, start, end)
    next_ms = cs.latency_summary(cs.in_window(stats.next_at, stats.next_ms, start, end))
    submit_ms = cs.latency_summary(cs.in_window(stats.submit_at, stats.submit_ms, start, end))
    server_ms = cs.per_judgment_ms(cpu["server"], judgments)
    cores = os.cpu_count() or 1
    p95s = [s["p95"] for s in (next_ms, submit_ms) if s["p95"] is not None]
    return {
        "offered_per_s": round(schedule.offered_per_s, 1),
        "measured_offered_per_s": round(cs.count_in_window(stats.cycle_at, start, end) / seconds, 1),
        "achieved_per_s": round(judgments / seconds, 1), "judgments_in_window": judgments,
        "next_ms": next_ms, "submit_ms": submit_ms,
        "p95_target_met": bool(p95s) and max(p95s) < P95_TARGET_MS and not stats.errors,
        "errors": dict(sorted(stats.errors.items())), "error_count": sum(stats.errors.values()),
        "created_201": stats.created, "replayed_200": stats.replayed, "retried": dict(stats.retried),
        "gave_up": stats.gave_up, "annotators_exhausted": stats.exhausted, "held_at_end": stats.held_at_end,
        "acknowledged_total": len(stats.ack_at),
        "cpu_s": cpu,
        "cpu_ms_per_judgment": {"server": server_ms, "gunicorn": cs.per_judgment_ms(cpu["gunicorn"], judgments),
                                "postgres": cs.per_judgment_ms(cpu["postgres"], judgments),
                                "client": cs.per_judgment_ms(cpu["client"], judgments)},
        "cpu_ms_per_request_server": round(server_ms / 2, 2) if server_ms is not None else None,
        # The same net of what the server uses idle (measured before the crowd arrives), times the window.
        "idle_server_cpu_per_s": run.get("idle_server_cpu_per_s"),
        "cpu_ms_per_judgment_net_of_idle": (cs.per_judgment_ms(cpu["server"] - run["idle_server_cpu_per_s"] * seconds,
                                                               judgments)
                                            if run.get("idle_server_cpu_per_s") is not None else None),
        # What the server's CPU alone would carry on this machine's cores, idle: annotators at the same think times.
        "annotators_per_machine_cpu_bound": (round(cores * 1000 / server_ms * (schedule.think + schedule.pause))
                                             if server_ms else None),
        "client_share_of_machine": round(cpu["client"] / cpu["machine_total"], 3) if cpu["machine_total"] else None,
        "cores": cores, "window_s": [round(start, 2), round(end, 2)],
        "load_1m": run["load_1m"],
        "achieved_timeline_per_s": cs.timeline(stats.ack_at, start=start, end=end),
        "server_log": run.get("server_log", ""),
    }


def _lat(s: dict[str, Any]) -> str:
    return "-" if s["n"] == 0 else f"{s['p50']:.0f}/{s['p95']:.0f}/{s['p99']:.0f}"


def print_table(result: dict[str, Any]) -> None:
    c = result["config"]
    line = "-" * 100
    print()
    print(line)
    print(f"crowd benchmark: {c['annotators']:,} annotators (think Exp({c['think_mean_s']:g} s), pause "
          f"Exp({c['pause_mean_s']:g} s), arriving over {c['ramp_s']:g} s), window {c['duration_s']:g} s from "
          f"{c['ramp_s'] + c['settle_s']:g} s; gunicorn {c['workers']} {c['worker_class']} workers x {c['threads']} "
          f"thread(s); {c['items']:,} items")
    print(line)
    print(f"{'':10}{'offered j/s':>14}{'achieved j/s':>14}{'next p50/95/99 ms':>20}{'submit p50/95/99 ms':>22}"
          f"{'errors':>8}{'server CPU ms/j':>17}")
    for name in ("app", "baseline"):
        s = result.get(name)
        if not s:
            continue
        cpu = s["cpu_ms_per_judgment"]
        print(f"{name:10}{s['offered_per_s']:>7.1f} ({s['measured_offered_per_s']:.1f})".ljust(24)
              + f"{s['achieved_per_s']:>14.1f}{_lat(s['next_ms']):>20}{_lat(s['submit_ms']):>22}"
              f"{s['error_count']:>8}{(cpu['server'] if cpu['server'] is not None else float('nan')):>17.2f}")
    for name in ("app", "baseline"):
        s = result.get(name)
        if not s:
            continue
        cpu, sec = s["cpu_ms_per_judgment"], s["cpu_s"]
        print(f"{name}: CPU per judgment {cpu['server']} ms (gunicorn {cpu['gunicorn']}, PostgreSQL {cpu['postgres']}; "
              f"{s['cpu_ms_per_request_server']} a request; {s['cpu_ms_per_judgment_net_of_idle']} net of the "
              f"{1000 * (s['idle_server_cpu_per_s'] or 0):.0f} ms/s it uses idle); the load generator {cpu['client']} ms a judgment, "
              f"{100 * (s['client_share_of_machine'] or 0):.1f}% of the machine")
        print(f"  CPU seconds in the window: gunicorn {sec['gunicorn']:.1f}, PostgreSQL {sec['postgres']:.1f}, "
              f"client {sec['client']:.1f}, everything else {sec['other']:.1f} (busy {sec['machine_busy']:.1f} of "
              f"{sec['machine_total']:.1f}, stolen by the hypervisor {sec['machine_steal']:.1f}); load average {s['load_1m']['min']:.2f}-{s['load_1m']['max']:.2f} "
              f"(mean {s['load_1m']['mean']:.2f})")
        errors = ", ".join(f"{k} x{v}" for k, v in s["errors"].items()) or "none"
        print(f"  errors (whole run): {errors}; gave up {s['gave_up']}; retried and answered {s['retried'] or 'none'}; "
              f"200 replays {s['replayed_200']}; annotators with nothing left {s['annotators_exhausted']}")
        print(f"  achieved judgments/s by 5 s: {' '.join(f'{v:g}' for v in s['achieved_timeline_per_s'])}")
        if s["annotators_per_machine_cpu_bound"]:
            print(f"  the server's CPU alone would carry ~{s['annotators_per_machine_cpu_bound']:,} such annotators "
                  f"on {s['cores']:g} idle cores")
        if s.get("server_log"):
            print("  gunicorn log:\n" + s["server_log"])
    i = result["integrity"]
    print(f"integrity: {i['violations']} violations; lost {i['lost']}, doubled {i['doubled']}; rows {i['rows']} vs "
          f"acknowledged {i['acknowledged']} (stored, never acknowledged: {i['unacknowledged']})")
    a = result["app"]
    p95s = [v for v in (a["next_ms"]["p95"], a["submit_ms"]["p95"]) if v is not None]
    p95 = f"{max(p95s):.0f} ms" if p95s else "n/a: no request answered in the window"
    verdict = "met" if a["p95_target_met"] else f"NOT met (p95 {p95}, {a['error_count']} errors)"
    print(f"target p95 < {P95_TARGET_MS:.0f} ms for next and submit with 0 errors: {verdict}")
    if result.get("top_statements"):
        print(line)
        print("top statements of the window by total execution time (pg_stat_statements):")
        for st in result["top_statements"]:
            print(f"  {st['total_ms']:>9.0f} ms {st['calls']:>7} calls {st['mean_ms']:>7.3f} ms/call  {st['query'][:150]}")
    if result.get("profile"):
        print(line)
        print(result["profile"])
    print(line, flush=True)
