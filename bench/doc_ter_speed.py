"""``doc-ter`` on whole TED talks: sacrebleu's own TER against ``evaluators.metrics.ter_exact``.

``python bench/doc_ter_speed.py RELEASE_TSV [--reference ref] [--systems A,B] [--sacrebleu-budget 900]``

``RELEASE_TSV`` is ``ted/ende/mqm_ted_ende.tsv`` of Google's ``google/wmt-mqm-human-evaluation``
(Apache-2.0) or the subset ``fixtures/wmt-mqm/mqm_ted_ende.subset.tsv``.  Each system's outputs
(``<v>`` markers removed) on the segments every system has are joined per talk, as ``doc-ter`` joins
them, and scored against ``--reference``'s with sacrebleu's TER (the settings ``doc-ter`` uses for a
German target: ``TER()``).  Per system and talk it times sacrebleu's ``_compute_segment_statistics``
and ``ter_exact.segment_statistics`` (CPU seconds) and checks the two statistics are equal; sacrebleu
runs until ``--sacrebleu-budget`` CPU seconds are spent (about a minute per 2,000-word talk), the talks
it did not reach are timed with ``ter_exact`` only and left out of the speed-up.  Last, the whole
``doc-ter`` evaluator runs on every system (wall clock and CPU).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sacrebleu.metrics import TER  # noqa: E402

from evaluators.metrics import ter_exact  # noqa: E402
from evaluators.metrics.corpus import Corpus, Segment  # noqa: E402
from bench.ted_outputs import read_outputs  # noqa: E402
from evaluators.metrics.document_metrics import DOC_TER  # noqa: E402



def read_talks(path: Path, reference: str) -> tuple[dict[str, dict[str, list[str]]], list[str]]:
    """``{system: {talk: [segment, ...]}}`` on the segments every system has, and the talks."""
    outputs, shared = read_outputs(path, reference)
    keys = sorted(shared)
    talks = sorted({doc for doc, _ in keys})
    return {system: {talk: [out[(doc, seg)] for doc, seg in keys if doc == talk] for talk in talks}
            for system, out in outputs.items()}, talks


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("release", type=Path)
    parser.add_argument("--reference", default="ref")
    parser.add_argument("--systems", default="", help="comma-separated (default: every other system)")
    parser.add_argument("--sacrebleu-budget", type=float, default=900.0,
                        help="CPU seconds sacrebleu may spend in all (checked before each talk)")
    parser.add_argument("--skip-evaluator", action="store_true", help="leave out the whole doc-ter run")
    args = parser.parse_args()
    texts, talks = read_talks(args.release, args.reference)
    systems = args.systems.split(",") if args.systems else sorted(s for s in texts if s != args.reference)
    metric = TER()
    refs = {talk: metric._cache_references([[" ".join(texts[args.reference][talk])]])[0] for talk in talks}
    print(f"{args.release}: {len(talks)} talks, reference {args.reference}, reference words "
          + ", ".join(f"{t} {len(refs[t]['ref_words'][0])}" for t in talks))
    spent = 0.0
    total_sb = total_ours_same = total_ours = 0.0
    for system in systems:
        sb_time = ours_same = ours_all = 0.0
        reached = 0
        for talk in talks:
            hyp = metric._preprocess_segment(" ".join(texts[system][talk]))
            t0 = time.process_time()
            ours = ter_exact.segment_statistics(hyp, refs[talk])
            took = time.process_time() - t0
            ours_all += took
            line = f"  {system:15} {talk:7} {len(hyp.split()):5} words  ter_exact {took:6.2f} s"
            if spent < args.sacrebleu_budget:
                t0 = time.process_time()
                theirs = metric._compute_segment_statistics(hyp, refs[talk])
                sb = time.process_time() - t0
                spent += sb
                sb_time += sb
                ours_same += took
                reached += 1
                if theirs != ours:
                    raise SystemExit(f"{system} {talk}: sacrebleu {theirs} != ter_exact {ours}")
                line += f"  sacrebleu {sb:7.2f} s  x{sb / took:5.1f}  equal {ours}"
            else:
                line += f"  sacrebleu not run (budget)  {ours}"
            print(line, flush=True)
        total_sb += sb_time
        total_ours_same += ours_same
        total_ours += ours_all
        if reached:
            print(f"{system}: {reached}/{len(talks)} talks with sacrebleu: sacrebleu {sb_time:.1f} s, "
                  f"ter_exact {ours_same:.2f} s, speed-up x{sb_time / ours_same:.1f}; "
                  f"ter_exact on all {len(talks)} talks {ours_all:.2f} s", flush=True)
        else:
            print(f"{system}: ter_exact on all {len(talks)} talks {ours_all:.2f} s", flush=True)
    if total_ours_same:
        print(f"all: sacrebleu {total_sb:.1f} s, ter_exact {total_ours_same:.2f} s on the same talks "
              f"(x{total_sb / total_ours_same:.1f}); ter_exact on every talk of {len(systems)} systems "
              f"{total_ours:.1f} s CPU")
    if args.skip_evaluator:
        return
    segments = []
    for talk in talks:
        for k, ref in enumerate(texts[args.reference][talk]):
            segments.append(Segment(f"{talk}:{k}", talk, ref, {s: texts[s][talk][k] for s in systems}))
    wall, cpu = time.perf_counter(), time.process_time()
    result = DOC_TER.evaluate(Corpus(segments, target_language="de"))
    print(f"doc-ter evaluator, {len(systems)} systems x {len(talks)} talks: "
          f"{time.perf_counter() - wall:.1f} s wall, {time.process_time() - cpu:.1f} s CPU; "
          + ", ".join(f"{s.system} {s.score:.2f}" for s in result.systems if s.score is not None))


if __name__ == "__main__":
    main()
