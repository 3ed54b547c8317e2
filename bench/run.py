"""Benchmarks of the agreement statistics (``make bench``): wall time and peak memory.

1. ``agreement --ratings`` on a synthetic long ratings table of 100,000 items
   x 4 raters (400,000 rows, ~2% missing);
2. the full study report (``agreement SLUG --json``: agreement with and
   without ties, per phenomenon, control, system ranking with 1,000 bootstrap
   resamples) of a synthetic ranking study of 20,000 items x 5 candidates x 3
   annotators (60,000 judgments, 600,000 candidate-pair ratings), stored in a
   temporary SQLite database with ``bulk_create``;
3. the same report recomputed from the study's CSV export
   (``agreement --judgments``), and the export itself;
4. the annotation side (``bench/annotation_latency.py``): importing a study file of the
   same size, and the latency and SQL query count of the API's "next" and
   "submit".

Each command runs as its own subprocess under a small wrapper process, so the
peak resident memory (``getrusage(RUSAGE_CHILDREN).ru_maxrss``) is that one
command's.  Usage: ``python bench/run.py [--items N] [--study-items N] [--keep DIR]``.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def measure(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MiB) of ``cmd``, run under a fresh wrapper process.

    CPU time (user + system) is printed beside wall time because a loaded
    machine stretches wall time but not CPU time.
    """
    wrapper = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "rc = subprocess.run(sys.argv[1:]).returncode\n"
        "wall = time.perf_counter() - t\n"
        "ru = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(json.dumps({'rc': rc, 'wall': wall, 'kib': ru.ru_maxrss, 'cpu': ru.ru_utime + ru.ru_stime}), file=sys.stderr)\n"
    )
    proc = subprocess.run([PY, "-c", wrapper, *cmd], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    lines = proc.stderr.strip().splitlines()
    result = json.loads(lines[-1]) if lines else {"rc": proc.returncode}
    if result.get("rc") != 0:
        sys.stderr.write("\n".join(lines[:-1]) + "\n")
        raise SystemExit(f"benchmark command failed: {' '.join(cmd)}")
    return result["wall"], result["cpu"], result["kib"] / 1024  # Linux reports KiB


def max_difference(a: object, b: object) -> float:
    """Largest absolute difference between two JSON documents' numbers; inf if their shapes differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return float("inf")
        return max((max_difference(a[k], b[k]) for k in a), default=0.0)
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return float("inf")
        return max((max_difference(x, y) for x, y in zip(a, b)), default=0.0)
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            return abs(float(a) - float(b))
        return float("inf")
    return 0.0 if a == b else float("inf")


def ratings_csv(path: Path, n_items: int, n_raters: int, seed: int = 1) -> int:
    """A long ratings CSV: 5 skewed categories, raters agree with the truth 70% of the time, 2% missing."""
    import numpy as np

    rng = np.random.default_rng(seed)
    truth = rng.choice(5, size=n_items, p=[0.45, 0.25, 0.15, 0.10, 0.05])
    rows = []
    for r in range(n_raters):
        noise = rng.integers(0, 5, size=n_items)
        labels = np.where(rng.random(n_items) < 0.7, truth, noise).astype(object)
        labels[rng.random(n_items) < 0.02] = ""
        rows.append(labels)
    with path.open("w") as fh:
        fh.write("item,rater,label\n")
        for i in range(n_items):
            for r in range(n_raters):
                lab = rows[r][i]
                fh.write(f"i{i},r{r},{'' if lab == '' else 'c' + str(lab)}\n")
    return n_items * n_raters


def build_study(db: Path, n_items: int, n_systems: int = 5, n_annotators: int = 3, seed: int = 2) -> str:
    """A judged ranking study written with bulk_create into the SQLite file ``db``; returns its slug."""
    os.environ["SQLITE_PATH"] = str(db)
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import transaction
    from django.utils import timezone

    from annotation.models import Annotator, Assignment, AssignmentStatus, Judgment
    from studies.models import Candidate, Item, Study

    call_command("migrate", verbosity=0)
    rng = random.Random(seed)
    systems = ["reference"] + [f"sys{k}" for k in range(1, n_systems)]
    quality = {s: q for s, q in zip(systems, [2.0, 1.2, 1.0, 0.6, 0.2, 0.0, -0.2][:n_systems])}
    phenomena = ["it-sie", "it-er", "it-es", "they-sie"]
    now = timezone.now()
    with transaction.atomic():
        study = Study.objects.create(slug="bench-rk", title="Benchmark ranking study", protocol="ranking",
                                     allow_ties=True, redundancy=n_annotators, seed=seed)
        items = Item.objects.bulk_create(
            [Item(study=study, external_id=f"ext-{i}", document_id=f"doc-{i // 10}", position=i % 10,
                  phenomenon=phenomena[i % len(phenomena)], source=f"Quelle {i}.", order_key=i,
                  n_assigned=n_annotators, is_open=False, doc_index=i // 10) for i in range(n_items)], batch_size=5000)
        cands = Candidate.objects.bulk_create(
            [Candidate(item=it, system=s, text=f"{s} output for item {k}.", is_reference=(s == "reference"),
                       position=p) for k, it in enumerate(items) for p, s in enumerate(systems)], batch_size=5000)
        annotators = [Annotator.objects.create(study=study, sequence=a + 1) for a in range(n_annotators)]
        assignments = []
        for a, ann in enumerate(annotators):
            for k, it in enumerate(items):
                order = [c.pk for c in cands[k * n_systems:(k + 1) * n_systems]]
                rng.shuffle(order)
                assignments.append(Assignment(annotator=ann, item=it, sequence=k + 1, candidate_order=order,
                                              status=AssignmentStatus.DONE, opened_at=now, completed_at=now))
        assignments = Assignment.objects.bulk_create(assignments, batch_size=5000)
        judgments = []
        for n, asg in enumerate(assignments):
            k = n % n_items
            item_cands = cands[k * n_systems:(k + 1) * n_systems]
            scores = {c.pk: quality[c.system] + rng.gauss(0, 1.0) for c in item_cands}
            ordered = sorted(scores, key=lambda pk: scores[pk], reverse=True)
            ranks, rank = {}, 0
            for pos, pk in enumerate(ordered):
                # about one pair in six is tied with the candidate above it
                if pos == 0 or rng.random() > 0.17:
                    rank = pos + 1
                ranks[str(pk)] = rank
            answer = {"ranks": dict(sorted(ranks.items(), key=lambda kv: int(kv[0])))}
            judgments.append(Judgment(assignment=asg, answer=answer, payload_digest=f"{n:064x}",
                                      started_at=now, duration_ms=rng.randint(3000, 40000)))
        Judgment.objects.bulk_create(judgments, batch_size=5000)
    return study.slug


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=100_000, help="items of the ratings benchmark (4 raters)")
    parser.add_argument("--study-items", type=int, default=20_000, help="items of the synthetic ranking study")
    parser.add_argument("--keep", help="keep the generated files in this directory")
    args = parser.parse_args()

    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="dmt-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "SQLITE_PATH": str(tmp / "bench.sqlite3")}
    env.pop("DATABASE_URL", None)
    manage = [PY, str(ROOT / "manage.py")]
    figures: list[tuple[str, str, float, float, float]] = []

    print(f"bench: files in {tmp}", flush=True)
    t = time.perf_counter()
    n_rows = ratings_csv(tmp / "ratings.csv", args.items, 4)
    print(f"bench: wrote {n_rows:,} ratings in {time.perf_counter() - t:.1f}s", flush=True)
    wall, cpu, mib = measure([*manage, "agreement", "--ratings", str(tmp / "ratings.csv"), "--item", "item",
                         "--rater", "rater", "--label", "label", "--json", "--output", str(tmp / "ratings.json")], env)
    figures.append((f"agreement --ratings: {args.items:,} items x 4 raters", f"{n_rows:,} ratings", wall, cpu, mib))

    t = time.perf_counter()
    slug = build_study(tmp / "bench.sqlite3", args.study_items)
    n_j = args.study_items * 3
    print(f"bench: built study {slug} ({args.study_items:,} items x 5 candidates x 3 annotators, {n_j:,} judgments)"
          f" in {time.perf_counter() - t:.1f}s", flush=True)
    size = f"{n_j:,} judgments"
    wall, cpu, mib = measure([*manage, "agreement", slug, "--json", "--output", str(tmp / "report.json")], env)
    figures.append((f"agreement {slug} (full study report)", size, wall, cpu, mib))
    wall, cpu, mib = measure([*manage, "export_judgments", slug, "--format", "csv", "--output", str(tmp / "export.csv")], env)
    figures.append((f"export_judgments {slug} --format csv", f"{n_j * 5:,} rows", wall, cpu, mib))
    wall, cpu, mib = measure([*manage, "agreement", "--judgments", str(tmp / "export.csv"), "--json", "--output",
                         str(tmp / "report-from-export.json")], env)
    figures.append(("agreement --judgments export.csv", f"{n_j * 5:,} rows", wall, cpu, mib))

    diff = max_difference(json.loads((tmp / "report.json").read_text()),
                          json.loads((tmp / "report-from-export.json").read_text()))
    report = json.loads((tmp / "report.json").read_text())
    ratings = json.loads((tmp / "ratings.json").read_text())

    width = max(len(f[0]) for f in figures)
    print()
    print(f"{'benchmark':<{width}}  {'size':>18}  {'wall (s)':>9}  {'CPU (s)':>8}  {'peak RSS (MiB)':>15}")
    print("-" * (width + 58))
    for name, size, wall, cpu, mib in figures:
        print(f"{name:<{width}}  {size:>18}  {wall:>9.2f}  {cpu:>8.2f}  {mib:>15.0f}")
    print()
    print(f"ratings AC1 = {ratings['coefficients']['gwet_ac1']['value']:.4f} over {ratings['n_items']:,} items; "
          f"study AC1 = {report['coefficients']['gwet_ac1']['value']:.4f} over {report['n_items']:,} candidate pairs; "
          f"top system: {report['ranking']['systems'][0]['system']}")
    # Bradley-Terry is an iterative fit: separate processes may agree only to ~1e-9.
    print(f"report from the export vs the study report: largest difference {diff:.3g}"
          + (" (identical)" if diff == 0 else ""))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    if not diff <= 1e-8:
        raise SystemExit("the report recomputed from the export differs from the study report")
    print()
    print("annotation side (bench/annotation_latency.py):", flush=True)
    subprocess.run([PY, "-W", "ignore", str(ROOT / "bench" / "annotation_latency.py"), "--items", str(args.study_items)],
                   env=env, cwd=ROOT, check=True)
    print()
    print("BlonDe, ours vs the authors' implementation (bench/blonde_speed.py; skipped without spaCy and its scratch env):",
          flush=True)
    # Not check=True: the 2x target is a CPU-time ratio that a loaded machine can push just under; the figures
    # are printed either way, and the script's own exit status says whether the target held.
    done = subprocess.run([PY, "-W", "ignore", str(ROOT / "bench" / "blonde_speed.py")], env=env, cwd=ROOT)
    if done.returncode:
        print("BlonDe speed: below the 2x target on this run (see the figures above)")


if __name__ == "__main__":
    main()
