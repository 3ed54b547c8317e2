"""make_connective_study SOURCE --slug NEW [--system NAME]: DiP A.4's connective preference studies."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from studies.generators.choice import connective_study, source_items

from studies.management.commands._generator_args import add_common_arguments, finish


class Command(BaseCommand):
    help = ("Make a choice study (A / B / Neither / Invalid) from items whose reference marks a connective: "
            "the reference against the reference with the connective deleted (DiP A.4 study 1), or with "
            "--system NAME against that system's output where it lacks the connective (study 2). Prints the slug.")

    def add_arguments(self, parser: CommandParser) -> None:
        add_common_arguments(parser)
        parser.add_argument("--system", help="Study 2: compare with this system's output (items where it lacks the connective).")
        parser.add_argument("--skip-unmarked", action="store_true", help="Leave out items without a marked connective.")
        parser.add_argument("--no-highlight", action="store_true", help="Do not highlight the connective in the reference.")

    def handle(self, *args, **options) -> None:
        finish(self, options["source"], lambda: connective_study(
            items=source_items(options["source"]), slug=options["slug"], title=options["title"],
            system=options["system"], skip_unmarked=options["skip_unmarked"], redundancy=options["redundancy"],
            spam_rate=options["spam_rate"], seed=options["seed"], highlight=not options["no_highlight"]), dry_run=options["dry_run"], user=options["user"])
