import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studies.access import rules as access
from studies.controls.blinding import parsed_study_lint
from studies.cli import read_text_file
from studies.importing.study_file import StudyFileError, parse_study, read_items_file, study_create
from formats.jsonlimits import JSONTooDeep, json_loads_limited


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

    def handle(self, *args, **options) -> None:
        user = access.command_owner(options["user"])
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
        except StudyFileError as exc:
            raise CommandError(f"{path}: {len(exc.errors)} error(s), nothing stored:\n  " + "\n  ".join(exc.errors))
        if study.status == "draft":
            leaky = warnings and options["status"] is None and not (isinstance(data, dict) and "status" in data)
            why = f" because of the {len(warnings)} blinding warning(s) above" if leaky else ""
            self.stderr.write(f"{path}: study {study.slug!r} is a draft{why}: annotators get no work until it is "
                              "opened (the study's page or the admin; or import again with --open)")
        self.stdout.write(study.slug)
