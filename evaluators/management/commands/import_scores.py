"""``import_scores SLUG FILE``: store an external metric's scores (CSV/TSV or JSON Lines)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluators.metrics.scores import ScoreFileError, scores_import
from studies.access import rules as access
from studies.cli import read_text_file
from studies.access.audit import audit


class Command(BaseCommand):
    help = ("Store an external metric's scores for a study. One row per scored candidate: item (the study file's "
            "item id), system, score, optional document, and the metric's name and higher_is_better (columns, or "
            "--name and --higher-is-better/--lower-is-better). .csv/.tsv files are tables, anything else JSON Lines. "
            "A file with any bad row stores nothing.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="Study slug.")
        parser.add_argument("file", help="Score file (.csv, .tsv or .jsonl).")
        parser.add_argument("--name", help="Metric name (instead of, or agreeing with, a 'name' column).")
        parser.add_argument("--description", default="", help="What the metric is (shown in reports).")
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--higher-is-better", dest="higher_is_better", action="store_true", default=None,
                           help="Higher scores are better (e.g. a quality model's probability).")
        group.add_argument("--lower-is-better", dest="higher_is_better", action="store_false",
                           help="Lower scores are better (e.g. an error rate).")
        parser.add_argument("--user", metavar="USERNAME", help=access.USER_OPTION_HELP)

    def handle(self, *args: Any, **opts: Any) -> None:
        user = access.command_user(opts["user"])
        study = access.command_study(opts["slug"], user, "scores", not_found=f"no study with slug {opts['slug']!r}")
        path = Path(opts["file"])
        content = read_text_file(opts["file"])
        try:
            evaluators = scores_import(study=study, file_name=path.name, content=content, name=opts["name"],
                                       higher_is_better=opts["higher_is_better"], description=opts["description"])
        except ScoreFileError as exc:
            raise CommandError(f"{path}: {len(exc.errors)} error(s), nothing stored:\n  " + "\n  ".join(exc.errors)) from None
        audit(user, "scores_imported", study, file=path.name, via="import_scores",
              evaluators={e.name: e.scores.count() for e in evaluators})
        for evaluator in evaluators:
            direction = "higher" if evaluator.higher_is_better else "lower"
            self.stdout.write(f"{evaluator.name}: {evaluator.scores.count()} scores stored ({direction} is better)")
