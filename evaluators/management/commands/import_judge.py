"""``import_judge SLUG FILE --name NAME [--format csv|jsonl]``: an LLM judge's answers, stored beside the annotators.

The file's records are the study's answers with candidates named by system (evaluators/judges/importing.py,
docs/import.md); every problem is named by line and field and nothing is stored then. Importing the same name
again replaces that judge in one transaction. A judge is never an annotator (docs/ai-assistance.md).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluators.judges.importing import FORMATS, JudgeFileError, judge_import
from studies.access import rules as access
from studies.access.audit import audit
from studies.cli import read_text_file


class Command(BaseCommand):
    help = ("Store an LLM judge's answers to a study's items beside its annotators (never counted as one): one "
            "record per item in the study's answer shape, candidates named by system. A file with any bad record "
            "stores nothing; the same --name again replaces that judge atomically.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="Study slug.")
        parser.add_argument("file", help="The judge's answers (.jsonl: one object a line; .csv: item + answer fields).")
        parser.add_argument("--name", required=True, help="The judge's name (e.g. gpt-4o-2024-08-06); unique in the "
                                                          "study, an existing judge of that name is replaced.")
        parser.add_argument("--format", choices=FORMATS, help="csv or jsonl (default: from the file name).")
        parser.add_argument("--description", default="", help="What the judge is (model, prompt); the report "
                                                               "quotes it.")
        parser.add_argument("--user", metavar="USERNAME", help=access.USER_OPTION_HELP)

    def handle(self, *args: Any, **opts: Any) -> None:
        user = access.command_user(opts["user"])
        study = access.command_study(opts["slug"], user, "scores", not_found=f"no study with slug {opts['slug']!r}")
        path = Path(opts["file"])
        content = read_text_file(opts["file"])
        try:
            result = judge_import(study=study, name=opts["name"], file_name=path.name, content=content,
                                  fmt=opts["format"], description=opts["description"],
                                  imported_by=user.get_username() if user is not None else "")
        except JudgeFileError as exc:
            raise CommandError(f"{path}: {len(exc.errors)} error(s), nothing stored:\n  " + "\n  ".join(exc.errors)) \
                from None
        judge = result.judge
        audit(user, "judge_imported", study, judge=judge.name, file=path.name, format=judge.file_format,
              sha256=judge.sha256, answers=judge.n_answers, replaced=result.replaced, via="import_judge")
        if result.replaced:
            old = result.replaced
            self.stdout.write(f"judge {judge.name}: replaced the one imported on {old['imported_at']} from "
                              f"{old['file_name']} ({old['n_answers']} answers)")
        self.stdout.write(f"judge {judge.name}: {judge.n_answers} answers stored from {path.name} ({judge.file_format})")
