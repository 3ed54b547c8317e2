"""Our BlonDe vs the authors' implementation on real multi-document output (DiaBLa, French -> English).

``python bench/blonde_equality.py [--scratch DIR] [--limit N] [--lowercase] [--documents]``

For each DiaBLa MT system (``baseline``, ``2to2``; 72 dialogues each, their
dialogues as documents), the corpus score against the references by

* the authors' ``BLONDE()`` (package ``blonde`` 0.1.4), Python API defaults:
  default category weights, geometric mean, n-gram order 4, exponential
  smoothing, lowercase off (``--lowercase``: ``BLONDE(lowercase=True)``), and
* our ``blonde`` evaluator (evaluators.metrics.blonde) with ``--nlp
  spacy:en_core_web_sm`` and the same setting,

each in its own process of the scratch environment (bench/blonde_upstream.py
makes it: ``python bench/blonde_upstream.py --setup``), both on the same
``en_core_web_sm`` 3.8.0.  Compares, unscaled (0-1), BlonDe P/R/F1 and every
category's P/R/F1 (tense, pronoun, entity, dm, 1-4-gram, dBlonDe; their
sBlonDe, which we report with BlonDe+ only, is left out); with ``--documents``
also each document's BlonDe F1 (theirs: ``corpus_score`` of that document
alone).  Prints them with the largest difference, and exits 1 if any differs
by more than 1e-9.  (The authors average dBlonDe's categories in the iteration
order of a Python ``set`` of strings, which changes from process to process,
so dBlonDe may differ in the last bit; everything else is expected to be
bit-identical.)  Without the scratch environment it says what is
missing and exits 0: this is a benchmark, not part of ``make test``.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.blonde_upstream import (  # noqa: E402
    DEFAULT_SCRATCH,
    diabla_documents,
    find_scratch,
    payload_of,
    run_driver,
)

TOLERANCE = 1e-9
#: The authors' category keys -> ours.
KEYS = {"tense": "tense", "pronoun": "pronoun", "entity": "entity", "dm": "dm", "1": "1-gram", "2": "2-gram",
        "3": "3-gram", "4": "4-gram", "dBlonDe": "dblonde", "sBlonDe": "sblonde"}


def difference(a: float | None, b: float | None) -> float:
    """|a - b|, with NaN/None equal only to NaN/None."""
    a_undefined = a is None or math.isnan(a)
    b_undefined = b is None or math.isnan(b)
    if a_undefined or b_undefined:
        return 0.0 if a_undefined and b_undefined else math.inf
    assert a is not None and b is not None
    return abs(a - b)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scratch", type=Path, default=DEFAULT_SCRATCH)
    parser.add_argument("--limit", type=int, default=None, help="dialogues per system (default: all)")
    parser.add_argument("--lowercase", action="store_true", help="both with lowercasing on (default: off, the API's)")
    parser.add_argument("--documents", action="store_true",
                        help="also each document's BlonDe F1 (theirs: corpus_score of that document alone)")
    args = parser.parse_args()
    scratch = find_scratch(args.scratch)
    if isinstance(scratch, str):
        print(f"blonde equality: skipped: {scratch}")
        return 0
    systems = diabla_documents(args.limit)
    payload = payload_of(systems)
    options = {"lowercase": args.lowercase}
    theirs, _, _ = run_driver(scratch, "upstream", payload, {**options, "documents": args.documents})
    ours, _, _ = run_driver(scratch, "ours", payload, options)
    worst = 0.0
    bitwise = differing = 0
    print(f"authors' BLONDE(lowercase={args.lowercase}) vs our blonde with spacy:en_core_web_sm; scratch {scratch.root}")
    for model, docs in systems.items():
        up, mine = theirs[model], ours[model]
        n_sent = sum(len(d[0]) for d in docs.values())
        print(f"\n{model}: {len(docs)} dialogues, {n_sent} sentences; our signature:\n  {mine['signature']}")
        print(f"  {'':<10} {'':<3} {'authors':<22} {'ours':<22} |diff|")
        rows = [("BlonDe", "P", up["P"], mine["P"]), ("BlonDe", "R", up["R"], mine["R"]),
                ("BlonDe", "F1", up["F1"], mine["F1"])]
        for key, (p, r, f) in up["categories"].items():
            own = mine["categories"].get(KEYS.get(key, key))
            if own is None:
                if key == "sBlonDe":  # we report sBlonDe only with BlonDe+ categories
                    continue
                own = [math.nan] * 3
            rows += [(KEYS.get(key, key), "P", p, own[0]), (KEYS.get(key, key), "R", r, own[1]),
                     (KEYS.get(key, key), "F1", f, own[2])]
        for label, kind, a, b in rows:
            diff = difference(a, b)
            worst = max(worst, diff)
            bitwise += diff == 0.0
            differing += diff != 0.0
            print(f"  {label:<10} {kind:<3} {a!r:<22} {b!r:<22} {diff:.2g}")
    if args.documents:
        doc_worst, n_docs = 0.0, 0
        for model in systems:
            for a, b in zip(theirs[model]["documents"], ours[model]["documents"]):
                # ours are on the 0-100 scale; x * 100 rounds, so equal values agree to ~1e-14
                doc_worst = max(doc_worst, difference(None if a is None else a * 100, b))
                n_docs += 1
        print(f"\ndocument BlonDe F1 (0-100), {n_docs} documents: largest difference {doc_worst:.3g}")
        worst = max(worst, doc_worst / 100)
    print(f"\n{bitwise + differing} values compared: {bitwise} bit-identical, {differing} differ; "
          f"largest difference {worst:.3g} (tolerance {TOLERANCE:g})")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    raise SystemExit(main())
