"""Assignment at scale: single-client ``next`` and submit latency and query counts at growing study sizes.

``DATABASE_URL=postgres://postgres@127.0.0.1:5432/NAME python bench/assignment_scale.py
[--sizes 1000,20000,100000] [--calls 200]`` (without DATABASE_URL: a temporary
SQLite database). On PostgreSQL it works in a throw-away test database
``test_NAME``, created and dropped here. For each size it imports a study
(5 candidates an item, 5% spam, redundancy 3), then times ``GET
/api/v1/annotate/next`` and ``POST …/judgment`` for three annotators taking
turns, in-process (Django's test client, no network): the figures are the
server's own work per request. At the largest size it also prints ``EXPLAIN
ANALYZE`` of the hand-out's window query (PostgreSQL only) for an annotator
who has already judged some items.
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
sys.path.insert(0, str(ROOT))

from bench.annotation_latency import percentile, study_file, time_next_and_submit  # noqa: E402 (the same study, loop and percentile)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,20000,100000")
    parser.add_argument("--calls", type=int, default=200, help="next+submit cycles per size")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if not os.environ.get("DATABASE_URL"):
        os.environ["SQLITE_PATH"] = str(Path(tempfile.mkdtemp(prefix="dmt-bench-scale-")) / "scale.sqlite3")
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    import django

    django.setup()
    from django.db import connection

    from annotation.handout.ordering import walk_for
    from annotation.handout.services import annotators_create
    from annotation.handout.statements import window_sql
    from studies.importing.study_file import study_import

    postgres = connection.vendor == "postgresql"
    old_name = connection.settings_dict["NAME"]
    if postgres:
        connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    else:
        from django.core.management import call_command
        call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}; {args.calls} next+submit cycles per size, 3 annotators taking turns")
    try:
        for size in sizes:
            data = study_file(size)
            data["slug"] = f"bench-scale-{size}"
            t = time.perf_counter()
            study = study_import(data=data, status="open")
            import_s = time.perf_counter() - t
            if postgres:
                with connection.cursor() as cursor:
                    cursor.execute("ANALYZE studies_item; ANALYZE annotation_assignment")
            annotators = annotators_create(study=study, count=3)
            next_ms, submit_ms, next_q, submit_q = time_next_and_submit(annotators, args.calls)
            n_items = study.items.count()
            print(f"{n_items:>7,} items (import {import_s:5.1f} s)   "
                  f"next median {statistics.median(next_ms):5.1f} ms p95 {percentile(next_ms, 0.95):5.1f} ms "
                  f"queries {min(next_q)}-{max(next_q)}   "
                  f"submit median {statistics.median(submit_ms):5.1f} ms p95 {percentile(submit_ms, 0.95):5.1f} ms "
                  f"queries {min(submit_q)}-{max(submit_q)}", flush=True)
            if postgres and size == sizes[-1]:
                annotator = annotators[0]
                annotator.refresh_from_db()
                study.refresh_from_db()
                walk = walk_for(seed=study.seed, sequence=annotator.sequence, n_documents=study.n_documents)
                last = annotator.assignments.order_by("-sequence").first()
                window, _ = walk.window(last.order_step if last else 0)
                sql, params = window_sql(study_id=study.pk, annotator_id=annotator.pk,
                                         documents=[d for _, d in window], limit=8)
                print(f"\nEXPLAIN ANALYZE of the hand-out's window query ({n_items:,}-item study):")
                with connection.cursor() as cursor:
                    cursor.execute("EXPLAIN ANALYZE " + sql, params)
                    print("\n".join(row[0] for row in cursor.fetchall()))
    finally:
        if postgres:
            connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
