"""``score --hyp FILE … --ref FILE --evaluator NAME …``: score plain system-output files outside any study.

The reading, checking and scoring are :mod:`evaluators.metrics.file_scores` (file formats, evaluators,
paired tests: see there); this command parses the options and prints the text or JSON output.

Bad input (a missing, empty or non-UTF-8 file, line counts that differ,
duplicate system names, an unknown evaluator or language) stops the command
with a message naming the file and line, exit status 2, and nothing written
to standard output.
"""
from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluators.metrics.file_scores import ScoreInputError, score_files, scores_json, scores_text


def _fail(message: str) -> CommandError:
    return CommandError(message, returncode=2)


class Command(BaseCommand):
    help = ("Score plain system-output files (one segment a line, UTF-8) against a reference with any registered "
            "evaluator, outside any study; nothing is stored. BLEU, chrF and TER are sacrebleu's corpus scores "
            "with its signatures; --paired-bs/--paired-ar run sacrebleu's paired tests (the first --hyp is the "
            "baseline). Bad input exits with status 2, naming the file and line.")
    # No database is touched: skip the system checks so that the command starts as fast as it can.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--hyp", action="append", required=True, metavar="FILE|NAME=FILE",
                            help="A system's output, one segment a line; repeat for several systems. The system "
                                 "is named after the file without its extension, or NAME.")
        parser.add_argument("--ref", action="append", required=True, metavar="FILE",
                            help="The reference, one segment a line. Repeat for several references: bleu, chrf and "
                                 "ter score against all of them (sacrebleu's nrefs); the other evaluators take one "
                                 "and refuse several.")
        parser.add_argument("--src", metavar="FILE", help="The source, one segment a line (evaluators that need it).")
        parser.add_argument("--docs", metavar="FILE",
                            help="One document id a line, aligned with the segments (mt-metrics-eval convention); "
                                 "a document's lines are consecutive.")
        parser.add_argument("--evaluator", action="append", required=True, metavar="NAME",
                            help="A registered evaluator (bleu, chrf, ter, blonde, …); repeat for several.")
        parser.add_argument("--target-language", metavar="CODE",
                            help="The target language (ISO 639-1, optionally with script/region: zh-Hans). "
                                 "Default: guessed from the reference and reported as a guess.")
        parser.add_argument("--source-language", metavar="CODE", help="The source language, for evaluators that use it.")
        parser.add_argument("--nlp", metavar="BACKEND",
                            help="Language backend of the evaluators that need one: lexicon (default) or "
                                 "spacy:PIPELINE (e.g. spacy:en_core_web_sm), which blonde, dblonde and blonde-plus need.")
        parser.add_argument("--annotations", metavar="FILE",
                            help="BlonDe+'s human annotations (blonde-plus only): one line per reference line in the "
                                 "BlonDe authors' format, tab-separated fields 1,<reference phrase>,<correction> "
                                 "(ambiguous) and 3,<reference phrase>,… (omitted); see docs/evaluators.md.")
        paired = parser.add_mutually_exclusive_group()
        paired.add_argument("--paired-bs", action="store_true",
                            help="sacrebleu's paired bootstrap resampling test (1000 resamples, seed 12345).")
        paired.add_argument("--paired-ar", action="store_true",
                            help="sacrebleu's paired approximate randomization test (10000 trials, seed 12345).")
        parser.add_argument("--paired-n", type=int, metavar="N",
                            help="Resamples (bs) or trials (ar) instead of sacrebleu's defaults.")
        parser.add_argument("--paired-seed", type=int, metavar="N", help="Random seed (default 12345, as sacrebleu).")
        parser.add_argument("--width", type=int, default=1, metavar="N",
                            help="Decimals of the text output (default 1, as sacrebleu).")
        parser.add_argument("--json", action="store_true", help="Print JSON instead of text.")

    def handle(self, *args: Any, **opts: Any) -> None:
        paired = "bs" if opts["paired_bs"] else "ar" if opts["paired_ar"] else None
        if paired is None and (opts["paired_n"] is not None or opts["paired_seed"] is not None):
            raise _fail("--paired-n and --paired-seed need --paired-bs or --paired-ar")
        if paired and len(opts["hyp"]) < 2:
            raise _fail("--paired-bs/--paired-ar compare systems: give at least two --hyp files")
        if opts["width"] < 0:
            raise _fail(f"--width {opts['width']}: must be 0 or more")
        try:
            scores = score_files(
                hyps=opts["hyp"], refs=opts["ref"], evaluators=opts["evaluator"], src=opts["src"], docs=opts["docs"],
                annotations=opts["annotations"], target_language=opts["target_language"],
                source_language=opts["source_language"], nlp=opts["nlp"], paired=paired, paired_n=opts["paired_n"],
                paired_seed=opts["paired_seed"])
        except ScoreInputError as exc:
            raise _fail(str(exc)) from None
        if opts["json"]:
            self.stdout.write(json.dumps(scores_json(scores), ensure_ascii=False, indent=2))
        else:
            self.stdout.write(scores_text(scores, opts["width"]))
