"""``wmt_ranking --scores FILE``: the WMT human system ranking (z-scores, Mann-Whitney clusters) of segment scores."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluators.reports.table_files import TableFileError, read_table
from evaluators.stats.wmt_ranking import wmt_ranking


def _fail(message: str) -> CommandError:
    return CommandError(message, returncode=2)


class Command(BaseCommand):
    help = ("The WMT human ranking of systems from segment scores (DA, ESA, MQM points negated): per-annotator "
            "z-scores, systems ordered by mean score, one-sided Mann-Whitney U between every pair on shared "
            "segments, clusters and rank ranges as Appraise's ComputeWMT23Results. FILE: CSV/TSV/JSONL with "
            "columns annotator, system, segment, score (docs/statistics.md).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scores", required=True, metavar="FILE")
        parser.add_argument("--order", choices=("raw", "z"), default="raw",
                            help="Order systems by mean raw score (WMT23, default) or mean z-score (WMT21/22).")
        parser.add_argument("--lower-is-better", action="store_true",
                            help="Scores are errors (e.g. MQM points): negated before ranking.")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **opts: Any) -> None:
        path = Path(opts["scores"])
        if not path.is_file():
            raise _fail(f"{path}: no such file")
        try:
            frame = read_table(path)
        except TableFileError as exc:
            raise _fail(str(exc))
        missing = [c for c in ("annotator", "system", "segment", "score") if c not in frame.columns]
        if missing:
            raise _fail(f"{path}: missing column(s) {', '.join(missing)}; found {', '.join(map(str, frame.columns))}")
        errors = []
        numbers = pd.to_numeric(frame["score"], errors="coerce")
        for k in frame.index[numbers.isna() & frame["score"].astype(str).str.strip().ne("")][:20]:
            errors.append(f"{path}: line {int(k) + 2}: score {frame.loc[k, 'score']!r} is not a number")
        for column in ("annotator", "system", "segment"):
            blank = frame[column].astype(str).str.strip().eq("") | frame[column].isna()
            for k in frame.index[blank][:20]:
                errors.append(f"{path}: line {int(k) + 2}: {column} is empty")
        if errors:
            raise _fail(f"{len(errors)} error(s), nothing computed:\n  " + "\n  ".join(errors))
        frame = frame.assign(score=numbers * (-1.0 if opts["lower_is_better"] else 1.0)).dropna(subset=["score"])
        if frame["system"].nunique() < 2:
            raise _fail(f"{path}: at least two systems are needed")
        result = wmt_ranking(frame, order=opts["order"]).as_dict()
        result["settings"]["lower_is_better"] = opts["lower_is_better"]
        if opts["json"]:
            self.stdout.write(json.dumps(result, indent=1))
            return
        self.stdout.write(f"{'rank':>7}  {'system':30} {'ave':>8} {'ave z':>8} {'wins':>5}")
        last = None
        for s in result["systems"]:
            if last is not None and s["cluster"] != last:
                self.stdout.write("-" * 62)
            last = s["cluster"]
            lo, hi = s["rank_range"]
            ranks = str(lo) if lo == hi else f"{lo}-{hi}"
            self.stdout.write(f"{ranks:>7}  {s['system'][:30]:30} {s['score']:8.2f} {s['z']:+8.3f} {s['wins']:5d}")
