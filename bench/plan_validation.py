"""Validation of ``plan_study``: power predicted from a 20% pilot against the power observed on the full release.

``python bench/plan_validation.py /path/to/mqm_newstest2021_…/ted_ende.tsv [--share 0.2] [--pilots 5] [--seeds 2000]``

For each pilot seed: a pilot of ``share`` of the release's items (drawn without replacement, seeded), a plan
for as many items as the full release (``plan_study`` on the pilot, ``--seeds`` simulated studies), and the
same plan made on the full release — "the power observed by resampling the full release": studies of that
many items drawn with replacement from all of it, the ranking's test run on each. For every system pair the
two are the probabilities of one event, "the pilot's better system wins over the other in the report"
(when the full release orders the pair the other way, its ``reversed`` figure is that event). Prints, per
pilot seed, the max and mean absolute difference in points, the pairs within 5 points, the same for the
pairs whose observed power is between 10% and 90%, and the mean power over the pairs (the expected share of
pairs the report separates) predicted and observed; then the Monte Carlo floor (two seed sets on the full
release) and the runtime of one plan.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluators.stats.planning import Plan, plan_study  # noqa: E402
from evaluators.stats.planning_data import pilot_from_mqm  # noqa: E402
from formats.mqm_tsv import parse_mqm_tsv  # noqa: E402


def event_power(plan: Plan) -> dict[tuple[str, str], float]:
    """P(first wins over second) for both orders of every pair."""
    out: dict[tuple[str, str], float] = {}
    for p in plan.pairs:
        out[(p.better, p.worse)] = p.power
        out[(p.worse, p.better)] = p.reversed
    return out


def compare(predicted: Plan, observed: Plan) -> np.ndarray:
    seen = event_power(observed)
    return np.array([[p.power, seen[(p.better, p.worse)]] for p in predicted.pairs])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tsv", type=Path)
    parser.add_argument("--share", type=float, default=0.2)
    parser.add_argument("--pilots", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=2000)
    args = parser.parse_args()
    full = pilot_from_mqm(parse_mqm_tsv(args.tsv.read_text(encoding="utf-8"), unclosed="close_at_end"))
    n = len(full.items)
    size = round(args.share * n)
    print(f"{args.tsv.name}: {len(full.systems)} systems × {n} items, {len(full.systems) * (len(full.systems) - 1) // 2} "
          f"pairs; pilots of {size} items ({args.share:.0%}); plans for {n} items; {args.seeds} simulated studies")
    started = time.perf_counter()
    observed = plan_study(full, items=n, replicates=args.seeds, seed=10**6)
    elapsed = time.perf_counter() - started
    floor = compare(plan_study(full, items=n, replicates=args.seeds, seed=2 * 10**6), observed)
    floor_diff = np.abs(floor[:, 0] - floor[:, 1]) * 100
    print(f"Monte Carlo floor (full release, two seed sets): max {floor_diff.max():.1f}, mean {floor_diff.mean():.1f} "
          f"points; one plan: {elapsed:.2f} s")
    print(f"{'pilot seed':>10} {'max':>6} {'mean':>6} {'≤5 pts':>7} | {'mid pairs':>9} {'max':>6} {'mean':>6} "
          f"{'≤5 pts':>7} | {'mean power pred/obs':>19}")
    maxima, means, mean_gaps = [], [], []
    for pilot_seed in range(args.pilots):
        chosen = np.sort(np.random.default_rng(pilot_seed).choice(n, size=size, replace=False))
        predicted = plan_study(full.subset(chosen.tolist()), items=n, replicates=args.seeds, seed=pilot_seed)
        pairs = compare(predicted, observed)
        diff = np.abs(pairs[:, 0] - pairs[:, 1]) * 100
        mid = (pairs[:, 1] > 0.1) & (pairs[:, 1] < 0.9)
        maxima.append(diff.max())
        means.append(diff.mean())
        print(f"{pilot_seed:>10} {diff.max():6.1f} {diff.mean():6.1f} {int((diff <= 5).sum()):>3}/{len(diff):<3} | "
              f"{int(mid.sum()):>9} {diff[mid].max():6.1f} {diff[mid].mean():6.1f} "
              f"{int((diff[mid] <= 5).sum()):>3}/{int(mid.sum()):<3} | "
              f"{pairs[:, 0].mean():9.1%} / {pairs[:, 1].mean():.1%}")
        mean_gaps.append(abs(pairs[:, 0].mean() - pairs[:, 1].mean()) * 100)
    print(f"over {args.pilots} pilots: max |predicted − observed| {np.mean(maxima):.1f} points on average "
          f"(worst {np.max(maxima):.1f}); mean {np.mean(means):.1f} points; mean power over the pairs off by "
          f"{np.mean(mean_gaps):.1f} points on average")


if __name__ == "__main__":
    main()
