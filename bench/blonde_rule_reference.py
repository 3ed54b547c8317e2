"""The authors' BlonDe scores of the tests' rule-pipeline example (tests/evaluators/metrics/spacy_pipelines.py).

``python bench/blonde_rule_reference.py [--scratch DIR]``: saves the tests' in-code
spaCy pipeline to a temporary directory, has the authors' ``BLONDE()`` (scratch
environment, bench/blonde_upstream.py) load it instead of en_core_web_sm, and
prints its corpus scores of ``EXAMPLE`` for each system, lowercase off and on:
the reference values that ``tests/evaluators/metrics/test_blonde.py``
(``AUTHORS_ON_EXAMPLE``) checks our implementation against, so that ``make test``
compares with the authors' code without needing it.  (Their code runs
``nlp.pipe(..., disable=["parser"])``, so the saved pipeline gets a no-op
``sentencizer`` named ``parser``.)  Without the scratch environment it says so and exits 0.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.blonde_upstream import DEFAULT_SCRATCH, find_scratch, run_upstream, spacy_ready  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scratch", type=Path, default=DEFAULT_SCRATCH)
    args = parser.parse_args()
    missing = spacy_ready()
    scratch = find_scratch(args.scratch)
    if missing or isinstance(scratch, str):
        print(f"blonde rule reference: skipped: {missing or scratch}")
        return 0
    from tests.evaluators.metrics.spacy_pipelines import example_documents, rule_pipeline

    with tempfile.TemporaryDirectory(prefix="blonde-rules-") as tmp:
        nlp = rule_pipeline()
        nlp.add_pipe("sentencizer", name="parser")
        nlp.to_disk(Path(tmp) / "rules")
        payload = {s: {"hyps": h, "refs": r} for s, (h, r) in example_documents().items()}
        for lowercase in (False, True):
            out = run_upstream(scratch, payload, {"lowercase": lowercase}, pipeline_dir=Path(tmp) / "rules")
            for system, v in out.items():
                print(f"lowercase={lowercase} {system}: BlonDe F1 {v['F1']!r} P {v['P']!r} R {v['R']!r} "
                      f"dBlonDe F1 {v['F1s']['dBlonDe']!r}")
                print(f"    F1s {v['F1s']!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
