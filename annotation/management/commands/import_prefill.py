"""``import_prefill SLUG FILE --format jsonl|mqm-tsv --source NAME``: automatic error spans as suggestions."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studies.access import rules as access
from studies.access.audit import audit
from studies.cli import read_text_file, text_argument
from studies.importing.prefill import FORMATS, PrefillError, prefill_import

from annotation.models import Judgment


class Command(BaseCommand):
    help = ("Attach an automatic system's error spans (start, end, category, severity, optional score) to an ESA or "
            "MQM study's candidates; annotators see them as suggestions on the study's prefill_share of items, with "
            "decoys on clean text (prefill_decoys); items it marks clean are left out of the hand-out under "
            "prefill_skip_clean. A file with any bad line stores nothing (docs/ai-assistance.md).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="Study slug.")
        parser.add_argument("file", help="The spans: JSON Lines (one candidate a line) or Google's MQM TSV.")
        parser.add_argument("--format", required=True, choices=FORMATS, help="jsonl or mqm-tsv.")
        parser.add_argument("--source", required=True, help="The automatic system's name (never shown to annotators).")
        parser.add_argument("--user", metavar="USERNAME", help=access.USER_OPTION_HELP)

    def handle(self, *args: Any, **opts: Any) -> None:
        user = access.command_user(opts["user"])
        study = access.command_study(opts["slug"], user, "scores")
        source = text_argument(opts["source"], "--source")
        content = read_text_file(opts["file"])
        path = Path(opts["file"])
        if Judgment.objects.filter(assignment__item__study=study).exists():
            raise CommandError(f"slug: study {study.slug} already has judgments; suggestions are attached before "
                               "annotation starts (copy_study makes a fresh copy). Nothing stored.")
        try:
            record = prefill_import(study=study, content=content, file_format=opts["format"], source=source,
                                    file_name=path.name)
        except PrefillError as exc:
            raise CommandError(f"{path}: {len(exc.problems)} error(s), nothing stored:\n  "
                               + "\n  ".join(exc.problems)) from None
        facts = study.provenance["prefill"]
        audit(user, "prefill_imported", study, file=path.name, via="import_prefill", source=source,
              suggestions=facts["n_suggestions"], decoys=facts["n_decoys"], skipped_clean=facts.get("n_skipped_clean", 0))
        skipped = (f"; {facts['n_skipped_clean']} of the {facts['n_clean_items']} items it marks clean skipped "
                   f"(prefill_skip_clean {facts['skip_clean_share']:g})" if facts.get("n_skipped_clean") else "")
        self.stdout.write(f"{record.name}: {facts['n_suggestions']} suggested spans on {facts['n_candidates']} "
                          f"candidates ({facts['n_clean']} clean), {facts['n_decoys']} decoys placed{skipped}")
