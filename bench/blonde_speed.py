"""BlonDe speed: ours (spacy:en_core_web_sm) vs the authors' implementation on the same documents, whole processes.

``python bench/blonde_speed.py [--scratch DIR] [--systems 5] [--limit N] [--repeat 2]``

Test set: DiaBLa's French -> English dialogues (both MT models' dialogues,
144 documents, 2,883 sentences) with ``--systems`` outputs: the real MT output
and deterministic perturbations of it (adjacent words swapped, a word
dropped), so that every output is a distinct text.

* the authors': one process of the scratch environment that imports
  ``blonde`` (which loads en_core_web_sm) and calls ``BLONDE().corpus_score``
  once per system, as their README does (it tags the reference again each time);
* ours: one process of the same environment that runs the ``blonde``
  evaluator with ``--nlp spacy:en_core_web_sm`` over all systems at once (the
  reference tagged once, ``nlp.pipe`` batches, parser, lemmatizer and the
  attribute ruler off).

Each process is timed whole (interpreter start, imports, pipeline loading,
scoring, output), in wall time and in CPU time (user + system), ``--repeat``
times alternately; the best of each is compared (a shared machine only ever
adds time; CPU time suffers less from other processes than wall time).
Target: ours at least 2x faster, judged on CPU time (exit status 1 below it,
or when the scores differ); both ratios are printed.  Also checks that both give the same corpus scores.  Without the
scratch environment (bench/blonde_upstream.py) it says so and exits 0.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.blonde_upstream import DEFAULT_SCRATCH, diabla_documents, find_scratch, run_driver  # noqa: E402

TARGET = 2.0


def perturb(sentence: str, k: int, i: int) -> str:
    """System ``k``'s version of sentence ``i`` (k = 0: unchanged): two adjacent words swapped, one dropped."""
    if k == 0:
        return sentence
    words = sentence.split(" ")
    if len(words) > 2:
        j = (i * k) % (len(words) - 1)
        words[j], words[j + 1] = words[j + 1], words[j]
        del words[(i + k) % len(words)]
    else:
        words.append(f"({k})")
    return " ".join(words)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scratch", type=Path, default=DEFAULT_SCRATCH)
    parser.add_argument("--systems", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None, help="dialogues per DiaBLa model (default: all)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each process (the best is kept)")
    args = parser.parse_args()
    scratch = find_scratch(args.scratch)
    if isinstance(scratch, str):
        print(f"blonde speed: skipped: {scratch}")
        return 0

    docs: dict[str, tuple[list[str], list[str]]] = {}
    for model_docs in diabla_documents(args.limit).values():
        docs.update(model_docs)
    names = [f"sys{k}" for k in range(args.systems)]
    payload = {name: {"hyps": [[perturb(s, k, i) for i, s in enumerate(h)] for h, _ in docs.values()],
                      "refs": [r for _, r in docs.values()]} for k, name in enumerate(names)}
    n_sent = sum(len(r) for _, r in docs.values())
    print(f"BlonDe speed: {len(docs)} documents, {n_sent} sentences, {len(names)} systems "
          f"({n_sent * len(names):,} hypothesis sentences); en_core_web_sm 3.8.0 in {scratch.root}", flush=True)

    runs: dict[str, list[tuple[float, float, dict[str, Any]]]] = {"upstream": [], "ours": []}
    for r in range(args.repeat):
        for which in ("upstream", "ours"):
            out, seconds, cpu = run_driver(scratch, which, payload)
            runs[which].append((seconds, cpu, out))
            inner = out["__seconds__"]
            print(f"  run {r + 1} {which:<8}: {seconds:6.2f} s wall, {cpu:6.2f} s CPU, whole process (in it: imports + "
                  f"pipeline load {inner['import']:.2f} s, scoring {inner['scoring']:.2f} s wall); "
                  f"load average {os.getloadavg()[0]:.1f}", flush=True)
    theirs, theirs_cpu = min(t[0] for t in runs["upstream"]), min(t[1] for t in runs["upstream"])
    ours, ours_cpu = min(t[0] for t in runs["ours"]), min(t[1] for t in runs["ours"])
    up, mine = runs["upstream"][0][2], runs["ours"][0][2]
    worst = max(abs(up[n]["F1"] - mine[n]["F1"]) for n in names)
    ratio, ratio_cpu = theirs / ours, theirs_cpu / ours_cpu
    print(f"  authors' BLONDE().corpus_score x {len(names)}: {theirs:6.2f} s wall, {theirs_cpu:6.2f} s CPU "
          f"(best of {args.repeat})")
    print(f"  ours, blonde over all systems:      {ours:6.2f} s wall, {ours_cpu:6.2f} s CPU (best of {args.repeat})")
    print(f"  speed-up {ratio:.2f}x wall, {ratio_cpu:.2f}x CPU (target >= {TARGET:g}x); "
          f"largest BlonDe F1 difference {worst:.3g}")
    ratio = ratio_cpu  # judged on CPU time: other jobs on a shared machine stretch wall time far more
    if worst > 1e-9:
        print("  FAIL: the scores differ")
        return 1
    if ratio < TARGET:
        print("  below target")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
