"""The metric side on a whole WMT release: ``evaluate`` CPU, the compare page's time and size, ``agreement``'s wall.

Issue 26's targets on Google's WMT21 TED MQM study (14 systems x 529 segments): ``evaluate`` of the evaluators
<= 15 s CPU, the compare page < 2 s and < 150 KB, ``agreement`` < 2 s wall.  The release is not in this
repository; get it from https://github.com/google/wmt-mqm-human-evaluation (``ted/zhen/mqm_ted_zhen.tsv`` or
``ted/ende/mqm_ted_ende.tsv``, Apache-2.0, commit 7fadea2), then::

    .venv/bin/python bench/release_scale.py PATH/mqm_ted_zhen.tsv [--reference-system refB]
        [--evaluator NAME ...] [--scores-out FILE] [--scores-against FILE]

Steps, each a separate process on a throwaway SQLite database (bytecode cached in a temporary
``PYTHONPYCACHEPREFIX``, as an installed deployment has it):

1. ``import_judgments FILE --format mqm-tsv --unclosed-spans close-at-end`` (zh->en: ``--reference-system refB``,
   the release's second human translation; en->de: its only one, ``ref``);
2. ``evaluate SLUG --evaluator ...`` (default: every evaluator that needs no spaCy pipeline, ``doc-ter`` aside —
   14 of them), timed as user+sys CPU of the whole process tree (``getrusage(RUSAGE_CHILDREN)``; CPU, not wall,
   because the machine is shared and wall time follows the load) and wall, twice: the first run also compiles
   the bytecode of the packages the evaluators import (the bench's bytecode cache starts empty), the second is
   the figure (both are printed);
3. the compare page as a staff user through Django's test client: the first request (which queues the
   comparison's job on a study this size), the job run as a worker runs it, then the page twice (time, bytes,
   queries) and one linked detail (an evaluator's t-tests) fetched the way htmx fetches it;
4. ``agreement SLUG`` (the report's text), wall and CPU, twice: the first run computes the report (no stored
   report), the second reads back the one the first stored (``evaluators.reports.report_cache``); both texts
   must be equal.

``--scores-out`` writes every stored score (segment and system level, signatures, notes) as JSON;
``--scores-against`` compares them with such a file to 1e-12 and exits 1 on any difference (run the bench on
the old and the new code to show that a speed-up changed no score).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Every evaluator that runs without a spaCy pipeline, doc-ter aside (bench/doc_ter_speed.py times it).
EVALUATORS = ("bleu", "chrf", "ter", "doc-bleu", "doc-chrf", "pronoun-f", "pronoun-p", "pronoun-r",
              "connective-acc", "connective-any", "lexical-consistency", "blonde-lex", "dblonde-lex", "dcoem")

_DUMP = r"""
import json, os, sys
import django
django.setup()
from evaluators.models import Evaluator, MetricScore
out = {}
for e in Evaluator.objects.filter(study__slug=sys.argv[1]).order_by("name"):
    rows = MetricScore.objects.filter(evaluator=e).values_list("item__external_id", "system", "document", "score")
    out[e.name] = {"segments": {f"{i}|{s}|{d}": v for i, s, d, v in rows}, "system_scores": e.system_scores,
                   "signature": e.signature, "notes": e.notes, "higher_is_better": e.higher_is_better}
json.dump(out, open(sys.argv[2], "w"), sort_keys=True)
"""

_PAGE = r"""
import json, sys, time
import django
django.setup()
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from evaluators.jobs import job_execute
from evaluators.models import EvaluationJob

settings.ALLOWED_HOSTS = ["*"]
client = Client()
client.force_login(get_user_model().objects.get(username="bench"))
url = f"/reports/{sys.argv[1]}/compare/"
out = {}

def get(path, **headers):
    with CaptureQueriesContext(connection) as queries:
        wall, cpu = time.perf_counter(), time.process_time()
        response = client.get(path, **headers)
        return response, time.perf_counter() - wall, time.process_time() - cpu, len(queries)

