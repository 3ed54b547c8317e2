from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.pages.links import invitation_url
from annotation.handout.services import MAX_INVITATIONS, annotators_create
from studies.access import rules as access
from studies.access.audit import audit
from studies.cli import read_text_file
from studies.models import Study


#: Annotator.external_id's length.
MAX_ID = 200


class Command(BaseCommand):
    help = "Create N annotators for a study; prints one invitation link a line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--count", type=int, default=1,
                            help=f"How many annotators to invite (1 to {MAX_INVITATIONS} a call).")
        parser.add_argument("--pilot", action="store_true",
                            help="Pilot annotators: the only ones who get work while the study is in pilot; their "
                                 "judgments are flagged and left out of reports unless asked.")
        parser.add_argument("--base-url", help="Site address for the links (default: SITE_URL).")
        parser.add_argument("--ids", metavar="FILE",
                            help="Participant ids, one a line (e.g. a panel's ids): one annotator each, the id stored "
                                 "as its external id; prints 'ID<TAB>link' a line. Replaces --count.")
        parser.add_argument("--user", metavar="USERNAME", help=access.USER_OPTION_HELP)

    def handle(self, *args, **options) -> None:
        user = access.command_user(options["user"])
        study = access.command_study(options["slug"], user, "invite")
        ids = _read_ids(Path(options["ids"]), study) if options["ids"] else None
        if ids is None and not 1 <= options["count"] <= MAX_INVITATIONS:
            raise CommandError(f"--count: must be between 1 and {MAX_INVITATIONS} (invite a bigger panel in several "
                               "calls); nothing created")
        if study.status == "draft" or (study.status == "pilot" and not options["pilot"]):
            self.stderr.write(f"note: study {study.slug!r} is {study.status}: these links show no work until the "
                              "study is opened (its page or the admin)")
        if ids is not None:
            created = annotators_create(study=study, external_ids=ids, is_pilot=options["pilot"])
            audit(user, "invited", study, count=len(created), pilot=options["pilot"], via="invite", ids=True)
            for annotator in created:
                self.stdout.write(f"{annotator.external_id}\t{invitation_url(annotator, options['base_url'])}")
            return
        created = annotators_create(study=study, count=options["count"], is_pilot=options["pilot"])
        audit(user, "invited", study, count=len(created), pilot=options["pilot"], via="invite")
        for annotator in created:
            self.stdout.write(invitation_url(annotator, options["base_url"]))


def _read_ids(path: Path, study: Study) -> list[str]:
    """The ids of ``path``, one a line (blank lines skipped); every problem named by line, nothing created."""
    text = read_text_file(str(path), "--ids")
    errors: list[str] = []
    ids: list[str] = []
    first: dict[str, int] = {}
    taken = set(study.annotators.exclude(external_id="").values_list("external_id", flat=True))
    for line_no, line in enumerate(text.splitlines(), start=1):
        value = line.strip()
        if not value:
            continue
        if len(value) > MAX_ID:
            errors.append(f"line {line_no}: id longer than {MAX_ID} characters")
        elif any(ord(ch) < 32 or ch in "\x7f\ufffd" or 0xD800 <= ord(ch) <= 0xDFFF for ch in value):
            errors.append(f"line {line_no}: id has a control character")
        elif value in first:
            errors.append(f"line {line_no}: id {value!r} repeats line {first[value]}")
        elif value in taken:
            errors.append(f"line {line_no}: id {value!r} already has an invitation in this study")
        first.setdefault(value, line_no)
        ids.append(value)
    if not ids and not errors:
        errors.append("the file has no id")
    if len(ids) > MAX_INVITATIONS:
        errors.append(f"{len(ids)} ids; one call invites at most {MAX_INVITATIONS} (split the file)")
    if errors:
        raise CommandError(f"--ids: {path}: {len(errors)} error(s), nothing created:\n  " + "\n  ".join(errors[:50]))
    return ids
