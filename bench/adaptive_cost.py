"""CPU per judgment of the hand-out: a uniform and an adaptive DA study, the same items and the same answers.

``python bench/adaptive_cost.py [--items 1000] [--annotators 4] [--repeats 6]`` (Django's SQLite test database,
in memory);
``DATABASE_URL=postgres://postgres@127.0.0.1:5432/NAME python bench/adaptive_cost.py`` works in a throw-away
test database ``test_NAME`` on that server, created and dropped here.

For each policy it imports the same study (``--items`` DA items × 3 systems, redundancy 1, no controls), then
simulated annotators take turns through the hand-out's services, in-process: ``assignment_next``, the
simulation's answer (scores drawn around each system's mean), ``judgment_submit`` — for an adaptive study the
submit runs the allocation hook, which is what this measures. Two of the systems are level, so an adaptive
study with target ``all`` and no minimum effect never settles and both policies hand out every item: the
same number of judgments. The figure is CPU time per judgment: this process's (``time.process_time``) plus,
on PostgreSQL, the server backend's serving it (``/proc/PID/stat`` of ``pg_backend_pid()``; the same
machine). Each policy runs ``--repeats`` times on a fresh study; the best run is printed (the machine is
shared: the minimum is the least disturbed), and the median ratio of neighbouring runs (the two policies
alternate which goes first), and the CPU of the allocation hook itself, timed inside the adaptive runs
(the part of the difference that the noise of two separate runs does not blur). It also prints the cost of one full recomputation of the
state at the end (what every refresh cost before the state was kept incrementally).
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MEANS = {"reference": 40.0, "sys1": 70.0, "sys2": 40.0}


def study_file(slug: str, n_items: int, allocation: object) -> dict:
    items = [{"id": f"ext-{i}", "source": f"Quelle {i}.", "candidates": [
        {"system": system, "text": f"Item {i}: the candidate of {system}, a sentence of some length.",
         "is_reference": system == "reference"} for system in MEANS]} for i in range(n_items)]
    settings = {"redundancy": 1, "spam_rate": 0.0, "unit": "sentence", "esa_spans": False, "seed": 11,
                "instructions": "Score each translation."}
    if allocation is not None:
        settings["allocation"] = allocation
    return {"slug": slug, "title": slug, "protocol": "esa", "settings": settings, "items": items}


#: The open ``/proc/PID/stat`` of each backend read (opened once, read with ``os.pread``).
_STAT_FDS: dict[int, int] = {}
_TICK = os.sysconf("SC_CLK_TCK")


def backend_cpu(pid: int | None) -> float:
    """CPU seconds (user + system) of the PostgreSQL backend ``pid`` so far; 0 without one."""
    if pid is None:
        return 0.0
    fd = _STAT_FDS.get(pid)
    if fd is None:
        fd = _STAT_FDS[pid] = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    fields = os.pread(fd, 4096, 0).rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


#: CPU seconds spent in the allocation hook after the judgments (this process's and the backend's).
HOOK = [0.0, 0.0]


def hook_timed(backend: int | None) -> None:
    """Count the CPU of the hook ``judgment_submit`` calls after each judgment of an adaptive study.

    This process's CPU around each call; the backend's around each statement the hook runs (an execute wrapper),
    so that a call that runs no statement is not charged two reads of ``/proc`` (about 0.1–0.3 ms of this
    process's CPU a judgment, which the adaptive runs' totals would count and the uniform ones not)."""
    from django.db import connection

    from annotation.handout import allocation

    hook = allocation.after_judgment

    def server_timed(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        db0 = backend_cpu(backend)
        try:
            return execute(sql, params, many, context)
        finally:
            HOOK[1] += backend_cpu(backend) - db0

    def timed(*args: object) -> None:
        cpu0 = time.process_time()
        try:
            if backend is None:
                hook(*args)  # type: ignore[arg-type]
            else:
                with connection.execute_wrapper(server_timed):
                    hook(*args)  # type: ignore[arg-type]
        finally:
            HOOK[0] += time.process_time() - cpu0

    allocation.after_judgment = timed  # type: ignore[assignment]


def run(slug: str, n_items: int, n_annotators: int, allocation: object, backend: int | None) -> tuple[int, float, float]:
    """Judge the study to the end: (judgments, this process's CPU seconds, the backend's CPU seconds)."""
    from annotation.handout import services
    from annotation.models import Annotator
    from studies.importing.study_file import study_import

    study = study_import(status="open", data=study_file(slug, n_items, allocation))
    if backend is not None:
        # As a running server's autovacuum would: the planner's statistics of the tables the hand-out reads.
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("ANALYZE studies_item; ANALYZE studies_candidate; ANALYZE annotation_assignment; "
                           "ANALYZE annotation_judgment; ANALYZE annotation_annotator")
    annotators = services.annotators_create(study=study, count=n_annotators)
    rng = random.Random(5)
    active = [a.pk for a in annotators]
    stored = 0
    cpu0, db0 = time.process_time(), backend_cpu(backend)
    while active:
        pk = active[rng.randrange(len(active))]
        annotator = Annotator.objects.select_related("study").get(pk=pk)
        assignment = services.assignment_next(annotator=annotator)
        if assignment is None:
            active.remove(pk)
            continue
        cands = list(assignment.item.candidates.all())
        payload = {"annotations": {c.public_id: {"score": round(min(100.0, max(0.0, rng.gauss(MEANS[c.system], 8))))}
                                   for c in cands}}
        services.judgment_submit(assignment=assignment, payload=payload, candidates=cands)
        stored += 1
    return stored, time.process_time() - cpu0, backend_cpu(backend) - db0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--annotators", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--refresh-every", type=int, default=None, metavar="K",
                        help="the adaptive study's allocation.refresh_every (default: the setting's default)")
    args = parser.parse_args()
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    import django

    django.setup()
    from django.db import connection

    from evaluators.live_allocation import allocation_state
    from studies.models import Study

    postgres = connection.vendor == "postgresql"
    # Django's test database: on SQLite in memory, so the figures are the work of the code and not the disk's
    # (a commit's fsync on a shared disk varies more than the difference measured here).
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    backend = None
    if postgres:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backend = int(cursor.fetchone()[0])
    from studies.definition.allocation import DEFAULTS

    every = args.refresh_every if args.refresh_every is not None else DEFAULTS.get("refresh_every", 1)
    adaptive = {"policy": "adaptive", "warmup": 20, "target": "all"}
    if "refresh_every" in DEFAULTS:
        adaptive["refresh_every"] = every
    policies = {"uniform": None, "adaptive": adaptive}
    print(f"database: {connection.vendor}; {args.items} DA items x {len(MEANS)} systems, redundancy 1, "
          f"{args.annotators} simulated annotators; {args.repeats} runs each; adaptive refresh_every {every}")
    try:
        hook_timed(backend)
        hooks = []
        hook_parts: list[tuple[float, float]] = []
        runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in policies}
        ratios = []
        for repeat in range(args.repeats):
            # Alternate which policy goes first: the machine's load drifts, and a pair of neighbouring runs
            # sees about the same load.
            names = list(policies) if repeat % 2 == 0 else list(reversed(policies))
            for name in names:
                HOOK[:] = [0.0, 0.0]
                n, cpu, db = run(f"bench-{name}-{repeat}", args.items, args.annotators, policies[name], backend)
                runs[name].append((cpu / n * 1000, db / n * 1000, n))
                if name == "adaptive":
                    hooks.append((HOOK[0] + HOOK[1]) / n * 1000)
                    hook_parts.append((HOOK[0] / n * 1000, HOOK[1] / n * 1000))
            ratios.append(sum(runs["adaptive"][-1][:2]) / sum(runs["uniform"][-1][:2]))
        for name, results in runs.items():
            app, db, n = min(results, key=lambda r: r[0] + r[1])
            server = f" + server {db:5.2f}" if postgres else ""
            print(f"{name:<9} {n:>5} judgments   CPU per judgment, best run {app + db:6.2f} ms (process {app:5.2f}"
                  f"{server})   all runs: {', '.join(f'{r[0] + r[1]:.2f}' for r in results)}")
        best = min(sum(r[:2]) for r in runs["adaptive"]) / min(sum(r[:2]) for r in runs["uniform"])
        print(f"adaptive / uniform: best runs {best:.3f} ({(best - 1) * 100:+.1f}%); "
              f"median of the neighbouring runs' ratios {statistics.median(ratios):.3f} "
              f"({(statistics.median(ratios) - 1) * 100:+.1f}%)")
        uniform = statistics.median(sum(r[:2]) for r in runs["uniform"])
        hook = statistics.median(hooks)
        print(f"the allocation hook after each judgment (adaptive runs): median {hook:.3f} ms CPU per judgment, "
              f"{hook / uniform * 100:.1f}% of uniform's median {uniform:.2f} ms"
              + (f" (process {statistics.median(p for p, _ in hook_parts):.3f} + server "
                 f"{statistics.median(d for _, d in hook_parts):.3f})" if postgres else ""))
        study = Study.objects.get(slug=f"bench-adaptive-{args.repeats - 1}")
        cpu0, db0 = time.process_time(), backend_cpu(backend)
        state = allocation_state(study)
        full = (time.process_time() - cpu0 + backend_cpu(backend) - db0) * 1000
        print(f"one full recomputation of the state at {state['judgments']} judgments: {full:.1f} ms CPU")
    finally:
        connection.creation.destroy_test_db(connection.settings_dict["NAME"], verbosity=0)


if __name__ == "__main__":
    main()
