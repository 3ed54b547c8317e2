"""Whole-process time of ``manage.py score --evaluator bleu`` against sacrebleu's own command, same files.

The files are generated from the DiaBLa subset in ``fixtures/diabla/`` (CC BY-SA 4.0, see its README): line
``i`` joins two utterances ``a`` and ``b`` (``a = i mod n``, ``b = (i div n + 7a) mod n``), the machine
translations for the hypothesis and the human translations for the reference, so that nearly every line is
distinct (sacrebleu's tokenizers cache up to 65,536 lines; repeated lines would flatter both sides).

Each command runs ``--runs`` times as a fresh process (alternating, after one warm-up of each); the script
prints every timing (wall clock, and CPU time, which a loaded machine does not stretch), the medians and the
ratios ``score / sacrebleu`` (the target: at most 1.5), and checks that both printed the same BLEU.

Usage: ``python bench/score_speed.py [--lines 20000] [--runs 7] [--keep DIR]``.
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
SACREBLEU = str(Path(PY).with_name("sacrebleu"))
TARGET_RATIO = 1.5


def generate(directory: Path, lines: int) -> tuple[Path, Path]:
    """Write ``ref.txt`` and ``hyp.txt`` of ``lines`` lines (English and French targets mixed, as DiaBLa)."""
    rows = [json.loads(line) for line in (ROOT / "fixtures" / "diabla" / "utterances.jsonl").open(encoding="utf-8")]
    n = len(rows)
    refs, hyps = [], []
    for i in range(lines):
        a = i % n
        b = (i // n + 7 * a) % n
        refs.append(f"{rows[a]['reference']} {rows[b]['reference']}".replace("\n", " "))
        hyps.append(f"{rows[a]['mt']} {rows[b]['mt']}".replace("\n", " "))
    ref, hyp = directory / "ref.txt", directory / "hyp.txt"
    ref.write_text("\n".join(refs) + "\n", encoding="utf-8")
    hyp.write_text("\n".join(hyps) + "\n", encoding="utf-8")
    return ref, hyp


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, standard output) of one run of ``cmd`` (CPU: user + system of the process)."""
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr}")
    return wall, _children_cpu() - cpu, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="Write the generated files here (kept).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = args.keep or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        ref, hyp = generate(directory, args.lines)
        # --target-language: both commands are told the language (sacrebleu needs no guess for 13a either).
        ours = [PY, "manage.py", "score", "--hyp", str(hyp), "--ref", str(ref), "--evaluator", "bleu",
                "--target-language", "fr", "--json"]
        theirs = [SACREBLEU, str(ref), "-i", str(hyp), "-m", "bleu", "-q"]
        *_, out_ours = timed(ours)
        *_, out_theirs = timed(theirs)
        bleu_ours = json.loads(out_ours)["systems"][0]["score"]
        bleu_theirs = json.loads(out_theirs)["score"]
        if round(bleu_ours, 1) != bleu_theirs:
            raise SystemExit(f"different BLEU: score {bleu_ours} vs sacrebleu {bleu_theirs}")
        walls: dict[str, list[float]] = {"score": [], "sacrebleu": []}
        cpus: dict[str, list[float]] = {"score": [], "sacrebleu": []}
        for _ in range(args.runs):
            for name, cmd in (("score", ours), ("sacrebleu", theirs)):
                wall, cpu, _ = timed(cmd)
                walls[name].append(wall)
                cpus[name].append(cpu)
    print(f"{args.lines} lines, {args.runs} runs each (BLEU {bleu_ours:.2f} from both)")
    for label, table in (("wall", walls), ("CPU", cpus)):
        for name, values in table.items():
            print(f"  {label:<4} {name:<10} median {statistics.median(values):.3f} s   runs: "
                  + " ".join(f"{v:.3f}" for v in values))
        ratio = statistics.median(table["score"]) / statistics.median(table["sacrebleu"])
        verdict = "within" if ratio <= TARGET_RATIO else "OVER"
        print(f"  {label} ratio score / sacrebleu: {ratio:.2f} ({verdict} the {TARGET_RATIO}x target)")


if __name__ == "__main__":
    main()
