import secrets
import time
from io import StringIO
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.urls import reverse

from annotation.handout.services import annotators_create
from annotation.importing.judgments import JudgmentImportError
from annotation.importing.mqm import mqm_tsv_import
from annotation.models import Judgment
from annotation.pages.links import invitation_url
from studies.access import rules as access
from studies.controls.blinding import parsed_study_lint
from studies.demo.blinding import blinding_notes
from studies.demo.span import WMT_MQM_ATTRIBUTION, WMT_MQM_EVALUATORS, WMT_MQM_FIXTURE, WMT_MQM_SLUG, WMT_MQM_SOURCE
from studies.demo.studies import DEMO_STUDIES, plug_in_demo_studies, write_study_files
from studies.importing.study_file import StudyFileError, parse_study, study_import
from studies.models import Candidate, Status, Study

ADMIN_USERNAME = "admin"


class Command(BaseCommand):
    help = ("Load the demo studies (DiaBLa subset in fixtures/), create or reset the 'admin' account and print "
            "its password, and print annotator links. Safe to run again: existing demo studies are kept.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--base-url", help="Site address for the printed links (default: SITE_URL).")
        parser.add_argument("--annotators", type=int, default=3, help="Annotator links per demo study (default 3).")
        parser.add_argument("--reset", action="store_true",
                            help="Delete the demo studies (and their annotators and judgments) and load them again.")
        parser.add_argument("--write-fixtures", action="store_true",
                            help="Also rewrite fixtures/studies/*.json from the builders.")

    def handle(self, *args, **options) -> None:
        base = (options["base_url"] or settings.SITE_URL).rstrip("/")
        if options["annotators"] < 0:
            raise CommandError("--annotators: must be 0 or more")
        if options["write_fixtures"]:
            for path in write_study_files():
                self.stdout.write(f"wrote {path}")
        password, admin = self._admin_account()
        self.stdout.write(f"Admin:      {base}{reverse('admin:index')}  user: {ADMIN_USERNAME}  password: {password}")
        self.stdout.write(f"Dashboard:  {base}{reverse('studies:list')}")
        for builder in [*DEMO_STUDIES, *plug_in_demo_studies()]:
            data = builder()
            slug = data["slug"]
            with transaction.atomic():
                if options["reset"]:
                    Study.objects.filter(slug=slug).delete()
                study = Study.objects.filter(slug=slug).first()
                state = "already loaded"
                if study is None:
                    try:
                        study = study_import(data=data, status=Status.OPEN)  # the demo's links work at once
                    except StudyFileError as exc:  # a builder bug: say which study and why
                        raise CommandError(f"demo study {slug}: " + "; ".join(exc.errors))
                    state = "created"
                _own(study, admin)
                annotators = list(study.annotators.order_by("sequence")[:options["annotators"]])
                missing = options["annotators"] - len(annotators)
                if missing > 0:
                    annotators += annotators_create(study=study, count=missing)
            n_real = study.items.filter(is_spam=False).count()
            n_spam = study.items.filter(is_spam=True).count()
            self.stdout.write(f"\nStudy {slug} ({state}): {n_real} items + {n_spam} spam items, "
                              f"{study.spec.label}")
            self.stdout.write(f"  page:  {base}{reverse('studies:detail', args=[slug])}")
            if state == "created":  # the blinding lint as annotators will see the texts (docs/protocols/blinding.md)
                parsed = parse_study({**data, "slug": f"{slug}-lint"})  # its own slug is taken now
                notes = blinding_notes(data, parsed_study_lint(fields=parsed.fields, items=parsed.items))
                self.stdout.write(f"  blinding: {len(notes)} warning(s)" + (", each with whether it matters "
                                  "for this study:" if notes else " (typography normalised; docs/protocols/blinding.md)"))
                for warning, note in notes:  # studies/demo/blinding.py: why each does or does not matter
                    self.stdout.write(f"    {warning}")
                    self.stdout.write(f"      -> {note}")
            for annotator in annotators:
                self.stdout.write(f"  annotator {annotator.code}: {invitation_url(annotator, base)}")
        self._imported_mqm(base, reset=options["reset"], admin=admin)

    def _imported_mqm(self, base: str, *, reset: bool, admin: Any) -> None:
        """The WMT21 TED en→de expert MQM subset as an imported (closed) study, with BLEU, chrF and TER run on it.

        Through ``import_judgments --format mqm-tsv``'s own function, so the demo's study is what a
        researcher gets from the command; the evaluators take a few seconds on its 1,313 candidates.
        """
        slug = WMT_MQM_SLUG
        if reset:
            Study.objects.filter(slug=slug).delete()
        study = Study.objects.filter(slug=slug).first()
        state = "already loaded"
        if study is None:
            try:
                study = mqm_tsv_import(name=WMT_MQM_FIXTURE.name, content=WMT_MQM_FIXTURE.read_text(encoding="utf-8"),
                                       slug=slug, unclosed="close-at-end",  # one row of the release never closes <v>
                                       source=WMT_MQM_SOURCE)
            except JudgmentImportError as exc:
                raise CommandError(f"demo study {slug}: " + "; ".join(exc.errors))
            Study.objects.filter(pk=study.pk).update(
                title="WMT21 TED talks en→de: expert MQM (Google; imported subset)",
                description=f"{study.description}\n\n{WMT_MQM_ATTRIBUTION}")
            started = time.monotonic()
            call_command("evaluate", slug, *[f"--evaluator={name}" for name in WMT_MQM_EVALUATORS], stdout=StringIO())
            state = (f"imported from fixtures/wmt-mqm/{WMT_MQM_FIXTURE.name}; "
                     f"{', '.join(WMT_MQM_EVALUATORS)} run in {time.monotonic() - started:.1f} s")
        _own(study, admin)
        n_items = study.items.filter(is_spam=False).count()
        n_judgments = Judgment.objects.filter(assignment__annotator__study=study).count()
        n_systems = Candidate.objects.filter(item__study=study).values("system").distinct().count()
        self.stdout.write(f"\nStudy {slug} ({state}): {n_items} items, {n_systems} systems (reference included), "
                          f"{n_judgments} judgments by {study.annotators.count()} raters, MQM (closed)")
        self.stdout.write(f"  page:    {base}{reverse('studies:detail', args=[slug])}")
        self.stdout.write(f"  report:  {base}{reverse('evaluators:report', args=[slug])}")
        self.stdout.write(f"  compare: {base}{reverse('compare-report', args=[slug])}")

    def _admin_account(self) -> tuple[str, Any]:
        """Create the superuser ``admin``, or reset its password: the printed password always works."""
        password = secrets.token_urlsafe(12)
        user, _ = get_user_model().objects.get_or_create(username=ADMIN_USERNAME,
                                                          defaults={"email": "admin@example.org"})
        user.is_staff = user.is_superuser = user.is_active = True
        user.set_password(password)
        user.save()
        return password, user


def _own(study: Study, admin: Any) -> None:
    """``admin`` owns the demo studies (no study is ownerless, docs/access.md): new ones, and any loaded by a
    version that left them without an owner. A demo study someone else owns keeps its owner."""
    if study.owner_id is None:
        access.study_created_by(study, admin, how="load_demo")
