from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.links import invitation_url
from annotation.services import annotators_create
from studies.models import Study


class Command(BaseCommand):
    help = "Create N annotators for a study; prints one invitation link a line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--count", type=int, default=1, help="How many annotators to invite.")
        parser.add_argument("--pilot", action="store_true",
                            help="Pilot annotators: the only ones who get work while the study is in pilot; their "
                                 "judgments are flagged and left out of reports unless asked.")
        parser.add_argument("--base-url", help="Site address for the links (default: SITE_URL).")

    def handle(self, *args, **options) -> None:
        study = Study.objects.filter(slug=options["slug"]).first()
        if study is None:
            raise CommandError(f"slug: no study {options['slug']!r}")
        if options["count"] < 1:
            raise CommandError("--count: must be at least 1")
        if study.status == "draft" or (study.status == "pilot" and not options["pilot"]):
            self.stderr.write(f"note: study {study.slug!r} is {study.status}: these links show no work until the "
                              "study is opened (its page or the admin)")
        for annotator in annotators_create(study=study, count=options["count"], is_pilot=options["pilot"]):
            self.stdout.write(invitation_url(annotator, options["base_url"]))
