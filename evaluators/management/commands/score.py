"""``score --hyp FILE … --ref FILE --evaluator NAME …``: score plain system-output files outside any study.

One segment a line (UTF-8; a trailing newline ends the last line, trailing
whitespace is removed from every line, as sacrebleu's command does);
``--docs`` gives one document id a line (the mt-metrics-eval convention);
``--src`` the source segments; ``--annotations`` BlonDe+'s human annotations
of the reference (for ``blonde-plus``).  A system is named after its file without the
extension (``out/sys-a.txt`` -> ``sys-a``), or ``NAME=FILE``.  Every
registered evaluator can run (``evaluators.metrics.registry``); ``bleu``,
``chrf`` and ``ter`` are sacrebleu's corpus statistics with its signatures,
and ``--paired-bs`` / ``--paired-ar`` run sacrebleu's paired tests with its
defaults (first ``--hyp`` = baseline).

Bad input (a missing, empty or non-UTF-8 file, line counts that differ,
duplicate system names, an unknown evaluator or language) stops the command
with a message naming the file and line, exit status 2, and nothing written
to standard output.

Imports are lazy: scoring files needs no database, so the command skips the
system checks and imports the metric modules only when it runs (``bench/score_speed.py``).
"""
from __future__ import annotations

import gzip
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

if TYPE_CHECKING:
    from evaluators.metrics.corpus import Corpus, CorpusEvaluator, EvaluationResult
    from evaluators.metrics.language.base import Backend

#: sacrebleu's metrics, which the paired tests support (evaluators.metrics.sacrebleu_metrics.KINDS).
SACREBLEU_KINDS = ("bleu", "chrf", "ter")


def _fail(message: str) -> CommandError:
    return CommandError(message, returncode=2)


@dataclass(frozen=True)
class System:
    name: str
    path: Path
    lines: list[str]


def read_lines(path: Path, what: str) -> list[str]:
    """The lines of a UTF-8 text file (``.gz``: gzip-compressed), trailing whitespace removed.

    Lines end at ``\\n`` only (as sacrebleu reads them); a final newline does not start another line.
    Missing, unreadable, empty (no line with text) and non-UTF-8 files are errors naming the file and line.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise _fail(f"{what} {path}: no such file") from None
    except IsADirectoryError:
        raise _fail(f"{what} {path}: is a directory, not a file") from None
    except OSError as exc:
        raise _fail(f"{what} {path}: cannot be read ({exc.strerror})") from None
    if path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise _fail(f"{what} {path}: not a readable gzip file ({exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise _fail(f"{what} {path}: line {line}: not UTF-8 text ({exc.reason} at byte {column} of the line)") from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    lines = [line.rstrip() for line in lines]
    if not any(lines):
        raise _fail(f"{what} {path}: empty file (no line with text)")
    return lines


def system_spec(spec: str) -> tuple[str, Path]:
    """``NAME=FILE`` -> (NAME, FILE); ``FILE`` -> (its name without extension(s) .gz/.txt…, FILE)."""
    if "=" in spec and not Path(spec).exists():
        name, _, file = spec.partition("=")
        if not name.strip():
            raise _fail(f"--hyp {spec!r}: empty system name before '=' (use NAME=FILE)")
        return name.strip(), Path(file)
    path = Path(spec)
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    stem = Path(name).stem or name
    return stem, path


def _check_length(path: Path, what: str, n: int, ref_path: Path, n_ref: int) -> None:
    if n != n_ref:
        longer, shorter = (path, ref_path) if n > n_ref else (ref_path, path)
        raise _fail(f"{what} {path} has {n} lines but the reference {ref_path} has {n_ref}: line {min(n, n_ref) + 1} "
                    f"of {longer} has no counterpart in {shorter}")


def read_documents(path: Path, n_ref: int, ref_path: Path) -> list[str]:
    """Document ids, one a line, aligned with the segments; each document's lines must be contiguous."""
    ids = [line.strip() for line in read_lines(path, "--docs")]
    _check_length(path, "--docs", len(ids), ref_path, n_ref)
    ended: dict[str, int] = {}
    for number, doc in enumerate(ids, start=1):
        if not doc:
            raise _fail(f"--docs {path}: line {number}: empty document id")
        if number > 1 and doc != ids[number - 2]:
            previous = ids[number - 2]
            ended[previous] = number - 1
            if doc in ended:
                raise _fail(f"--docs {path}: line {number}: document {doc!r} resumes after it ended at line "
                            f"{ended[doc]}; a document's segments must be on consecutive lines")
    return ids


