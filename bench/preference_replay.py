"""Adaptive allocation on preferences (ranking studies): decisions reached, judgments saved, false decisions.

Simulated ranking data, 5 systems × N items: on each item every system's latent quality is its mean plus
N(0, 1) noise, and the annotator ranks the systems by it; the human value is minus the rank (what
``replay --format export`` reads from a ranking export), and the sequences compare each pair by preference,
(1 + sign)/2 (``SequentialConfig(preference=True)``). The same replay code as ``replay --allocation`` runs.

    .venv/bin/python bench/preference_replay.py [--items 400] [--seeds 100] [--null-seeds 200]

Prints, for target ``all`` and ``top``: the judgments uniform and adaptive need to reach every decision a full
pass reaches (mean over seeds), the saving, and under the null (labels shuffled within items) the share of
runs with any false "better" decision. Pure numpy; no database.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluators.stats.allocation import replay_allocation, summarise  # noqa: E402
from evaluators.stats.sequential import SequentialConfig  # noqa: E402

MEANS = (0.0, 0.0, 0.25, 0.5, 1.0)


def ranks(n_items: int, rng: np.random.Generator) -> np.ndarray:
    """Minus each system's rank on each item (systems × items), 1 = best."""
    latent = np.asarray(MEANS)[:, None] + rng.normal(size=(len(MEANS), n_items))
    order = (-latent).argsort(axis=0).argsort(axis=0) + 1
    return -order.astype(float)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--null-seeds", type=int, default=200)
    args = parser.parse_args()
    human = ranks(args.items, np.random.default_rng(0))
    config = SequentialConfig(0.0, 1.0, preference=True)
    systems = [f"s{k}" for k in range(len(MEANS))]
    start = time.process_time()
    print(f"{len(MEANS)} systems (latent means {MEANS}, noise N(0, 1)) × {args.items} items, ranked; alpha 0.05")
    for target in ("all", "top"):
        out = summarise(replay_allocation(human, config, policies=("uniform", "adaptive"), seeds=args.seeds,
                                          warmup=20, target=target), systems)
        uni, ada = (out["policies"][p]["judgments_to_reference"] for p in ("uniform", "adaptive"))
        print(f"target {target}: reference decisions {out['reference_decisions']['mean']:.1f}; judgments to reach "
              f"them: uniform {uni['mean']:.0f} [{uni['low']:.0f}, {uni['high']:.0f}], adaptive {ada['mean']:.0f} "
              f"[{ada['low']:.0f}, {ada['high']:.0f}]; saving {out['saving']:.1%}; oracle saving "
              f"{out['oracle_saving']:.1%}; reached in {out['policies']['adaptive']['reached_share']:.0%} of seeds")
    null = summarise(replay_allocation(human, config, policies=("uniform", "adaptive"), seeds=args.null_seeds,
                                       warmup=20, null=True), systems)
    for policy, entry in null["policies"].items():
        print(f"null ({args.null_seeds} seeds), {policy}: runs with a false decision "
              f"{entry['false_decision_runs']} ({entry['false_decision_share']:.1%})")
    print(f"CPU {time.process_time() - start:.1f} s")


if __name__ == "__main__":
    main()
