"""The pure parts of the open-loop crowd benchmark (``bench/crowdbench.py``; docs/load.md).

- the annotators' schedule: staggered arrivals and exponential think and pause times;
- CPU accounting from ``/proc``: utime + stime of a whole process tree, reaped children included,
  and the machine's busy time from ``/proc/stat``;
- the summary of a run: latency percentiles of the requests started in the measured window,
  judgments acknowledged in it, CPU per judgment.

Nothing here starts a process or opens a socket; ``tests/bench/test_crowdbench.py`` checks it
with fake ``/proc`` trees and seeded schedules.
"""
from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from bench.loadtest_integrity import percentile

PROC = Path("/proc")
#: Processes followed in one tree: a bound on the walk (a gunicorn or PostgreSQL tree has tens).
MAX_TREE = 10_000


# --- the schedule -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Schedule:
    """When each annotator arrives and how long they think and pause (means, seconds).

    Annotator k arrives at ``arrivals[k]``, then repeats: ``next`` → think Exp(``think``) → submit →
    pause Exp(``pause``). The load it offers is set by these numbers alone: in steady state each
    annotator starts a cycle every ``think + pause`` seconds plus the two answers' latency.
    """
    arrivals: tuple[float, ...]
    think: float
    pause: float

    @property
    def offered_per_s(self) -> float:
        """Judgments a second the crowd offers once everyone has arrived: N / (E[think] + E[pause])."""
        return len(self.arrivals) / (self.think + self.pause)


def arrivals(n: int, *, ramp: float, seed: int) -> tuple[float, ...]:
    """``n`` arrival times spread uniformly at random over ``[0, ramp)``, sorted (the order statistics of a
    Poisson process with ``n`` arrivals in the ramp); the same for the same seed."""
    if n < 0 or ramp < 0:
        raise ValueError(f"arrivals: n ({n}) and ramp ({ramp}) must not be negative")
    rng = random.Random(seed)
    return tuple(sorted(rng.random() * ramp for _ in range(n)))


def exp_delay(rng: random.Random, mean: float) -> float:
    """One Exp(``mean``) draw (seconds); 0 for a mean of 0."""
    return rng.expovariate(1.0 / mean) if mean > 0 else 0.0


def simulated_cycle_starts(schedule: Schedule, *, seed: int, until: float, latency: float = 0.0,
                           max_cycles: int = 100_000) -> list[float]:
    """The times at which the annotators would send ``next`` if every answer took ``latency`` seconds.

    What the schedule offers, without a server: used to choose the ramp and the settling time, and by
    the tests to check that the measured window sees N / (think + pause) cycles a second."""
    starts: list[float] = []
    for k, arrival in enumerate(schedule.arrivals):
        rng = random.Random(seed * 1_000_003 + k)
        t = arrival
        for _cycle in range(max_cycles):
            if t >= until:
                break
            starts.append(t)
            t += latency + exp_delay(rng, schedule.think) + latency + exp_delay(rng, schedule.pause)
    starts.sort()
    return starts


# --- CPU from /proc ---------------------------------------------------------------------------------

def parse_stat(text: str) -> tuple[int, int, int, int]:
    """(utime, stime, cutime, cstime) in clock ticks from the text of ``/proc/<pid>/stat``.

    The command name (field 2) is in parentheses and may itself hold spaces or parentheses, so
    the fields are counted from the last ``)``: utime is field 14 of proc(5), i.e. the 12th after it."""
    _, sep, rest = text.rpartition(")")
    fields = rest.split()
    if not sep or len(fields) < 15:
        raise ValueError(f"not a /proc/<pid>/stat line: {text[:80]!r}")
    return int(fields[11]), int(fields[12]), int(fields[13]), int(fields[14])


