"""Time ``meta_evaluate`` on 20 metrics x 15 systems x 2,000 segments with 1,000 resamples (SPA and PERM-BOTH).

Usage: ``python bench/meta_speed.py [--metrics 20 --systems 15 --segments 2000 --resamples 1000]``.
Prints the wall time of the statistics (data generated in memory first).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluators.stats import meta  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--metrics", type=int, default=20)
    parser.add_argument("--systems", type=int, default=15)
    parser.add_argument("--segments", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    latent = np.linspace(0, 1, args.systems)[:, None] + rng.normal(0, 0.6, size=(args.systems, args.segments))
    human = np.round(np.clip(latent * 25 + 50, 0, 100) / 5) * 5
    human[rng.random(size=human.shape) < 0.1] = np.nan
    metrics = {f"m{k:02d}": latent + rng.normal(0, 0.2 + 0.05 * k, size=latent.shape) for k in range(args.metrics)}
    start = time.perf_counter()
    result = meta.meta_evaluate(human_seg=human, metrics_seg=metrics,
                                settings=meta.MetaSettings(resamples=args.resamples))
    seconds = time.perf_counter() - start
    print(f"meta_evaluate: {args.metrics} metrics x {args.systems} systems x {args.segments} segments, "
          f"{args.resamples} resamples: {seconds:.1f} s; {len({c['rank'] for c in result.clusters})} cluster(s)")


if __name__ == "__main__":
    main()
