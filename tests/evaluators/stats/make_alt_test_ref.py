"""Writes data/alt_test_ref.json: data of our own and the authors' alt-test on it.

Not a test and not needed at test time: test_alt_test.py reads the JSON. Rerun it only to regenerate
the reference. It executes the ``alt_test`` code cell of the authors' notebook (Calderon, Reichart &
Dror, ACL 2025; github.com/nitaytech/AltTest, ``alt_test_example.ipynb``) from a checkout given as
the argument — the notebook's code is read there at run time, never copied into this project:

    git clone https://github.com/nitaytech/AltTest /tmp/AltTest
    .venv/bin/python tests/evaluators/stats/make_alt_test_ref.py /tmp/AltTest/alt_test_example.ipynb

The data (seeded): 9 annotators and 80 instances, each annotator labelling a random ~70% of them (one
annotator only 12, so the minimum of 30 instances drops them; some instances get fewer than 2 raters
and are dropped); four judges per data set (close to the majority, middling, noisy, poor), each missing a few
instances. Categorical labels (5 classes) are scored with ``accuracy`` (ε = 0.2, the default, and 0.3);
numeric scores (1–100) with ``neg_rmse`` (ε = 0.15 and 0.3). For every run the JSON keeps the winning
rate, the advantage probability and, per annotator, the p-value and the mean of the judge's
indicators (printed lines of the notebook's code are discarded).
"""
from __future__ import annotations

import contextlib
import io
import json
import random
import sys
from pathlib import Path


def notebook_alt_test(path: str):  # noqa: ANN201 - the notebook's function
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    source = next("".join(c["source"]) for c in cells if c["cell_type"] == "code" and "def alt_test" in "".join(c["source"]))
    namespace: dict = {}
    exec("from typing import *\nimport json\nimport numpy as np\nfrom scipy.stats import ttest_1samp\n" + source,
         namespace)
    return namespace


def make_data(kind: str, seed: int) -> tuple[dict, dict]:
    rng = random.Random(seed)
    instances = [f"i{k}" for k in range(80)]
    truth = {i: (rng.randrange(5) if kind == "categorical" else rng.uniform(1, 100)) for i in instances}
    humans: dict = {}
    for a in range(9):
        share = 0.15 if a == 8 else 0.7
        labels = {}
        for i in instances:
            if rng.random() < share:
                if kind == "categorical":
                    labels[i] = truth[i] if rng.random() < 0.7 else rng.randrange(5)
                else:
                    labels[i] = round(min(100, max(1, truth[i] + rng.gauss(0, 12))), 1)
        humans[f"ann{a}"] = labels
    judges = {}
    for name, noise in (("close", 0.85), ("middling", 0.72), ("noisy", 0.62), ("poor", 0.25)):
        judge = {}
        for i in instances:
            if rng.random() < 0.05:
                continue
            if kind == "categorical":
                judge[i] = truth[i] if rng.random() < noise else rng.randrange(5)
            else:
                judge[i] = round(min(100, max(1, truth[i] + rng.gauss(0, 40 * (1 - noise)))), 1)
        judges[name] = judge
    return humans, judges


def main() -> None:
    ns = notebook_alt_test(sys.argv[1])
    runs = []
    for kind, scoring, epsilon, seed in (("categorical", "accuracy", 0.2, 1), ("numeric", "neg_rmse", 0.15, 2),
                                         ("numeric", "neg_rmse", 0.3, 3), ("categorical", "accuracy", 0.3, 4)):
        humans, judges = make_data(kind, seed)
        for name, judge in judges.items():
            with contextlib.redirect_stdout(io.StringIO()):
                winning_rate, advantage = ns["alt_test"](judge, humans, scoring_function=scoring, epsilon=epsilon)
            runs.append({"kind": kind, "scoring": scoring, "epsilon": epsilon, "judge_name": name,
                         "humans": humans, "judge": judge,
                         "winning_rate": winning_rate, "advantage_probability": advantage})
    path = Path(__file__).with_name("data") / "alt_test_ref.json"
    path.write_text(json.dumps({"source": "nitaytech/AltTest alt_test_example.ipynb", "runs": runs}) + "\n",
                    encoding="utf-8")


if __name__ == "__main__":
    main()
