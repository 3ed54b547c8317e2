"""Writes data/subset2evaluate_ref.json: seeded data of our own and subset2evaluate's utilities on it.

Not a test and not needed at test time: test_selection.py reads the JSON it wrote. Rerun it only to
regenerate the reference, in a throwaway environment outside the project (subset2evaluate pulls in
sentence-transformers, so its dependencies are left out and only what the methods used here import
is added):

    python3 -m venv /tmp/s2e
    /tmp/s2e/bin/pip install --no-deps subset2evaluate==1.0.27
    /tmp/s2e/bin/pip install numpy pandas scipy sacrebleu==2.6.0
    /tmp/s2e/bin/python tests/evaluators/stats/make_subset2evaluate_ref.py

The data: 6 systems x 40 segments, two metrics (``cont``: continuous scores, some segments with
every system equal and some segments copied, so utilities tie; ``grid``: integers 0-4, so scores tie
within segments and tau-c meets ties) and one candidate text per system (words from a small
vocabulary, with empty texts and identical candidates). For each method the JSON keeps the
utilities in data order and subset2evaluate's ranking (``select_subset.basic``: its stable sort).
"""
from __future__ import annotations

import json
import random
from importlib.metadata import version
from pathlib import Path

# Installed only in the throwaway environment above, never in the project's.
import subset2evaluate.methods  # type: ignore[import-not-found]
import subset2evaluate.select_subset  # type: ignore[import-not-found]

SYSTEMS = [f"sys{k}" for k in range(6)]
N_SEGMENTS = 40
VOCABULARY = "the a cat dog sat on mat it was not there here".split()


def make_data() -> list[dict]:
    rng = random.Random(24)
    data: list[dict] = []
    for j in range(N_SEGMENTS):
        if j % 10 == 3:  # every system equal: variance 0, tau-c undefined (0)
            cont = {s: 0.5 for s in SYSTEMS}
        elif j % 10 == 7 and j > 0:  # a copy of the previous segment: tied utilities
            cont = dict(data[-1]["scores_cont"])
        else:
            cont = {s: rng.gauss(0.6, 0.2) for s in SYSTEMS}
        grid = {s: float(rng.randint(0, 4)) for s in SYSTEMS}
        base = [rng.choice(VOCABULARY) for _ in range(rng.randint(3, 9))]
        tgt = {}
        for k, s in enumerate(SYSTEMS):
            words = [w if rng.random() < 0.7 else rng.choice(VOCABULARY) for w in base]
            if j % 13 == 5 and k == 2:
                words = []  # an empty candidate
            if j % 11 == 4:
                words = base  # every candidate the same
            tgt[s] = " ".join(words)
        data.append({"i": j, "segment": f"doc{j // 8}-{j % 8}", "src": "", "tgt": tgt,
                     "scores_cont": cont, "scores_grid": grid})
    return data


def to_s2e(data: list[dict]) -> list[dict]:
    return [{"i": line["i"], "src": line["src"], "tgt": line["tgt"],
             "scores": {s: {"cont": line["scores_cont"][s], "grid": line["scores_grid"][s]} for s in SYSTEMS}}
            for line in data]


def main() -> None:
    data = make_data()
    runs: list[tuple[str, dict[str, str | int]]]
    runs = [(m, {"metric": metric}) for m in ("metric_avg", "metric_var", "metric_cons") for metric in ("cont", "grid")]
    runs += [("diversity", {"metric": sim}) for sim in ("unigram", "bleu", "chrf")]
    runs += [("random", {"seed": seed}) for seed in (0, 7)]
    reference: list[dict] = []
    for method, kwargs in runs:
        utilities = subset2evaluate.methods.METHODS[method](to_s2e(data), **{"metric": None, **kwargs})
        ranked = subset2evaluate.select_subset.basic(to_s2e(data), method=method, **kwargs)
        reference.append({"method": method, **kwargs,
                          "utilities": [float(u) for u in utilities],
                          "order": [data[line["i"]]["segment"] for line in ranked]})
    out = {"produced_by": f"subset2evaluate {version('subset2evaluate')}, sacrebleu {version('sacrebleu')}, "
                          f"numpy {version('numpy')}, scipy {version('scipy')} "
                          "(tests/evaluators/stats/make_subset2evaluate_ref.py)",
           "systems": SYSTEMS,
           "segments": [{"segment": line["segment"], "tgt": [line["tgt"][s] for s in SYSTEMS],
                         "cont": [line["scores_cont"][s] for s in SYSTEMS],
                         "grid": [line["scores_grid"][s] for s in SYSTEMS]} for line in data],
           "reference": reference}
    path = Path(__file__).with_name("data") / "subset2evaluate_ref.json"
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
