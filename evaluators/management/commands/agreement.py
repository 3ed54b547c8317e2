"""``agreement``: inter-annotator agreement of a study, an export file, or any ratings table.

Three modes, one statistics core (``evaluators.stats``):

* ``agreement SLUG [--json]`` -- the study report of a stored study;
* ``agreement --judgments EXPORT.csv|jsonl [--json]`` -- the same report
  recomputed from an ``export_judgments`` file (reproducibility);
* ``agreement --ratings FILE.csv --item COL --rater COL --label COL [--json]``
  -- agreement on any long ratings table, no study needed.
"""
from __future__ import annotations

import json
from typing import Any

from django.core.checks import Tags
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluators.reports.report_cache import study_report_cached
from evaluators.reports.text import agreement_text, study_report_text
from studies.access import rules as access

#: ``evaluators.stats.coding.WEIGHT_SCHEMES`` (a test checks that they are equal), named here because importing the
#: statistics package loads pandas, SciPy and irrCAC, which a report read back from the cache does without.
WEIGHT_SCHEMES = ("identity", "quadratic", "linear", "ordinal")


def dump_json(data: Any) -> str:
    """Strict JSON: a NaN reaching here is a bug, never silently written."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)


class Command(BaseCommand):
    help = (
        "Agreement between annotators. `agreement SLUG` reports a study; `agreement --judgments FILE` "
        "recomputes that report from an exported judgments file; `agreement --ratings FILE --item COL "
        "--rater COL --label COL` works on any long ratings table (one row per rating, blank label = missing)."
    )
    # The models' checks only: the others load every URL and view (0.8 s, pandas included), which a command that
    # prints a report never serves (`manage.py check` runs them all).
    requires_system_checks = [Tags.models]

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", nargs="?", help="Study slug (study mode).")
        parser.add_argument("--user", metavar="USERNAME",
                            help="Study mode: act as this user (a role on the study needed); without it, the "
                                 "server's administrator (docs/access.md).")
        parser.add_argument("--ratings", metavar="FILE", help="Long ratings table (CSV, TSV, JSONL or JSON array).")
        parser.add_argument("--judgments", metavar="FILE", help="An export_judgments file (CSV or JSONL).")
        parser.add_argument("--item", default="item", help="--ratings: column holding the item (unit) id.")
        parser.add_argument("--rater", default="rater", help="--ratings: column holding the rater id.")
        parser.add_argument("--label", default="label", help="--ratings: column holding the rating; blank = missing.")
        parser.add_argument("--categories", help="Comma-separated category list (default: the labels seen, sorted).")
        parser.add_argument("--weights", choices=WEIGHT_SCHEMES, default="identity",
                            help="Agreement weights; non-identity turns AC1 into AC2 (default identity).")
        parser.add_argument("--ties", choices=("keep", "drop"), default="keep",
                            help="Study: keep ties as a category or drop tied pairs (default keep; both are reported).")
        parser.add_argument("--spam", choices=("drop", "keep"), default="drop",
                            help="Study: drop spam (control) items from agreement (default) or keep them.")
        parser.add_argument("--excluded", choices=("drop", "keep"), default="drop",
                            help="Study: drop excluded annotators (default) or keep them.")
        parser.add_argument("--pilot", choices=("drop", "keep"), default="drop",
                            help="Study: drop pilot annotators' judgments (default) or keep them.")
        parser.add_argument("--ranking-coding", choices=("system", "position"), default="system",
                            help="Study, ranking: label each candidate pair by the winning system's name (default; "
                                 "k+1 categories) or by position (first / second / tie; 3 categories).")
        parser.add_argument("--ranking-order", choices=("raw", "z"), default="raw",
                            help="MQM/ESA/DA studies: order the WMT ranking by mean raw score (WMT23, default) or by "
                                 "mean z-score (WMT21/22).")
        parser.add_argument("--seed", type=int, default=0, help="Study: bootstrap seed of the system ranking (default 0).")
        parser.add_argument("--bootstrap", type=int, default=1000, help="Study: bootstrap resamples (default 1000).")
        parser.add_argument("--json", action="store_true", help="Print JSON (unrounded) instead of text.")
        parser.add_argument("--output", metavar="FILE", help="Write to FILE instead of standard output.")
        parser.add_argument("--methods", action="store_true",
                            help="Study: print a ready-to-edit methods paragraph (design, QC, agreement, ranking, "
                                 "each statistic cited) instead of the report.")
        parser.add_argument("--table", choices=("ranking", "agreement"),
                            help="Study: print this table for a paper instead of the report (--table-format).")
        parser.add_argument("--table-format", choices=("latex", "markdown"), default="latex",
                            help="--table: LaTeX with booktabs (default) or Markdown.")

    def handle(self, *args: Any, **opts: Any) -> None:
        modes = [m for m in ("slug", "ratings", "judgments") if opts.get(m)]
        if len(modes) != 1:
            raise CommandError("Give exactly one of: a study SLUG, --ratings FILE, or --judgments FILE.")
        if not 1 <= opts["bootstrap"] <= 100_000:
            raise CommandError("--bootstrap must be between 1 and 100000.")
        mode = modes[0]
        if mode == "ratings":
            result = self._ratings(opts)
            text = agreement_text(result)
        else:
            if (opts.get("methods") or opts.get("table")) and mode != "slug":
                raise CommandError("--methods and --table need a study SLUG (the paragraph describes its design).")
            result = self._study(opts) if mode == "slug" else self._judgments(opts)
            text = study_report_text(result)
        out = dump_json(result) + "\n" if opts["json"] else text
        if opts.get("methods") or opts.get("table"):
            from evaluators.reports import paper

            if opts.get("methods"):
                out = paper.methods_paragraph(result) + "\n"
            else:
                out = paper.table(result, opts["table"], opts["table_format"])
        if opts.get("output"):
            try:
                with open(opts["output"], "w", encoding="utf-8") as fh:
                    fh.write(out)
            except OSError as exc:
                raise CommandError(f"{opts['output']}: cannot write: {exc.strerror or exc}") from None
        else:
            self.stdout.write(out, ending="")

    # ------------------------------------------------------------------ modes
    def _ratings(self, opts: dict[str, Any]) -> dict:
        from evaluators.reports.table_files import TableFileError, read_table, require_columns
        from evaluators.stats.agreement import agreement

        path = opts["ratings"]
        try:
            frame = read_table(path)
            require_columns(frame, {"--item": opts["item"], "--rater": opts["rater"], "--label": opts["label"]},
                            source=path)
        except TableFileError as exc:
            raise CommandError(str(exc)) from None
        for role in ("item", "rater"):
            col = opts[role]
            blank = frame[col].isna() | (frame[col].astype(str).str.strip() == "")
            if blank.any():
                first = int(blank.to_numpy().nonzero()[0][0])
                # +2: the header is line 1 and rows count from 0 (CSV; JSONL has no header)
                raise CommandError(f"{path}: row {first + 1} (line {first + 2} of a CSV): blank {role} in column {col!r}")
        categories = None
        if opts.get("categories"):
            categories = [c.strip() for c in opts["categories"].split(",") if c.strip()]
            if not categories:
                raise CommandError("--categories: no category given")
        try:
            result = agreement(frame, item=opts["item"], rater=opts["rater"], label=opts["label"],
                               categories=categories, weights=opts["weights"])
        except (KeyError, ValueError) as exc:
            raise CommandError(f"{path}: {exc}") from None
        if result["n_ratings"] == 0:
            raise CommandError(f"{path}: no ratings: every value in column {opts['label']!r} is blank")
        return result

    def _study_options(self, opts: dict[str, Any]) -> dict[str, Any]:
        return {"ties": opts["ties"], "spam": opts["spam"], "excluded": opts["excluded"], "pilot": opts["pilot"],
                "ranking_coding": opts["ranking_coding"], "weights": opts["weights"], "seed": opts["seed"], "n_boot": opts["bootstrap"],
                "ranking_order": opts["ranking_order"]}

    def _study(self, opts: dict[str, Any]) -> dict:
        study = access.command_study(opts["slug"], access.command_user(opts.get("user")), "report",
                                     not_found=f"No study with slug {opts['slug']!r}.")
        try:
            return study_report_cached(study=study, options=self._study_options(opts))
        except ValueError as exc:
            from evaluators.reports.study_stats import ReportError

            if isinstance(exc, ReportError):
                raise CommandError(str(exc)) from None
            raise

    def _judgments(self, opts: dict[str, Any]) -> dict:
        from evaluators.reports import study_stats
        from evaluators.reports.table_files import TableFileError, read_table

        path = opts["judgments"]
        try:
            frame = read_table(path)
            return study_stats.report_from_export(frame, source=path, **self._study_options(opts))
        except (TableFileError, study_stats.ReportError) as exc:
            raise CommandError(str(exc)) from None
