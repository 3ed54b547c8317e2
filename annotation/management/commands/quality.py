"""quality SLUG [--json] [--apply-rule]: per-annotator quality control (INTERFACES.md)."""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.quality.checks import study_quality
from annotation.handout.exclusion import study_apply_auto_exclusion
from studies.access import rules as access
from studies.access.audit import audit


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _rate(caught: int, seen: int, interval: list[float] | None) -> str:
    """"caught/seen rate [low, high]" (the 95% Wilson interval), "-" before the first."""
    if not seen or interval is None:
        return "-"
    return f"{caught}/{seen} {caught / seen:.2f} [{interval[0]:.2f}, {interval[1]:.2f}]"


class Command(BaseCommand):
    help = ("Per-annotator quality: judgments, spam checks seen and failed, how often the reference won, "
            "median seconds per item, answers under the study's minimum time, exclusion.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--json", action="store_true", help="One JSON object per annotator, in a list.")
        parser.add_argument("--apply-rule", action="store_true",
                            help="First exclude annotators above the study's auto_exclude_share.")
        parser.add_argument("--user", metavar="USERNAME", help=access.USER_OPTION_HELP)

    def handle(self, *args, **options) -> None:
        user = access.command_user(options["user"])
        study = access.command_study(options["slug"], user, "exclude" if options["apply_rule"] else "quality")
        if options["apply_rule"]:
            if study.auto_exclude_share is None:
                raise CommandError(f"--apply-rule: study {study.slug!r} has no auto_exclude_share rule")
            for annotator in study_apply_auto_exclusion(study=study):
                audit(user, "excluded", study, annotator=annotator.code, reason=annotator.exclusion_reason,
                      via="quality --apply-rule")
                self.stderr.write(f"excluded {annotator.code}: {annotator.exclusion_reason}")
        rows = [q.as_dict() for q in study_quality(study=study)]
        if options["json"]:
            self.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False))
            return
        columns = ["annotator", "n_judgments", "spam_seen", "spam_failed", "reference_first_rate",
                   "median_seconds", "fast_answers", "n_skipped", "excluded", "exclusion_reason"]
        if study.spec.compares_control_scores:  # ESA/DA: the score-drop test next to the checks
            at = columns.index("spam_failed") + 1
            columns[at:at] = ["score_drop_pairs", "score_drop_p"]
        if study.probe_rate or any(row["probes_seen"] for row in rows):  # context probes beside the local checks
            at = columns.index("reference_first_rate")
            columns[at:at] = ["probes_seen", "context_use", "local_catch"]
            for row in rows:
                row["context_use"] = _rate(row["probes_caught"], row["probes_seen"], row["context_use_ci"])
                row["local_catch"] = _rate(row["spam_seen"] - row["spam_failed"], row["spam_seen"],
                                           row["local_catch_ci"])
        table = [columns] + [[_fmt(row[c]) for c in columns] for row in rows]
        widths = [max(len(line[k]) for line in table) for k in range(len(columns))]
        for line in table:
            self.stdout.write("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip())
        checks = "missed control checks" if study.spec.generated_error_controls else "failed spam checks"
        rule = "none" if study.auto_exclude_share is None else f"exclude above {study.auto_exclude_share:.0%} {checks}"
        self.stdout.write(f"\n{len(rows)} annotator(s); minimum time {study.min_seconds:g} s; automatic exclusion: {rule}")
