"""Do context probes tell annotators who read the document from those who read only the sentence?

Simulated annotators judge two DiaBLa demo studies (fixtures/studies/): ``diabla-pronoun-mono``
(sentence items with two sentences of target-side context) and ``diabla-coherence-blocks`` (document
blocks), both ranking studies, imported with the product's own code (``study_import``: spam copies
and context probes generated from the study's seed, here set per run) with ``spam_rate`` 0.2 and
``probe_rate`` 0.5. Per run: 10 **sentence readers** and 10 **document readers** with the same
local diligence, each drawn from U(0.6, 0.98): the chance that they read an item at all (otherwise
they rank at random). A reader notices an error when its evidence lies in what they read:

- a spam copy's scramble is inside the candidate: both kinds notice it when diligent;
- a context probe's evidence is an earlier line (``metadata["context_probe"]["evidence_line"]``,
  always before the error's line): a sentence reader reads the error's sentence alone and never
  has it; a document reader has it and notices with a reading probability drawn from U(0.7, 1.0).

Noticing ranks the wrong candidate (scramble or changed text) strictly last; not noticing ranks the
candidates in a random order. The answers are scored by the product's own rules
(``QualityRules.spam_check_failed``, ``QualityRules.probe_caught`` through
annotation.quality.probes.study_probes) and rates (``context_use_summary``); the figure is the AUC
(Mann–Whitney: P(document reader's rate > sentence reader's) + ½ P(equal)) of the context-use rate
and of the local catch rate, over ``--seeds`` runs (default 100).

Usage: ``python bench/context_probes_sim.py [--seeds N] [--json]`` (docs/ai-assistance.md quotes it).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")
os.environ["DATABASE_URL"] = "sqlite://:memory:"

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

call_command("migrate", verbosity=0)

from annotation.quality.checks import spam_check_failed  # noqa: E402
from annotation.quality.probes import ProbeRecord, context_use_summary, probe_caught, study_probes  # noqa: E402
from studies.controls.spam import PROBE_KEY  # noqa: E402
from studies.importing.study_file import study_import  # noqa: E402
from studies.models import Study  # noqa: E402

STUDIES = {"sentence": "diabla-pronoun-mono", "document": "diabla-coherence-blocks"}
N_PER_GROUP = 10


def auc(positive: list[float], negative: list[float]) -> float:
    """P(a positive's value > a negative's) + ½ P(equal) (the Mann–Whitney U / (n₁n₂))."""
    wins = sum((p > n) + 0.5 * (p == n) for p in positive for n in negative)
    return wins / (len(positive) * len(negative))


def _ranks(pks: list[int], last: int | None, rng: random.Random) -> dict[str, int]:
    """A full ranking without ties: ``last`` strictly last when given, the rest in a random order."""
    order = [pk for pk in pks if pk != last]
    rng.shuffle(order)
    if last is not None:
        order.append(last)
    return {str(pk): k + 1 for k, pk in enumerate(order)}


def one_run(unit: str, seed: int) -> dict[str, float]:
    data = json.loads((ROOT / "fixtures" / "studies" / f"{STUDIES[unit]}.json").read_text(encoding="utf-8"))
    data["slug"] = f"sim-{unit}-{seed}"
    data["settings"].update(seed=seed, spam_rate=0.2, probe_rate=0.5)
    study = study_import(data=data, status="open")
    probes: dict[int, ProbeRecord] = study_probes(study)
    controls = []  # (item pk, candidate pks, the local error's candidate or None, probe or None, evidence line)
    for item in study.items.filter(is_spam=True).prefetch_related("candidates"):
        pks = [c.pk for c in item.candidates.all()]
        wrong = next(c.pk for c in item.candidates.all() if c.is_spam)
        controls.append((pks, wrong, probes.get(item.pk)))
    rng = random.Random(f"sim:{unit}:{seed}")
    outcomes: dict[str, list[tuple[str, bool]]] = {}
    local: dict[str, tuple[int, int]] = {}
    readers = []
    for k in range(2 * N_PER_GROUP):
        reads_document = k % 2 == 0
        code = f"{'doc' if reads_document else 'sent'}{k}"
        readers.append((code, reads_document))
        diligence = rng.uniform(0.6, 0.98)
        reading = rng.uniform(0.7, 1.0)
        passed = seen = 0
        mine: list[tuple[str, bool]] = []
        for pks, wrong, probe in controls:
            attentive = rng.random() < diligence
            if probe is None:  # a scramble: visible in the sentence itself
                answer = {"ranks": _ranks(pks, wrong if attentive else None, rng)}
                seen += 1
                passed += not spam_check_failed(study=study, answer=answer, spam_pk=wrong)
            else:  # the evidence is an earlier line: only a document reader has it
                notices = attentive and reads_document and rng.random() < reading
                answer = {"ranks": _ranks(pks, probe.probe_pk if notices else None, rng)}
                mine.append((probe.kind, probe_caught(study=study, answer=answer, probe=probe)))
        outcomes[code] = mine
        local[code] = (passed, seen)
    summary = context_use_summary(unit=study.unit, probes=outcomes, local=local)
    rates = summary["annotators"]
    doc = [c for c, d in readers if d]
    sent = [c for c, d in readers if not d]
    result = {
        "probes": len(probes), "local_controls": len(controls) - len(probes),
        "auc_context": auc([rates[c]["context_use"]["rate"] for c in doc], [rates[c]["context_use"]["rate"] for c in sent]),
        "auc_local": auc([rates[c]["local_catch"]["rate"] for c in doc], [rates[c]["local_catch"]["rate"] for c in sent]),
        "context_doc": statistics.mean(rates[c]["context_use"]["rate"] for c in doc),
        "context_sent": statistics.mean(rates[c]["context_use"]["rate"] for c in sent),
        "local_doc": statistics.mean(rates[c]["local_catch"]["rate"] for c in doc),
        "local_sent": statistics.mean(rates[c]["local_catch"]["rate"] for c in sent),
    }
    Study.objects.filter(pk=study.pk).delete()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    out: dict[str, dict[str, Any]] = {}
    for unit in STUDIES:
        runs = [one_run(unit, seed) for seed in range(1, args.seeds + 1)]
        out[unit] = {key: {"mean": statistics.mean(r[key] for r in runs), "min": min(r[key] for r in runs),
                           "max": max(r[key] for r in runs)} for key in runs[0]}
        out[unit]["share_auc_context_ge_0.9"] = sum(r["auc_context"] >= 0.9 for r in runs) / len(runs)
        out[unit]["share_auc_local_le_0.6"] = sum(r["auc_local"] <= 0.6 for r in runs) / len(runs)
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{args.seeds} runs per interface, {N_PER_GROUP} document + {N_PER_GROUP} sentence readers each "
          f"({time.perf_counter() - started:.0f} s)")
    print(f"{'interface':10} {'study':24} {'probes':>9} {'local':>9} {'AUC ctx':>8} {'≥0.9':>5} {'AUC local':>9} "
          f"{'≤0.6':>5}  {'ctx doc/sent':>13}  {'local doc/sent':>14}")
    for unit, row in out.items():
        print(f"{unit:10} {STUDIES[unit]:24} {row['probes']['min']:>4}–{row['probes']['max']:<4} "
              f"{row['local_controls']['min']:>4}–{row['local_controls']['max']:<4} {row['auc_context']['mean']:8.3f} "
              f"{row['share_auc_context_ge_0.9']:5.0%} {row['auc_local']['mean']:9.3f} {row['share_auc_local_le_0.6']:5.0%}"
              f"  {row['context_doc']['mean']:.2f}/{row['context_sent']['mean']:.2f}"
              f"  {row['local_doc']['mean']:.2f}/{row['local_sent']['mean']:.2f}")


if __name__ == "__main__":
    main()