response, wall, cpu, n = get(url)
out["first"] = {"status": response.status_code, "wall": wall, "cpu": cpu, "bytes": len(response.content), "queries": n}
out["jobs"] = []
for job in EvaluationJob.objects.filter(state="queued"):
    wall, cpu = time.perf_counter(), time.process_time()
    state = job_execute(job.pk)
    out["jobs"].append({"kind": job.kind, "state": state, "wall": time.perf_counter() - wall,
                        "cpu": time.process_time() - cpu})
out["pages"] = []
for _ in range(2):
    response, wall, cpu, n = get(url)
    out["pages"].append({"status": response.status_code, "wall": wall, "cpu": cpu, "bytes": len(response.content),
                         "queries": n})
html = response.content.decode()
marker = f'hx-get="/reports/{sys.argv[1]}/compare/t-tests/?'
if marker in html:
    link = html.split(marker)[1].split('"')[0].replace("&amp;", "&")
    response, wall, cpu, n = get(f"/reports/{sys.argv[1]}/compare/t-tests/?{link}", HTTP_HX_REQUEST="true")
    out["detail"] = {"status": response.status_code, "wall": wall, "cpu": cpu, "bytes": len(response.content),
                     "queries": n}
print(json.dumps(out))
"""


_FORGET_REPORTS = r"""
import django
django.setup()
from evaluators.models import StoredReport
StoredReport.objects.all().delete()
"""


def run(cmd: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, float, str]:
    """(wall seconds, user+sys CPU seconds of the whole process tree, stdout) of one command, run in ``cwd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), result.stdout


