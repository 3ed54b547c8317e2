"""Automation bias recovered from decoys: a simulated ESA^AI study whose annotators keep decoys with a known
probability (docs/ai-assistance.md, "Figures").

``python bench/prefill_bias.py [--seeds 100] [--items 400] [--annotators 30]``. Each seed builds a study:
``items`` items of two candidates (random words); the automatic system marks one to three spans on half of
the candidates and the rest clean; decoys are placed as ``import_prefill`` places them
(studies/controls/decoys.py, 25% of all suggestions); each annotator sees suggestions on the items the
hand-out's draw gives them (studies/definition/prefill.py, share 0.5) and has a known probability of keeping a
decoy, drawn uniformly from [0.05, 0.60] (and keeps a real suggestion with probability 0.8, edits it with 0.1).
The decoy acceptance rate is estimated with the report's own function (evaluators/stats/prefill.py) from the
simulated fates and compared with the truth (the annotators' probabilities weighted by the decoys each saw).
Prints per seed nothing, then: the largest and mean absolute error in points, the share of seeds within ±3
points, and the share of annotators whose 95% Wilson interval covers their own probability. Exits 1 when a
seed misses ±3 points. Pure Python: no database.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd  # noqa: E402

from evaluators.stats.prefill import acceptance  # noqa: E402
from studies.controls.decoys import decoy_count, place_decoys  # noqa: E402
from studies.definition.prefill import shows_suggestions  # noqa: E402

WORDS = ("le port ferry quitte matin chaque sept heures vieux bac la nuit mer bateau ville rue maison jour "
         "soir ciel vent pluie").split()
TOLERANCE = 0.03


def simulate(seed: int, *, items: int, annotators: int, share: float = 0.5, decoy_share: float = 0.25
             ) -> tuple[float, float, int, int]:
    """(estimated decoy acceptance, true rate, annotators whose CI covers their probability, annotators)."""
    rng = random.Random(seed)
    texts: dict[int, str] = {}
    real: dict[int, list[tuple[int, int]]] = {}
    clean: list[int] = []
    for cand in range(items * 2):
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 16))]
        text = " ".join(words)
        texts[cand] = text
        if rng.random() < 0.5:
            clean.append(cand)
            real[cand] = []
            continue
        starts = [k for k, ch in enumerate(text) if k == 0 or text[k - 1] == " "]
        picked = sorted(rng.sample(starts, rng.randint(1, 3)))
        real[cand] = [(a, text.index(" ", a) if " " in text[a:] else len(text)) for a in picked]
    n_real = sum(len(v) for v in real.values())
    styles = [("minor", ""), ("major", "")]
    decoys = place_decoys(texts=texts, taken=real, clean=clean, n=decoy_count(n_real, decoy_share), styles=styles,
                          rng=random.Random(seed + 1))
    per_candidate: dict[int, list[bool]] = {c: [False] * len(v) for c, v in real.items()}
    for d in decoys:
        per_candidate[d.candidate].append(True)
    keep_decoy = [rng.uniform(0.05, 0.60) for _ in range(annotators)]
    rows = []
    for a in range(annotators):
        for item in range(items):
            if not shows_suggestions(seed=seed, annotator=a, item=item, share=share):
                continue
            for cand in (2 * item, 2 * item + 1):
                for is_decoy in per_candidate[cand]:
                    u = rng.random()
                    if is_decoy:
                        fate = "kept" if u < keep_decoy[a] else "deleted"
                    else:
                        fate = "kept" if u < 0.8 else ("edited" if u < 0.9 else "deleted")
                    rows.append({"annotator": a, "decoy": is_decoy, "fate": fate})
    frame = pd.DataFrame(rows)
    result = acceptance(frame)
    shown = frame[frame["decoy"]].groupby("annotator").size()
    counts: dict[int, int] = {int(str(a)): int(n) for a, n in zip(shown.index, shown.to_numpy())}
    truth = sum(keep_decoy[a] * n for a, n in counts.items()) / sum(counts.values())
    covered = sum(1 for r in result["per_annotator"] if r["decoy"]["n"]
                  and r["decoy"]["ci_low"] <= keep_decoy[r["annotator"]] <= r["decoy"]["ci_high"])
    return result["decoy"]["rate"], truth, covered, len(counts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--annotators", type=int, default=30)
    args = parser.parse_args()
    errors: list[float] = []
    covered = total = 0
    for seed in range(args.seeds):
        estimate, truth, cov, n = simulate(seed, items=args.items, annotators=args.annotators)
        errors.append(abs(estimate - truth))
        covered += cov
        total += n
    within = sum(e <= TOLERANCE for e in errors) / len(errors)
    print(f"prefill_bias: {args.seeds} seeds, {args.items} items x 2 candidates, {args.annotators} annotators, "
          f"suggestions on 50% of items, decoys 25% of suggestions")
    print(f"decoy acceptance: max |error| {100 * max(errors):.2f} points, mean {100 * sum(errors) / len(errors):.2f} "
          f"points; seeds within ±3 points: {100 * within:.0f}%")
    print(f"per-annotator 95% Wilson intervals covering the annotator's own probability: {100 * covered / total:.1f}% "
          f"({covered}/{total})")
    return 0 if within == 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
