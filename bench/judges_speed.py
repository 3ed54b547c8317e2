"""How long the LLM judges take: ``import_judge`` and the judges' block of the report page.

Builds the synthetic ranking study of ``bench/run.py`` (N items x 5 candidates x 3 annotators, bulk-created in a
temporary SQLite database), imports K judges (each ranks the candidates by their systems' quality plus noise)
through ``judge_import``, then times the study report and the judges' block cold (the page's first visit after
a change) and again from the cache, with their SQL query counts.

Usage: ``python bench/judges_speed.py [--items 2000] [--judges 3]``.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.run import build_study  # noqa: E402  (sets Django up on the temporary database)


def judge_file(slug: str, n_items: int, seed: int) -> str:
    """A judge's JSON Lines: the systems' quality plus noise, like the synthetic annotators."""
    rng = random.Random(seed)
    quality = {"reference": 2.0, "sys1": 1.2, "sys2": 1.0, "sys3": 0.6, "sys4": 0.2}
    lines = []
    for i in range(n_items):
        scores = {s: q + rng.gauss(0, 1.0) for s, q in quality.items()}
        ordered = sorted(scores, key=scores.__getitem__, reverse=True)
        lines.append(json.dumps({"item": f"ext-{i}", "ranks": {s: ordered.index(s) + 1 for s in quality}}))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--judges", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        slug = build_study(Path(tmp) / "bench.sqlite3", args.items)
        from django.core.cache import cache
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        from evaluators.judges.importing import judge_import
        from evaluators.reports import selectors
        from evaluators.reports.study_stats import report_options
        from studies.models import Study

        study = Study.objects.get(slug=slug)
        for k in range(args.judges):
            content = judge_file(slug, args.items, seed=100 + k)
            start = time.perf_counter()
            judge_import(study=study, name=f"judge-{k}", file_name=f"judge-{k}.jsonl", content=content)
            print(f"import_judge judge-{k}: {args.items} answers in {time.perf_counter() - start:.2f} s")
        options = report_options({})[0]
        cache.clear()
        start = time.perf_counter()
        selectors.study_report_cached(study=study, options=options)
        print(f"study report (cold): {time.perf_counter() - start:.2f} s")
        for label in ("judges' block (cold, report cached)", "judges' block (cached)"):
            with CaptureQueriesContext(connection) as queries:
                start = time.perf_counter()
                block = selectors.judges_report_cached(study=study, options=options)
                seconds = time.perf_counter() - start
            print(f"{label}: {seconds:.2f} s, {len(queries.captured_queries)} queries")
        assert block is not None
        for judge in block["judges"]:
            test = judge["alt_test"]
            print(f"  {judge['name']}: winning rate {test.get('winning_rate')}, advantage probability "
                  f"{test.get('advantage_probability')}, kendall tau {judge['ranking']['kendall_tau']}")


if __name__ == "__main__":
    main()
