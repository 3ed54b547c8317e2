"""Whole-process time of ``import_judgments FILE --format mqm-tsv`` on 100,000 MQM rows (target: under a minute).

The file is generated in a temporary directory from the WMT21 TED en-de subset in ``fixtures/wmt-mqm/``
(Apache-2.0, see its README): the subset's 1,534 rows repeated, each copy's documents renamed
(``talk.3`` -> ``talk.3.c7``), until ``--rows`` rows are written -- real texts, markers, categories and the
release's mix of No-error and error rows, 14 systems and 4 raters, so the figure is that of a real file of
that size (the subset's one unclosed ``<v>`` is in every copy: the import runs with
``--unclosed-spans close-at-end``).

The import runs as a fresh ``manage.py`` process on an empty SQLite database in the same temporary
directory (migrated first, not timed), like a researcher's first import. The script prints the wall-clock
and CPU time of that process, what was stored (items, candidates, annotators, judgments) and whether the
time is under the target. Exit status 0 when it is, 1 otherwise.

Usage: ``python bench/mqm_import_speed.py [--rows 100000] [--keep DIR]``.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "wmt-mqm" / "mqm_ted_ende.subset.tsv"
TARGET_SECONDS = 60.0


def generate(path: Path, rows: int) -> int:
    """Write ``rows`` data rows (plus the header) made of renamed copies of the fixture; returns the copies used."""
    lines = FIXTURE.read_text(encoding="utf-8").split("\n")
    header, body = lines[0], [ln for ln in lines[1:] if ln]
    written, copy = 0, 0
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write(header + "\n")
        while written < rows:
            for line in body:
                if written == rows:
                    break
                fields = line.split("\t")
                fields[1] = f"{fields[1]}.c{copy}"
                out.write("\t".join(fields) + "\n")
                written += 1
            copy += 1
    return copy


def manage(env: dict[str, str], *args: str) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stdout) of one ``manage.py`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"manage.py {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu, proc.stdout


COUNT = """
from annotation.models import Annotator, Judgment
from studies.models import Candidate, Item, Study
s = Study.objects.get(slug="bench")
print("COUNTS", s.items.count(), Candidate.objects.filter(item__study=s).count(), s.annotators.count(),
      Judgment.objects.filter(assignment__item__study=s).count(), s.status, s.protocol)
"""


def run(directory: Path, rows: int) -> int:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["SQLITE_PATH"] = str(directory / "bench.sqlite3")
    tsv = directory / "mqm_bench.tsv"
    copies = generate(tsv, rows)
    print(f"file: {tsv} ({rows} rows = {copies} renamed copies of {FIXTURE.name}, "
          f"{tsv.stat().st_size / 1e6:.1f} MB)")
    wall, _, _ = manage(env, "migrate", "--noinput")
    print(f"empty SQLite database migrated in {wall:.1f} s (not timed)")
    manage(env, "createsuperuser", "--noinput", "--username", "bench", "--email", "bench@example.org")
    wall, cpu, out = manage(env, "import_judgments", str(tsv), "--format", "mqm-tsv", "--slug", "bench",
                            "--unclosed-spans", "close-at-end", "--user", "bench")
    _, _, counts = manage(env, "shell", "-c", COUNT)
    line = next(ln for ln in counts.splitlines() if ln.startswith("COUNTS "))
    items, cands, raters, judgments, status, protocol = line.split()[1:]
    print(f"stored: study {out.strip()} ({protocol}, {status}): {items} items, {cands} candidates, {raters} "
          f"annotators, {judgments} judgments")
    ok = wall < TARGET_SECONDS
    print(f"import_judgments --format mqm-tsv, {rows} rows: {wall:.1f} s wall, {cpu:.1f} s CPU (whole process, "
          f"Django start-up included); target < {TARGET_SECONDS:.0f} s: {'yes' if ok else 'NO'}")
    print(f"machine: {os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.1f} (wall time stretches with it; "
          "CPU time does not)")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=100_000, help="data rows to generate (default 100,000)")
    ap.add_argument("--keep", type=Path, help="work in this directory and keep the file and database")
    args = ap.parse_args(argv)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        return run(args.keep, args.rows)
    with tempfile.TemporaryDirectory(prefix="mqm-import-") as tmp:
        return run(Path(tmp), args.rows)


if __name__ == "__main__":
    raise SystemExit(main())
