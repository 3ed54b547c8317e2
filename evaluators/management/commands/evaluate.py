"""``evaluate SLUG --evaluator NAME [--evaluator NAME …] [--nlp BACKEND]``: run registry evaluators on a study, store their scores."""
from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

from django.core.checks import Tags
from django.core.checks.registry import registry as check_registry
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluators import progress
from evaluators.metrics.language import get_backend
from evaluators.metrics.scores import (EvaluationError, PreparationFailed, UnknownEvaluatorError, evaluator_names,
                                       evaluator_prepare, evaluators_prepare, evaluators_store, uses_backend)
from evaluators.metrics.study_corpus import ReferenceChoiceError, build_study_corpus
from evaluators.models import Evaluator
from studies.access import rules as access


class Command(BaseCommand):
    help = ("Run registered automatic evaluators over a study's candidates (each non-reference candidate of each "
            "real item against the item's reference) and store their segment scores, corpus-level system scores, "
            "signature and, with --paired-bs/--paired-ar, sacrebleu's paired test of every system against the first; "
            "replaces earlier runs. All or nothing: when one evaluator fails, none is stored. Evaluators: " + ", ".join(evaluator_names()) + ".")
    #: Every system check but the URL checks: those import every view, and with them pandas, SciPy and irrCAC
    #: (research's views -> the agreement statistics), ~1 s of CPU that no evaluator needs (docs/evaluators.md).
    requires_system_checks = sorted(set(check_registry.tags_available()) - {Tags.urls})

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="Study slug.")
        parser.add_argument("--user", metavar="USERNAME", help=access.USER_OPTION_HELP)
        parser.add_argument("--evaluator", action="append", required=True, metavar="NAME",
                            help="Evaluator to run; repeat for several.")
        parser.add_argument("--nlp", metavar="BACKEND", default=None,
                            help="Language backend: lexicon (the default of the evaluators that need one) or "
                                 "spacy:PIPELINE (an installed spaCy pipeline, e.g. spacy:en_core_web_sm), which blonde, "
                                 "dblonde and blonde-plus need.")
        parser.add_argument("--reference", metavar="NAME", default=None,
                            help="The reference system to score against (one of the study's reference candidates; "
                                 "the others are then scored like systems). Needed when items have several "
                                 "references, except by bleu, chrf and ter, which use all of them by default.")
        paired = parser.add_mutually_exclusive_group()
        paired.add_argument("--paired-bs", action="store_const", dest="paired", const="bs",
                            help="sacrebleu's paired bootstrap (1,000 resamples, seed 12345) of every system against "
                                 "the first, for bleu/chrf/ter (about doubles their time).")
        paired.add_argument("--paired-ar", action="store_const", dest="paired", const="ar",
                            help="sacrebleu's paired approximate randomisation (10,000 trials) instead.")
        parser.set_defaults(paired="none")
        parser.add_argument("--processes", type=int, choices=(1, 2), default=1,
                            help="1 (the default, the least CPU): one evaluator after the other, with a progress bar "
                                 "per evaluator on a terminal; 2: the evaluators that use no language backend (bleu, "
                                 "chrf, ter, doc-*) run in a second process beside the others (less wall time when "
                                 "the second core is free, a little more CPU: docs/evaluators.md).")

    def handle(self, *args: Any, **opts: Any) -> None:
        names = evaluator_names()
        unknown = [n for n in opts["evaluator"] if n not in names]
        if unknown:
            raise CommandError(f"unknown evaluator(s): {', '.join(unknown)}; available: {', '.join(names)}")
        study = access.command_study(opts["slug"], access.command_user(opts["user"]), "scores",
                                     not_found=f"no study with slug {opts['slug']!r}")
        if opts["nlp"]:
            try:
                get_backend(opts["nlp"])
            except (ValueError, RuntimeError, ImportError, OSError) as exc:
                raise CommandError(f"--nlp: {exc}") from None
        paired = None if opts["paired"] == "none" else opts["paired"]
        # Synchronous here (the pages queue background jobs instead); a progress bar on a terminal.
        bar = sys.stderr if sys.stderr.isatty() else None
        try:
            built = build_study_corpus(study, opts["reference"])  # once for all the evaluators
        except ReferenceChoiceError as exc:
            raise CommandError(f"--reference: {exc}") from None
        names = list(dict.fromkeys(opts["evaluator"]))  # keep order, run each once
        stored = "nothing was stored" if len(names) == 1 else f"none of {', '.join(names)} was stored"
        started = time.monotonic()
        finished: list[str] = []

        lock = threading.Lock()

        def done(name: str) -> None:  # one line per finished evaluator on stderr (either process's, two threads)
            with lock:
                finished.append(name)
                self.stderr.write(f"evaluate: {len(finished)}/{len(names)} {name} done "
                                  f"({time.monotonic() - started:.1f} s)")

        runs = []
        # all run first, then all stored: one failing stores none
        if opts["processes"] > 1 and len({uses_backend(n) for n in names}) > 1:
            try:
                runs = evaluators_prepare(study=study, names=names, nlp=opts["nlp"], paired=paired, built=built,
                                          reference=opts["reference"], processes=opts["processes"], done=done)
            except PreparationFailed as exc:
                raise CommandError(f"{exc.name}: {exc} ({stored})") from None
        else:
            for name in names:
                with progress.listening(_progress_bar(bar, name) if bar else lambda *_: None):
                    try:
                        runs.append(evaluator_prepare(study=study, name=name, nlp=opts["nlp"], paired=paired,
                                                      built=built, reference=opts["reference"]))
                    except (UnknownEvaluatorError, EvaluationError) as exc:
                        raise CommandError(f"{name}: {exc} ({stored})") from None
                if bar:
                    bar.write("\r\033[K")
                else:  # not a terminal (a log, a pipe): one line per evaluator on stderr
                    done(name)
        if not bar:
            self.stderr.write(f"evaluate: storing the scores of {len(names)} evaluator(s)")
        for evaluator in evaluators_store(runs):
            self.stdout.write(f"{evaluator.name}: {evaluator.scores.count()} scores stored")
            self.stdout.write(system_scores_text(evaluator))


