"""The authors' BlonDe scores of the tests' rule-pipeline example (tests/evaluators/metrics/spacy_pipelines.py).

``python bench/blonde_rule_reference.py [--scratch DIR]``: saves the tests' in-code
spaCy pipeline to a temporary directory, has the authors' ``BLONDE()`` (scratch
environment, bench/blonde_upstream.py) load it instead of en_core_web_sm, and
prints its corpus scores of ``EXAMPLE`` for each system, lowercase off and on,
as the literal that ``tests/evaluators/metrics/test_blonde.py``
(``AUTHORS_ON_EXAMPLE``) holds, so that ``make test`` compares our
implementation with the authors' code without needing it.  Exits 1 if that
literal differs from what their code gives now.  (Their code runs
``nlp.pipe(..., disable=["parser"])``, so the saved pipeline gets a no-op
``sentencizer`` named ``parser``.)  Without the scratch environment it says so and exits 0.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.blonde_upstream import DEFAULT_SCRATCH, find_scratch, run_driver  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scratch", type=Path, default=DEFAULT_SCRATCH)
    args = parser.parse_args()
    scratch = find_scratch(args.scratch)
    if isinstance(scratch, str):
        print(f"blonde rule reference: skipped: {scratch}")
        return 0
    try:
        from tests.evaluators.metrics.spacy_pipelines import example_documents, rule_pipeline
        from tests.evaluators.metrics.test_blonde import AUTHORS_ON_EXAMPLE
    except ImportError as exc:
        print(f"blonde rule reference: skipped: {exc} (run it with the project's interpreter)")
        return 0

    table: dict[tuple[bool, str], Any] = {}
    with tempfile.TemporaryDirectory(prefix="blonde-rules-") as tmp:
        nlp = rule_pipeline()
        nlp.add_pipe("sentencizer", name="parser")
        nlp.to_disk(Path(tmp) / "rules")
        payload = {s: {"hyps": h, "refs": r} for s, (h, r) in example_documents().items()}
        for lowercase in (False, True):
            out, _, _ = run_driver(scratch, "upstream", payload, {"lowercase": lowercase},
                                pipeline_dir=Path(tmp) / "rules")
            for system in payload:
                v = out[system]
                f1s = {k: f for k, (_p, _r, f) in v["categories"].items() if k != "sBlonDe"}
                table[(lowercase, system)] = (v["F1"], v["P"], v["R"], f1s)
    print("AUTHORS_ON_EXAMPLE = {")
    for key, value in table.items():
        print(f"    {key!r}: {value!r},")
    print("}")
    def close(a: Any, b: Any) -> bool:  # dBlonDe's terms are summed in a set's order: the last bit may vary
        if isinstance(a, dict):
            return isinstance(b, dict) and a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
        if isinstance(a, tuple):
            return isinstance(b, tuple) and len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
        return bool(abs(a - b) <= 1e-12)

    same = table.keys() == AUTHORS_ON_EXAMPLE.keys() and all(close(table[k], AUTHORS_ON_EXAMPLE[k]) for k in table)
    print("test_blonde.AUTHORS_ON_EXAMPLE is", "up to date" if same else "OUT OF DATE: replace it with the above")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