def read_annotations(path: Path, refs: list[str], ref_path: Path) -> dict[str, dict[str, list[str]]]:
    """BlonDe+'s human annotations (``--annotations``), by segment key: one line per reference line.

    Each line is in the BlonDe authors' annotation format (their BWB test set's ``an.txt``): tab-separated
    fields, ``1,<reference phrase>,<correction> <pos/a,b>;…`` marks ambiguous phrases, ``3,…`` omitted
    ones, other fields are ignored (:func:`evaluators.metrics.blonde.read_annotation_line`).  Every
    phrase must occur in its reference line (whole words, any case), else the file is not aligned with
    ``--ref``: an error naming the line.
    """
    from evaluators.metrics.blonde import read_annotation_line

    lines = read_lines(path, "--annotations")
    _check_length(path, "--annotations", len(lines), ref_path, len(refs))
    out: dict[str, dict[str, list[str]]] = {}
    for number, (line, ref) in enumerate(zip(lines, refs), start=1):
        marked = {kind: phrases for kind, phrases in read_annotation_line(line).items() if phrases}
        for kind, phrases in marked.items():
            for phrase in phrases:
                if not phrase:
                    raise _fail(f"--annotations {path}: line {number}: an empty {kind} phrase")
                if not re.search(r"\b" + re.escape(phrase) + r"\b", ref, re.IGNORECASE):
                    raise _fail(f"--annotations {path}: line {number}: {kind} phrase {phrase!r} is not in line "
                                f"{number} of the reference {ref_path}; the file's lines must be aligned with --ref")
        if marked:
            out[str(number)] = marked
    if not out:
        raise _fail(f"--annotations {path}: no line marks an ambiguous (1,…) or omitted (3,…) phrase")
    return out


