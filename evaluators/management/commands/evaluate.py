"""``evaluate SLUG --evaluator NAME [--evaluator NAME …]``: run built-in evaluators, store their scores."""
from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluators import progress
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
        # Synchronous here (the pages queue background jobs instead); a progress bar on a terminal.
        bar = sys.stderr if sys.stderr.isatty() else None
        for name in dict.fromkeys(opts["evaluator"]):  # keep order, run each once
            with progress.listening(_progress_bar(bar, name) if bar else lambda *_: None):
                evaluator = evaluator_run(study=study, name=name)
            if bar:
                bar.write("\r\033[K")
            self.stdout.write(f"{name}: {evaluator.scores.count()} scores stored")


def _progress_bar(stream: TextIO, name: str, width: int = 30) -> progress.Listener:
    """Draw ``name [#####.....] 45% 900/2000 label`` on one terminal line, at most ten times a second."""
    last = [0.0]

    def draw(done: int, total: int, label: str) -> None:
        now = time.monotonic()
        if now - last[0] < 0.1 and done < total:
            return
        last[0] = now
        filled = int(width * done / total) if total else 0
        percent = f"{100 * done / total:3.0f}%" if total else "   "
        stream.write(f"\r\033[K{name} [{'#' * filled}{'.' * (width - filled)}] {percent} {done}/{total} {label}"[:200])
        stream.flush()
    return draw
