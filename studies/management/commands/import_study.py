import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studies.importing import StudyFileError, read_items_file, study_import


class Command(BaseCommand):
    help = "Create a study with its items and candidates from a study file; prints the slug."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="Study file (JSON).")
        parser.add_argument("--items", help="Items as JSON Lines (one item a line) or CSV (one candidate a row).")

    def handle(self, *args, **options) -> None:
        path = Path(options["file"])
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CommandError(f"{path}: no such file")
        except json.JSONDecodeError as exc:
            raise CommandError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})")
        try:
            items = None
            if options["items"]:
                items_path = Path(options["items"])
                if not items_path.exists():
                    raise CommandError(f"{items_path}: no such file")
                items = read_items_file(items_path.name, items_path.read_text(encoding="utf-8"))
            study = study_import(data=data, items=items)
        except StudyFileError as exc:
            raise CommandError(f"{path}: {len(exc.errors)} error(s), nothing stored:\n  " + "\n  ".join(exc.errors))
        self.stdout.write(study.slug)
