from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.export import FORMATS, export_lines
from studies.models import Study


class Command(BaseCommand):
    help = "Export a study's judgments, one row per (judgment, candidate), as CSV or JSON Lines."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--format", choices=FORMATS, default="csv", help="csv (default) or jsonl.")
        parser.add_argument("--output", help="Write to this file instead of standard output.")
        parser.add_argument("--history", action="store_true",
                            help="Include superseded revisions (see the is_current column).")

    def handle(self, *args, **options) -> None:
        study = Study.objects.filter(slug=options["slug"]).first()
        if study is None:
            raise CommandError(f"slug: no study {options['slug']!r}")
        lines = export_lines(study, fmt=options["format"], history=options["history"])
        if options["output"]:
            path = Path(options["output"])
            try:
                with path.open("w", encoding="utf-8", newline="") as out:
                    n = sum(out.write(chunk) >= 0 for chunk in lines)
            except OSError as exc:
                raise CommandError(f"--output: cannot write {path}: {exc.strerror}")
            rows = n - 1 if options["format"] == "csv" else n
            self.stderr.write(f"{rows} row(s) written to {path}")
        else:
            for chunk in lines:
                self.stdout.write(chunk, ending="")
