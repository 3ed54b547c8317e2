"""Arguments and output shared by the study-generator commands."""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studies.access import rules as access
from studies.cli import text_argument
from studies.generators.choice import Generated, generated_import
from studies.importing.study_file import StudyFileError


def add_common_arguments(parser: CommandParser) -> None:
    parser.add_argument("source", help="Slug of a stored study, or a file: a .json study file, .jsonl or .csv items.")
    parser.add_argument("--slug", required=True, help="Slug of the new study.")
    parser.add_argument("--title", default="", help="Title of the new study.")
    parser.add_argument("--redundancy", type=int, default=3, help="Annotators per item (default 3).")
    parser.add_argument("--spam-rate", type=float, default=0.1, help="Share of spam items (default 0.1).")
    parser.add_argument("--seed", type=int, help="Seed for spam items and shuffles (default: random).")
    parser.add_argument("--dry-run", action="store_true", help="Print the generated study file; store nothing.")
    parser.add_argument("--user", metavar="USERNAME", help=access.OWNER_OPTION_HELP)


def finish(command: BaseCommand, source: str, build, *, dry_run: bool, user: str | None = None) -> None:
    """Build, then print the study file (--dry-run) or store it, owned by ``user`` (``--user``, else the only
    superuser), and print the slug; errors name item and field."""
    text_argument(source, "source")
    owner = None if dry_run else access.command_owner(user)
    try:
        generated: Generated = build()
        for where, why in generated.skipped.items():
            command.stderr.write(f"skipped {where}: {why}")
        if dry_run:
            command.stdout.write(json.dumps(generated.data, indent=2, ensure_ascii=False))
            return
        study = generated_import(generated=generated)
        access.study_created_by(study, owner, how=f"{command.__module__.rsplit('.', 1)[-1]}", made_from=source)
    except StudyFileError as exc:
        raise CommandError(f"{source}: {len(exc.errors)} error(s), nothing stored:\n  " + "\n  ".join(exc.errors))
    command.stdout.write(study.slug)
