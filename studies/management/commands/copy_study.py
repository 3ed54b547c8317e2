from django.core.management.base import BaseCommand, CommandError, CommandParser

from studies.cli import text_argument
from studies.lifecycle.invariants import StudyCopyError, free_copy_slug, study_copy
from studies.models import Study


class Command(BaseCommand):
    help = ("Copy a study as a new draft study (settings, items, candidates, spam items; no annotators or "
            "judgments); prints the new slug. The copy's title is the original's with \"(copy)\" (or "
            "\"(copy 2)\", …) unless --new-title is given.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--new-slug", help="The copy's slug (default: <slug>-copy).")
        parser.add_argument("--new-title", default="", help="The copy's title (default: <title> (copy)).")

    def handle(self, *args, **options) -> None:
        for name, option in (("slug", "slug"), ("--new-slug", "new_slug"), ("--new-title", "new_title")):
            if options[option]:
                text_argument(options[option], name)
        study = Study.objects.filter(slug=options["slug"]).first()
        if study is None:
            raise CommandError(f"slug: no study {options['slug']!r}")
        try:
            new = study_copy(study=study, slug=options["new_slug"] or free_copy_slug(study), title=options["new_title"])
        except StudyCopyError as exc:
            flags = {"slug": "--new-slug", "title": "--new-title"}
            raise CommandError("; ".join(f"{flags.get(k, k)}: {m}" for k, m in exc.errors.items()))
        self.stdout.write(new.slug)
