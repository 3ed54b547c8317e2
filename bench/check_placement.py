"""Where attention checks fall in annotators' queues: one shuffle of documents and checks vs the check schedule.

For each demo study (fixtures/studies/*.json), 2,000 annotators' queues are
simulated both ways ("before": spam copies as one-item documents in the one
document shuffle; "after": the check schedule of annotation/handout):
P(first item is a check), P(four or more checks in a row), the longest run,
and the worst |checks in the first k items − q·k| over all annotators and
quotas k (q = spam copies / items). No database.
Usage: ``python bench/check_placement.py [--annotators N]`` (docs/assignment.md quotes it).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("DATABASE_URL", "sqlite://:memory:")  # parse_study looks the slug up: an empty database

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

call_command("migrate", verbosity=0)

from annotation.handout.check_figures import scheduled_queues, shuffled_queues, summarise  # noqa: E402
from studies.importing.study_file import parse_study  # noqa: E402
from studies.controls.spam import spam_count  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=2000)
    n = parser.parse_args().annotators
    print(f"{'study':32} {'items':>5} {'checks':>6}  {'':9} {'1st=check':>9} {'run>=4':>7} {'longest':>7} {'max dev':>7}")
    for path in sorted((ROOT / "fixtures" / "studies").glob("*.json")):
        data = json.loads(path.read_text())
        parsed = parse_study(data)
        sizes = list(Counter(i["document_id"] or f"item:{i['external_id']}" for i in parsed.items).values())
        n_real = len(parsed.items)
        n_spam = spam_count(n_real, float(parsed.fields.get("spam_rate") or 0))
        seed = int(data.get("seed", 1))
        share = n_spam / (n_real + n_spam)
        for label, queues in (("before", shuffled_queues(seed=seed, doc_sizes=sizes, n_spam=n_spam, n_annotators=n)),
                              ("after", scheduled_queues(seed=seed, n_real=n_real, n_spam=n_spam, n_annotators=n))):
            p = summarise(queues, share)
            print(f"{path.stem if label == 'before' else '':32} {n_real if label == 'before' else '':>5} "
                  f"{n_spam if label == 'before' else '':>6}  {label:9} {p.first_is_check:9.1%} {p.run_of_4:7.1%} "
                  f"{p.longest_run:7d} {p.worst_deviation:7.2f}")


if __name__ == "__main__":
    main()
