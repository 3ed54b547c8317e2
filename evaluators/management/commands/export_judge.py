"""``export_judge SLUG [--name NAME] [--output FILE]``: a stored LLM judge's answers as the file import_judge reads.

Importing the written file again (``import_judge SLUG FILE --name NAME``) stores the same answers, so a study's
judges are reproducible from files (docs/export.md, docs/ai-assistance.md).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluators.judges.rows import judge_file_lines, study_judges
from studies.access import rules as access
from studies.access.audit import audit


class Command(BaseCommand):
    help = ("Write a stored LLM judge's answers as JSON Lines, one answer a line in the study's answer shape with "
            "candidates named by system: the file import_judge reads.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="Study slug.")
        parser.add_argument("--name", help="The judge (needed when the study has several).")
        parser.add_argument("--output", help="Write to this file instead of standard output.")
        parser.add_argument("--user", metavar="USERNAME", help=access.USER_OPTION_HELP)

    def handle(self, *args: Any, **opts: Any) -> None:
        user = access.command_user(opts["user"])
        study = access.command_study(opts["slug"], user, "export")
        judges = study_judges(study)
        names = ", ".join(j.name for j in judges) or "none (import_judge stores one)"
        if opts["name"] is not None:
            judges = [j for j in judges if j.name == opts["name"]]
            if not judges:
                raise CommandError(f"--name: study {study.slug} has no judge {opts['name']!r} (judges: {names})")
        elif len(judges) != 1:
            raise CommandError(f"--name: study {study.slug} has {len(judges)} judges; name one (judges: {names})")
        (judge,) = judges
        audit(user, "judgments_exported", study, format="jsonl", history=False, via="export_judge", judge=judge.name,
              output=opts["output"] or "stdout")
        lines = judge_file_lines(study, judge)
        if not opts["output"]:
            for line in lines:
                self.stdout.write(line, ending="")
            return
        path = Path(opts["output"])
        try:
            with path.open("w", encoding="utf-8", newline="") as fh:
                fh.writelines(lines)
        except OSError as exc:
            raise CommandError(f"--output: cannot write {path}: {exc.strerror or exc}") from None
        self.stderr.write(f"{judge.n_answers} answer(s) of judge {judge.name} (imported {judge.imported_at.isoformat()} "
                          f"from {judge.file_name}, SHA-256 {judge.sha256}) written to {path}")
