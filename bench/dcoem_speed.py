"""DCoEM alone on a generated 2,000-document x 5-system corpus (about 10 sentences a document).

The text comes from the DiaBLa subset in ``fixtures/diabla/`` (CC BY-SA 4.0, see its README), its
English side only (utterances translated from French): document ``d`` is 10 consecutive lines, line
``i`` joins two utterances ``a = i mod n`` and ``b = (i div n + 7a) mod n`` so that nearly every line
is distinct (an analysis cache would flatter repeated lines).  The reference is the human
translations; system 0 the MT output, system 1 the human translation, systems 2-4 the MT output with
one word dropped at a system-dependent position (so every system's lines are its own).

It prints the corpus size, the wall time of loading the language backend and WordNet, of
``DCOEM.evaluate`` (both in one process, as in an ``evaluate`` run), and each system's score.

Usage: ``python bench/dcoem_speed.py [--documents 2000] [--sentences 10] [--systems 5] [--nlp lexicon]``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluators.metrics.corpus import Corpus, Segment  # noqa: E402


def generate(documents: int, sentences: int, systems: int) -> Corpus:
    rows = [json.loads(line) for line in (ROOT / "fixtures" / "diabla" / "utterances.jsonl").open(encoding="utf-8")]
    english = [r for r in rows if r["source_language"] == "french"]
    n = len(english)
    segments = []
    for i in range(documents * sentences):
        a = i % n
        b = (i // n + 7 * a) % n
        ref = f"{english[a]['reference']} {english[b]['reference']}".replace("\n", " ")
        mt = f"{english[a]['mt']} {english[b]['mt']}".replace("\n", " ")
        hyps = {}
        for k in range(systems):
            if k == 0:
                hyps[f"sys{k}"] = mt
            elif k == 1:
                hyps[f"sys{k}"] = ref
            else:
                words = mt.split()
                del words[(i * k) % len(words)]
                hyps[f"sys{k}"] = " ".join(words)
        segments.append(Segment(key=str(i), document=f"d{i // sentences}", reference=ref, hypotheses=hyps))
    return Corpus(segments=segments, target_language="en")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--sentences", type=int, default=10)
    parser.add_argument("--systems", type=int, default=5)
    parser.add_argument("--nlp", default="lexicon")
    args = parser.parse_args()
    corpus = generate(args.documents, args.sentences, args.systems)
    distinct = len({s.reference for s in corpus.segments} | {h for s in corpus.segments for h in s.hypotheses.values()})
    print(f"{len(corpus.documents())} documents, {len(corpus.segments)} segments, {len(corpus.systems)} systems, "
          f"{distinct} distinct texts")

    start = time.perf_counter()
    from evaluators.metrics.dcoem import DCOEM
    from evaluators.metrics.language import get_backend, wordnet

    backend = get_backend(args.nlp)
    wordnet.version()  # reads the WordNet database (once a process)
    loaded = time.perf_counter()
    result = DCOEM.evaluate(corpus, nlp=backend)
    done = time.perf_counter()
    print(f"load backend + WordNet: {loaded - start:.1f} s; DCOEM.evaluate: {done - loaded:.1f} s; "
          f"total: {done - start:.1f} s")
    for system in result.systems:
        print(f"  {system.system}: {system.score:.2f}  ({system.signature})")


if __name__ == "__main__":
    main()
