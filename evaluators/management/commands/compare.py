"""``compare SLUG --json``: human judgments vs the study's automatic evaluators."""
from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluators.comparison.selectors import evaluators_for_study, study_comparison
from evaluators.comparison.core import HUMAN_SCORES
from evaluators.metrics.study_corpus import ReferenceChoiceError
from studies.access import rules as access


def _fmt(value: Any, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def comparison_text(result: dict[str, Any]) -> str:
    """A short plain-text view of the comparison (the JSON has everything)."""
    lines = [f"study {result['study']} ({result['protocol']}): {result['n_systems']} systems, "
             f"human score = {result['human']['score']}"]
    for system, h in sorted(result["human"]["systems"].items(), key=lambda kv: kv[1]["rank"] or 0):
        lines.append(f"  human  #{h['rank']} {system}: {_fmt(h['score'])}")
    for e in result["evaluators"]:
        direction = "higher" if e["system_score_higher_is_better"] else "lower"
        lines.append(f"{e['name']} ({e['kind']}, system score = {e['system_score']}, {direction} is better)")
        for system, s in sorted(e["systems"].items(), key=lambda kv: (kv[1]["rank"] is None, kv[1]["rank"] or 0)):
            mean = e["system_means"]["systems"].get(system, {})
            ci = (f"  mean {_fmt(mean['mean'], 4)} [{_fmt(mean['ci_low'], 4)}, {_fmt(mean['ci_high'], 4)}]"
                  if mean.get("mean") is not None else "")
            rank = '—' if s['rank'] is None else s['rank']
            lines.append(f"  #{rank} {system}: {_fmt(s['score'], 4)}{ci}")
        refs = e.get("references") or []
        if refs:
            lines.append(f"  reference{'s' if len(refs) > 1 else ''}: {', '.join(refs)}")
        for signature in (e.get("signature") or "").splitlines():
            lines.append(f"  signature: {signature}")
        paired = e.get("paired")
        if paired:
            others = [t for t in paired["tests"] if not t["is_baseline"]]
            lines.append(f"  {paired['method_name']} vs {paired['baseline']} ({paired['n_samples']} samples, "
                         f"seed {paired['seed']}): " + ", ".join(
                             f"{t['system']} p={_fmt(t['p_value'], 4)}{'*' if t['significant'] else ''}" for t in others))
        block = e["paired_t_tests"]
        if block.get("note"):  # too few units: no verdict at all
            lines.append(f"  paired t-tests (per {block['unit']}): {block['note']}")
        else:
            verdicts = [t for t in block["tests"] if t.get("better")]
            lines.append(f"  paired t-tests (per {block['unit']}): {len(verdicts)} of {len(block['tests'])} pairs "
                         f"differ at p < {block.get('alpha', 0.05)}")
        il = e.get("item_level")
        if il:
            lines.append(f"  item level: n={il['n']} AC1={_fmt(il['ac1']['value'])} accuracy={_fmt(il['accuracy'])} "
                         f"tau={_fmt(il['kendall_tau'])}")
        sl = e.get("system_level")
        if sl:
            lines.append("  system level: " + "  ".join(f"{m}={_fmt(sl[m]['value'])}" for m in ("pearson", "spearman", "kendall")))
    contrastive = result.get("contrastive")
    if contrastive:
        lines.append(f"ContraPro accuracy ({contrastive['n_items']} items, variants {', '.join(contrastive['variants'])}):")
        if contrastive.get("human"):
            h = contrastive["human"]
            lines.append(f"  humans: {_fmt(h['accuracy'])} ({h['n_correct']}/{h['n_judgments']} judgments)")
        for name, c in contrastive["evaluators"].items():
            lines.append(f"  {name}: {_fmt(c['accuracy'])} ({c['n_correct']}/{c['n_items']} items)"
                         + (f" — {c['note']}" if c.get("note") else ""))
    for w in result["williams"]:
        lines.append(f"Williams {w['a']} > {w['b']}: t={_fmt(w['t'])} p={_fmt(w['p_value'], 4)}")
    lines += [f"note: {n}" for n in result["notes"]]
    return "\n".join(lines) + "\n"


class Command(BaseCommand):
    help = ("Human judgments vs automatic evaluators: per evaluator its system scores and ranks, item-level "
            "agreement with the humans' pairwise preferences (AC1, accuracy, WMT Kendall-like tau), system-level "
            "Pearson/Spearman/Kendall with CIs, and Williams tests between evaluators.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="Study slug.")
        parser.add_argument("--user", metavar="USERNAME", help=access.USER_OPTION_HELP)
        parser.add_argument("--json", action="store_true", help="Print the JSON (unrounded) instead of text.")
        parser.add_argument("--evaluator", action="append", metavar="NAME", help="Only this evaluator (repeatable).")
        parser.add_argument("--human-score", choices=HUMAN_SCORES, default="expected_wins",
                            help="Human system score to correlate with (default expected_wins).")
        parser.add_argument("--bootstrap", type=int, default=1000, help="Bootstrap resamples for CIs (default 1000).")
        parser.add_argument("--seed", type=int, default=0, help="Bootstrap seed (default 0).")
        parser.add_argument("--reference", metavar="NAME", default=None,
                            help="The reference system of the comparison (one of the study's reference candidates): "
                                 "the other references are ranked and correlated like systems, and only the "
                                 "evaluators scored against NAME are compared. Default: every reference is left "
                                 "out of the ranking and each evaluator names the reference(s) it used.")
        parser.add_argument("--output", metavar="FILE", help="Write to FILE instead of standard output.")

    def handle(self, *args: Any, **opts: Any) -> None:
        study = access.command_study(opts["slug"], access.command_user(opts["user"]), "compare",
                                     not_found=f"no study with slug {opts['slug']!r}")
        if opts["bootstrap"] < 1:
            raise CommandError("--bootstrap must be at least 1")
        if opts["evaluator"]:
            known = {e.name for e in evaluators_for_study(study=study)}
            unknown = [n for n in opts["evaluator"] if n not in known]
            if unknown:
                raise CommandError(f"no scores for evaluator(s) {', '.join(unknown)} in {study.slug}; "
                                   f"available: {', '.join(sorted(known)) or 'none'}")
        try:
            result = study_comparison(study=study, names=opts["evaluator"], human_score=opts["human_score"],
                                      n_boot=opts["bootstrap"], seed=opts["seed"], reference=opts["reference"])
        except ReferenceChoiceError as exc:
            raise CommandError(f"--reference: {exc}") from None
        out = (json.dumps(result, indent=2, ensure_ascii=False, allow_nan=False) + "\n" if opts["json"]
               else comparison_text(result))
        if opts["output"]:
            try:
                with open(opts["output"], "w", encoding="utf-8") as fh:
                    fh.write(out)
            except OSError as exc:
                raise CommandError(f"--output: cannot write {opts['output']}: {exc.strerror or exc}") from None
            self.stderr.write(f"written to {opts['output']}")
        else:
            self.stdout.write(out, ending="")
