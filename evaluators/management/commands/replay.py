"""``replay FILE --format mqm-tsv|scores|export|appraise-csv|mtme``: what a study on fewer items would have concluded.

With ``--allocation uniform|adaptive``: how many judgments uniform and adaptive allocation need to
reach the decisions of the anytime-valid confidence sequences on all the data
(evaluators/stats/allocation.py, evaluators/stats/sequential.py).

Definitions and sources: evaluators/stats/replay.py and docs/efficient-evaluation.md.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluators.stats.allocation import (
    DEFAULT_REFRESH_EVERY, DEFAULT_WARMUP, POLICIES, TARGETS, replay_allocation, summarise,
)
from evaluators.stats.replay import DEFAULT_BUDGETS, PERMUTATIONS, CompleteData, MethodReplay, Replayer, replay_method
from annotation.importing.base import JudgmentImportError
from annotation.importing.judgments import parse_export
from annotation.importing.scores import parse_appraise
from evaluators.reports.span_report import weights_from
from evaluators.stats.replay_data import (
    TEXT_METRICS, ReplayDataError, from_cells, from_mqm, from_score_table, reference_candidates,
)
from evaluators.stats.selection import SCORE_METHODS, SelectionInputError, item_utilities, rank_items
from evaluators.stats.sequential import SequentialConfig
from formats.mqm_tsv import MqmTsvError, parse_mqm_tsv
from formats.mtme import ScoreTableError, read_long_csv, read_mtme_dir
from studies.cli import read_text_file

FORMATS = ("mqm-tsv", "scores", "export", "appraise-csv", "mtme")
#: The human scores' bounds of the formats that state them: Appraise's DA scores are 0–100.
FORMAT_RANGES = {"mqm-tsv": (-25.0, 0.0), "appraise-csv": (0.0, 100.0)}
#: Methods a replay runs when --method is not given: random and subset2evaluate's metric-based three.
DEFAULT_METHODS = ("random", *SCORE_METHODS)
METHODS = (*DEFAULT_METHODS, "diversity")
MAX_SEEDS = 1000
#: The score range of an MQM file's human scores: minus the segment score, capped at 25 (Freitag et al. 2021).
MQM_RANGE = (-25.0, 0.0)
#: An export of ranks or choices: pairs compared by preference (evaluators.stats.sequential, ``preference``).
PREFERENCE_RANGE = (0.0, 1.0)


def _fail(message: str) -> CommandError:
    return CommandError(message, returncode=2)


def parse_budgets(text: str) -> tuple[float, ...]:
    """``10,20,…,90`` (percent) → (0.1, 0.2, …); each in (0, 100], increasing."""
    values = []
    for part in text.split(","):
        try:
            value = float(part.strip())
        except ValueError:
            raise _fail(f"--budgets: {part.strip()!r} is not a number (percentages such as 10,20,30)") from None
        if not 0 < value <= 100:
            raise _fail(f"--budgets: {value:g} is not a percentage above 0 and at most 100")
        values.append(value / 100)
    if values != sorted(set(values)):
        raise _fail("--budgets: give increasing percentages without repeats")
    return tuple(values)


class Command(BaseCommand):
    help = ("Replay a complete human evaluation (every item judged for every system): the ranking a study on "
            "the first items of each selection method would have given, against all the data — soft pairwise "
            "accuracy, top accuracy, pairwise accuracy, Kendall's tau, judgments used — and each method's "
            "parity with random selection (the share of items it needs to match random's accuracy).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="The data: an MQM TSV file, a long CSV, or an mt-metrics-eval directory.")
        parser.add_argument("--format", required=True, choices=FORMATS,
                            help="mqm-tsv (Google's MQM release), scores (long CSV system,segment,scorer,score), "
                                 "export (this tool's export_judgments CSV/JSONL of a score or MQM study), "
                                 "appraise-csv (Appraise's score export), mtme (a directory of NAME.seg.score "
                                 "files).")
        parser.add_argument("--human", default="human", metavar="NAME",
                            help="scores/mtme: the scorer holding the human scores (default human).")
        parser.add_argument("--metric", metavar="NAME",
                            help="The metric the selection methods read. mqm-tsv: chrF (default) or BLEU, "
                                 "computed against --reference-system; scores/mtme: a scorer of the file.")
        parser.add_argument("--reference-system", metavar="NAME",
                            help="mqm-tsv: the system whose text is the reference of chrF/BLEU (default: the "
                                 "only system named ref…/human…, said in the output).")
        parser.add_argument("--method", action="append", choices=METHODS, metavar="METHOD",
                            help=f"A selection method ({', '.join(METHODS)}); repeat for several. "
                                 f"Default: {', '.join(DEFAULT_METHODS)}.")
        parser.add_argument("--budgets", default="10,20,30,40,50,60,70,80,90", metavar="P,P,…",
                            help="Percentages of the items (default 10,20,…,90, as subset2evaluate).")
        parser.add_argument("--seeds", type=int, default=100, metavar="N",
                            help="Seeds of the random method (default 100); the mean and 95%% CI are shown.")
        parser.add_argument("--permutations", type=int, default=PERMUTATIONS, metavar="N",
                            help=f"Permutations of the paired test behind SPA (default {PERMUTATIONS}, "
                                 "subset2evaluate's).")
        parser.add_argument("--null", action="store_true",
                            help="Shuffle the system labels within each item first (seed 0): no true differences.")
        parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")
        parser.add_argument("--allocation", choices=tuple(POLICIES),
                            help="Replay allocation instead of selection: uniform (every system on items in a "
                                 "random order) or adaptive (also runs uniform, to compare); judgments until the "
                                 "confidence sequences reach the decisions of all the data.")
        parser.add_argument("--alpha", type=float, default=0.05,
                            help="--allocation: family-wise level over the system pairs (default 0.05).")
        parser.add_argument("--min-effect", type=float, metavar="DELTA",
                            help="--allocation: a pair whose interval lies within (-DELTA, DELTA) is "
                                 "indistinguishable (score scale; default: no such decision).")
        parser.add_argument("--target", choices=TARGETS, default="all",
                            help="--allocation: the pairs to settle: all (default) or top (the pairs of two "
                                 "systems not yet decided worse than another, i.e. the top cluster).")
        parser.add_argument("--warmup", type=int, default=DEFAULT_WARMUP, metavar="N",
                            help=f"--allocation adaptive: items judged by every system first (default {DEFAULT_WARMUP}).")
        parser.add_argument("--refresh-every", type=int, default=DEFAULT_REFRESH_EVERY, metavar="K",
                            help="--allocation adaptive: the policy looks at its confidence sequences after every "
                                 f"K-th judgment, as a live study's hand-out does (its allocation.refresh_every; "
                                 f"default {DEFAULT_REFRESH_EVERY}; 1: after each).")
        parser.add_argument("--score-range", metavar="LOW,HIGH",
                            help="--allocation: the bounds every human score lies in, known before the study "
                                 "(default for mqm-tsv -25,0; required for scores/mtme, e.g. 0,100).")

    def handle(self, *args: Any, **opts: Any) -> None:
        #: The human scores' bounds when the data says them (an export's protocol), before the format's default.
        self._known_range: tuple[float, float] | None = None
        #: The human values order the candidates only (an export of ranks or choices): compare their signs.
        self._preference = False
        budgets = parse_budgets(opts["budgets"])
        if not 1 <= opts["seeds"] <= MAX_SEEDS:
            raise _fail(f"--seeds: between 1 and {MAX_SEEDS}")
        if not 10 <= opts["permutations"] <= 100_000:
            raise _fail("--permutations: between 10 and 100000")
        data, texts, notes, metric = self._load(opts)
        if opts["allocation"]:
            self._allocation(data, notes, opts)
            return
        if opts["null"]:
            data = data.shuffled_systems(np.random.default_rng(0))
            notes.append("null: system labels shuffled within each item (seed 0), so no system is truly better")
        methods = tuple(dict.fromkeys(opts["method"] or DEFAULT_METHODS))
        if "random" not in methods:
            methods = ("random", *methods)  # parity is measured against random
        if any(m in SCORE_METHODS for m in methods) and metric is None:
            raise _fail("--metric: the file has no metric scores for the metric-based methods "
                        "(mqm-tsv: give --reference-system; scores/mtme: add a scorer)")
        if "diversity" in methods and texts is None:
            raise _fail("--method diversity: needs the candidates' texts (only --format mqm-tsv has them)")
        replayer = Replayer(data, permutations=opts["permutations"])

        def ordering(method: str) -> Any:
            def order(d: CompleteData, seed: int) -> list[int]:
                scores = d.metrics[metric] if metric is not None else d.human
                per_item = [[texts[s][i] for s in d.systems] for i in range(len(d.items))] if texts else None
                try:
                    utilities = item_utilities(method, scores=scores, texts=per_item, seed=seed)
                except SelectionInputError as exc:
                    raise _fail(str(exc)) from None
                position = {item: k for k, item in enumerate(d.items)}
                return [position[r.segment] for r in rank_items(list(d.items), utilities)]
            return order

        results: list[MethodReplay] = []
        random_run = replay_method(replayer, ordering("random"), method="random", seeds=opts["seeds"],
                                   budgets=budgets)
        targets = [p["spa"] for p in random_run.points]
        results.append(MethodReplay("random", random_run.seeds, random_run.points, 1.0))
        for method in methods:
            if method != "random":
                results.append(replay_method(replayer, ordering(method), method=method, seeds=1,
                                             budgets=budgets, targets=targets))
        report = {"file": str(opts["file"]), "format": opts["format"], "metric": metric,
                  "systems": len(data.systems), "items": len(data.items), "dropped_items": len(data.dropped_items),
                  "permutations": opts["permutations"], "null": opts["null"], "notes": notes,
                  "methods": [{"method": r.method, "seeds": r.seeds, "parity": r.parity, "points": r.points}
                              for r in results]}
        if opts["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        self._print(report)

    def _allocation(self, data: CompleteData, notes: list[str], opts: dict[str, Any]) -> None:
        low, high = PREFERENCE_RANGE if self._preference else self._score_range(opts)
        if self._preference and opts["score_range"] is not None:
            raise _fail("--score-range: an export of ranks or choices is compared by preference (its range is "
                        "fixed); leave --score-range out")
        bad = np.argwhere((data.human < low) | (data.human > high)) if not self._preference else np.empty((0, 2))
        if len(bad):
            s, i = bad[0]
            raise _fail(f"--score-range: system {data.systems[s]!r}, item {data.items[i]!r} has the human score "
                        f"{data.human[s, i]:g}, outside [{low:g}, {high:g}] ({len(bad)} score(s) outside)")
        try:
            config = SequentialConfig(low=low, high=high, alpha=opts["alpha"], min_effect=opts["min_effect"],
                                      preference=self._preference)
        except ValueError as exc:
            raise _fail(f"--alpha/--min-effect/--score-range: {exc}") from None
        if opts["warmup"] < 0:
            raise _fail("--warmup: at least 0 items")
        if opts["refresh_every"] < 1:
            raise _fail("--refresh-every: at least 1 judgment")
        policies = ("uniform", "adaptive") if opts["allocation"] == "adaptive" else ("uniform",)
        replay = replay_allocation(data.human, config, policies=policies, seeds=opts["seeds"],
                                   warmup=opts["warmup"], null=opts["null"], target=opts["target"],
                                   refresh_every=opts["refresh_every"])
        if opts["null"]:
            notes.append("null: system labels shuffled within each item, anew for each seed; any 'better' "
                         "decision is false")
        report = {"file": str(opts["file"]), "format": opts["format"], "systems": len(data.systems),
                  "items": len(data.items), "dropped_items": len(data.dropped_items), "allocation": opts["allocation"],
                  "alpha": config.alpha, "min_effect": config.min_effect, "score_range": [low, high],
                  "warmup": opts["warmup"], "refresh_every": opts["refresh_every"], "target": opts["target"],
                  "pairs": len(replay.pairs), "notes": notes,
                  **summarise(replay, data.systems)}
        if opts["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        self._print_allocation(report)

    def _score_range(self, opts: dict[str, Any]) -> tuple[float, float]:
        text = opts["score_range"]
        if text is None:
            known = self._known_range or FORMAT_RANGES.get(opts["format"])
            if known is not None:
                return known
            raise _fail("--score-range LOW,HIGH: required with --allocation for scores/mtme (the bounds of "
                        "the human scores, e.g. 0,100)")
        parts = text.split(",")
        try:
            low, high = (float(p) for p in parts)
        except ValueError:
            raise _fail(f"--score-range: {text!r} is not LOW,HIGH (two numbers)") from None
        if not low < high:
            raise _fail(f"--score-range: {low:g} is not below {high:g}")
        return low, high

    def _print_allocation(self, report: dict[str, Any]) -> None:
        out = self.stdout.write
        delta = f", indistinguishable within ±{report['min_effect']:g}" if report["min_effect"] else ""
        out(f"{report['systems']} systems × {report['items']} items, {report['pairs']} pairs; "
            f"family-wise α {report['alpha']:g}{delta}; scores in [{report['score_range'][0]:g}, "
            f"{report['score_range'][1]:g}]; {report['seeds']} seeds")
        if report["allocation"] == "adaptive":
            every = report["refresh_every"]
            out(f"  adaptive: warm-up {report['warmup']} items; the policy looks at its sequences "
                + (f"once every {every} judgments (the live hand-out's refresh_every)" if every > 1
                   else "after each judgment"))
        for note in report["notes"]:
            out(f"  {note}")
        if not report["null"]:
            ref = report["reference_decisions"]
            what = "systems out of the top cluster" if report["target"] == "top" else "pairs decided"
            out(f"  the reference, a full uniform pass in each seed's order: {ref['mean']:.1f} {what} on average")
            out(f"  an oracle knowing the reference in advance: {report['oracle_judgments']['mean']:.0f} judgments")
        for name, entry in report["policies"].items():
            out(f"\n{name}")
            if report["null"]:
                out(f"  runs with a false decision: {entry['false_decision_runs']} of {report['seeds']} "
                    f"({entry['false_decision_share']:.1%}); judgments {entry['judgments_total']['mean']:.0f}")
            else:
                j = entry["judgments_to_reference"]
                reached = f"{j['mean']:.0f} [{j['low']:.0f}, {j['high']:.0f}]" if j else "never"
                out(f"  judgments to reach the reference decisions: {reached} (reached in "
                    f"{entry['reached_share']:.0%} of seeds; contradictions {entry['contradictions']})")
            per_system = ", ".join(f"{s} {v:.0f}" for s, v in entry["per_system"].items())
            out(f"  judgments per system: {per_system}")
            busiest = sorted(entry["per_pair"].items(), key=lambda kv: -kv[1])[:5]
            out("  most observed pairs: " + ", ".join(f"{k} {v:.0f}" for k, v in busiest))
        if "saving" in report:
            out(f"\nsaving of adaptive over uniform: {report['saving']:.1%} (the oracle's: {report['oracle_saving']:.1%})")

    def _load(self, opts: dict[str, Any]) -> tuple[CompleteData, dict[str, list[str]] | None, list[str], str | None]:
        path, fmt = Path(opts["file"]), opts["format"]
        notes: list[str] = []
        try:
            if fmt == "mtme":
                return self._from_table(read_mtme_dir(path, opts["human"]), opts, notes)
            content = read_text_file(str(path), returncode=2)
            if fmt == "scores":
                return self._from_table(read_long_csv(path.name, content), opts, notes)
            if fmt in ("export", "appraise-csv"):
                return self._from_judgments(path.name, content, fmt, opts, notes)
            # Scores need no span offsets, so an unclosed <v> marker (the TED release has one) is closed at the end.
            parsed = parse_mqm_tsv(content, source=path.name, unclosed="close_at_end")
        except (ScoreTableError, MqmTsvError, ReplayDataError) as exc:
            raise _fail(str(exc)) from None
        systems = list(dict.fromkeys(s.system for s in parsed.segments))
        reference = opts["reference_system"]
        if reference is None:
            candidates = reference_candidates(systems)
            if len(candidates) == 1:
                reference = candidates[0]
                notes.append(f"reference of chrF/BLEU: system {reference!r} (the only system named ref…/human…; "
                             "--reference-system to choose another)")
        metric = opts["metric"] or ("chrF" if reference else None)
        if metric is not None and metric not in TEXT_METRICS:
            raise _fail(f"--metric: {metric!r}: an MQM file's replay computes {', '.join(TEXT_METRICS)}")
        try:
            data, texts = from_mqm(parsed, reference_system=reference)
        except ReplayDataError as exc:
            raise _fail(str(exc)) from None
        notes.append("human score: minus the MQM score (WMT weights), averaged over the item's raters")
        if data.dropped_items:
            notes.append(f"{len(data.dropped_items)} item(s) left out: not rated for every system")
        return data, texts, notes, metric

    def _from_judgments(self, name: str, content: str, fmt: str, opts: dict[str, Any],
                        notes: list[str]) -> tuple[CompleteData, None, list[str], str | None]:
        """This tool's export or Appraise's CSV, read by the importers (``import_judgments``'s parsers): the
        human score of a (system, item) is the mean of its raters' scores; controls, excluded annotators and
        superseded revisions are left out. No metric: the selection methods other than random need one."""
        if opts["metric"] is not None:
            raise _fail(f"--metric: a replay of --format {fmt} has no metric scores (export them with "
                        "`score`/`evaluate` and replay --format scores)")
        try:
            if fmt == "appraise-csv":
                parsed, _ = parse_appraise(name, content)
                # TGT rows are the systems' scores, REF rows the reference's; BAD and CHK rows score controls.
                cells = [(row.system, row.segment, row.score) for row in parsed if row.kind in ("TGT", "REF")]
                notes.append("human score: the DA score (0–100) of TGT and REF rows, averaged over annotators; "
                             "BAD and CHK (control) rows left out")
            else:
                rows = [row for row in parse_export(name, content)
                        if row.is_current and not row.excluded and not row.is_spam and not row.is_spam_candidate]
                cells = self._export_cells(fmt, rows, notes)
            data = from_cells(cells)
        except JudgmentImportError as exc:
            raise _fail("\n".join(exc.errors)) from None
        except ReplayDataError as exc:
            raise _fail(f"{name}: {exc}") from None
        if data.dropped_items:
            notes.append(f"{len(data.dropped_items)} item(s) left out: no human score for every system")
        return data, None, notes, None

    def _export_cells(self, fmt: str, rows: list[Any], notes: list[str]) -> list[tuple[str, str, float]]:
        """A score per (rater, system, item) of an export: the 0–100 score of ESA/DA/pairwise rows, or minus the
        MQM score of an MQM row's spans (WMT weights, capped at 25 as in the live study); else an error."""
        if any(row.score is not None for row in rows):
            self._known_range = (0.0, 100.0)
            notes.append("human score: the candidates' 0–100 scores, averaged over annotators (controls, excluded "
                         "annotators and earlier revisions left out)")
            return [(row.system, row.item, float(row.score)) for row in rows if row.score is not None]
        if any(row.spans is not None for row in rows):
            weights = weights_from(None)
            self._known_range = MQM_RANGE
            notes.append("human score: minus the MQM score of each candidate's spans (WMT weights, capped at 25), "
                         "averaged over annotators (controls, excluded annotators and earlier revisions left out)")
            return [(row.system, row.item, -min(MQM_RANGE[1] - MQM_RANGE[0], sum(
                        weights.weight(span.get("category", ""), span.get("severity", "")) for span in row.spans)))
                    for row in rows if row.spans is not None]
        if any(row.rank is not None for row in rows):
            self._preference = True
            notes.append("human value: minus the candidate's rank (1 = best), averaged over annotators; adaptive "
                         "allocation compares a pair by the sign of the difference, a preference (1 + sign)/2")
            return [(row.system, row.item, -float(row.rank)) for row in rows if row.rank is not None]
        if any(row.choice for row in rows):
            self._preference = True
            notes.append("human value: 1 for the chosen candidate, 0 for the others (an option such as a tie: 0 for "
                         "all), averaged over annotators; adaptive allocation compares a pair by the sign of the "
                         "difference, a preference (1 + sign)/2")
            return [(row.system, row.item, 1.0 if row.system == row.choice else 0.0) for row in rows if row.choice]
        protocols = ", ".join(sorted({row.protocol for row in rows if row.protocol})) or "labels"
        raise _fail(f"--format {fmt}: a replay needs a score per candidate (an ESA, DA, pairwise-score or MQM "
                    f"export) or an order of the candidates (a ranking or choice export); this export ({protocols}) "
                    f"has neither")

    def _from_table(self, table: Any, opts: dict[str, Any],
                    notes: list[str]) -> tuple[CompleteData, None, list[str], str | None]:
        data = from_score_table(table, human=opts["human"])
        metric = opts["metric"]
        if metric is not None and metric not in data.metrics:
            known = ", ".join(sorted(data.metrics)) or "none"
            raise _fail(f"--metric: no complete scores of {metric!r} on the replayed items; metrics: {known}")
        if metric is None and len(data.metrics) == 1:
            metric = next(iter(data.metrics))
            notes.append(f"metric: {metric!r} (the file's only metric)")
        if data.dropped_items:
            notes.append(f"{len(data.dropped_items)} item(s) left out: no human score for every system")
        return data, None, notes, metric

    def _print(self, report: dict[str, Any]) -> None:
        out = self.stdout.write
        out(f"{report['systems']} systems × {report['items']} items; metric: {report['metric'] or '—'}; "
            f"SPA from {report['permutations']} permutations")
        for note in report["notes"]:
            out(f"  {note}")
        for run in report["methods"]:
            seeds = f" (mean of {run['seeds']} seeds, 95% CI)" if run["seeds"] > 1 else ""
            parity = f"; parity with random {run['parity']:.3f}" if run["parity"] is not None else ""
            out(f"\n{run['method']}{seeds}{parity}")
            out(f"  {'budget':>6} {'items':>5} {'judgments':>9} {'SPA':>19} {'top':>6} {'pair acc':>8} {'tau':>6}")
            for p in run["points"]:
                spa = f"{p['spa']:.4f}"
                if "spa_low" in p:
                    spa += f" [{p['spa_low']:.3f}, {p['spa_high']:.3f}]"
                out(f"  {p['budget']:>6.0%} {p['items']:>5} {p['judgments']:>9} {spa:>19} {p['top']:>6.3f} "
                    f"{p['pairwise_accuracy']:>8.3f} {p['kendall_tau']:>6.3f}")