def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.4f}"


def system_scores_text(evaluator: Evaluator) -> str:
    """The stored corpus-level system scores, signature, paired tests and notes, as indented lines."""
    lines = []
    for system, entry in evaluator.system_scores.items():
        lines.append(f"  {system}: {_fmt(entry.get('score'))}")
    if evaluator.references:
        lines.append(f"  reference{'s' if len(evaluator.references) > 1 else ''}: {', '.join(evaluator.references)}")
    for signature in evaluator.signature.splitlines():
        lines.append(f"  signature: {signature}")
    paired = evaluator.paired
    if paired:
        lines.append(f"  {paired['method_name']} ({paired['n_samples']} samples, seed {paired['seed']}), "
                     f"baseline {paired['baseline']}:")
        for t in paired["tests"]:
            if t["is_baseline"]:
                continue
            p = t["p_value"]
            lines.append(f"    {t['system']}: {_fmt(t['score'])} p = {'—' if p is None else f'{p:.4f}'}"
                         + (" *" if t["significant"] else ""))
    lines += [f"  note: {n}" for n in evaluator.notes]
    return "\n".join(lines)


def _progress_bar(stream: TextIO, name: str, width: int = 30) -> progress.Listener:
    """Draw ``name [#####.....] 45% 900/2000 label`` on one terminal line, at most ten times a second."""
    last = [0.0]

    def draw(done: int, total: int, label: str) -> None:
        now = time.monotonic()
        if now - last[0] < 0.1 and done < total:
            return
        last[0] = now
        filled = int(width * done / total) if total else 0
        percent = f"{100 * done / total:3.0f}%" if total else "   "
        stream.write(f"\r\033[K{name} [{'#' * filled}{'.' * (width - filled)}] {percent} {done}/{total} {label}"[:200])
        stream.flush()
    return draw
