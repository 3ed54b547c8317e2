"""make_contrastive_study SOURCE --slug NEW: ContraPro-style choice between a reference and its variants."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from studies.generators.choice import contrastive_study, source_items

from studies.management.commands._generator_args import add_common_arguments, finish


class Command(BaseCommand):
    help = ("Make a choice study from items listing contrastive variants (candidates with system 'contrastive…' "
            "or metadata.variants): the reference against its variants, no neither/tie. Prints the slug.")

    def add_arguments(self, parser: CommandParser) -> None:
        add_common_arguments(parser)
        parser.add_argument("--no-source", action="store_true", help="Monolingual: show target context, not the source.")

    def handle(self, *args, **options) -> None:
        finish(self, options["source"], lambda: contrastive_study(
            items=source_items(options["source"]), slug=options["slug"], title=options["title"],
            redundancy=options["redundancy"], spam_rate=options["spam_rate"], seed=options["seed"],
            show_source=not options["no_source"]), dry_run=options["dry_run"], user=options["user"])
