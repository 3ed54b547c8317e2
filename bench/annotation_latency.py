"""Annotation-side benchmark: import a large study, then time the API's "next" and "submit".

Run by ``make bench`` (through bench/run.py) or alone:
``python bench/annotation_latency.py [--items 20000] [--calls 300]``. It uses its own
temporary SQLite database and prints: the import time of a 20,000-item,
5-candidate study file, and the median / 95th percentile latency and SQL query
count of ``GET /api/v1/annotate/next`` and ``POST …/judgment`` for three
annotators taking turns (in-process, Django's test client, no network).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def study_file(n_items: int) -> dict:
    systems = ["reference", "sys1", "sys2", "sys3", "sys4"]
    items = [{"id": f"ext-{i}", "document_id": f"doc-{i // 10}", "position": i % 10, "phenomenon": "it-sie",
              "target_context": [f"Context {i}a.", f"Context {i}b."],
              "candidates": [{"system": s, "text": f"Candidate {s} for item {i}, with some words to read.",
                              "is_reference": s == "reference", "highlights": [[0, 9]]} for s in systems]}
             for i in range(n_items)]
    return {"slug": "bench-annotate", "title": "Benchmark", "protocol": "ranking",
            "settings": {"redundancy": 3, "spam_rate": 0.05, "seed": 7}, "items": items}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def time_next_and_submit(annotators: list, calls: int) -> tuple[list[float], list[float], list[int], list[int]]:
    """``calls`` next → submit cycles through the JSON API, the annotators taking turns, each answer a ranking
    in screen order: (next ms, submit ms, next query counts, submit query counts). Django must be set up."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from rest_framework.test import APIClient

    clients = []
    for annotator in annotators:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {annotator.token}")
        clients.append(client)
    next_ms: list[float] = []
    submit_ms: list[float] = []
    next_q: list[int] = []
    submit_q: list[int] = []
    for n in range(calls):
        client = clients[n % len(clients)]
        with CaptureQueriesContext(connection) as q:
            t = time.perf_counter()
            data = client.get("/api/v1/annotate/next").json()
            next_ms.append((time.perf_counter() - t) * 1000)
        next_q.append(len(q))
        ranks = {c["id"]: k + 1 for k, c in enumerate(data["candidates"])}
        with CaptureQueriesContext(connection) as q:
            t = time.perf_counter()
            resp = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", {"ranks": ranks}, format="json")
            submit_ms.append((time.perf_counter() - t) * 1000)
        submit_q.append(len(q))
        assert resp.status_code == 201, resp.content
    return next_ms, submit_ms, next_q, submit_q


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--calls", type=int, default=300, help="next+submit cycles in all")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="dmt-bench-annotate-"))
    os.environ["SQLITE_PATH"] = str(tmp / "annotate.sqlite3")
    os.environ.pop("DATABASE_URL", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    from annotation.handout.services import annotators_create
    from studies.importing.study_file import study_import

    call_command("migrate", verbosity=0)
    data = study_file(args.items)
    t = time.perf_counter()
    study = study_import(status="open", data=data)
    import_s = time.perf_counter() - t
    next_ms, submit_ms, next_q, submit_q = time_next_and_submit(annotators_create(study=study, count=3), args.calls)
    n_items = study.items.count()
    print(f"import_study: {args.items:,} items x 5 candidates (+{n_items - args.items} spam items) "
          f"in {import_s:.2f} s")
    for name, ms, queries in (("GET next", next_ms, next_q), ("POST judgment", submit_ms, submit_q)):
        print(f"{name:<14} median {statistics.median(ms):6.1f} ms   p95 {percentile(ms, 0.95):6.1f} ms   "
              f"SQL queries {min(queries)}-{max(queries)}   ({len(ms)} calls, {n_items:,}-item study)")


if __name__ == "__main__":
    main()
