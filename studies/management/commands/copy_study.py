from django.core.management.base import BaseCommand, CommandError, CommandParser

from studies.invariants import StudyCopyError, free_copy_slug, study_copy
from studies.models import Study


class Command(BaseCommand):
    help = ("Copy a study as a new draft study (settings, items, candidates, spam items; no annotators or "
            "judgments); prints the new slug.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--new-slug", help="The copy's slug (default: <slug>-copy).")

    def handle(self, *args, **options) -> None:
        study = Study.objects.filter(slug=options["slug"]).first()
        if study is None:
            raise CommandError(f"slug: no study {options['slug']!r}")
        try:
            new = study_copy(study=study, slug=options["new_slug"] or free_copy_slug(study))
        except StudyCopyError as exc:
            raise CommandError("; ".join(f"--new-slug: {m}" for m in exc.errors.values()))
        self.stdout.write(new.slug)
