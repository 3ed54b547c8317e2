"""``import_judgments FILE --format FORMAT [--slug SLUG] [--study-file FILE] [--scale LOW:HIGH]``: judgments from elsewhere, as a closed study."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.text import slugify

from annotation.importing.judgments import JudgmentImportError, all_formats, judgments_import, read_study_file
from annotation.importing.base import references_message
from annotation.importing.mqm import UNCLOSED_CHOICES, mqm_tsv_import
from studies.access import rules as access
from studies.cli import read_text_file


class Command(BaseCommand):
    help = ("Load judgments collected elsewhere as a closed study (nothing is handed out). --format export: this "
            "tool's own export, CSV or JSON Lines (docs/export.md); --study-file gives back texts and settings. "
            "--format scores|appraise-csv|mtme: score files from elsewhere (a long CSV, Appraise's score export, "
            "an mt-metrics-eval .seg.score file) as a DA study (docs/import.md). --format mqm-tsv: Google's WMT MQM "
            "TSV as an MQM study (docs/mqm.md). Protocols add formats of their own, e.g. appraise-pairwise-csv: "
            "Appraise's pairwise score export as a pairwise study (docs/import.md). "
            "Every bad row is named by line and nothing is stored. Prints the new study's slug.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")
        parser.add_argument("--format", required=True, choices=all_formats(), dest="fmt")
        parser.add_argument("--slug", help="The new study's slug (default: from the file name).")
        parser.add_argument("--study-file", help="The original study file (JSON): texts and settings.")
        parser.add_argument("--reference-system", action="append", default=[], metavar="NAME",
                            help="The system(s) that are human references (repeatable). mqm-tsv: replaces the name "
                                 "rule (ref, ref.A, refB, Human-A.0 ... are references); other formats: added to the "
                                 "file's own flags. Standard error says which systems became references.")
        parser.add_argument("--source", default="", metavar="TEXT",
                            help="Where the file came from (e.g. \"Google's WMT21 MQM release, ted/zhen\"); "
                                 "recorded with the study and quoted by the methods paragraph (docs/reports.md).")
        parser.add_argument("--unclosed-spans", choices=UNCLOSED_CHOICES, default="error",
                            help="mqm-tsv: a <v> never closed is a bad row (error, default), or its span runs to "
                                 "the end of the text (close-at-end; one row of the WMT21 TED en-de release).")
        parser.add_argument("--scale", metavar="LOW:HIGH",
                            help="scores, appraise-csv, mtme: map scores linearly from LOW..HIGH onto the 0-100 "
                                 "scale (LOW > HIGH turns lower-is-better round; write --scale=-25:0 for a "
                                 "negative LOW), or 'auto' (the file's own minimum and maximum). Without it, "
                                 "scores outside 0-100 are bad rows (docs/import.md).")
        parser.add_argument("--user", metavar="USERNAME", help=access.OWNER_OPTION_HELP)

    def handle(self, *args: Any, **opts: Any) -> None:
        owner = access.command_owner(opts["user"])
        path = Path(opts["file"])
        content = read_text_file(opts["file"], returncode=2, directory_hint=" (--format mtme: one "
                                 "LP.SCORER.seg.score file of the directory's human-scores)")
        study_file = None
        if opts["study_file"]:
            try:
                study_file = read_study_file(read_text_file(opts["study_file"], "--study-file", returncode=2))
            except json.JSONDecodeError as exc:
                raise CommandError(f"--study-file: line {exc.lineno}: not valid JSON ({exc.msg})", returncode=2)
            except JudgmentImportError as exc:
                raise CommandError(str(exc), returncode=2)
        slug = opts["slug"] or slugify(f"{path.stem}-imported")[:50]
        try:
            if opts["fmt"] == "mqm-tsv":  # annotation/importing/mqm.py (docs/mqm.md)
                study = mqm_tsv_import(name=path.name, content=content, slug=slug,
                                       reference_systems=opts["reference_system"], unclosed=opts["unclosed_spans"],
                                       source=opts["source"])
            else:
                study = judgments_import(name=path.name, content=content, fmt=opts["fmt"], slug=slug,
                                         study_file=study_file, reference_systems=opts["reference_system"],
                                         scale=opts["scale"], source=opts["source"])
        except JudgmentImportError as exc:
            raise CommandError(f"{path}: {len(exc.errors)} error(s), nothing stored:\n  " + "\n  ".join(exc.errors),
                               returncode=2)
        self.stderr.write(references_message(study, opts["fmt"], opts["reference_system"]))
        access.study_created_by(study, owner, how="import_judgments", file=path.name, format=opts["fmt"])
        self.stdout.write(study.slug)
