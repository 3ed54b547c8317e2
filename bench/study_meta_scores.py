"""A stored MQM/ESA study as ``meta_evaluate --scores``' long CSV: ``system,segment,scorer,score``.

    python bench/study_meta_scores.py SLUG OUT.csv [MTME_DIR]

Scorer ``human``: the per-(item, system) mean over raters that ``compare`` uses
(:func:`evaluators.comparison.core.span_human`), ORIENTED (−MQM points, the ESA
score as given) because ``meta_evaluate`` takes the human scores as
higher-is-better; one scorer per evaluator with its stored segment scores as
stored (pass ``--lower-is-better ter`` etc. to ``meta_evaluate``). The
reference system and control/spam items are left out, as in ``compare``.
With MTME_DIR, the same scores are also written in mt-metrics-eval's layout
(``<scorer>.seg.score``: ``system<TAB>score``, segments in sorted id order, ``None``
when missing) together with ``<scorer>.sys.score`` files holding the system
scores ``compare`` uses: the human score of the report (negated for MQM) and each
evaluator's corpus-level score where it has one — so ``meta_evaluate --mtme-dir
MTME_DIR --seed 0`` reproduces ``compare``'s ``meta`` block.
Used by docs/worked-example-mqm.md to run the same data through both entry points.
"""
from __future__ import annotations

import csv
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def write_mtme(directory: Path, segments: Any, scores: Any, human_sys: dict[str, float],
               corpus: dict[str, dict[str, float]]) -> None:
    """``<scorer>.seg.score`` / ``.sys.score`` files: rows per system, segments in sorted id order."""
    directory.mkdir(parents=True, exist_ok=True)
    frames = {"human": segments.rename(columns={"item": "segment"})}
    for name, rows in scores.groupby("evaluator"):
        frames[str(name)] = rows.rename(columns={"item": "segment"})[["system", "segment", "score"]]
    systems = sorted(human_sys)
    items = sorted(set(frames["human"]["segment"]))
    for name, frame in frames.items():
        lookup = {(str(a), str(b)): float(c) for a, b, c in frame[["system", "segment", "score"]].itertuples(index=False)}
        lines = [f"{system}\t{lookup[(system, item)]!r}" if (system, item) in lookup else f"{system}\tNone"
                 for system in systems for item in items]
        (directory / f"{name}.seg.score").write_text("\n".join(lines) + "\n", encoding="utf-8")
        sys_scores = human_sys if name == "human" else corpus.get(name, {})
        if sys_scores:
            (directory / f"{name}.sys.score").write_text(
                "".join(f"{system}\t{sys_scores[system]!r}\n" for system in systems if system in sys_scores),
                encoding="utf-8")


def main(slug: str, out: str, mtme: str | None = None) -> int:
    import django

    django.setup()
    from annotation.exporting.judgments import judgments_frame
    from evaluators.comparison.core import span_human
    from evaluators.comparison.selectors import scores_frame
    from evaluators.models import Evaluator
    from studies.models import Candidate, Study

    study = Study.objects.filter(slug=slug).first()
    if study is None:
        print(f"no study {slug!r}", file=sys.stderr)
        return 2
    if not study.spec.per_candidate_annotations:
        print(f"study {slug!r} is a {study.protocol} study; this script reads mqm/esa studies", file=sys.stderr)
        return 2
    references = set(Candidate.objects.filter(item__study=study, is_reference=True).values_list("system", flat=True))
    human, segments, _, _ = span_human(judgments_frame(study), study.protocol, mqm_weights=study.mqm_weights or None,
                                   references=references, n_boot=1, seed=0)
    scores = scores_frame(study=study)
    scores = scores[~scores["is_spam_item"] & ~scores["is_reference"]]
    n = 0
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["system", "segment", "scorer", "score"])
        if segments is not None:
            human_rows = segments[~segments["system"].isin(references)]
            for system, item, value in zip(human_rows["system"], human_rows["item"], human_rows["score"].astype(float)):
                writer.writerow([system, item, "human", repr(float(value))])
                n += 1
        for system, item, name, value in zip(scores["system"], scores["item"], scores["evaluator"],
                                             scores["score"].astype(float)):
            writer.writerow([system, item, name, repr(float(value))])
            n += 1
    if mtme and segments is not None:
        human_sys = {s: float(e["oriented"]) for s, e in human["systems"].items()}
        corpus = {e.name: {s: float(v["score"]) for s, v in (e.system_scores or {}).items()
                           if (v or {}).get("score") is not None}
                  for e in Evaluator.objects.filter(study=study)}
        write_mtme(Path(mtme), segments[~segments["system"].isin(references)], scores, human_sys, corpus)
        print(f"{mtme}: human and {len(corpus)} evaluators in mt-metrics-eval's layout")
    print(f"{out}: {n} rows (human = {'−MQM' if study.protocol == 'mqm' else 'ESA'} mean over raters; "
          f"evaluators {', '.join(sorted(scores['evaluator'].unique()))})")
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
