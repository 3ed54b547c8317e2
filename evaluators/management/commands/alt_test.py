"""``alt_test (--slug SLUG | --ratings FILE --item COL --rater COL --label COL) --judges FILE``.

May an LLM judge replace one of the annotators? The alternative annotator test of Calderon, Reichart
& Dror (ACL 2025), equal to the authors' notebook: evaluators/stats/alt_test.py, docs/ai-assistance.md.
"""
from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

import pandas as pd
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluators.judges.rows import RATER_PREFIX, judge_rows, study_judges
from evaluators.reports.judges import STUDY_LABELS, alt_test_labels, result_json
from evaluators.reports.study_stats import (NO_PHENOMENON, REPORT_COLUMNS, ReportError, pilot_policy, stats_frame,
                                            study_export_frame)
from evaluators.stats.alt_test import (
    EPSILON, MIN_HUMANS_PER_INSTANCE, MIN_INSTANCES_PER_HUMAN, Q, SCORINGS, AltTestError, AltTestResult, alt_test,
)
from studies.access import rules as access
from studies.cli import read_text_file


def _fail(message: str) -> CommandError:
    return CommandError(message, returncode=2)


def _csv_rows(path: str, option: str, required: tuple[str, ...]) -> list[dict[str, str]]:
    content = read_text_file(path, option, returncode=2)
    reader = csv.DictReader(io.StringIO(content))
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in required if c not in header]
    if missing:
        raise _fail(f"{option}: line 1: missing column(s) {', '.join(missing)}; the header has {', '.join(header) or 'nothing'}")
    rows = []
    for line, row in enumerate(reader, start=2):
        values = {k.strip(): (v or "").strip() for k, v in row.items() if k is not None}
        for column in required:
            if not values.get(column):
                raise _fail(f"{option}: line {line}: {column!r} is empty")
        values["_line"] = str(line)
        rows.append(values)
    if not rows:
        raise _fail(f"{option}: no rows after the header")
    return rows


def _label(value: str, numeric: bool, where: str) -> Any:
    if not numeric:
        return value
    try:
        number = float(value)
    except ValueError:
        raise _fail(f"{where}: {value!r} is not a number (--scoring neg_rmse compares numbers)") from None
    if not math.isfinite(number):
        raise _fail(f"{where}: {value!r} is not a finite number")
    return number


