"""``agreement SLUG`` computed (no stored report) by two or more checkouts, in alternating rounds: CPU and wall.

The machine is shared, so the checkouts run one after the other in every round (old, new, old, new, ...) and the
figure to compare is CPU (user+sys of the process, ``getrusage(RUSAGE_CHILDREN)``); wall time follows the load,
which is printed with every run. Before each run the study's stored reports are deleted
(``evaluators.reports.report_cache``), so every run computes the report; ``--read-back`` keeps them instead (every
run after the first then reads the stored report back). Each checkout's text must be equal to the first one's: a
speed-up that changed a number fails here. Bytecode is cached per checkout (``PYTHONPYCACHEPREFIX``), as an
installed deployment has it; the first round of a checkout compiles it and is not counted.

The database is a SQLite file holding a study, e.g. the one ``bench/release_scale.py TSV --keep FOLDER`` keeps
(slug ``release``)::

    mkdir /tmp/old && git archive OLD_COMMIT | tar -x -C /tmp/old   # the old code (SECRET_KEY set, or a .secret_key)
    .venv/bin/python bench/agreement_speed.py --db FOLDER/bench.sqlite3 --rounds 5 /tmp/old .
"""
from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.release_scale import run as timed  # noqa: E402


def run(checkout: Path, db: Path, slug: str, extra: list[str]) -> tuple[float, float, str]:
    """(wall, CPU, stdout) of ``manage.py agreement SLUG`` in ``checkout`` on the SQLite file ``db``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "DATABASE_URL")}
    env |= {"DATABASE_URL": f"sqlite:///{db}", "DJANGO_SETTINGS_MODULE": "config.settings",
            "PYTHONPYCACHEPREFIX": f"/tmp/agreement-speed-pycache/{checkout.resolve().as_posix().strip('/')}",
            "PYTHONPATH": str(checkout)}
    return timed([sys.executable, "manage.py", "agreement", slug, *extra], env, cwd=checkout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkouts", nargs="+", type=Path, help="folders holding a version of the project")
    parser.add_argument("--db", type=Path, required=True, help="SQLite database holding the study")
    parser.add_argument("--slug", default="release", help="the study (default: release)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds counted (default 3)")
    parser.add_argument("--read-back", action="store_true", help="keep the stored reports (time reading back)")
    parser.add_argument("--json", action="store_true", help="compare the --json output instead of the text")
    args = parser.parse_args()
    extra = ["--json"] if args.json else []
    figures: dict[Path, list[tuple[float, float]]] = {c: [] for c in args.checkouts}
    first_text: str | None = None
    status = 0
    for round_ in range(args.rounds + 1):  # round 0 compiles the bytecode
        for checkout in args.checkouts:
            if not args.read_back:
                with sqlite3.connect(args.db) as con:
                    con.execute("DELETE FROM evaluators_storedreport")
            wall, cpu, text = run(checkout, args.db, args.slug, extra)
            if first_text is None:
                first_text = text
            same = text == first_text
            status |= 0 if same else 1
            if round_:
                figures[checkout].append((wall, cpu))
            print(f"round {round_}{' (not counted)' if not round_ else ''} {checkout}: {wall:.2f} s wall, "
                  f"{cpu:.2f} s CPU, load {os.getloadavg()[0]:.1f}, same text: {same}", flush=True)
    for checkout, runs in figures.items():
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        print(f"{checkout}: CPU {', '.join(f'{c:.2f}' for c in cpus)} (median {statistics.median(cpus):.2f}); "
              f"wall {', '.join(f'{w:.2f}' for w in walls)} (median {statistics.median(walls):.2f})")
    print(f"load average now: {' '.join(f'{x:.1f}' for x in os.getloadavg())} (2 cores, shared)")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
