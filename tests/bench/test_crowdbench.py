"""The crowd benchmark's pure parts (bench/crowdbench_stats.py, crowdbench_report.py, crowdbench.py's helpers).

The benchmark itself (make crowdbench) needs its own PostgreSQL cluster and is run by hand
(docs/load.md); here: the annotators' schedule, the CPU accounting from /proc (fake trees and
one real child process), and the summary figures.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench import crowdbench_stats as cs
from bench.crowdbench import gunicorn_command, items_needed, parse_args
from bench.crowdbench_clients import CrowdStats, app_api, baseline_api
from bench.crowdbench_report import side_result

ROOT = Path(__file__).resolve().parents[2]


# --- the schedule -----------------------------------------------------------------------------------

def test_arrivals_are_sorted_inside_the_ramp_and_repeatable():
    times = cs.arrivals(2000, ramp=20.0, seed=3)
    assert len(times) == 2000 and list(times) == sorted(times)
    assert 0.0 <= times[0] and times[-1] < 20.0
    assert times == cs.arrivals(2000, ramp=20.0, seed=3) and times != cs.arrivals(2000, ramp=20.0, seed=4)
    # Spread over the whole ramp, not bunched: each quarter holds about a quarter of the crowd.
    for q in range(4):
        share = sum(1 for t in times if 5 * q <= t < 5 * (q + 1)) / 2000
        assert 0.2 < share < 0.3
    assert cs.arrivals(0, ramp=5, seed=1) == ()
    with pytest.raises(ValueError, match="ramp"):
        cs.arrivals(10, ramp=-1, seed=1)


def test_the_offered_rate_is_set_by_the_crowd_and_its_think_times():
    schedule = cs.Schedule(cs.arrivals(2000, ramp=20, seed=1), think=10.0, pause=2.0)
    assert schedule.offered_per_s == pytest.approx(2000 / 12)
    # Without a server (zero latency) the measured window, after ramp and settling, sees that rate.
    starts = cs.simulated_cycle_starts(schedule, seed=1, until=90)
    in_window = cs.count_in_window(starts, 30, 90) / 60
    assert in_window == pytest.approx(2000 / 12, rel=0.04)
    # Each annotator waits for its answers: 1 s a request lowers what the crowd gets through to N / 14.
    slow = cs.count_in_window(cs.simulated_cycle_starts(schedule, seed=1, until=90, latency=1.0), 30, 90) / 60
    assert slow == pytest.approx(2000 / 14, rel=0.05)


def test_exp_delay_has_the_asked_mean():
    import random

    rng = random.Random(5)
    draws = [cs.exp_delay(rng, 10.0) for _ in range(20_000)]
    assert sum(draws) / len(draws) == pytest.approx(10.0, rel=0.03)
    assert min(draws) >= 0 and cs.exp_delay(rng, 0.0) == 0.0


# --- CPU from /proc ---------------------------------------------------------------------------------

def _stat(pid: int, comm: str, utime: int, stime: int, cutime: int = 0, cstime: int = 0) -> str:
    # proc(5): pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime …
    return f"{pid} ({comm}) S 1 1 1 0 -1 4194304 10 0 0 0 {utime} {stime} {cutime} {cstime} 20 0 1 0 100 0 0\n"


def test_parse_stat_counts_fields_after_the_command_name():
    line = _stat(42, "gunicorn: worker (app) [x y]", 700, 80, 9, 1)
    assert cs.parse_stat(line) == (700, 80, 9, 1)
    with pytest.raises(ValueError, match="stat"):
        cs.parse_stat("42 no parentheses here")


def _proc(tmp: Path, pid: int, stat: str, children_by_task: dict[int, list[int]]) -> None:
    (tmp / str(pid)).mkdir()
    (tmp / str(pid) / "stat").write_text(stat)
    for task, kids in children_by_task.items():
        (tmp / str(pid) / "task" / str(task)).mkdir(parents=True)
        (tmp / str(pid) / "task" / str(task) / "children").write_text(" ".join(map(str, kids)) + (" " if kids else ""))


def test_tree_ticks_sums_every_live_process_and_the_reaped_ones(tmp_path):
    # A master (with the CPU of a reaped worker in its cutime), a worker, a worker forked by another
    # thread of the master, that worker's child, and a child listed but gone before it is read.
    _proc(tmp_path, 10, _stat(10, "master", 5, 3, 40, 2), {10: [11, 99], 12: [13]})
    _proc(tmp_path, 11, _stat(11, "worker", 100, 20), {11: []})
    _proc(tmp_path, 13, _stat(13, "worker", 60, 6), {13: [14]})
    _proc(tmp_path, 14, _stat(14, "child", 1, 1), {14: [10]})  # a loop back to the root is followed once
    assert cs.children(10, proc=tmp_path) == [11, 13, 99]
    assert cs.tree_ticks(10, proc=tmp_path) == (5 + 3 + 40 + 2) + (100 + 20) + (60 + 6) + (1 + 1)
    assert cs.tree_ticks(11, proc=tmp_path) == 120
    assert cs.tree_ticks(0, proc=tmp_path) == 0 and cs.tree_ticks(12345, proc=tmp_path) == 0


def test_tree_ticks_of_a_real_child_holds_when_it_is_reaped():
    """A child's CPU is in the tree while it lives and stays there (as the parent's cutime) once it exits."""
    tck = cs.clock_ticks_per_s()
    before = cs.tree_ticks(os.getpid())
    burn = ("import sys, time\n"
            "t = time.process_time()\n"
            "while time.process_time() - t < 0.4: pass\n"
            "print('done', flush=True); sys.stdin.read()")
    child = subprocess.Popen([sys.executable, "-c", burn], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "done"
        alive = cs.tree_ticks(os.getpid())
        assert child.pid in cs.children(os.getpid())
        assert cs.tree_ticks(child.pid) >= 0.35 * tck
    finally:
        child.communicate("", timeout=30)
    reaped = cs.tree_ticks(os.getpid())
    assert alive - before >= 0.35 * tck
    assert reaped >= alive  # moved into our cutime, not lost


def test_machine_ticks_reads_busy_steal_and_total(tmp_path):
    (tmp_path / "stat").write_text("cpu  100 5 50 1000 20 3 7 11 0 0\ncpu0 50 2 25 500 10 1 3 5 0 0\n")
    assert cs.machine_ticks(proc=tmp_path) == (100 + 5 + 50 + 3 + 7, 11, 1196)
    (tmp_path / "stat").write_text("intr 1 2 3\n")
    with pytest.raises(ValueError, match="cpu line"):
        cs.machine_ticks(proc=tmp_path)
    busy, steal, total = cs.machine_ticks()
    assert 0 <= busy <= total and 0 <= steal <= total


def test_cpu_delta_names_what_others_used():
    before = cs.CpuSnapshot(gunicorn=10, postgres=5, client=1, machine_busy=100, machine_steal=0, machine_total=400,
                            load_1m=1.0)
    after = cs.CpuSnapshot(gunicorn=30, postgres=12, client=4, machine_busy=150, machine_steal=2, machine_total=520,
                           load_1m=2.0)
    delta = cs.cpu_delta(before, after)
    assert delta["server"] == 27 and delta["client"] == 3 and delta["other"] == 50 - 27 - 3
    assert delta["machine_total"] == 120 and delta["machine_steal"] == 2


# --- the summary ------------------------------------------------------------------------------------

def test_latency_summary_and_windows():
    assert cs.latency_summary([]) == {"n": 0, "p50": None, "p95": None, "p99": None, "max": None}
    summary = cs.latency_summary(float(v) for v in range(1, 101))
    assert summary == {"n": 100, "p50": 50.5, "p95": 95.0, "p99": 99.0, "max": 100.0}
    assert cs.in_window([0.9, 1.0, 2.0, 3.0], [1, 2, 3, 4], 1.0, 3.0) == [2, 3]
    assert cs.count_in_window([0.9, 1.0, 2.9999, 3.0], 1.0, 3.0) == 2
    assert cs.per_judgment_ms(1.5, 100) == 15.0 and cs.per_judgment_ms(1.5, 0) is None
    assert cs.per_judgment_ms(None, 3) is None
    # Whole 5-second bins only: 12 s give two bins; an event in the partial third is left out.
    assert cs.timeline([0.0, 4.9, 5.0, 11.0], start=0.0, end=12.0) == [0.4, 0.2]


def _run(stats: CrowdStats, *, server_s: float = 3.0) -> dict:
    cpu = {"gunicorn": server_s * 2 / 3, "postgres": server_s / 3, "server": server_s, "client": 0.5,
           "machine_busy": 6.0, "machine_steal": 0.0, "machine_total": 20.0, "other": 2.5}
    return {"stats": stats, "cpu": cpu, "window": (30.0, 40.0), "load_1m": {"min": 1, "mean": 1, "max": 1},
            "idle_server_cpu_per_s": 0.05}


def test_side_result_counts_only_the_window():
    stats = CrowdStats()
    stats.ack_at = [29.0] + [30.0 + k * 0.05 for k in range(200)] + [40.5]  # 200 in the window
    stats.next_at, stats.next_ms = [29.0, 31.0, 32.0], [900.0, 10.0, 20.0]  # the 900 ms one started before it
    stats.submit_at, stats.submit_ms = [31.5, 39.0, 40.0], [5.0, 15.0, 700.0]
    stats.cycle_at = [30.0 + k * 0.1 for k in range(100)]
    schedule = cs.Schedule(cs.arrivals(120, ramp=10, seed=1), think=10.0, pause=2.0)
    side = side_result(_run(stats), schedule=schedule)
    assert side["offered_per_s"] == 10.0 and side["measured_offered_per_s"] == 10.0
    assert side["achieved_per_s"] == 20.0 and side["judgments_in_window"] == 200
    assert side["next_ms"]["n"] == 2 and side["next_ms"]["max"] == 20.0
    assert side["submit_ms"]["n"] == 2 and side["submit_ms"]["max"] == 15.0
    assert side["cpu_ms_per_judgment"]["server"] == 15.0 and side["cpu_ms_per_request_server"] == 7.5
    assert side["cpu_ms_per_judgment_net_of_idle"] == 12.5  # (3 s - 0.05 s/s x 10 s) / 200
    assert side["cpu_ms_per_judgment"]["client"] == 2.5 and side["client_share_of_machine"] == 0.025
    assert side["p95_target_met"] is True
    # 2 cores x 1,000 ms / 15 ms a judgment = 133 judgments/s; x 12 s a cycle = 1,600 annotators.
    assert side["annotators_per_machine_cpu_bound"] == round((os.cpu_count() or 1) * 1000 / 15 * 12)
    stats.errors["submit 502 text/html"] += 1
    failed = side_result(_run(stats), schedule=schedule)
    assert failed["p95_target_met"] is False and failed["errors"] == {"submit 502 text/html": 1}


def test_items_needed_covers_the_crowd():
    # 2,000 annotators for 90 s at one judgment per 12 s: 15,000 judgments, x2 / redundancy 3.
    assert items_needed(annotators=2000, end=90, think=10, pause=2, redundancy=3) == 10_000
    assert items_needed(annotators=10, end=90, think=10, pause=2, redundancy=3) == 2000
    assert items_needed(annotators=1001, end=90, think=10, pause=2, redundancy=3) % 8 == 0


def test_the_apis_paths():
    assert app_api("http://a", "http://b").submit_path("Xy") == "/api/v1/annotate/Xy/judgment"
    assert baseline_api("http://a").submit_path("17") == "/submit/17"


def test_gunicorn_command_is_the_one_docs_deploy_gives():
    """Every flag of docs/deploy.md's gunicorn command (section 2) with its value, but the address, the
    worker count and the log destination, which the benchmark sets."""
    text = (ROOT / "docs" / "deploy.md").read_text()
    block = re.search(r"```sh\npython manage.py collectstatic --noinput\n(gunicorn config\.wsgi .*?)```", text, re.S)
    assert block, "docs/deploy.md: the gunicorn command of section 2 not found"
    documented = re.findall(r"(--[\w-]+)(?:[ =]('[^']*'|\S+))?", block.group(1).replace("\\\n", " "))
    defaults = parse_args([])  # the benchmark's own worker class and threads must be the documented ones
    command = gunicorn_command(wsgi="config.wsgi:application", port=8123, workers=5, threads=defaults.threads,
                               worker_class=defaults.worker_class, access_log="/tmp/access.log")
    for flag, value in documented:
        if flag in ("--bind", "--workers", "--access-logfile"):
            assert flag in command
            continue
        assert flag in command, flag
        if value and not value.startswith("--"):
            assert command[command.index(flag) + 1] == value.strip("'"), flag
    assert command[command.index("--bind") + 1] == "127.0.0.1:8123"


def test_the_rate_limit_verdict_of_the_cluster_run():
    from bench.cluster import rate_limit_verdict

    assert rate_limit_verdict([401] * 20 + [429] * 5) == ""
    assert "401" in rate_limit_verdict([401] * 19 + [429] * 6)  # limited one request early
    assert "429" in rate_limit_verdict([401] * 21 + [429] * 4)  # one server counting apart would let more through
