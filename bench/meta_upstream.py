"""Check evaluators.stats.meta against Google's mt-metrics-eval on generated data.

Not part of ``make test``: it needs a checkout of mt-metrics-eval (not vendored
here; checked at commit 68a481a), e.g.::

    git clone https://github.com/google-research/mt-metrics-eval /tmp/mtme
    .venv/bin/pip install dacite   # imported by mt-metrics-eval (not a requirement of this project)
    .venv/bin/python bench/meta_upstream.py --mtme /tmp/mtme [--systems 8 --segments 300]

Data: ``--systems`` systems x ``--segments`` segments; human scores on a
coarse grid (many ties) with ~10% missing; six metrics of varying quality, one
of them lower-is-better (negated for upstream, which assumes higher is better),
one with coarse scores (metric ties). Compared: system-level pairwise accuracy,
Pearson, Kendall tau-b, Spearman (1e-9), segment-level acc_eq with the optimal
tie threshold averaged per item (value and threshold, 1e-9), segment-level
Pearson and Kendall without grouping (1e-9), SPA (same seed and permutations:
equal), and the PERM-BOTH clusters of system-level pairwise accuracy (both run
with 1,000 resamples; clusters compared, p-values printed side by side).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluators.stats import meta  # noqa: E402


def generate(n_sys: int, n_seg: int, seed: int) -> tuple[np.ndarray, dict[str, np.ndarray], list[str]]:
    rng = np.random.default_rng(seed)
    quality = np.linspace(0, 1, n_sys)[:, None]
    latent = quality + rng.normal(0, 0.6, size=(n_sys, n_seg))
    human = np.round(np.clip(latent * 25 + 50, 0, 100) / 5) * 5  # coarse: ties
    human[rng.random(size=human.shape) < 0.1] = np.nan
    metrics = {
        "good": latent + rng.normal(0, 0.3, size=latent.shape),
        "fair": latent + rng.normal(0, 0.8, size=latent.shape),
        "poor": rng.normal(0, 1, size=latent.shape) + 0.2 * quality,
        "coarse": np.round(latent + rng.normal(0, 0.4, size=latent.shape)),
        "ter_like": -(latent + rng.normal(0, 0.5, size=latent.shape)) * 10 + 50,
        "fair2": latent + rng.normal(0, 0.7, size=latent.shape),
    }
    return human, metrics, ["ter_like"]


def upstream(mtme: Path):
    import types

    sys.path.insert(0, str(mtme))
    # data.py imports Apache Beam for its optional parallel mode only (not used here).
    sys.modules.setdefault("apache_beam", types.ModuleType("apache_beam"))
    from mt_metrics_eval import data, pce, stats  # type: ignore[import-not-found]
    return data, pce, stats


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mtme", required=True, type=Path, help="A checkout of google-research/mt-metrics-eval.")
    parser.add_argument("--systems", type=int, default=8)
    parser.add_argument("--segments", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    data, pce, stats = upstream(args.mtme)
    human, metrics, lower = generate(args.systems, args.segments, args.seed)
    oriented = {k: (-v if k in lower else v) for k, v in metrics.items()}
    t = time.perf_counter()
    ours = meta.meta_evaluate(human_seg=human, metrics_seg=metrics, lower_is_better=lower,
                              settings=meta.MetaSettings(seed=4, resamples=1000))
    ours_s = time.perf_counter() - t
    worst = 0.0
    failures = []

    def check(label: str, a: float | None, b: float) -> None:
        nonlocal worst
        if a is None and (b is None or np.isnan(b)):
            return
        diff = abs(float(a) - float(b))  # type: ignore[arg-type]
        worst = max(worst, diff)
        if not diff <= 1e-9:
            failures.append(f"{label}: ours {a!r} upstream {b!r}")

    gold_none = [None if np.isnan(x) else float(x) for x in human.ravel()]  # sys-major packing, as upstream
    h_sys = meta.system_scores(human)
    t = time.perf_counter()
    for name, m in oriented.items():
        m_sys = meta.system_scores(m)
        agree, pairs = stats.Agreement(list(h_sys), list(m_sys))
        check(f"{name} system pairwise_accuracy", ours.system[name]["pairwise_accuracy"], agree / pairs)
        corr = stats.Correlation(len(h_sys), list(h_sys), list(m_sys))
        check(f"{name} system pearson", ours.system[name]["pearson"], corr.Pearson()[0])
        check(f"{name} system kendall", ours.system[name]["kendall"], corr.Kendall()[0])
        check(f"{name} system spearman", ours.system[name]["spearman"], corr.Spearman()[0])
        seg = stats.Correlation(human.shape[0], gold_none, list(m.ravel()))
        tau, eps, _ = stats.KendallWithTiesOpt(gold_none, list(m.ravel()), variant="acc23", num_sys=human.shape[0],
                                               average_by="item", sample_rate=1.0)
        check(f"{name} segment acc_eq", ours.segment[name]["acc_eq"], tau)
        check(f"{name} segment acc_eq threshold", ours.segment[name]["acc_eq_threshold"], eps)
        check(f"{name} segment pearson", ours.segment[name]["pearson"], seg.Pearson()[0])
        check(f"{name} segment kendall", ours.segment[name]["kendall"], seg.Kendall()[0])
        full = np.all(~np.isnan(human), axis=0)
        ph = pce.compute_pairwise_p_values(human[:, full], num_permutations=1000, seed=4)
        pm = pce.compute_pairwise_p_values(m[:, full], num_permutations=1000, seed=4)
        check(f"{name} spa", ours.system[name]["spa"], pce.compute_one_minus_pce(ph, pm))
    # PERM-BOTH clusters of system-level pairwise accuracy, upstream's CompareMetrics machinery.
    np.random.seed(4)
    corrs = {name: stats.Correlation(len(h_sys), list(h_sys), list(meta.system_scores(m))) for name, m in oriented.items()}

    def accuracy(v1, v2):
        a, p = stats.Agreement(v1, v2)
        return a / p, p

    ranks, sig, _, _ = data.CompareMetrics(corrs, accuracy, "none", k=1000)
    up_s = time.perf_counter() - t
    ours_clusters = {row["metric"]: row["rank"] for row in ours.clusters}
    print(f"{'metric':10} {'ours acc':>9} {'rank':>4}   {'upstream acc':>12} {'rank':>4}")
    for name, (value, rank) in ranks.items():
        print(f"{name:10} {ours.system[name]['pairwise_accuracy']:9.4f} {ours_clusters[name]:4d}   {value:12.4f} {rank:4d}")
    order = list(ranks)
    print("PERM-BOTH p-values (ours | upstream), rows/columns in upstream's order:")
    for i, a in enumerate(order):
        cells = []
        for j, b in enumerate(order):
            if j <= i:
                continue
            ours_p = ours.sig_matrix.get(a, {}).get(b, ours.sig_matrix.get(b, {}).get(a))
            cells.append(f"{b}: {ours_p:.3f} | {sig[i, j]:.3f}")
        if cells:
            print(f"  {a}: " + "; ".join(cells))
    if [r for _, r in ranks.values()] != [ours_clusters[n] for n in ranks]:
        failures.append("PERM-BOTH clusters differ: " + str({n: (ours_clusters[n], r) for n, (_, r) in ranks.items()}))
    print(f"\nlargest difference of a deterministic figure: {worst:.3g}")
    print(f"time: ours {ours_s:.2f} s (everything, 1,000 resamples), upstream {up_s:.2f} s (same statistics)")
    for failure in failures:
        print("MISMATCH", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