def children(pid: int, *, proc: Path = PROC) -> list[int]:
    """The live children of ``pid``: the union of ``/proc/<pid>/task/*/children`` (a child belongs to
    the thread that forked it, so one thread's list misses a threaded server's other children)."""
    found: list[int] = []
    try:
        tasks = list((proc / str(pid) / "task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found.extend(int(p) for p in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return sorted(set(found))


def tree_ticks(pid: int, *, proc: Path = PROC) -> int:
    """CPU clock ticks of the process tree under ``pid`` so far: for each live process in it,
    utime + stime + cutime + cstime. A process that has exited and been reaped is in its parent's
    cutime/cstime, so the sum only grows as workers or backends come and go; its difference over a
    window is the tree's CPU in that window. A process gone while the tree is read counts 0 (one
    process's time, at the moment of a snapshot). 0 when ``pid`` is 0 or gone."""
    if pid <= 0:
        return 0
    total, todo = 0, [pid]
    seen: set[int] = set()
    while todo and len(seen) < MAX_TREE:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            total += sum(parse_stat((proc / str(current) / "stat").read_text()))
        except (OSError, ValueError):
            continue
        todo.extend(children(current, proc=proc))
    return total


def clock_ticks_per_s() -> int:
    return int(os.sysconf("SC_CLK_TCK"))


def machine_ticks(*, proc: Path = PROC) -> tuple[int, int, int]:
    """(busy, steal, total) clock ticks of all CPUs from the ``cpu`` line of ``/proc/stat`` (proc(5)):
    busy is user, nice, system, irq and softirq; steal is time the hypervisor gave to other machines
    while this one wanted to run; total adds idle and iowait. Guest time is already inside user time."""
    line = (proc / "stat").read_text().splitlines()[0]
    name, *values = line.split()
    if name != "cpu" or len(values) < 4:
        raise ValueError(f"not the cpu line of /proc/stat: {line[:80]!r}")
    ticks = ([int(v) for v in values[:8]] + [0] * 8)[:8]
    user, nice, system, idle, iowait, irq, softirq, steal = ticks
    return user + nice + system + irq + softirq, steal, sum(ticks)


@dataclass(frozen=True)
class CpuSnapshot:
    """CPU seconds so far of the server's gunicorn tree, the PostgreSQL cluster's tree, this process
    (the load generator), and the machine (busy, total); plus the 1-minute load average."""
    gunicorn: float
    postgres: float
    client: float
    machine_busy: float
    machine_steal: float
    machine_total: float
    load_1m: float


def cpu_delta(before: CpuSnapshot, after: CpuSnapshot) -> dict[str, float]:
    """CPU seconds used between two snapshots, by whom; ``other`` is the machine's busy time that none
    of the three used (other sessions, the kernel's own work not charged to them)."""
    used = {"gunicorn": after.gunicorn - before.gunicorn, "postgres": after.postgres - before.postgres,
            "client": after.client - before.client, "machine_busy": after.machine_busy - before.machine_busy,
            "machine_steal": after.machine_steal - before.machine_steal,
            "machine_total": after.machine_total - before.machine_total}
    used["server"] = used["gunicorn"] + used["postgres"]
    used["other"] = max(0.0, used["machine_busy"] - used["server"] - used["client"])
    return {k: round(v, 3) for k, v in used.items()}


# --- the summary ------------------------------------------------------------------------------------

def latency_summary(values_ms: Iterable[float]) -> dict[str, Any]:
    """n, p50, p95, p99 and max of latencies in milliseconds (linear interpolation between ranks)."""
    values = sorted(values_ms)
    if not values:
        return {"n": 0, "p50": None, "p95": None, "p99": None, "max": None}
    return {"n": len(values), **{f"p{q}": round(percentile(values, q), 1) for q in (50, 95, 99)},
            "max": round(values[-1], 1)}


def in_window(times: Iterable[float], values: Iterable[float], start: float, end: float) -> list[float]:
    """The values whose time is in ``[start, end)``."""
    return [v for t, v in zip(times, values) if start <= t < end]


def count_in_window(times: Iterable[float], start: float, end: float) -> int:
    return sum(1 for t in times if start <= t < end)


def per_judgment_ms(cpu_s: float | None, judgments: int) -> float | None:
    """CPU milliseconds per judgment; None without judgments or without a CPU figure."""
    if cpu_s is None or judgments <= 0:
        return None
    return round(1000.0 * cpu_s / judgments, 2)


def timeline(times: Iterable[float], *, start: float, end: float, step: float = 5.0) -> list[float]:
    """Events a second in the whole ``step``-second bins of ``[start, end)`` (a last partial bin is left out)."""
    bins = [0] * max(1, int((end - start) / step + 1e-9))
    for t in times:
        if start <= t < end:
            k = int((t - start) / step)
            if k < len(bins):
                bins[k] += 1
    return [round(b / step, 1) for b in bins]
