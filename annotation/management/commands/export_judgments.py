from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.exporting.judgments import FORMATS, csv_lines, judgment_rows, jsonl_lines
from annotation.exporting.mqm import FORMAT as MQM_TSV
from annotation.exporting.mqm import MqmExportError, mqm_tsv_text
from studies.access import rules as access
from studies.access.audit import audit, audit_lines


class Command(BaseCommand):
    help = "Export a study's judgments, one row per (judgment, candidate), as CSV or JSON Lines."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--format", choices=(*FORMATS, MQM_TSV), default="csv",
                            help="csv (default), jsonl, or mqm-tsv (an mqm study as Google's WMT MQM TSV, the "
                                 "format Marot opens: docs/mqm.md).")
        parser.add_argument("--output", help="Write to this file instead of standard output.")
        parser.add_argument("--history", action="store_true",
                            help="Include superseded revisions (see the is_current column).")
        parser.add_argument("--audit", action="store_true",
                            help="Export the study's audit log (who did what, when) instead of its judgments; "
                                 "--format csv (details as JSON text) or jsonl.")
        parser.add_argument("--raw", action="store_true",
                            help="CSV: write every cell as stored, byte for byte. Without it a text cell starting "
                                 "with = + - @, a tab or a carriage return gets a leading ' so that a spreadsheet "
                                 "shows it instead of running it (docs/export.md); numbers are never changed.")
        parser.add_argument("--user", metavar="USERNAME", help=access.USER_OPTION_HELP)

    def handle(self, *args, **options) -> None:
        if options["audit"] and options["format"] == MQM_TSV:
            raise CommandError("--audit: the audit log is written as csv or jsonl, not mqm-tsv")
        user = access.command_user(options["user"])
        study = access.command_study(options["slug"], user, "audit" if options["audit"] else "export")
        if options["audit"]:
            self._write(audit_lines(study, fmt=options["format"], raw=options["raw"]), options["output"],
                        lambda: f"audit log written to {options['output']}")
            return
        if options["format"] == MQM_TSV:
            self._mqm_tsv(user, study, options)
            return
        audit(user, "judgments_exported", study, format=options["format"], history=options["history"],
              via="export_judgments", output=options["output"] or "stdout")
        counted = [0]

        def counting(rows: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
            for row in rows:  # the rows themselves: CSV chunks hold up to 1,000 rows each
                counted[0] += 1
                yield row

        rows = counting(iter(judgment_rows(study, history=options["history"])))
        lines = csv_lines(rows, raw=options["raw"]) if options["format"] == "csv" else jsonl_lines(rows)
        self._write(lines, options["output"], lambda: f"{counted[0]} row(s) written to {options['output']}")

    def _mqm_tsv(self, user: Any, study: Any, options: dict[str, Any]) -> None:
        """``--format mqm-tsv`` (annotation/exporting/mqm.py): current judgments only, so no --history."""
        if options["history"]:
            raise CommandError("--history: the mqm-tsv format holds current judgments only (use csv or jsonl)")
        try:
            text, n_rows, warnings = mqm_tsv_text(study)
        except MqmExportError as exc:
            raise CommandError(str(exc))
        for warning in warnings:
            self.stderr.write(f"note: {warning}")
        audit(user, "judgments_exported", study, format=MQM_TSV, history=False, via="export_judgments",
              output=options["output"] or "stdout")
        self._write(iter([text]), options["output"], lambda: f"{n_rows} row(s) written to {options['output']}")

    def _write(self, lines: Iterator[str], output: str | None, written: Callable[[], str]) -> None:
        """The chunks to standard output, or to ``output`` followed by the ``written()`` message on stderr."""
        if not output:
            for chunk in lines:
                self.stdout.write(chunk, ending="")
            return
        path = Path(output)
        try:
            with path.open("w", encoding="utf-8", newline="") as out:
                for chunk in lines:
                    out.write(chunk)
        except OSError as exc:
            raise CommandError(f"--output: cannot write {path}: {exc.strerror}")
        self.stderr.write(written())