def _finite(value: Any) -> Any:
    """JSON-safe copy: NaN and infinities become null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


class Command(BaseCommand):
    help = ("Score plain system-output files (one segment a line, UTF-8) against a reference with any registered "
            "evaluator, outside any study; nothing is stored. BLEU, chrF and TER are sacrebleu's corpus scores "
            "with its signatures; --paired-bs/--paired-ar run sacrebleu's paired tests (the first --hyp is the "
            "baseline). Bad input exits with status 2, naming the file and line.")
    # No database is touched: skip the system checks so that the command starts as fast as it can.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--hyp", action="append", required=True, metavar="FILE|NAME=FILE",
                            help="A system's output, one segment a line; repeat for several systems. The system "
                                 "is named after the file without its extension, or NAME.")
        parser.add_argument("--ref", action="append", required=True, metavar="FILE",
                            help="The reference, one segment a line. Repeat for several references: bleu, chrf and "
                                 "ter score against all of them (sacrebleu's nrefs); the other evaluators take one "
                                 "and refuse several.")
        parser.add_argument("--src", metavar="FILE", help="The source, one segment a line (evaluators that need it).")
        parser.add_argument("--docs", metavar="FILE",
                            help="One document id a line, aligned with the segments (mt-metrics-eval convention); "
                                 "a document's lines are consecutive.")
        parser.add_argument("--evaluator", action="append", required=True, metavar="NAME",
                            help="A registered evaluator (bleu, chrf, ter, blonde, …); repeat for several.")
        parser.add_argument("--target-language", metavar="CODE",
                            help="The target language (ISO 639-1, optionally with script/region: zh-Hans). "
                                 "Default: guessed from the reference and reported as a guess.")
        parser.add_argument("--source-language", metavar="CODE", help="The source language, for evaluators that use it.")
        parser.add_argument("--nlp", metavar="BACKEND",
                            help="Language backend of the evaluators that need one: lexicon (default) or "
                                 "spacy:PIPELINE (e.g. spacy:en_core_web_sm), which blonde, dblonde and blonde-plus need.")
        parser.add_argument("--annotations", metavar="FILE",
                            help="BlonDe+'s human annotations (blonde-plus only): one line per reference line in the "
                                 "BlonDe authors' format, tab-separated fields 1,<reference phrase>,<correction> "
                                 "(ambiguous) and 3,<reference phrase>,… (omitted); see docs/evaluators.md.")
        paired = parser.add_mutually_exclusive_group()
        paired.add_argument("--paired-bs", action="store_true",
                            help="sacrebleu's paired bootstrap resampling test (1000 resamples, seed 12345).")
        paired.add_argument("--paired-ar", action="store_true",
                            help="sacrebleu's paired approximate randomization test (10000 trials, seed 12345).")
        parser.add_argument("--paired-n", type=int, metavar="N",
                            help="Resamples (bs) or trials (ar) instead of sacrebleu's defaults.")
        parser.add_argument("--paired-seed", type=int, metavar="N", help="Random seed (default 12345, as sacrebleu).")
        parser.add_argument("--width", type=int, default=1, metavar="N",
                            help="Decimals of the text output (default 1, as sacrebleu).")
        parser.add_argument("--json", action="store_true", help="Print JSON instead of text.")

    def handle(self, *args: Any, **opts: Any) -> None:
        paired = "bs" if opts["paired_bs"] else "ar" if opts["paired_ar"] else None
        if paired is None and (opts["paired_n"] is not None or opts["paired_seed"] is not None):
            raise _fail("--paired-n and --paired-seed need --paired-bs or --paired-ar")
        if paired and len(opts["hyp"]) < 2:
            raise _fail("--paired-bs/--paired-ar compare systems: give at least two --hyp files")
        if opts["width"] < 0:
            raise _fail(f"--width {opts['width']}: must be 0 or more")
        names = list(dict.fromkeys(opts["evaluator"]))
        registry = self._evaluators(names)
        if paired and not any(n in SACREBLEU_KINDS for n in names):
            raise _fail(f"--paired-{paired}: sacrebleu's paired tests cover {', '.join(SACREBLEU_KINDS)} only; "
                        f"none of them was asked for (--evaluator {' '.join(names)})")
        target, source = self._language(opts["target_language"], "--target-language"), \
            self._language(opts["source_language"], "--source-language")

        ref_paths = [Path(p) for p in opts["ref"]]
        ref_path = ref_paths[0]
        refs = read_lines(ref_path, "--ref")
        more_refs = [read_lines(p, "--ref") for p in ref_paths[1:]]
        for path, lines in zip(ref_paths[1:], more_refs):
            _check_length(path, "--ref", len(lines), ref_path, len(refs))
        from evaluators.metrics.corpus import takes_several_references

        single = [n for n in names if more_refs and not takes_several_references(registry[n])]
        if single:
            raise _fail(f"--ref: {len(ref_paths)} references given ({', '.join(map(str, ref_paths))}); "
                        f"{', '.join(single)} score{'s' if len(single) == 1 else ''} against one: give one --ref "
                        "(bleu, chrf and ter take several)")
        systems = self._systems(opts["hyp"], ref_path, len(refs))
        sources = None
        if opts["src"]:
            src_path = Path(opts["src"])
            sources = read_lines(src_path, "--src")
            _check_length(src_path, "--src", len(sources), ref_path, len(refs))
        docs = read_documents(Path(opts["docs"]), len(refs), ref_path) if opts["docs"] else None
        if opts["annotations"] and "blonde-plus" not in names:
            raise _fail("--annotations: only blonde-plus uses human annotations; add --evaluator blonde-plus")
        if "blonde-plus" in names and not opts["annotations"]:
            raise _fail("evaluator blonde-plus needs the human annotations of the reference (BlonDe §4.3): "
                        "give --annotations FILE (one line per reference line; see docs/evaluators.md)")
        annotations = read_annotations(Path(opts["annotations"]), refs, ref_path) if opts["annotations"] else {}
        for name in names:
            ev = registry[name]
            if getattr(ev, "needs_source", False) and sources is None:
                raise _fail(f"evaluator {name} needs the source segments: give --src FILE")
            if getattr(ev, "needs_documents", False) and docs is None:
                raise _fail(f"evaluator {name} scores documents: give --docs FILE (one document id a line)")

        guess_evidence = ""
        if target is None:
            from evaluators.metrics.langguess import guess_language

            guess = guess_language(refs)
            if guess.language is None:
                raise _fail(f"--ref {ref_path}: cannot guess the target language ({guess.evidence}); "
                            "give --target-language CODE")
            target, guess_evidence = guess.language, guess.evidence

        from evaluators.metrics.corpus import Corpus, Segment

        corpus = Corpus(
            segments=[Segment(key=str(i + 1), document=docs[i] if docs else "", reference=ref,
                              hypotheses={s.name: s.lines[i] for s in systems},
                              source=sources[i] if sources else None,
                              references=(ref, *(lines[i] for lines in more_refs)) if more_refs else ())
                      for i, ref in enumerate(refs)],
            target_language=target, source_language=source or "", target_language_guessed=bool(guess_evidence),
            annotations=annotations,
            reference_names=[str(p) for p in ref_paths] if more_refs else [])
        nlp = self._backend(opts["nlp"], [n for n in names if n not in SACREBLEU_KINDS])
        for name in names:  # refused before any evaluator runs (each would refuse too, after the others' work)
            if getattr(registry[name], "needs_spacy", False) and not (nlp and nlp.name.startswith("spacy:")):
                from evaluators.metrics.blonde import spacy_needed_message

                raise _fail(f"--evaluator {name}: {spacy_needed_message(name, nlp.name if nlp else None)}")
        results = [self._run(registry[name], name, corpus, nlp) for name in names]
        tests: list[dict[str, Any]] = []
        skipped: list[str] = []
        if paired:
            from evaluators.metrics.significance import paired_test

            for name in names:
                if name not in SACREBLEU_KINDS:
                    skipped.append(name)
                    continue
                try:
                    tests.extend(paired_test(corpus, name, method=paired, n_samples=opts["paired_n"],
                                             seed=opts["paired_seed"]))
                except ValueError as exc:
                    raise _fail(f"--paired-{paired} ({name}): {exc}") from None
        language = {"code": target, "guessed": bool(guess_evidence), "evidence": guess_evidence or None,
                    "source": "guessed from --ref" if guess_evidence else "--target-language"}
        if opts["json"]:
            self.stdout.write(json.dumps(_finite(self._json(corpus, results, tests, skipped, language)),
                                         ensure_ascii=False, indent=2))
        else:
            self.stdout.write(self._text(corpus, results, tests, skipped, language, ref_path, opts["width"], paired))

    # ------------------------------------------------------------------ inputs
    def _evaluators(self, names: list[str]) -> dict[str, CorpusEvaluator]:
        if all(n in SACREBLEU_KINDS for n in names):
            # Fast path: only sacrebleu is needed, not every evaluator module (and its lexicons).
            from evaluators.metrics.corpus import registered
            from evaluators.metrics import sacrebleu_metrics  # noqa: F401  (registers bleu, chrf, ter)

            return registered()
        from evaluators.metrics.registry import evaluators

        known = evaluators()
        unknown = [n for n in names if n not in known]
        if unknown:
            raise _fail(f"--evaluator: unknown evaluator(s) {', '.join(map(repr, unknown))}; known: "
                        f"{', '.join(sorted(known))}")
        return known

    def _language(self, code: str | None, option: str) -> str | None:
        if code is None:
            return None
        from evaluators.metrics.langguess import validate_code

        try:
            return validate_code(code)
        except ValueError as exc:
            raise _fail(f"{option}: {exc}") from None

    def _systems(self, specs: list[str], ref_path: Path, n_ref: int) -> list[System]:
        systems: list[System] = []
        seen: dict[str, str] = {}
        for number, spec in enumerate(specs, start=1):
            name, path = system_spec(spec)
            if name in seen:
                raise _fail(f"--hyp {spec}: system name {name!r} is already used by --hyp {seen[name]}; "
                            "name them with NAME=FILE")
            seen[name] = spec
            lines = read_lines(path, "--hyp")
            _check_length(path, "--hyp", len(lines), ref_path, n_ref)
            systems.append(System(name, path, lines))
        return systems

    def _backend(self, spec: str | None, needing: list[str]) -> Backend | None:
        """The language backend ``--nlp`` names (default lexicon), loaded only if an evaluator may use one."""
        if spec is None and not needing:
            return None
        from evaluators.metrics.language import get_backend

        try:
            return get_backend(spec or "lexicon")
        except ValueError as exc:
            if spec is None:  # the default backend is not available: each evaluator falls back on its own default
                return None
            raise _fail(f"--nlp {spec}: {exc}") from None
        except (RuntimeError, ImportError, OSError) as exc:
            raise _fail(f"--nlp {spec or 'lexicon'}: {exc}") from None

    def _run(self, evaluator: CorpusEvaluator, name: str, corpus: Corpus, nlp: Backend | None) -> EvaluationResult:
        try:
            return evaluator.evaluate(corpus, nlp=nlp)
        except (ValueError, RuntimeError) as exc:
            raise _fail(f"--evaluator {name}: {exc}") from None

    # ------------------------------------------------------------------ output
    def _json(self, corpus: Corpus, results: list[EvaluationResult], tests: list[dict[str, Any]],
              skipped: list[str], language: dict[str, Any]) -> dict[str, Any]:
        rows: list[dict[str, Any]] = []
        for result in results:
            for s in result.systems:
                row: dict[str, Any] = {"system": s.system, "evaluator": result.evaluator, "score": s.score,
                                       "higher_is_better": result.higher_is_better, "signature": s.signature}
                for key in ("categories", "counts", "documents"):
                    if getattr(s, key) is not None:
                        row[key] = getattr(s, key)
                if s.notes:
                    row["notes"] = list(s.notes)
                rows.append(row)
        out: dict[str, Any] = {"target_language": language, "segments": len(corpus.segments),
                               "documents": len(corpus.documents()), "systems": rows, "paired": tests}
        if skipped:
            out["paired_skipped"] = {n: "sacrebleu's paired tests cover bleu, chrf and ter only" for n in skipped}
        return out

    def _text(self, corpus: Corpus, results: list[EvaluationResult], tests: list[dict[str, Any]], skipped: list[str],
              language: dict[str, Any], ref_path: Path, width: int, paired: str | None) -> str:
        out: list[str] = []
        if language["guessed"]:
            out.append(f"Target language: {language['code']} (GUESSED from {ref_path}: {language['evidence']}; "
                       "set it with --target-language)")
        else:
            out.append(f"Target language: {language['code']}")
        n_docs = len(corpus.documents())
        out.append(f"Segments: {len(corpus.segments)}" + (f" in {n_docs} documents" if n_docs < len(corpus.segments) else ""))
        label_width = max(len(s) for s in corpus.systems)
        for result in results:
            direction = "higher" if result.higher_is_better else "lower"
            out += ["", f"{result.evaluator} ({direction} is better)"]
            notes: list[str] = []
            signatures: list[str] = []
            for s in result.systems:
                score = "n/a" if s.score is None or not math.isfinite(s.score) else f"{s.score:.{width}f}"
                verbose = (s.counts or {}).get("verbose")
                out.append(f"  {s.system:<{label_width}}  {score}" + (f"  {verbose}" if isinstance(verbose, str) else ""))
                notes += [n for n in s.notes if n not in notes]
                if s.signature not in signatures:
                    signatures.append(s.signature)
            out += [f"  signature: {sig}" for sig in signatures]
            out += [f"  note: {n}" for n in notes]
        if paired:
            out += ["", *self._paired_text(tests, width, paired)]
            out += [f"(no paired test for {n}: sacrebleu's tests cover bleu, chrf and ter only)" for n in skipped]
        return "\n".join(out)

    def _paired_text(self, tests: list[dict[str, Any]], width: int, method: str) -> list[str]:
        first = tests[0]
        kind = ("bootstrap resampling", "resampling trials") if method == "bs" else ("approximate randomization", "trials")
        head = (f"Paired {kind[0]} test with {first['n_samples']} {kind[1]} (seed {first['seed']}) on "
                f"{first['n_segments']} segments; baseline: {first['baseline']}")
        lines = ["-" * len(head), head, "-" * len(head)]
        metrics = list(dict.fromkeys(t["evaluator"] for t in tests))
        systems = list(dict.fromkeys(t["system"] for t in tests))
        cells: dict[tuple[str, str], str] = {}
        for t in tests:
            cell = f"{t['score']:.{width}f}"
            if t["mean"] is not None:
                cell += f" ({t['mean']:.{width}f} ± {t['ci']:.{width}f})"
            if t["p_value"] is not None:
                cell += f" (p = {t['p_value']:.4f})" + ("*" if t["significant"] else "")
            cells[(t["system"], t["evaluator"])] = cell
        titles = [m + (" (μ ± 95% CI)" if method == "bs" else "") for m in metrics]
        names = [("Baseline: " if s == first["baseline"] else "") + s for s in systems]
        name_w = max(len("System"), *(len(n) for n in names))
        widths = [max(len(title), *(len(cells.get((s, m), "")) for s in systems)) for title, m in zip(titles, metrics)]
        lines.append("  ".join([f"{'System':>{name_w}}", *(f"{t:^{w}}" for t, w in zip(titles, widths))]))
        for system, shown in zip(systems, names):
            lines.append("  ".join([f"{shown:>{name_w}}",
                                    *(f"{cells.get((system, m), ''):^{w}}" for m, w in zip(metrics, widths))]))
        lines += ["", "p: the probability of an absolute score difference at least this large by chance, if the "
                  "system and the baseline came from the same process; * = p < 0.05 (sacrebleu's rule as it explains it).",
                  "Significance says the systems differ, not which is better.", "", "Signatures:"]
        seen: set[str] = set()
        for t in tests:
            if t["evaluator"] not in seen:
                seen.add(t["evaluator"])
                lines.append(f"  {t['evaluator']:<6} {t['signature']}")
        notes = list(dict.fromkeys(n for t in tests for n in t["notes"]))
        lines += [f"  note: {n}" for n in notes]
        return lines
