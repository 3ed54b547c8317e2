"""Writes data/replay_ref.json: seeded data of our own and subset2evaluate's subset evaluation on it.

Not a test and not needed at test time: test_replay.py reads the JSON it wrote. Rerun it only to
regenerate the reference, in the throwaway environment of make_subset2evaluate_ref.py:

    /tmp/s2e/bin/python tests/evaluators/stats/make_replay_ref.py

The data: 7 systems x 60 items of human scores (``human``; a few systems truly better, MQM-like
zeros on a third of the cells, so sums tie) in the shape subset2evaluate reads (a list of items with
``scores[system]["human"]``). For three item orders (as given, reversed, and a seeded shuffle) the
JSON keeps ``eval_subset_spa``, ``eval_subset_top`` and ``eval_subset_pairwise_accuracy`` of the first
k items at every budget of ``utils.PROPS``, and ``eval_spa_par`` of each order against targets
(the first order's SPA curve minus 0.01).
"""
from __future__ import annotations

import json
import random
from importlib.metadata import version
from pathlib import Path

# Installed only in the throwaway environment, never in the project's.
import subset2evaluate.evaluate as ev  # type: ignore[import-not-found]
import subset2evaluate.utils as utils  # type: ignore[import-not-found]

SYSTEMS = [f"sys{k}" for k in range(7)]
N_ITEMS = 60


def make_data() -> list[dict]:
    rng = random.Random(25)
    data = []
    for i in range(N_ITEMS):
        scores = {}
        for k, system in enumerate(SYSTEMS):
            value = 0.0 if rng.random() < 0.33 else -round(rng.expovariate(1.0) * (1 + 0.3 * k), 3)
            scores[system] = {"human": value}
        data.append({"i": i, "scores": scores})
    return data


def main() -> None:
    data = make_data()
    shuffled = list(range(N_ITEMS))
    random.Random(3).shuffle(shuffled)
    orders = {"given": list(range(N_ITEMS)), "reversed": list(range(N_ITEMS))[::-1], "shuffled": shuffled}
    out: dict = {"subset2evaluate": version("subset2evaluate"), "systems": SYSTEMS,
                 "human": [[item["scores"][s]["human"] for item in data] for s in SYSTEMS],
                 "props": list(utils.PROPS), "orders": {}}
    targets = None
    for name, order in orders.items():
        ordered = [data[i] for i in order]
        curve = []
        for prop in utils.PROPS:
            k = int(len(data) * prop)
            curve.append({"k": k, "spa": ev.eval_subset_spa(ordered[:k], data),
                          "top": ev.eval_subset_top(ordered[:k], data),
                          "pairwise_accuracy": float(ev.eval_subset_pairwise_accuracy(ordered[:k], data))})
        if targets is None:
            targets = [p["spa"] - 0.01 for p in curve]
        out["orders"][name] = {"order": order, "curve": curve,
                               "parity": float(ev.eval_spa_par(ordered, data, targets, workers=1))}
    out["targets"] = targets
    path = Path(__file__).with_name("data") / "replay_ref.json"
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
