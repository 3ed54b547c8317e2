"""A stored MQM/ESA study as ``meta_evaluate --scores``' long CSV: ``system,segment,scorer,score``.

    python bench/study_meta_scores.py SLUG OUT.csv

Scorer ``human``: the per-(item, system) mean over raters that ``compare`` uses
(:func:`evaluators.comparison.core.span_human`), ORIENTED (−MQM points, the ESA
score as given) because ``meta_evaluate`` takes the human scores as
higher-is-better; one scorer per evaluator with its stored segment scores as
stored (pass ``--lower-is-better ter`` etc. to ``meta_evaluate``). The
reference system and control/spam items are left out, as in ``compare``.
Used by docs/worked-example-mqm.md to run the same data through both entry points.
"""
from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def main(slug: str, out: str) -> int:
    import django

    django.setup()
    from annotation.export import judgments_frame
    from evaluators.comparison.core import SCORE_PROTOCOLS, span_human
    from evaluators.comparison.selectors import scores_frame
    from studies.models import Candidate, Study

    study = Study.objects.filter(slug=slug).first()
    if study is None:
        print(f"no study {slug!r}", file=sys.stderr)
        return 2
    if study.protocol not in SCORE_PROTOCOLS:
        print(f"study {slug!r} is a {study.protocol} study; this script reads mqm/esa studies", file=sys.stderr)
        return 2
    references = set(Candidate.objects.filter(item__study=study, is_reference=True).values_list("system", flat=True))
    _, segments, _, _ = span_human(judgments_frame(study), study.protocol, mqm_weights=study.mqm_weights or None,
                                   references=references, n_boot=1, seed=0)
    scores = scores_frame(study=study)
    scores = scores[~scores["is_spam_item"] & ~scores["is_reference"]]
    n = 0
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["system", "segment", "scorer", "score"])
        if segments is not None:
            for row in segments[~segments["system"].isin(references)].itertuples(index=False):
                writer.writerow([row.system, row.item, "human", repr(float(row.score))])
                n += 1
        for row in scores.itertuples(index=False):
            writer.writerow([row.system, row.item, row.evaluator, repr(float(row.score))])
            n += 1
    print(f"{out}: {n} rows (human = {'−MQM' if study.protocol == 'mqm' else 'ESA'} mean over raters; "
          f"evaluators {', '.join(sorted(scores['evaluator'].unique()))})")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
