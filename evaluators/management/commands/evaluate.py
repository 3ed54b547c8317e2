"""``evaluate SLUG --evaluator NAME [--evaluator NAME …]``: run built-in evaluators, store their scores."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluators.metrics.builtin import BUILTIN_EVALUATORS
from evaluators.metrics.scores import evaluator_run
from studies.models import Study


class Command(BaseCommand):
    help = ("Run built-in automatic evaluators over a study's candidates (each non-reference candidate of each "
            "real item against the item's reference) and store their scores, replacing earlier runs. "
            f"Evaluators: {', '.join(BUILTIN_EVALUATORS)}.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="Study slug.")
        parser.add_argument("--evaluator", action="append", required=True, metavar="NAME",
                            help="Built-in evaluator to run; repeat for several.")

    def handle(self, *args: Any, **opts: Any) -> None:
        unknown = [n for n in opts["evaluator"] if n not in BUILTIN_EVALUATORS]
        if unknown:
            raise CommandError(f"unknown evaluator(s): {', '.join(unknown)}; available: {', '.join(BUILTIN_EVALUATORS)}")
        study = Study.objects.filter(slug=opts["slug"]).first()
        if study is None:
            raise CommandError(f"no study with slug {opts['slug']!r}")
        for name in dict.fromkeys(opts["evaluator"]):  # keep order, run each once
            evaluator = evaluator_run(study=study, name=name)
            self.stdout.write(f"{name}: {evaluator.scores.count()} scores stored")
