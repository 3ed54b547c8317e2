"""Writes data/alt_test_annotators_ref.json: seeded data of our own and the authors' alt-test on it.

Not a test and not needed at test time: test_alt_test.py (the per-annotator tests) reads the JSON it wrote. The reference is
the ``alt_test`` function of Calderon, Reichart & Dror's notebook (github.com/nitaytech/AltTest,
``alt_test_example.ipynb``, commit 18428b1, the code of "The Alternative Annotator Test for
LLM-as-a-Judge", ACL 2025), run as the authors wrote it. Rerun this only to regenerate the
reference, outside the project: its notebook cells 1 and 2 (imports; ``by_procedure``, ``accuracy``,
``neg_rmse``, ``ttest``, ``alt_test``) copied verbatim into a module, then this script with that
module on the path (numpy and scipy 1.12, the project's pins):

    git clone https://github.com/nitaytech/AltTest /tmp/alttest_ref/AltTest
    python3 -c "import json; nb = json.load(open('/tmp/alttest_ref/AltTest/alt_test_example.ipynb')); \
open('/tmp/alttest_ref/alttest_nb.py', 'w').write(''.join(nb['cells'][1]['source']) + '\\n\\n' \
+ ''.join(nb['cells'][2]['source']) + '\\n')"
    PYTHONPATH=/tmp/alttest_ref .venv/bin/python tests/evaluators/stats/make_alt_test_annotators_ref.py

``alt_test`` returns only the winning rate and the advantage probability; the per-annotator p-values
and the rejected annotators are recorded by wrapping the notebook's own ``ttest`` and
``by_procedure`` (called unchanged), and the dropped items and annotators are read from what it
prints.

The data (``random.Random`` seeded), both incomplete designs:

* ``categorical`` (scored with ``accuracy``): 90 items, labels A-D; annotators h1-h5 label each item
  with probability 0.65, h6 only 25 items (fewer than 30: dropped), h7 45 items; items 0-4 get a
  single annotator (dropped: fewer than 2). Judges: ``strong``, ``medium``, ``weak`` (noise 0.1, 0.4,
  0.8), ``copy_h1`` (h1's label where h1 labelled: for h1 every difference is 0, the t-test's zero
  variance), ``partial`` (strong, but no label on 15 items).
* ``numeric`` (scored with ``neg_rmse``): 80 items, scores 1-5 in steps of 0.5; the same layout with
  h6 on 20 items and items 0-3 single-annotator. Judges ``strong`` (unrounded floats), ``medium``,
  ``weak`` (uniform), ``copy_h2``, ``partial``.

Each judge is tested at several epsilons; q = 0.05, the notebook's minimums (2 annotators per
item, 30 items per annotator).
"""
from __future__ import annotations

import contextlib
import io
import json
import random
import re
from pathlib import Path
from typing import Any

import scipy

# Only on the path of the command above, never in the project.
import alttest_nb  # type: ignore[import-not-found]

OUT = Path(__file__).parent / "data" / "alt_test_annotators_ref.json"
LABELS = ["A", "B", "C", "D"]


def coverage(rng: random.Random, n_items: int, n_single: int, few: int, some: int) -> dict[str, list[int]]:
    """Which items each annotator labels; items < n_single get exactly one annotator."""
    cover: dict[str, list[int]] = {f"h{k}": [] for k in range(1, 8)}
    for i in range(n_items):
        if i < n_single:
            cover[f"h{1 + i % 5}"].append(i)
            continue
        chosen = [f"h{k}" for k in range(1, 6) if rng.random() < 0.65]
        while len(chosen) < 2:
            extra = f"h{rng.randint(1, 5)}"
            if extra not in chosen:
                chosen.append(extra)
        for h in chosen:
            cover[h].append(i)
    pool = list(range(n_single, n_items))
    cover["h6"] = sorted(rng.sample(pool, few))
    cover["h7"] = sorted(rng.sample(pool, some))
    return cover


def categorical(rng: random.Random) -> dict:
    n = 90
    gold = [rng.choice(LABELS) for _ in range(n)]
    noise = {"h1": 0.2, "h2": 0.3, "h3": 0.35, "h4": 0.25, "h5": 0.5, "h6": 0.3, "h7": 0.4}

    def noisy(i: int, p: float) -> str:
        return rng.choice(LABELS) if rng.random() < p else gold[i]

    cover = coverage(rng, n, 5, 25, 45)
    item = [f"c{i:03d}" for i in range(n)]
    ratings: list[list[Any]] = [[h, item[i], noisy(i, noise[h])] for h in cover for i in cover[h]]
    h1: dict[str, str] = {str(i): str(lab) for h, i, lab in ratings if h == "h1"}
    judges: dict[str, dict[str, str]] = {
        "strong": {item[i]: noisy(i, 0.1) for i in range(n)},
        "medium": {item[i]: noisy(i, 0.4) for i in range(n)},
        "weak": {item[i]: noisy(i, 0.8) for i in range(n)},
        "copy_h1": {item[i]: h1.get(item[i], gold[i]) for i in range(n)},
    }
    missing = set(rng.sample(range(n), 15))
    judges["partial"] = {item[i]: noisy(i, 0.1) for i in range(n) if i not in missing}
    return {"scoring": "accuracy", "epsilons": [0.0, 0.1, 0.2], "ratings": ratings, "judges": judges}


