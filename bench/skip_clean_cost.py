"""What ``prefill_skip_clean`` costs and saves: ``import_prefill`` with and without it, and the hand-out.

Builds ESA studies of N items x 2 candidates (bulk-created in a temporary SQLite database), an automatic
system's JSON Lines marking one word of each candidate except on a share of the items, where it marks every
candidate clean; imports it with ``prefill_skip_clean`` 0 and 1, alternately (``--rounds``), and prints the CPU
time of each import (``time.process_time``: the machine is shared), the items skipped, the judgments the study
then needs, and the SQL statements of one ``next`` (the same in both: the hand-out reads open items only).

Usage: ``python bench/skip_clean_cost.py [--items 5000] [--clean 0.25] [--rounds 3]``.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studies.models import Study

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def setup(db: Path) -> None:
    os.environ["SQLITE_PATH"] = str(db)
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command
    call_command("migrate", verbosity=0)


def build(slug: str, n_items: int, skip: float) -> Study:
    from django.db import transaction

    from studies.models import Candidate, Item, Study
    with transaction.atomic():
        study = Study.objects.create(slug=slug, title=slug, protocol="esa", redundancy=3, seed=7,
                                     protocol_settings={"prefill_share": 0.5, "prefill_skip_clean": skip})
        items = Item.objects.bulk_create(
            [Item(study=study, external_id=f"ext-{i}", document_id=f"doc-{i // 10}", position=i % 10,
                  source=f"Source sentence number {i}.", order_key=i, doc_index=i // 10) for i in range(n_items)],
            batch_size=5000)
        Candidate.objects.bulk_create(
            [Candidate(item=it, system=s, text=f"{s} output for item number {k}.", position=p)
             for k, it in enumerate(items) for p, s in enumerate(("sysA", "sysB"))], batch_size=5000)
        Study.objects.filter(pk=study.pk).update(n_documents=(n_items + 9) // 10, n_real_items=n_items,
                                                 n_open_items=n_items)
    return Study.objects.get(pk=study.pk)


def qe_file(n_items: int, clean: float) -> str:
    every = round(1 / clean) if clean > 0 else 0
    lines = []
    for i in range(n_items):
        for s in ("sysA", "sysB"):
            spans = [] if every and i % every == 0 else [{"start": 5, "end": 11, "severity": "minor"}]
            lines.append(json.dumps({"item": f"ext-{i}", "system": s, "spans": spans}))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--clean", type=float, default=0.25, help="share of items the system marks clean")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        setup(Path(tmp) / "bench.sqlite3")
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        from annotation.dashboard.progress import study_progress
        from annotation.handout.services import annotators_create, assignment_next
        from studies.importing.prefill import prefill_import
        content = qe_file(args.items, args.clean)
        times: dict[float, list[float]] = {0.0: [], 1.0: []}
        last: dict[float, Study] = {}
        for r in range(args.rounds):
            for skip in ((0.0, 1.0) if r % 2 == 0 else (1.0, 0.0)):
                study = build(f"skip-{int(skip)}-{r}", args.items, skip)
                start = time.process_time()
                prefill_import(study=study, content=content, file_format="jsonl", source="qe", file_name="qe.jsonl")
                times[skip].append(time.process_time() - start)
                last[skip] = study
        for skip, study in last.items():
            row = study_progress(study)
            annotator = annotators_create(study=study, count=1)[0]
            with CaptureQueriesContext(connection) as queries:
                assignment_next(annotator=annotator)
            print(f"prefill_skip_clean {skip:g}: import_prefill CPU median {statistics.median(times[skip]):.2f} s "
                  f"(runs {', '.join(f'{t:.2f}' for t in times[skip])}); items {row['n_items']}, skipped "
                  f"{row['n_skipped']}, judgments needed {row['n_needed']}; first next: {len(queries)} statements")


if __name__ == "__main__":
    main()
