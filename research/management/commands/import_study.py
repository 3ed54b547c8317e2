"""``import_study FILE [--select METHOD[:METRIC] --budget N|P% [--scores FILE] [--seed N]]``: create a study.

It lives in research/ (the room that may import every other) because ``--select`` ranks the file's items
with evaluators' selection methods (evaluators/study_selection.py) before studies' importer stores the
kept ones; studies/ may not import evaluators/ (.importlinter). docs/efficient-evaluation.md.
"""
import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluators.study_selection import (
    BUILT_IN_METRICS, SelectionError, SelectionRequest, apply_selection, parse_select, select_items,
)
from studies.access import rules as access
from studies.controls.blinding import parsed_study_lint
from studies.cli import read_text_file
from studies.importing.study_file import ParsedStudy, StudyFileError, parse_study, read_items_file, study_create
from formats.jsonlimits import JSONTooDeep, json_loads_limited

#: The command's option for each field of a SelectionError.
OPTIONS = {"method": "--select", "metric": "--select", "budget": "--budget", "scores": "--scores", "seed": "--seed"}


class Command(BaseCommand):
    help = ("Create a study with its items and candidates from a study file; prints the slug. A file without a "
            "\"status\" opens at once when the blinding lint is clean and makes a draft when it warns (--open/--status "
            "override). Blinding warnings "
            "(docs/protocols/blinding.md) go to stderr before anything is created; --strict refuses the file then.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="Study file (JSON).")
        parser.add_argument("--items", help="Items as JSON Lines (one item a line) or CSV (one candidate a row).")
        status = parser.add_mutually_exclusive_group()
        status.add_argument("--open", action="store_const", const="open", dest="status",
                            help="Open the study at once, blinding warnings or not (without it, a file that sets no "
                                 "status opens when the blinding lint is clean and makes a draft otherwise).")
        status.add_argument("--status", choices=("draft", "pilot", "open", "closed"),
                            help="The study's status, overriding the file's.")
        parser.add_argument("--strict", action="store_true",
                            help="Store nothing when the blinding lint has a warning (exit status 1).")
        parser.add_argument("--user", metavar="USERNAME", help=access.OWNER_OPTION_HELP)
        parser.add_argument("--select", metavar="METHOD[:METRIC]",
                            help="Create the study on the most useful items only (subset2evaluate's methods; "
                                 "docs/efficient-evaluation.md): metric_avg|metric_var|metric_cons:METRIC (a scorer "
                                 f"of --scores, or {', '.join(BUILT_IN_METRICS)} computed against each item's "
                                 "reference), diversity[:unigram|bleu|chrf] or random. Needs --budget.")
        parser.add_argument("--budget", metavar="N|P%", help="With --select: keep N items, or P%% of them.")
        parser.add_argument("--scores", metavar="FILE",
                            help="With --select: long CSV system,segment,scorer,score whose segments are the study "
                                 "file's item ids and systems its candidates' systems.")
        parser.add_argument("--seed", type=int, default=0, help="With --select random: the seed (default 0).")

    def _selected(self, parsed: ParsedStudy, options: dict[str, Any]) -> ParsedStudy:
        """The parsed file with only the items --select keeps (CommandError by option; nothing stored)."""
        if options["budget"] is None:
            raise CommandError("--select: needs --budget N|P%; nothing stored")
        scores_text = read_text_file(options["scores"], "--scores") if options["scores"] else None
        try:
            method, metric = parse_select(options["select"])
            selection = select_items(parsed, SelectionRequest(
                method=method, metric=metric, budget=options["budget"], seed=options["seed"],
                scores_name=Path(options["scores"]).name if options["scores"] else "", scores_text=scores_text))
        except SelectionError as exc:
            lines = [f"{OPTIONS[field]}: {message}" for field, messages in exc.errors.items() for message in messages]
            raise CommandError("\n".join(lines) + "\nnothing stored")
        return apply_selection(parsed, selection)

    def handle(self, *args, **options) -> None:
        user = access.command_owner(options["user"])
        for option in ("budget", "scores"):
            if options[option] is not None and options["select"] is None:
                raise CommandError(f"--{option}: only with --select; nothing stored")
        path = Path(options["file"])
        text = read_text_file(options["file"])
        try:
            data = json_loads_limited(text)
        except JSONTooDeep as exc:
            raise CommandError(f"{path}: {exc}; nothing stored")
        except json.JSONDecodeError as exc:
            raise CommandError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})")
        try:
            items = None
            if options["items"]:
                items_path = Path(options["items"])
                items = read_items_file(items_path.name, read_text_file(options["items"], "--items"))
            parsed = parse_study(data, items)
            if options["select"] is not None:
                parsed = self._selected(parsed, options)
            warnings = parsed_study_lint(fields=parsed.fields, items=parsed.items).messages()
            for warning in warnings:
                self.stderr.write(f"{path}: {warning}")
            if warnings and options["strict"]:
                raise CommandError(f"{path}: {len(warnings)} blinding warning(s) and --strict: nothing stored")
            if options["status"] is not None:
                parsed.fields["status"] = options["status"]
            elif not (isinstance(data, dict) and "status" in data):
                # Scripts drive import_study -> invite -> the annotation API (INTERFACES.md), so a clean
                # file without a status opens at once. A file with blinding warnings makes a draft
                # instead: a scripted import of a leaky file must not go live with the warnings only on
                # stderr. --open (or "status" in the file) opens it anyway.
                parsed.fields["status"] = "draft" if warnings else "open"
            study = study_create(parsed=parsed)
            access.study_created_by(study, user, how="import_study", file=path.name)
            if options["select"] is not None:
                record = study.provenance["selection"]
                self.stderr.write(f"{path}: {record['n_kept']} of {record['n_total']} items kept by --select "
                                  f"{options['select']} (budget {record['budget']})")
        except StudyFileError as exc:
            raise CommandError(f"{path}: {len(exc.errors)} error(s), nothing stored:\n  " + "\n  ".join(exc.errors))
        if study.status == "draft":
            leaky = warnings and options["status"] is None and not (isinstance(data, dict) and "status" in data)
            why = f" because of the {len(warnings)} blinding warning(s) above" if leaky else ""
            self.stderr.write(f"{path}: study {study.slug!r} is a draft{why}: annotators get no work until it is "
                              "opened (the study's page or the admin; or import again with --open)")
        self.stdout.write(study.slug)