def numeric(rng: random.Random) -> dict:
    n = 80
    gold = [rng.uniform(1, 5) for _ in range(n)]
    sd = {"h1": 0.5, "h2": 0.6, "h3": 0.8, "h4": 0.5, "h5": 1.2, "h6": 0.6, "h7": 0.9}

    def half(x: float) -> float:
        return min(5.0, max(1.0, round(x * 2) / 2))

    cover = coverage(rng, n, 4, 20, 45)
    item = [f"n{i:03d}" for i in range(n)]
    ratings: list[list[Any]] = [[h, item[i], half(rng.gauss(gold[i], sd[h]))] for h in cover for i in cover[h]]
    h2: dict[str, float] = {str(i): float(lab) for h, i, lab in ratings if h == "h2"}
    judges: dict[str, dict[str, float]] = {
        "strong": {item[i]: round(rng.gauss(gold[i], 0.3), 6) for i in range(n)},
        "medium": {item[i]: half(rng.gauss(gold[i], 0.9)) for i in range(n)},
        "weak": {item[i]: half(rng.uniform(1, 5)) for i in range(n)},
        "copy_h2": {item[i]: h2.get(item[i], half(gold[i])) for i in range(n)},
    }
    missing = set(rng.sample(range(n), 15))
    judges["partial"] = {item[i]: half(rng.gauss(gold[i], 0.3)) for i in range(n) if i not in missing}
    return {"scoring": "neg_rmse", "epsilons": [0.0, 0.15, 0.2], "ratings": ratings, "judges": judges}


def run_reference(case: dict) -> list[dict]:
    humans: dict[str, dict] = {}
    for h, i, lab in case["ratings"]:
        humans.setdefault(h, {})[i] = lab
    results = []
    original_ttest, original_by = alttest_nb.ttest, alttest_nb.by_procedure
    for judge, labels in case["judges"].items():
        for eps in case["epsilons"]:
            p_values: list[float] = []
            rejected: list[int] = []

            def ttest(indicators, epsilon):  # noqa: ANN001 -- records, then the notebook's own
                p = original_ttest(indicators, epsilon)
                p_values.append(float(p))
                return p

            def by_procedure(p, q):  # noqa: ANN001
                out = original_by(p, q)
                rejected.extend(int(k) for k in out)
                return out

            alttest_nb.ttest, alttest_nb.by_procedure = ttest, by_procedure
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                wr, ap = alttest_nb.alt_test(labels, humans, case["scoring"], epsilon=eps, q_fdr=0.05)
            alttest_nb.ttest, alttest_nb.by_procedure = original_ttest, original_by
            text = printed.getvalue()
            skipped = re.findall(r"Skipping annotator (\S+) with only (\d+) instances", text)
            dropped = re.findall(r"Dropped (\d+) instances", text)
            kept = [h for h in humans if h not in {s for s, _ in skipped}]
            results.append({
                "judge": judge, "epsilon": eps, "winning_rate": wr, "advantage_probability": ap,
                "passed": wr >= 0.5,
                "annotators": kept,
                "p_values": [None if p != p else p for p in p_values],
                "rejected": sorted(kept[k] for k in rejected),
                "skipped": [[h, int(n)] for h, n in skipped],
                "n_dropped_items": int(dropped[0]) if dropped else 0,
            })
    return results


def main() -> None:
    rng = random.Random(25)
    cases = {"categorical": categorical(rng), "numeric": numeric(rng)}
    for case in cases.values():
        case["reference"] = run_reference(case)
    payload = {
        "source": "nitaytech/AltTest alt_test_example.ipynb @ 18428b1, alt_test() unchanged",
        "scipy": scipy.__version__, "q": 0.05, "cases": cases,
    }
    OUT.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    for name, case in cases.items():
        for r in case["reference"]:
            print(name, r["judge"], r["epsilon"], round(r["winning_rate"], 3),
                  round(r["advantage_probability"], 3), r["passed"], r["skipped"], r["n_dropped_items"])


if __name__ == "__main__":
    main()
