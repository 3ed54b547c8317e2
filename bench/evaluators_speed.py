"""Time ``evaluate`` with the seed papers' evaluators on a generated 2,000-document x 5-system study.

Issue 13's target: BLEU, chrF, TER, lexical consistency, ``blonde-lex`` and DCoEM together, on
about 20,000 segments (2,000 documents of 10 segments, 5 systems and a reference), in under two
minutes on the development machine (2 cores). The study is built from the English side of the
DiaBLa fixture (fixtures/diabla, CC BY-SA 4.0): each document is ten consecutive English
references, and the five systems are seeded perturbations of them (dropped, repeated and
swapped words; one system keeps DiaBLa's own MT output where it exists), so every metric has
real work to do.

Usage: ``python bench/evaluators_speed.py [--documents 2000] [--segments 10] [--keep DIR]``.
Prints the import time and the whole-process time of one ``evaluate`` command running all six
evaluators (wall and CPU), using a temporary SQLite database.
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
EVALUATORS = ("bleu", "chrf", "ter", "lexical-consistency", "blonde-lex", "dcoem")


def english_pairs() -> list[tuple[str, str]]:
    """(English reference, an English MT output or the reference again) from the DiaBLa fixture."""
    pairs = []
    with (ROOT / "fixtures" / "diabla" / "utterances.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row.get("source_language") == "french" and row.get("reference"):
                pairs.append((row["reference"], row.get("mt") or row["reference"]))
    return pairs


def perturb(text: str, rng: random.Random, rate: float) -> str:
    words = text.split()
    out = []
    for w in words:
        r = rng.random()
        if r < rate / 3:
            continue  # dropped
        if r < 2 * rate / 3:
            out.extend([w, w])  # repeated
        elif r < rate and out:
            out[-1], w = w, out[-1]  # swapped with the previous word
            out.append(w)
        else:
            out.append(w)
    return " ".join(out) or text


def study_file(n_docs: int, n_segs: int, seed: int = 13) -> dict:
    rng = random.Random(seed)
    pairs = english_pairs()
    items = []
    for d in range(n_docs):
        start = rng.randrange(len(pairs))
        for s in range(n_segs):
            ref, mt = pairs[(start + s) % len(pairs)]
            cands = [{"system": "reference", "text": ref, "is_reference": True},
                     {"system": "diabla-mt", "text": mt}]
            cands += [{"system": f"sys{k}", "text": perturb(ref, rng, 0.05 * k)} for k in range(1, 5)]
            items.append({"id": f"d{d}-s{s}", "document_id": f"d{d}", "candidates": cands})
    return {"slug": "evaluators-bench", "title": "Evaluators benchmark", "protocol": "ranking", "status": "closed",
            "settings": {"redundancy": 1, "spam_rate": 0.0, "target_language": "en", "unit": "sentence"},
            "items": items}


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of a whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--segments", type=int, default=10)
    parser.add_argument("--keep", help="Keep the database and study file in this folder.")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="evaluators-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "bench.sqlite3"
    db.unlink(missing_ok=True)
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{db}"}
    data = study_file(args.documents, args.segments)
    path = folder / "study.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    n_segments = len(data["items"])
    py = sys.executable
    run([py, "manage.py", "migrate", "--noinput", "-v", "0"], env)
    run([py, "manage.py", "createsuperuser", "--noinput", "--username", "bench", "--email", "bench@example.org"], env)
    wall, cpu = run([py, "manage.py", "import_study", str(path), "--status", "closed", "--user", "bench"], env)
    print(f"import_study: {n_segments} segments x 6 candidates: {wall:.1f} s wall, {cpu:.1f} s CPU")
    cmd = [py, "manage.py", "evaluate", "evaluators-bench"]
    for name in EVALUATORS:
        cmd += ["--evaluator", name]
    wall, cpu = run(cmd, env)
    verdict = "within" if wall < 120 else "OVER"
    print(f"evaluate {' '.join(EVALUATORS)}: {args.documents} documents, {n_segments} segments, 5 systems: "
          f"{wall:.1f} s wall, {cpu:.1f} s CPU ({verdict} the 2-minute target)")
    if not args.keep:
        db.unlink(missing_ok=True)
        path.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
