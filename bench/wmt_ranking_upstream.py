"""Check evaluators.stats.wmt_ranking against Appraise's ComputeWMT23Results on generated DA data.

Not part of ``make test``: it needs a checkout of Appraise (not vendored; checked at commit 612e4b0)::

    git clone https://github.com/AppraiseDev/Appraise /tmp/appraise
    .venv/bin/python bench/wmt_ranking_upstream.py --appraise /tmp/appraise [--systems 10 --segments 200]

Appraise's command is run on its own CSV input (``--csv-file``: annotator, system, segment, type,
source language, target language, score), with its Django models stubbed out (only the CSV path
is used), and its printed table (rank ranges, mean scores, cluster lines) and ``--show-p-values``
lines are compared with ours.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluators.stats.wmt_ranking import wmt_ranking  # noqa: E402


def generate(n_sys: int, n_seg: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    quality = rng.normal(0, 8, size=n_sys)
    rows = []
    for seg in range(n_seg):
        difficulty = rng.normal(0, 10)
        for s in range(n_sys):
            if rng.random() < 0.15:
                continue  # not every system is scored on every segment
            for _ in range(1 + int(rng.random() < 0.2)):  # some segments judged twice
                annotator = f"u{rng.integers(0, 12)}"
                bias = (int(annotator[1:]) - 6) * 2
                score = int(np.clip(round(65 + quality[s] + difficulty + bias + rng.normal(0, 15)), 0, 100))
                rows.append((annotator, f"sys{s:02d}", f"{seg}", score))
    return pd.DataFrame(rows, columns=["annotator", "system", "segment", "score"])


def run_appraise(appraise: Path, csv_path: Path) -> str:
    sys.path.insert(0, str(appraise))
    for name in ("Campaign.models", "Dashboard.models", "EvalData.models", "django.contrib.auth.models"):
        module = types.ModuleType(name)
        sys.modules[name] = module
    sys.modules["Campaign.models"].Campaign = object  # type: ignore[attr-defined]
    sys.modules["Dashboard.models"].LANGUAGE_CODES_AND_NAMES = {  # type: ignore[attr-defined]
        "eng": "English", "deu": "German"}
    sys.modules["EvalData.models"].DirectAssessmentResult = object  # type: ignore[attr-defined]
    sys.modules["django.contrib.auth.models"].User = object  # type: ignore[attr-defined]
    sys.modules["EvalData.models"].DirectAssessmentTask = object  # type: ignore[attr-defined]
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "compute_wmt23", appraise / "Campaign" / "management" / "commands" / "ComputeWMT23Results.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = io.StringIO()
    command = module.Command(stdout=out)
    with contextlib.redirect_stdout(out):
        command.handle(campaign_name="x", completed_only=False, csv_file=str(csv_path), exclude_ids=None,
                       task_type="Direct", no_sigtest=False, show_p_values=True, combo_systems="none",
                       combo_refs="none", use_ar=False, wmt22_format=False)
    return out.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--appraise", required=True, type=Path)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--segments", type=int, default=200)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    frame = generate(args.systems, args.segments, args.seed)
    csv_path = Path("/tmp/wmt_ranking_upstream.csv")
    with csv_path.open("w") as fh:
        for r in frame.itertuples(index=False):
            fh.write(f"{r.annotator},{r.system},{r.segment},TGT,eng,deu,{r.score}\n")
    text = run_appraise(args.appraise, csv_path)
    ours = wmt_ranking(frame)
    failures = []
    # Appraise's LaTeX rows: "\Uncon{} & RANKS & SCORE & SYSTEM\\" with " \hline" after a cluster's last system.
    rows = re.findall(r"\\Uncon\{\} & ([0-9-]+) & ([0-9.]+) & (\S+?)\\\\( \\hline)?", text)
    up_order = [r[2].replace("\\_", "_") for r in rows]
    our_order = [s["system"] for s in ours.systems]
    if up_order != our_order:
        failures.append(f"order differs: ours {our_order} upstream {up_order}")
    clusters, c = {}, 1
    for ranks, score, system, hline in rows:
        system = system.replace("\\_", "_")
        clusters[system] = c
        if hline:
            c += 1
        mine = next(s for s in ours.systems if s["system"] == system)
        lo, hi = mine["rank_range"]
        if ranks != (str(lo) if lo == hi else f"{lo}-{hi}"):
            failures.append(f"{system}: rank range ours {lo}-{hi} upstream {ranks}")
        if f"{mine['score']:.1f}" != score:
            failures.append(f"{system}: score ours {mine['score']:.1f} upstream {score}")
    for s in ours.systems:
        if clusters.get(s["system"]) != s["cluster"]:
            failures.append(f"{s['system']}: cluster ours {s['cluster']} upstream {clusters.get(s['system'])}")
    # p-values: "  sysA>  sysB p t_stat bool" lines printed with --show-p-values
    worst = 0.0
    ups = {(a.strip(), b.strip()): float(p) for a, b, p in
           re.findall(r"^\s*(\S+)>\s*(\S+) ([0-9.]+)\s", text, flags=re.M)}
    for h in ours.head_to_head:
        up = ups.get((h["better"], h["worse"]))
        if up is None:
            failures.append(f"no upstream p-value for {h['better']} > {h['worse']}")
            continue
        worst = max(worst, abs(up - h["p_value"]))
    if worst > 1e-12:
        failures.append(f"largest p-value difference {worst:.3g}")
    print(f"{len(our_order)} systems, {len(frame)} scores from {frame['annotator'].nunique()} annotators")
    for s in ours.systems:
        print(f"  cluster {s['cluster']}  {s['rank_range'][0]}-{s['rank_range'][1]}  {s['system']}  "
              f"raw {s['score']:.2f}  z {s['z']:+.3f}  wins {s['wins']}")
    print(f"largest p-value difference from Appraise: {worst:.3g}; "
          f"{len(ours.head_to_head)} pairs compared")
    for f in failures:
        print("MISMATCH", f)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