class Command(BaseCommand):
    help = ("The alternative annotator test (Calderon, Reichart & Dror, ACL 2025): for each LLM judge, the winning "
            "rate over the annotators (leave one out, one-sided t-tests against epsilon, Benjamini-Yekutieli), the "
            "advantage probability and whether it may replace an annotator (winning rate >= 0.5).")

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--slug", help="A study whose judgments are the human labels.")
        source.add_argument("--ratings", metavar="FILE", help="A CSV of human labels (with --item, --rater, --label).")
        parser.add_argument("--item", metavar="COL", help="--ratings: the column of the instance id.")
        parser.add_argument("--rater", metavar="COL", help="--ratings: the column of the annotator.")
        parser.add_argument("--label", metavar="COL", help="--ratings: the column of the label.")
        parser.add_argument("--judges", metavar="FILE",
                            help="A long CSV judge,item,label: each judge's label of each instance. Without it, "
                                 "--slug uses the judges stored with import_judge.")
        parser.add_argument("--phenomenon", metavar="NAME",
                            help="--slug: only the instances of items of this phenomenon.")
        parser.add_argument("--pilot", choices=("keep", "drop"), default="keep",
                            help="--slug: pilot annotators' judgments kept (default) or dropped (the report's "
                                 "alt-test drops them).")
        parser.add_argument("--scoring", choices=SCORINGS,
                            help="accuracy (categories; default for --ratings and label/choice studies) or neg_rmse "
                                 "(numbers; default for score studies).")
        parser.add_argument("--epsilon", type=float, default=EPSILON,
                            help=f"How much worse than an annotator the judge may be (default {EPSILON}).")
        parser.add_argument("--q", type=float, default=Q, help=f"The false discovery rate (default {Q}).")
        parser.add_argument("--min-annotators", type=int, default=MIN_HUMANS_PER_INSTANCE,
                            help=f"Annotators an instance needs (default {MIN_HUMANS_PER_INSTANCE}, the authors').")
        parser.add_argument("--min-instances", type=int, default=MIN_INSTANCES_PER_HUMAN,
                            help=f"Instances an annotator needs (default {MIN_INSTANCES_PER_HUMAN}, the authors').")
        parser.add_argument("--user", metavar="USERNAME", help=access.USER_OPTION_HELP)
        parser.add_argument("--json", action="store_true", help='Print {"judges": [...], ...}.')

    def handle(self, *args: Any, **opts: Any) -> None:
        if not 0 <= opts["epsilon"] < 1:
            raise _fail("--epsilon: at least 0 and below 1 (a difference of win probabilities)")
        if not 0 < opts["q"] < 1:
            raise _fail("--q: between 0 and 1")
        if opts["min_annotators"] < 2:
            raise _fail("--min-annotators: at least 2 (one is left out, the others are the reference)")
        if opts["min_instances"] < 2:
            raise _fail("--min-instances: at least 2 (a t-test needs two instances)")
        if not opts["slug"] and opts["phenomenon"] is not None:
            raise _fail("--phenomenon: only with --slug (a study's items carry their phenomenon)")
        stored: dict[str, dict[str, Any]] | None = None
        if opts["slug"]:
            humans, default_scoring, source, stored = self._from_study(opts)
        else:
            if not opts["judges"]:
                raise _fail("--judges: needed with --ratings (a long CSV judge,item,label)")
            humans, source = self._from_csv(opts), f"ratings {opts['ratings']}"
            default_scoring = "accuracy"
        scoring = opts["scoring"] or default_scoring
        if stored is not None:
            judges = stored
            if scoring == "neg_rmse":
                judges = {j: {i: _label(str(v), True, f"judge {j!r}, item {i!r}") for i, v in labels.items()}
                          for j, labels in judges.items()}
        else:
            judges = self._judges(opts["judges"], numeric=scoring == "neg_rmse")
        if scoring == "neg_rmse":
            humans = {h: {i: _label(str(v), True, f"{source}: annotator {h!r}, item {i!r}") for i, v in labels.items()}
                      for h, labels in humans.items()}
        results: list[tuple[str, AltTestResult]] = []
        for name, judge in judges.items():
            try:
                results.append((name, alt_test(judge, humans, scoring=scoring, epsilon=opts["epsilon"], q=opts["q"],
                                               min_humans_per_instance=opts["min_annotators"],
                                               min_instances_per_human=opts["min_instances"])))
            except AltTestError as exc:
                raise _fail(f"judge {name!r}: {exc}") from None
        report = {"source": source + (f", phenomenon {opts['phenomenon']}" if opts["phenomenon"] is not None else ""),
                  "scoring": scoring, "epsilon": opts["epsilon"], "q": opts["q"],
                  "min_annotators_per_instance": opts["min_annotators"],
                  "min_instances_per_annotator": opts["min_instances"],
                  "annotators": len(humans),
                  "judges": [result_json(name, r) for name, r in results]}
        if opts["json"]:
            self.stdout.write(json.dumps(report, ensure_ascii=False, allow_nan=False))
            return
        self._print(report)

    def _from_csv(self, opts: dict[str, Any]) -> dict[str, dict[str, Any]]:
        columns = {name: opts[name] for name in ("item", "rater", "label")}
        missing = [f"--{name}" for name, value in columns.items() if not value]
        if missing:
            raise _fail(f"{', '.join(missing)}: needed with --ratings (the column names)")
        humans: dict[str, dict[str, Any]] = {}
        for row in _csv_rows(opts["ratings"], "--ratings", (columns["item"], columns["rater"], columns["label"])):
            rater, item = row[columns["rater"]], row[columns["item"]]
            if item in humans.get(rater, {}):
                raise _fail(f"--ratings: line {row['_line']}: a second label of item {item!r} by {rater!r}")
            humans.setdefault(rater, {})[item] = row[columns["label"]]
        return humans

    def _from_study(self, opts: dict[str, Any]
                    ) -> tuple[dict[str, dict[str, Any]], str, str, dict[str, dict[str, Any]] | None]:
        """The annotators' labels, the default scoring, the source's name, and the stored judges' labels (None with
        --judges FILE)."""
        study = access.command_study(opts["slug"], access.command_user(opts["user"]), "report",
                                     not_found=f"--slug: no study {opts['slug']!r}")
        try:
            frame, _slug, _protocol = stats_frame(study_export_frame(study), source=f"study {study.slug}")
        except ReportError as exc:
            raise _fail(str(exc)) from None
        frame = pilot_policy(frame, opts["pilot"])[0]
        if opts["judges"] and study.spec.answer_column not in STUDY_LABELS:
            raise _fail(f"--slug: a {study.protocol} study has no single label per item and annotator "
                        f"(labels: judgment, choice; scores: ESA, DA, pairwise); use --ratings, or judges stored "
                        f"with import_judge (their labels are the report's agreement units)")
        humans, scoring, phenomena = alt_test_labels(frame, study.protocol, uses_spans=study.uses_spans)
        judges: dict[str, dict[str, Any]] | None = None
        if not opts["judges"]:
            stored = study_judges(study)
            if not stored:
                raise _fail(f"--judges: study {study.slug} has no judge stored with import_judge; give --judges FILE")
            rows = pd.DataFrame.from_records(list(judge_rows(study, stored)), columns=list(REPORT_COLUMNS))
            judge_frame = stats_frame(rows, source=f"study {study.slug} (judges)")[0]
            labels, _, judge_phenomena = alt_test_labels(judge_frame, study.protocol, uses_spans=study.uses_spans)
            phenomena = {**judge_phenomena, **phenomena}
            judges = {j.name: labels.get(RATER_PREFIX + j.name, {}) for j in stored}
        wanted = opts["phenomenon"]
        if wanted is not None:
            known = sorted(set(phenomena.values()) - {NO_PHENOMENON})
            if wanted not in known:
                raise _fail(f"--phenomenon: no instance of phenomenon {wanted!r} in study {study.slug} "
                            f"(phenomena: {', '.join(known) or 'none'})")
            humans = {h: {i: v for i, v in labels.items() if phenomena.get(i) == wanted}
                      for h, labels in humans.items()}
            humans = {h: labels for h, labels in humans.items() if labels}
            if judges is not None:  # a judges file's other instances are never used: no annotator rated them here
                judges = {j: {i: v for i, v in labels.items() if phenomena.get(i) == wanted}
                          for j, labels in judges.items()}
        return humans, scoring, f"study {study.slug}", judges

    def _judges(self, path: str, *, numeric: bool) -> dict[str, dict[str, Any]]:
        judges: dict[str, dict[str, Any]] = {}
        for row in _csv_rows(path, "--judges", ("judge", "item", "label")):
            where = f"--judges: line {row['_line']}"
            if row["item"] in judges.get(row["judge"], {}):
                raise _fail(f"{where}: a second label of item {row['item']!r} by judge {row['judge']!r}")
            judges.setdefault(row["judge"], {})[row["item"]] = _label(row["label"], numeric, where)
        return judges

    def _print(self, report: dict[str, Any]) -> None:
        out = self.stdout.write
        out(f"alt-test on {report['source']}: {report['annotators']} annotators, scoring {report['scoring']}, "
            f"epsilon {report['epsilon']:g}, q {report['q']:g}")
        for judge in report["judges"]:
            verdict = "passes" if judge["passed"] else "does not pass"
            out(f"\n{judge['judge']}: winning rate {judge['winning_rate']:.3f}, advantage probability "
                f"{judge['advantage_probability']:.3f} — {verdict} (winning rate >= 0.5 may replace an annotator)")
            for a in judge["per_annotator"]:
                p = "—" if a["p_value"] is None else f"{a['p_value']:.4g}"
                out(f"  {a['annotator']:<20} {a['instances']:>5} instances  p {p:>8}  "
                    f"{'won' if a['rejected'] else 'not won':<7}  judge at least as aligned on "
                    f"{a['advantage_probability']:.0%}")
            if judge["dropped_annotators"]:
                out("  left out (too few instances): " + ", ".join(f"{d['annotator']} ({d['instances']})"
                                                                 for d in judge["dropped_annotators"]))
            if judge["dropped_instances"]:
                out(f"  {judge['dropped_instances']} instance(s) left out: too few annotators or no label of the judge")