def compare_scores(old: dict, new: dict) -> tuple[int, float, list[str]]:
    """(segment scores compared, the largest difference, the differences beyond 1e-12 — at most 10)."""
    problems: list[str] = []
    worst = 0.0

    def walk(a: object, b: object, path: str) -> None:
        nonlocal worst
        if isinstance(a, dict) and isinstance(b, dict):
            if a.keys() != b.keys():
                problems.append(f"{path}: keys differ ({sorted(set(a) ^ set(b))[:5]})")
                return
            for key in a:
                walk(a[key], b[key], f"{path}/{key}")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{path}/{i}")
        elif isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
            worst = max(worst, abs(a - b))
            if abs(a - b) > 1e-12:
                problems.append(f"{path}: {a!r} != {b!r}")
        elif a != b:
            problems.append(f"{path}: {a!r} != {b!r}")

    walk(old, new, "")
    return sum(len(e["segments"]) for e in new.values()), worst, problems[:10]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tsv", help="ted/zhen/mqm_ted_zhen.tsv or ted/ende/mqm_ted_ende.tsv of the release")
    parser.add_argument("--reference-system", default=None,
                        help="import_judgments --reference-system (default: refB for zh->en, else the import's rule)")
    parser.add_argument("--evaluator", action="append", default=None, help="evaluators to run (default: 14, see above)")
    parser.add_argument("--scores-out", help="write every stored score to this JSON file")
    parser.add_argument("--scores-against", help="compare the stored scores with this JSON file (to 1e-12)")
    parser.add_argument("--keep", help="keep the database in this folder")
    args = parser.parse_args()
    tsv = Path(args.tsv).resolve()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="release-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "bench.sqlite3"
    db.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "DATABASE_URL")}
    env |= {"DATABASE_URL": f"sqlite:///{db}", "PYTHONPYCACHEPREFIX": str(folder / "pycache"),
            "DJANGO_SETTINGS_MODULE": "config.settings", "PYTHONPATH": str(ROOT)}
    py = sys.executable
    run([py, "manage.py", "migrate", "--noinput", "-v", "0"], env)
    run([py, "manage.py", "createsuperuser", "--noinput", "--username", "bench", "--email", "bench@example.org"], env)
    reference = args.reference_system or ("refB" if "zhen" in tsv.name else None)
    cmd = [py, "manage.py", "import_judgments", str(tsv), "--format", "mqm-tsv", "--unclosed-spans", "close-at-end",
           "--slug", "release", "--user", "bench"] + (["--reference-system", reference] if reference else [])
    wall, cpu, _ = run(cmd, env)
    print(f"import_judgments {tsv.name}{' --reference-system ' + reference if reference else ''}: "
          f"{wall:.1f} s wall, {cpu:.1f} s CPU")
    names = args.evaluator or list(EVALUATORS)
    cmd = [py, "manage.py", "evaluate", "release"] + [a for n in names for a in ("--evaluator", n)]
    run([py, "manage.py", "check"], env)  # compiles and caches the project's bytecode before the timed runs
    # The first run also compiles the bytecode of what evaluate imports only when an evaluator runs (sacrebleu,
    # lemminflect, wn, jieba, ... : PYTHONPYCACHEPREFIX starts empty, where an installation has them compiled);
    # the second run is the figure to compare. Both are printed.
    first_wall, first_cpu, _ = run(cmd, env)
    wall, cpu, _ = run(cmd, env)
    print(f"(a) evaluate, {len(names)} evaluators ({', '.join(names)}): {cpu:.1f} s CPU (user+sys, whole process "
          f"tree), {wall:.1f} s wall  [target <= 15 s CPU]; the first run, compiling bytecode: {first_cpu:.1f} s "
          f"CPU, {first_wall:.1f} s wall")
    status = 0
    if args.scores_out or args.scores_against:
        dump = folder / "scores.json"
        run([py, "-c", _DUMP, "release", str(dump)], env)
        new = json.loads(dump.read_text())
        if args.scores_out:
            Path(args.scores_out).write_text(json.dumps(new, sort_keys=True))
        if args.scores_against:
            n, worst, problems = compare_scores(json.loads(Path(args.scores_against).read_text()), new)
            print(f"    scores against {args.scores_against}: {n} segment scores, system scores, signatures and notes "
                  f"of {len(new)} evaluators, largest difference {worst:.1e}: "
                  + ("equal to 1e-12" if not problems else "DIFFERENT\n      " + "\n      ".join(problems)))
            status = 1 if problems else 0
    wall, cpu, out = run([py, "-c", _PAGE, "release"], env)
    page = json.loads(out)
    first = page["first"]
    print(f"(b) compare page, first request: {first['status']}, {first['wall']:.2f} s, {first['bytes'] / 1000:.0f} KB, "
          f"{first['queries']} queries")
    for job in page["jobs"]:
        print(f"    background job {job['kind']}: {job['state']}, {job['cpu']:.1f} s CPU, {job['wall']:.1f} s wall")
    for i, p in enumerate(page["pages"], start=1):
        print(f"    page {i}: {p['status']}, {p['wall']:.2f} s wall ({p['cpu']:.2f} s CPU), {p['bytes'] / 1000:.0f} KB, "
              f"{p['queries']} queries  [target < 2 s, < 150 KB]")
    if "detail" in page:
        d = page["detail"]
        print(f"    one evaluator's t-tests (htmx): {d['status']}, {d['wall']:.2f} s, {d['bytes'] / 1000:.0f} KB")
    run([py, "-c", _FORGET_REPORTS], env)  # the first run below computes the report, whatever ran before
    figures = []
    for _ in range(2):
        wall, cpu, out = run([py, "manage.py", "agreement", "release"], env)
        figures.append((wall, cpu, out))
    if figures[0][2] != figures[1][2]:
        print("    agreement: the report read back DIFFERS from the report computed")
        status = 1
    print(f"(c) agreement, computed: {figures[0][0]:.2f} s wall, {figures[0][1]:.2f} s CPU (user+sys); read back "
          f"(stored report, same data): {figures[1][0]:.2f} s wall, {figures[1][1]:.2f} s CPU, same text: "
          f"{figures[0][2] == figures[1][2]}  [target < 2 s wall on a quiet machine]")
    print(f"load average now: {' '.join(f'{x:.1f}' for x in os.getloadavg())} (2 cores, shared)")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
