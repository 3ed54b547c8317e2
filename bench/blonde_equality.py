"""Our BlonDe vs the authors' implementation on real multi-document output (DiaBLa, French -> English).

``python bench/blonde_equality.py [--scratch DIR] [--limit N]``: for each DiaBLa MT
system (``baseline``, ``2to2``), its dialogues as documents, scored against the
references by the authors' ``BLONDE()`` (Python API defaults: geometric mean,
n = 4, exp smoothing, lowercase off; ``--lowercase``: on, both sides) in the scratch environment
(bench/blonde_upstream.py says how to make it) and by ``evaluators.metrics.blonde``
with the spaCy backend over the same pipeline directory.  Prints both corpus
scores (BlonDe F1, P, R, dBlonDe and every category's F1) and the largest
difference; exits 1 when any differs by more than 1e-9 (the authors sum a
few means in set order, so the last bits may differ).  Without the scratch
environment it says what is missing and exits 0.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.blonde_upstream import (  # noqa: E402
    DEFAULT_SCRATCH,
    as_corpus,
    diabla_documents,
    find_scratch,
    run_upstream,
    spacy_ready,
)

TOLERANCE = 1e-9
#: Our category names for the authors' keys.
KEYS = {"tense": "tense", "pronoun": "pronoun", "entity": "entity", "dm": "dm", "1": "1-gram", "2": "2-gram",
        "3": "3-gram", "4": "4-gram", "dBlonDe": "dblonde"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scratch", type=Path, default=DEFAULT_SCRATCH)
    parser.add_argument("--limit", type=int, default=None, help="dialogues per system (default: all)")
    parser.add_argument("--lowercase", action="store_true", help="both with lowercasing on (default: off, the API's)")
    args = parser.parse_args()
    missing = spacy_ready()
    scratch = find_scratch(args.scratch)
    if missing or isinstance(scratch, str):
        print(f"blonde equality: skipped: {missing or scratch}")
        return 0
    import spacy

    from evaluators.metrics.blonde import BLONDE, BlondeEvaluator, BlondeSettings
    from evaluators.metrics.language.spacy_backend import SpacyBackend

    systems = diabla_documents(args.limit)
    upstream = run_upstream(scratch, {m: {"hyps": [d[0] for d in docs.values()], "refs": [d[1] for d in docs.values()]}
                                      for m, docs in systems.items()}, {"lowercase": args.lowercase})
    backend = SpacyBackend(spacy.load(scratch.pipeline_dir))
    evaluator = BLONDE if not args.lowercase else BlondeEvaluator(
        name="blonde", description="", settings=BlondeSettings(lowercase=True))
    ours = {s.system: s for s in evaluator.evaluate(as_corpus(systems), nlp=backend).systems}
    worst = 0.0
    print(f"pipeline {scratch.pipeline_dir}")
    for model, docs in systems.items():
        up, mine = upstream[model], ours[model]
        assert mine.categories is not None
        n_sent = sum(len(d[0]) for d in docs.values())
        print(f"\n{model}: {len(docs)} dialogues, {n_sent} sentences")
        print(f"  {mine.signature}")
        rows = [("BlonDe F1", up["F1"] * 100, mine.score), ("BlonDe P", up["P"] * 100,
                                                             mine.categories["blonde"]["precision"]),
                ("BlonDe R", up["R"] * 100, mine.categories["blonde"]["recall"])]
        rows += [(f"{KEYS[k]} F1", v * 100 if v == v else None, mine.categories[KEYS[k]]["f1"])
                 for k, v in up["F1s"].items() if k in KEYS]
        for label, theirs, own in rows:
            if theirs is None or own is None:
                diff = 0.0 if theirs is None and own is None else math.inf
            else:
                diff = abs(theirs - own)
            worst = max(worst, diff)
            print(f"  {label:<12} authors {theirs!s:<22} ours {own!s:<22} |diff| {diff:.2g}")
    print(f"\nlargest difference: {worst:.3g} (tolerance {TOLERANCE:g})")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    raise SystemExit(main())
