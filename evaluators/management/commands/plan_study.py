"""``plan_study``: power per system pair, rank-range widths, judgments and hours of a planned study, from a pilot.

Definitions and the model: evaluators/stats/planning.py and docs/efficient-evaluation.md ("Study planning").
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluators.reports.study_pilot import study_pilot
from evaluators.stats.planning import (
    DEFAULT_POWER, DEFAULT_REPLICATES, MAX_ITEMS, MIN_ITEMS, Pilot, PlanningError, planning_report,
)
from evaluators.stats.planning_data import pilot_from_mqm, pilot_from_table
from evaluators.stats.replay_data import ReplayDataError
from formats.mqm_tsv import MqmTsvError, parse_mqm_tsv
from formats.mtme import ScoreTableError, read_long_csv, read_mtme_dir
from studies.cli import read_text_file
from studies.models import Study

FORMATS = ("mqm-tsv", "scores", "mtme")
MAX_SEEDS = 20_000


def _fail(message: str) -> CommandError:
    return CommandError(message, returncode=2)


def parse_pair(text: str) -> tuple[str, str]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise _fail(f"--pair: {text!r}: give two systems as A,B")
    return parts[0], parts[1]


class Command(BaseCommand):
    help = ("Plan a human evaluation from a pilot: for a study of --items items with --raters-per-item raters, "
            "the power of every system pair (how often the report's WMT ranking separates them: one-sided "
            "Mann-Whitney U, p < 0.05), each system's expected rank-range width, the judgments and annotator-hours; "
            "with --pair A,B, the smallest number of items giving --power for that pair. By resampling the "
            "pilot's items (docs/efficient-evaluation.md).")

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--pilot", metavar="SLUG", help="A stored study (MQM, ESA, DA…) whose judgments are the pilot.")
        source.add_argument("--pilot-file", metavar="FILE",
                            help="A file: Google's MQM TSV, a long CSV or an mt-metrics-eval directory (--format).")
        parser.add_argument("--format", choices=FORMATS,
                            help="--pilot-file's format: mqm-tsv, scores (system,segment,scorer,score), mtme.")
        parser.add_argument("--human", default="human", metavar="NAME",
                            help="scores/mtme: the scorer holding the human scores (default human).")
        parser.add_argument("--systems", type=int, metavar="N",
                            help="Plan for the pilot's N best systems by mean score (default: all of them).")
        parser.add_argument("--items", type=int, metavar="M", help=f"Items of the planned study ({MIN_ITEMS}–{MAX_ITEMS}).")
        parser.add_argument("--raters-per-item", type=int, default=1, metavar="R",
                            help="Raters per item and system in the planned study (default 1).")
        parser.add_argument("--pair", metavar="A,B", help="Also find the smallest M giving --power for this pair.")
        parser.add_argument("--power", type=float, default=DEFAULT_POWER, metavar="P",
                            help=f"The target power of --pair (default {DEFAULT_POWER}).")
        parser.add_argument("--seconds-per-judgment", type=float, metavar="S",
                            help="Seconds per judgment for the hours (default: the pilot study's median server "
                                 "time; files have no times).")
        parser.add_argument("--seeds", type=int, default=DEFAULT_REPLICATES, metavar="N",
                            help=f"Simulated studies, one seed each (default {DEFAULT_REPLICATES}).")
        parser.add_argument("--seed", type=int, default=0, metavar="S", help="The first seed (default 0).")
        parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["items"] is None and opts["pair"] is None:
            raise _fail("--items: give the planned number of items (or --pair A,B to size the study for a pair)")
        if opts["items"] is not None and not MIN_ITEMS <= opts["items"] <= MAX_ITEMS:
            raise _fail(f"--items: between {MIN_ITEMS} and {MAX_ITEMS}")
        if not 1 <= opts["raters_per_item"] <= 100:
            raise _fail("--raters-per-item: between 1 and 100")
        if not 0 < opts["power"] < 1:
            raise _fail("--power: between 0 and 1 (e.g. 0.8)")
        if not 10 <= opts["seeds"] <= MAX_SEEDS:
            raise _fail(f"--seeds: between 10 and {MAX_SEEDS}")
        if not 0 <= opts["seed"] < 2**32:
            raise _fail("--seed: a whole number from 0 to 2^32 − 1")
        seconds = opts["seconds_per_judgment"]
        if seconds is not None and not 0 < seconds <= 86_400:
            raise _fail("--seconds-per-judgment: above 0 and at most 86400")
        pair = parse_pair(opts["pair"]) if opts["pair"] is not None else None
        pilot, source = self._pilot(opts)
        if opts["systems"] is not None and not 2 <= opts["systems"] <= len(pilot.systems):
            raise _fail(f"--systems: between 2 and the pilot's {len(pilot.systems)} systems (a plan cannot predict "
                        "systems the pilot has not seen)")
        if pair is not None:
            unknown = [name for name in pair if name not in pilot.systems]
            if unknown:
                raise _fail(f"--pair: no system {', '.join(map(repr, unknown))} in the pilot; systems: "
                            f"{', '.join(sorted(pilot.systems))}")
        if seconds is not None:
            pilot = Pilot(pilot.systems, pilot.items, pilot.scores, pilot.raters_per_cell, pilot.within_variance,
                          seconds, pilot.dropped_items)
        try:
            report = planning_report(pilot, items=opts["items"], raters=opts["raters_per_item"],
                                     systems=opts["systems"], pair=pair, power=opts["power"],
                                     replicates=opts["seeds"], seed=opts["seed"])
        except PlanningError as exc:
            option = {"pair": "--pair", "systems": "--systems", "items": "--items", "power": "--power"}
            first = str(exc).split(":", 1)[0]
            raise _fail(f"{option[first]}:{str(exc).split(':', 1)[1]}" if first in option else str(exc)) from None
        report["source"] = source
        if opts["json"]:
            self.stdout.write(json.dumps(report, indent=1))
            return
        self._print(report)

    def _pilot(self, opts: dict[str, Any]) -> tuple[Pilot, str]:
        if opts["pilot"] is not None:
            if opts["format"] is not None:
                raise _fail("--format: only with --pilot-file (a study is read from the database)")
            study = Study.objects.filter(slug=opts["pilot"]).first()
            if study is None:
                raise _fail(f"--pilot: no study {opts['pilot']!r}")
            try:
                return study_pilot(study), f"study {study.slug}"
            except PlanningError as exc:
                raise _fail(f"--pilot: {exc}") from None
        if opts["format"] is None:
            raise _fail(f"--format: give the format of --pilot-file ({', '.join(FORMATS)})")
        path, fmt = Path(opts["pilot_file"]), opts["format"]
        try:
            if fmt == "mtme":
                return pilot_from_table(read_mtme_dir(path, opts["human"]), human=opts["human"]), str(path)
            content = read_text_file(str(path), "--pilot-file", returncode=2)
            if fmt == "scores":
                return pilot_from_table(read_long_csv(path.name, content), human=opts["human"]), str(path)
            # Scores need no span offsets, so an unclosed <v> marker (the TED release has one) is closed at the end.
            return pilot_from_mqm(parse_mqm_tsv(content, source=path.name, unclosed="close_at_end")), str(path)
        except (ScoreTableError, MqmTsvError, ReplayDataError, PlanningError) as exc:
            raise _fail(f"--pilot-file: {exc}") from None

    def _print(self, report: dict[str, Any]) -> None:
        out = self.stdout.write
        p = report["pilot"]
        out(f"pilot: {report['source']}: {p['systems']} systems × {p['items']} items"
            + (f" ({p['dropped_items']} item(s) left out: not scored for every system)" if p["dropped_items"] else ""))
        plan = report["plan"]
        if plan is not None:
            hours = "not known (--seconds-per-judgment)" if plan["annotator_hours"] is None else (
                f"{plan['annotator_hours']:.1f} (median {plan['seconds_per_judgment']:.1f} s per judgment)")
            out(f"plan: {plan['items']} items × {len(plan['systems'])} systems × {plan['raters_per_item']} rater(s): "
                f"{plan['judgments']} judgments; annotator-hours {hours}; {plan['replicates']} simulated studies")
            for note in plan["notes"]:
                out(f"  {note}")
            out(f"\n{'pos':>3}  {'system':28} {'score':>9} {'E[rank range width]':>19} {'95% rank':>9}")
            for s in plan["systems"]:
                out(f"{s['position']:>3}  {s['system'][:28]:28} {s['score']:9.3f} {s['expected_rank_width']:19.2f} "
                    f"{s['rank_low']:>4}–{s['rank_high']:<4}")
            out(f"\n{'better':28} {'worse':28} {'delta':>8} {'power':>6} {'reversed':>8}")
            for pair in plan["pairs"]:
                out(f"{pair['better'][:28]:28} {pair['worse'][:28]:28} {pair['delta']:8.3f} {pair['power']:6.1%} "
                    f"{pair['reversed']:8.1%}")
        target = report["for_power"]
        if target is not None:
            a, b = target["pair"]
            if target["items"] is None:
                out(f"\n{a} over {b}: {target['notes'][-1]}")
            else:
                hours = "" if target["annotator_hours"] is None else f", {target['annotator_hours']:.1f} annotator-hours"
                out(f"\n{a} over {b}: {target['items']} items give power {target['power']:.1%} "
                    f"(target {target['target_power']:.0%}): {target['judgments']} judgments{hours}")
