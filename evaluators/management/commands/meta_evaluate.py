"""``meta_evaluate --scores FILE | --mtme-dir DIR``: which metric agrees best with the humans, as WMT measures it.

Statistics: evaluators/stats/meta.py; file layouts: formats/mtme.py;
definitions and sources: docs/statistics.md ("Meta-evaluation").
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from formats.mtme import ScoreTableError, read_long_csv, read_mtme_dir
from evaluators.stats.meta import CLUSTER_STATISTICS, MetaSettings, meta_evaluate


def _fail(message: str) -> CommandError:
    return CommandError(message, returncode=2)


class Command(BaseCommand):
    help = ("Meta-evaluate metrics against human scores as mt-metrics-eval does: system-level pairwise accuracy, "
            "Pearson, Kendall, Spearman and SPA; segment-level acc_eq with tie calibration, Pearson, Kendall; "
            "PERM-BOTH clusters. Input: a long CSV system,segment,scorer,score (--scores) or mt-metrics-eval's "
            "*.seg.score/*.sys.score files (--mtme-dir).")

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--scores", metavar="FILE", help="Long CSV with columns system,segment,scorer,score.")
        source.add_argument("--mtme-dir", metavar="DIR", help="A folder of <scorer>.seg.score / .sys.score files.")
        parser.add_argument("--human", default="human", metavar="NAME",
                            help="The scorer holding the human scores (default: human).")
        parser.add_argument("--lower-is-better", action="append", default=[], metavar="NAME",
                            help="A metric whose lower scores are better (TER); repeat for several.")
        parser.add_argument("--seed", type=int, default=4, help="Seed of SPA's permutations and PERM-BOTH (default 4).")
        parser.add_argument("--resamples", type=int, default=1000,
                            help="SPA permutations and PERM-BOTH resamples (default 1000).")
        parser.add_argument("--cluster-statistic", default="system:pairwise_accuracy", choices=CLUSTER_STATISTICS,
                            help="The statistic PERM-BOTH ranks metrics by (default system:pairwise_accuracy).")
        parser.add_argument("--p-threshold", type=float, default=0.05, help="Significance level of the clusters.")
        parser.add_argument("--json", action="store_true", help="Print JSON ({\"meta\": {...}}).")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["resamples"] < 1 or opts["resamples"] > 100_000:
            raise _fail("--resamples: between 1 and 100000")
        if not 0 <= opts["seed"] < 2 ** 32:
            raise _fail("--seed: between 0 and 2^32 - 1")
        if not 0 < opts["p_threshold"] < 1:
            raise _fail("--p-threshold: between 0 and 1")
        human = opts["human"]
        try:
            if opts["scores"]:
                path = Path(opts["scores"])
                if not path.is_file():
                    raise _fail(f"{path}: no such file")
                try:
                    content = path.read_text(encoding="utf-8")
                except UnicodeDecodeError as exc:
                    line = path.read_bytes()[:exc.start].count(b"\n") + 1
                    raise _fail(f"{path}: line {line}: not UTF-8")
                table = read_long_csv(str(path), content)
            else:
                table = read_mtme_dir(Path(opts["mtme_dir"]), human)
        except ScoreTableError as exc:
            raise _fail(f"{len(exc.errors)} error(s), nothing computed:\n  " + "\n  ".join(exc.errors))
        if human not in table.seg:
            raise _fail(f"--human: no scorer {human!r}; scorers: {', '.join(table.scorers)}")
        unknown = [n for n in opts["lower_is_better"] if n not in table.seg]
        if unknown:
            raise _fail(f"--lower-is-better: unknown scorer(s) {', '.join(unknown)}; scorers: {', '.join(table.scorers)}")
        metrics = {name: m for name, m in table.seg.items() if name != human}
        if not metrics:
            raise _fail(f"no metric besides the human scores {human!r}")
        if len(table.systems) < 2:
            raise _fail("at least two systems are needed")
        settings = MetaSettings(seed=opts["seed"], resamples=opts["resamples"],
                                cluster_statistic=opts["cluster_statistic"], p_threshold=opts["p_threshold"])
        result = meta_evaluate(human_seg=table.seg[human], metrics_seg=metrics,
                               lower_is_better=opts["lower_is_better"], human_sys=table.sys.get(human),
                               metrics_sys={n: v for n, v in table.sys.items() if n != human}, settings=settings)
        meta = result.as_dict()
        meta["settings"] = {**meta["settings"], "human": human, "n_systems": len(table.systems),
                            "n_segments": len(table.segments)}
        if opts["json"]:
            self.stdout.write(json.dumps({"meta": meta}, indent=1))
            return
        self._print(meta)

    def _print(self, meta: dict[str, Any]) -> None:
        def f(v: Any) -> str:
            return "   -   " if v is None else f"{v:7.4f}"

        self.stdout.write(f"System level ({meta['settings']['n_systems']} systems)")
        self.stdout.write(f"{'metric':24} {'acc':>7} {'pearson':>7} {'kendall':>7} {'spearman':>8} {'spa':>7}")
        for name, row in meta["system"].items():
            self.stdout.write(f"{name:24} {f(row['pairwise_accuracy'])} {f(row['pearson'])} {f(row['kendall'])} "
                              f" {f(row['spearman'])} {f(row['spa'])}")
        self.stdout.write(f"\nSegment level ({meta['settings']['n_segments']} segments)")
        self.stdout.write(f"{'metric':24} {'acc_eq':>7} {'eps':>9} {'pearson':>7} {'kendall':>7}")
        for name, row in meta["segment"].items():
            self.stdout.write(f"{name:24} {f(row['acc_eq'])} {row['acc_eq_threshold']:9.4g} {f(row['pearson'])} "
                              f"{f(row['kendall'])}")
        self.stdout.write(f"\nClusters by {meta['settings']['cluster_statistic']} (PERM-BOTH, "
                          f"{meta['settings']['resamples']} resamples, p <= {meta['settings']['p_threshold']})")
        for row in meta["clusters"]:
            self.stdout.write(f"  {row['rank']:>2}  {row['metric']:24} {f(row['value'])}")
        for note in meta["notes"]:
            self.stdout.write(f"note: {note}")
