"""Reproduce the system MQM scores of Google's WMT21 TED talks en->de release.

Not part of ``make test`` (the release file is not in this repository).
Get the file from https://github.com/google/wmt-mqm-human-evaluation
(``ted/ende/mqm_ted_ende.tsv``, Apache-2.0; checked at commit 7fadea2),
then::

    .venv/bin/python bench/mqm_release.py PATH/TO/wmt-mqm-human-evaluation      # or the .tsv itself
    .venv/bin/python bench/mqm_release.py FILE --scale 12                        # + timing on ~100,000 rows

It reads the whole file with :func:`formats.mqm_tsv.read_mqm_tsv`
(``unclosed="close_at_end"``: one row of the release, line 6444, opens a
``<v>`` it never closes), scores it with
:mod:`evaluators.stats.mqm` (default WMT weights; segment = mean over raters,
system = mean over segments) and prints every system's score next to the one
published in the release's README ("TED talks / English to German"), with
the rank of each, and whether they agree to the README's two decimals.
``--scale N`` also times reading + scoring a file made of N copies of the
release (documents renamed per copy), the import-speed figure of
``docs/mqm.md``.  ``--through-import`` goes through the product instead of
the reader: the file is imported with ``manage.py import_judgments
--format mqm-tsv --unclosed-spans close-at-end`` into a throwaway SQLite
database, and the system scores printed are those of the stored study's
report (``evaluators.reports.study_stats.study_report(study)["ranking"]
["systems"][*]["score"]``, what ``agreement SLUG --json`` prints), checked
against a direct computation from the stored judgments and against the raw
file's.  Exit status 0 when order and values agree, 1 otherwise.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from formats.mqm_tsv import read_mqm_tsv  # noqa: E402
from evaluators.stats.mqm import WMT_WEIGHTS, bootstrap_system_ci, mqm_segment_scores, system_scores  # noqa: E402

#: README of google/wmt-mqm-human-evaluation, section "TED talks / English to German"
#: (table "expert-based MQM", value(rank)), as published at commit 7fadea2.
PUBLISHED_TED_ENDE: dict[str, float] = {
    "ref.A": 0.91,
    "Facebook-AI": 1.06,
    "Online-W": 1.12,
    "VolcTrans-AT": 1.24,
    "metricsystem3": 1.44,
    "VolcTrans-GLAT": 1.49,
    "HuaweiTSC": 1.50,
    "metricsystem1": 1.63,
    "metricsystem2": 1.69,
    "metricsystem5": 1.72,
    "UEdin": 1.77,
    "metricsystem4": 1.78,
    "eTranslation": 1.96,
    "Nemo": 2.14,
}
#: the data file calls the reference "ref"; the README table "ref.A"
ALIASES = {"ref": "ref.A"}


def locate(arg: str) -> Path:
    p = Path(arg)
    if p.is_dir():
        for cand in (p / "ted" / "ende" / "mqm_ted_ende.tsv", p / "mqm_ted_ende.tsv"):
            if cand.is_file():
                return cand
        raise SystemExit(f"{p}: no ted/ende/mqm_ted_ende.tsv in this directory")
    if not p.is_file():
        raise SystemExit(f"{p}: no such file")
    return p


def score_file(path: Path, *, quiet: bool = False) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, float], int]:
    t0 = time.perf_counter()
    data = read_mqm_tsv(path, unclosed="close_at_end")
    t1 = time.perf_counter()
    rows = pd.DataFrame(data.rows())
    seg = mqm_segment_scores(rows, WMT_WEIGHTS)
    sys_scores = system_scores(seg)
    t2 = time.perf_counter()
    if not quiet:
        for w in data.warnings:
            print(f"note: {w}")
    return rows, sys_scores, {"read_s": t1 - t0, "score_s": t2 - t1}, len(rows)


def through_import(path: Path) -> pd.DataFrame:
    """System scores of the study that ``import_judgments --format mqm-tsv`` makes of ``path`` (see the docstring)."""
    tmp = Path(tempfile.mkdtemp(prefix="mqm-release-"))
    os.environ["SQLITE_PATH"] = str(tmp / "release.sqlite3")
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    try:
        import django

        django.setup()
        from django.core.management import call_command

        from annotation.models import Judgment
        from evaluators.reports.study_stats import study_report
        from studies.models import Candidate, Study

        call_command("migrate", verbosity=0)
        from django.contrib.auth import get_user_model

        get_user_model().objects.get_or_create(username="bench", defaults={"is_staff": True})  # the study's owner
        out = io.StringIO()
        t0 = time.perf_counter()
        call_command("import_judgments", str(path), "--format", "mqm-tsv", "--unclosed-spans", "close-at-end",
                     "--slug", "wmt21-ted-ende", "--user", "bench", stdout=out)
        t1 = time.perf_counter()
        study = Study.objects.get(slug=out.getvalue().strip())
        n_judgments = Judgment.objects.filter(assignment__item__study=study).count()
        refs = sorted(set(Candidate.objects.filter(item__study=study, is_reference=True)
                          .values_list("system", flat=True)))
        print(f"imported as study {study.slug!r} ({study.protocol}, {study.status}) in {t1 - t0:.1f} s: "
              f"{study.items.count()} items, {study.annotators.count()} annotators, {n_judgments} judgments; "
              f"reference systems {refs}")
        report = study_report(study)
        t2 = time.perf_counter()
        scheme = report["ranking"]["score"]
        print(f"report in {t2 - t1:.1f} s; ranking.score: {scheme.get('name')}, aggregate {scheme.get('aggregate')}")
        res = pd.DataFrame([{"system": s["system"], "score": s["score"]} for s in report["ranking"]["systems"]])
        direct = system_scores(mqm_segment_scores(pd.DataFrame(_stored_rows(study)), WMT_WEIGHTS))
        diff = (res.set_index("system")["score"] - direct.set_index("system")["score"]).abs().max()
        print(f"report scores = scores computed directly from the stored judgments (evaluators.stats.mqm): "
              f"max difference {diff:.1e}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res = res.sort_values("score", kind="stable").reset_index(drop=True)
    res["rank"] = range(1, len(res) + 1)
    return res


def _stored_rows(study: Any) -> list[dict[str, object]]:
    """The stored answers as the long table of :mod:`evaluators.stats.mqm` (one row per span, No-error rows)."""
    from annotation.models import Judgment
    from studies.models import Candidate

    system = dict(Candidate.objects.filter(item__study=study).values_list("pk", "system"))
    rows: list[dict[str, object]] = []
    for item, rater, answer in (Judgment.objects.filter(assignment__item__study=study, is_current=True)
                                .values_list("assignment__item_id", "assignment__annotator_id", "answer")):
        for pk, entry in answer["annotations"].items():
            base = {"system": system[int(pk)], "segment": item, "rater": rater}
            spans = entry["spans"]
            rows += [{**base, "category": "No-error", "severity": "No-error"}] if not spans else [
                {**base, "category": s["category"], "severity": s["severity"]} for s in spans]
    return rows


def scaled_copy(path: Path, copies: int, out: Path) -> int:
    lines = path.read_text(encoding="utf-8").split("\n")
    header, body = lines[0], [ln for ln in lines[1:] if ln]
    n = 0
    with out.open("w", encoding="utf-8") as fh:
        fh.write(header + "\n")
        for c in range(copies):
            for ln in body:
                f = ln.split("\t")
                f[1] = f"{f[1]}.copy{c}"
                fh.write("\t".join(f) + "\n")
                n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", help="the release checkout (directory) or mqm_ted_ende.tsv")
    ap.add_argument("--scale", type=int, default=0, help="also time N copies of the file (12 copies ~ 100,000 rows)")
    ap.add_argument("--ci", action="store_true", help="also print 95%% bootstrap CIs (1,000 resamples, seed 0)")
    ap.add_argument("--through-import", action="store_true",
                    help="score the study that import_judgments --format mqm-tsv makes of the file (its report)")
    args = ap.parse_args(argv)
    path = locate(args.path)
    rows, res, timing, n_rows = score_file(path)
    print(f"file: {path}  ({n_rows} error/No-error rows, {rows['rater'].nunique()} raters, "
          f"{rows['segment'].nunique()} segments x {rows['system'].nunique()} systems)")
    print(f"read {timing['read_s']:.2f} s, score {timing['score_s']:.2f} s")
    if args.through_import:
        imported = through_import(path)
        diff = (imported.set_index("system")["score"] - res.set_index("system")["score"]).abs().max()
        print(f"scores through the import = scores of the raw file: max difference {diff:.1e}; the table shows "
              "the imported study's")
        res = imported
    pub_rank = {name: i + 1 for i, name in enumerate(sorted(PUBLISHED_TED_ENDE, key=lambda k: PUBLISHED_TED_ENDE[k]))}
    ci = None
    if args.ci:
        ci = bootstrap_system_ci(mqm_segment_scores(rows)).set_index("system")
    print(f"\n{'system':16s} {'ours':>8s} {'rank':>4s}   {'README':>6s} {'rank':>4s}  agree(2 dp)" + ("   95% CI" if ci is not None else ""))
    same_values = True
    ours_order: list[str] = []
    for _, r in res.iterrows():
        name = ALIASES.get(r["system"], r["system"])
        ours_order.append(name)
        pub = PUBLISHED_TED_ENDE.get(name)
        ok = pub is not None and f"{r['score']:.2f}" == f"{pub:.2f}"
        same_values &= ok
        extra = ""
        if ci is not None:
            c = ci.loc[r["system"]]
            extra = f"   [{c['ci_low']:.2f}, {c['ci_high']:.2f}]"
        print(f"{name:16s} {r['score']:8.4f} {int(r['rank']):4d}   {pub if pub is not None else float('nan'):6.2f} "
              f"{pub_rank.get(name, 0):4d}  {'yes' if ok else 'NO'}{extra}")
    pub_order = sorted(PUBLISHED_TED_ENDE, key=lambda k: PUBLISHED_TED_ENDE[k])
    same_order = ours_order == pub_order
    print(f"\nsame systems: {set(ours_order) == set(pub_order)}; same order: {same_order}; "
          f"every value equal at 2 decimals: {same_values}")
    avg = path.with_name(path.name.replace(".tsv", ".avg_seg_scores.tsv"))
    if avg.is_file():
        # the release's own per-segment averages (negated MQM, "None" where a segment was not rated)
        seg_avg = pd.read_csv(avg, sep=r"\s+", na_values=["None"])
        own = (-seg_avg.groupby("system")["mqm_avg_score"].mean()).rename(index=lambda k: "ref.A" if str(k) in ("ref", "ref-A") else str(k))
        ours = res.assign(system=res["system"].map(lambda k: ALIASES.get(k, k))).set_index("system")["score"]
        diff = float((own.reindex(ours.index) - ours).abs().max())
        print(f"release's own {avg.name}: per-system means equal ours to within {diff:.1e}"
              f" (eTranslation there: {own.get('eTranslation', float('nan')):.4f})")
    if args.scale > 0:
        with tempfile.TemporaryDirectory() as tmp:
            big = Path(tmp) / "scaled.tsv"
            n = scaled_copy(path, args.scale, big)
            t0 = time.perf_counter()
            _, res_big, timing_big, _ = score_file(big, quiet=True)
            total = time.perf_counter() - t0
            print(f"\nscaled: {args.scale} copies = {n} rows: read {timing_big['read_s']:.2f} s + score "
                  f"{timing_big['score_s']:.2f} s = {total:.2f} s "
                  f"(scores unchanged: {bool((res_big.set_index('system')['score'] - res.set_index('system')['score']).abs().max() < 1e-9)})")
    return 0 if (same_order and same_values) else 1


if __name__ == "__main__":
    raise SystemExit(main())
