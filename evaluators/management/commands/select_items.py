"""``select_items (--scores FILE | --slug SLUG) --metric NAME --method METHOD``: which items to evaluate first.

Utilities: evaluators/stats/selection.py (subset2evaluate's methods); the long CSV: formats/mtme.py;
definitions, sources and the check against subset2evaluate: docs/efficient-evaluation.md.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluators.models import Evaluator, MetricScore
from evaluators.stats.selection import (
    METHODS, SIMILARITIES, SelectionInputError, budget_count, item_utilities, rank_items,
)
from formats.mtme import ScoreTableError, read_long_csv
from studies.access import rules as access
from studies.cli import read_text_file
from studies.models import Candidate, Study

MAX_MISSING_SHOWN = 5


def _fail(message: str) -> CommandError:
    return CommandError(message, returncode=2)


def _missing_cells(matrix: np.ndarray, systems: list[str], segments: list[str], metric: str) -> str | None:
    """One line naming the first cells without a score, or None when every cell has one."""
    rows, cols = np.nonzero(~np.isfinite(matrix))
    if rows.size == 0:
        return None
    shown = [f"system {systems[i]!r} on segment {segments[j]!r}" for i, j in zip(rows[:MAX_MISSING_SHOWN],
                                                                              cols[:MAX_MISSING_SHOWN])]
    more = f" and {rows.size - MAX_MISSING_SHOWN} more" if rows.size > MAX_MISSING_SHOWN else ""
    return (f"--metric: {metric!r} has no score for {'; '.join(shown)}{more} "
            "(every system needs a score on every segment)")


class Command(BaseCommand):
    help = ("Rank items by how useful they are to evaluate, with the methods of subset2evaluate (Zouhar, Cui & "
            "Sachan, TACL 2025): metric_avg, metric_var, metric_cons, diversity, random. Input: a long CSV "
            "system,segment,scorer,score (--scores) or a study's stored evaluator scores (--slug).")

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--scores", metavar="FILE", help="Long CSV with columns system,segment,scorer,score.")
        source.add_argument("--slug", metavar="SLUG", help="A study whose stored evaluator scores to use.")
        parser.add_argument("--metric", required=True, metavar="NAME",
                            help="The scorer (--scores) or evaluator (--slug) whose scores define the items and "
                                 "systems; metric_avg/var/cons compute on its scores.")
        parser.add_argument("--method", required=True, metavar="METHOD",
                            help=f"One of {', '.join(METHODS)}.")
        parser.add_argument("--budget", metavar="N|P%",
                            help="Keep the N most useful items, or P%% of them (rounded down).")
        parser.add_argument("--seed", type=int, default=0, help="Seed of the random method (default 0).")
        parser.add_argument("--similarity", default="unigram", metavar="NAME",
                            help=f"Text similarity of the diversity method: {', '.join(SIMILARITIES)} "
                                 "(default unigram).")
        parser.add_argument("--lower-is-better", action="store_true",
                            help="With --scores: the metric's lower scores are better (TER), so its scores are "
                                 "negated first (only metric_avg changes). With --slug the evaluator says so.")
        parser.add_argument("--user", metavar="USERNAME", help=access.USER_OPTION_HELP)
        parser.add_argument("--json", action="store_true",
                            help='Print {"method", "metric", "items": [{"segment", "utility"}, …]}.')

    def handle(self, *args: Any, **opts: Any) -> None:
        method, metric = opts["method"], opts["metric"]
        if method not in METHODS:
            raise _fail(f"--method: unknown method {method!r}; methods: {', '.join(METHODS)}")
        if opts["similarity"] not in SIMILARITIES:
            raise _fail(f"--similarity: unknown similarity {opts['similarity']!r}; "
                        f"similarities: {', '.join(SIMILARITIES)}")
        if not 0 <= opts["seed"] < 2 ** 63:
            raise _fail("--seed: between 0 and 2^63 - 1")
        if opts["scores"] is not None:
            segments, systems, matrix, texts = self._from_csv(opts)
        else:
            segments, systems, matrix, texts = self._from_study(opts)
        missing = _missing_cells(matrix, systems, segments, metric)
        if missing:
            raise _fail(missing)
        if method == "diversity" and texts is None:
            raise _fail("--method: diversity needs the candidates' texts, which a score file does not hold; "
                        "use --slug")
        count = len(segments)
        if opts["budget"] is not None:
            try:
                count = budget_count(opts["budget"], len(segments))
            except ValueError as exc:
                raise _fail(f"--budget: {exc}") from None
        try:
            utilities = item_utilities(method, scores=matrix, texts=texts, seed=opts["seed"],
                                       similarity=opts["similarity"])
        except SelectionInputError as exc:
            raise _fail(str(exc)) from None
        ranked = rank_items(segments, utilities)[:count]
        if opts["json"]:
            payload = {"method": method, "metric": metric,
                       "items": [{"segment": r.segment, "utility": r.utility} for r in ranked]}
            self.stdout.write(json.dumps(payload, ensure_ascii=False, allow_nan=False))
            return
        label = method + (f" ({opts['similarity']})" if method == "diversity" else "")
        self.stdout.write(f"{label} on {metric}: {len(ranked)} of {len(segments)} items, {len(systems)} systems, "
                          "most useful first")
        width = max([len("segment"), *(len(r.segment) for r in ranked)])
        self.stdout.write(f"{'rank':>4}  {'segment':<{width}}  {'utility':>12}")
        for rank, row in enumerate(ranked, start=1):
            self.stdout.write(f"{rank:>4}  {row.segment:<{width}}  {row.utility:>12.6g}")

    def _from_csv(self, opts: dict[str, Any]) -> tuple[list[str], list[str], np.ndarray, None]:
        content = read_text_file(opts["scores"], "--scores", returncode=2)
        try:
            table = read_long_csv(opts["scores"], content)
        except ScoreTableError as exc:
            raise _fail(f"{len(exc.errors)} error(s), nothing computed:\n  " + "\n  ".join(exc.errors)) from None
        metric = opts["metric"]
        if metric not in table.seg:
            raise _fail(f"--metric: no scorer {metric!r} in {opts['scores']}; scorers: {', '.join(table.scorers)}")
        matrix = table.seg[metric]
        # The table spans every scorer's systems and segments; keep those this metric scored at all.
        scored_rows = np.isfinite(matrix).any(axis=1)
        scored_cols = np.isfinite(matrix).any(axis=0)
        systems = [s for s, keep in zip(table.systems, scored_rows) if keep]
        segments = [s for s, keep in zip(table.segments, scored_cols) if keep]
        matrix = matrix[np.ix_(scored_rows, scored_cols)]
        if opts["lower_is_better"]:
            matrix = -matrix
        return segments, systems, matrix, None

    def _from_study(self, opts: dict[str, Any]) -> tuple[list[str], list[str], np.ndarray, list[list[str]]]:
        slug, metric = opts["slug"], opts["metric"]
        study: Study = access.command_study(slug, access.command_user(opts["user"]), "compare",
                                            not_found=f"--slug: no study {slug!r}")
        evaluator = Evaluator.objects.filter(study=study, name=metric).first()
        if evaluator is None:
            names = sorted(Evaluator.objects.filter(study=study).values_list("name", flat=True))
            raise _fail(f"--metric: no evaluator {metric!r} in {slug}; evaluators: {', '.join(names) or 'none'}")
        # Systems are what the study compares: a reference's scores and spam copies are left out.
        references = set(Candidate.objects.filter(item__study=study, is_reference=True)
                         .values_list("item_id", "system"))
        rows = [(item_id, ext, system, score) for item_id, ext, system, score in
                MetricScore.objects.filter(evaluator=evaluator, item__is_spam=False).order_by("item_id", "system")
                .values_list("item_id", "item__external_id", "system", "score")
                if (item_id, system) not in references]
        if not rows:
            raise _fail(f"--metric: {metric!r} has no score on a system's candidate of a real item in {slug}")
        systems = sorted({system for _, _, system, _ in rows})
        item_ids = list(dict.fromkeys(item_id for item_id, _, _, _ in rows))
        segments = list(dict.fromkeys(ext for _, ext, _, _ in rows))
        at_system = {s: i for i, s in enumerate(systems)}
        at_item = {item_id: j for j, item_id in enumerate(item_ids)}
        matrix = np.full((len(systems), len(item_ids)), np.nan)
        for item_id, _, system, score in rows:
            matrix[at_system[system], at_item[item_id]] = score
        if not evaluator.higher_is_better:
            matrix = -matrix
        text_of = {(item_id, system): text for item_id, system, text in
                   Candidate.objects.filter(item_id__in=item_ids, system__in=systems, is_spam=False)
                   .values_list("item_id", "system", "text")}
        texts = [[text_of.get((item_id, s), "") for s in systems] for item_id in item_ids]
        return segments, systems, matrix, texts
