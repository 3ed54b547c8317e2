"""Scoring plain system-output files outside any study: what ``manage.py score`` runs, callable without it.

One segment a line (UTF-8, ``.gz`` decompressed; a trailing newline ends the last line, trailing
whitespace is removed from every line, as sacrebleu's command does); ``docs`` gives one document id a
line (the mt-metrics-eval convention); ``src`` the source segments; ``annotations`` BlonDe+'s human
annotations of the reference (for ``blonde-plus``).  A system is named after its file without the
extension (``out/sys-a.txt`` -> ``sys-a``), or ``NAME=FILE``.  Every registered evaluator can run
(``evaluators.metrics.registry``); ``bleu``, ``chrf`` and ``ter`` are sacrebleu's corpus statistics
with its signatures, and the paired tests (``bs``, ``ar``) are sacrebleu's with its defaults (first
hypothesis file = baseline).

Bad input (a missing, empty or non-UTF-8 file, line counts that differ, duplicate system names, an
unknown evaluator or language) is a :class:`ScoreInputError` naming the file and line, raised before
any evaluator runs where it can be.  :func:`score_files` returns a :class:`FileScores`;
:func:`scores_json` and :func:`scores_text` give the command's two outputs.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from config.textfiles import TextFileError, read_utf8
from evaluators.metrics import sacrebleu_metrics
from evaluators.metrics.corpus import (
    Corpus, CorpusEvaluator, EvaluationResult, Segment, registered, takes_several_references,
)
from evaluators.metrics.langguess import guess_language, validate_code
from evaluators.metrics.language import get_backend
from evaluators.metrics.significance import paired_test

if TYPE_CHECKING:
    from evaluators.metrics.language.base import Backend

#: sacrebleu's metrics, the only ones its paired tests support.
SACREBLEU_KINDS = sacrebleu_metrics.KINDS


class ScoreInputError(ValueError):
    """Input that cannot be scored; the message names the option, the file and the line."""


@dataclass(frozen=True)
class System:
    name: str
    path: Path
    lines: list[str]


@dataclass
class FileScores:
    """What :func:`score_files` computed, with what its outputs need to say how."""

    corpus: Corpus
    results: list[EvaluationResult]
    tests: list[dict[str, Any]]
    #: evaluators asked for that sacrebleu's paired tests do not cover
    skipped: list[str]
    #: code, guessed, evidence (the guess' reasons, None when given), source (where the code came from)
    language: dict[str, Any]
    ref_path: Path
    paired: str | None


def read_lines(path: Path, what: str) -> list[str]:
    """The lines of a UTF-8 text file (``.gz``: gzip-compressed), trailing whitespace removed.

    Lines end at ``\\n`` only (as sacrebleu reads them); a final newline does not start another line.
    Missing, unreadable, empty (no line with text) and non-UTF-8 files are errors naming the file and line.
    """
    try:
        text = read_utf8(path, f"{what} {path}", gunzip=True)
    except TextFileError as exc:
        raise ScoreInputError(str(exc)) from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    lines = [line.rstrip() for line in lines]
    if not any(lines):
        raise ScoreInputError(f"{what} {path}: empty file (no line with text)")
    return lines


def system_spec(spec: str) -> tuple[str, Path]:
    """``NAME=FILE`` -> (NAME, FILE); ``FILE`` -> (its name without extension(s) .gz/.txt…, FILE)."""
    if "=" in spec and not Path(spec).exists():
        name, _, file = spec.partition("=")
        if not name.strip():
            raise ScoreInputError(f"--hyp {spec!r}: empty system name before '=' (use NAME=FILE)")
        return name.strip(), Path(file)
    path = Path(spec)
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    stem = Path(name).stem or name
    return stem, path


def _check_length(path: Path, what: str, n: int, ref_path: Path, n_ref: int) -> None:
    if n != n_ref:
        longer, shorter = (path, ref_path) if n > n_ref else (ref_path, path)
        raise ScoreInputError(f"{what} {path} has {n} lines but the reference {ref_path} has {n_ref}: line "
                              f"{min(n, n_ref) + 1} of {longer} has no counterpart in {shorter}")


def read_documents(path: Path, n_ref: int, ref_path: Path) -> list[str]:
    """Document ids, one a line, aligned with the segments; each document's lines must be contiguous."""
    ids = [line.strip() for line in read_lines(path, "--docs")]
    _check_length(path, "--docs", len(ids), ref_path, n_ref)
    ended: dict[str, int] = {}
    for number, doc in enumerate(ids, start=1):
        if not doc:
            raise ScoreInputError(f"--docs {path}: line {number}: empty document id")
        if number > 1 and doc != ids[number - 2]:
            previous = ids[number - 2]
            ended[previous] = number - 1
            if doc in ended:
                raise ScoreInputError(f"--docs {path}: line {number}: document {doc!r} resumes after it ended at "
                                      f"line {ended[doc]}; a document's segments must be on consecutive lines")
    return ids


def read_annotations(path: Path, refs: list[str], ref_path: Path) -> dict[str, dict[str, list[str]]]:
    """BlonDe+'s human annotations (``--annotations``), by segment key: one line per reference line.

    Each line is in the BlonDe authors' annotation format (their BWB test set's ``an.txt``): tab-separated
    fields, ``1,<reference phrase>,<correction> <pos/a,b>;…`` marks ambiguous phrases, ``3,…`` omitted
    ones, other fields are ignored (:func:`evaluators.metrics.blonde.read_annotation_line`).  Every
    phrase must occur in its reference line (whole words, any case), else the file is not aligned with
    ``--ref``: an error naming the line.
    """
    # blonde and its lexicons load in ~0.1 s; scoring with bleu, chrf or ter alone never needs them
    # (bench/score_speed.py times that case against sacrebleu's own command).
    from evaluators.metrics.blonde import read_annotation_line

    lines = read_lines(path, "--annotations")
    _check_length(path, "--annotations", len(lines), ref_path, len(refs))
    out: dict[str, dict[str, list[str]]] = {}
    for number, (line, ref) in enumerate(zip(lines, refs), start=1):
        marked = {kind: phrases for kind, phrases in read_annotation_line(line).items() if phrases}
        for kind, phrases in marked.items():
            for phrase in phrases:
                if not phrase:
                    raise ScoreInputError(f"--annotations {path}: line {number}: an empty {kind} phrase")
                if not re.search(r"\b" + re.escape(phrase) + r"\b", ref, re.IGNORECASE):
                    raise ScoreInputError(
                        f"--annotations {path}: line {number}: {kind} phrase {phrase!r} is not in line "
                        f"{number} of the reference {ref_path}; the file's lines must be aligned with --ref")
        if marked:
            out[str(number)] = marked
    if not out:
        raise ScoreInputError(f"--annotations {path}: no line marks an ambiguous (1,…) or omitted (3,…) phrase")
    return out


def finite(value: Any) -> Any:
    """JSON-safe copy: NaN and infinities become null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


# ---------------------------------------------------------------------- inputs
def find_evaluators(names: list[str]) -> dict[str, CorpusEvaluator]:
    """The registered evaluators, by name; an unknown name in ``names`` is an error listing the known ones."""
    if all(n in SACREBLEU_KINDS for n in names):
        return registered()  # sacrebleu_metrics, imported above, registers bleu, chrf and ter
    # The registry imports every evaluator module and their lexicons (~0.15 s), which bleu, chrf and ter
    # alone never need (bench/score_speed.py).
    from evaluators.metrics.registry import evaluators

    known = evaluators()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ScoreInputError(f"--evaluator: unknown evaluator(s) {', '.join(map(repr, unknown))}; known: "
                              f"{', '.join(sorted(known))}")
    return known


def language_code(code: str | None, option: str) -> str | None:
    """``code`` checked and normalised (``validate_code``); None when not given."""
    if code is None:
        return None
    try:
        return validate_code(code)
    except ValueError as exc:
        raise ScoreInputError(f"{option}: {exc}") from None


def read_systems(specs: list[str], ref_path: Path, n_ref: int) -> list[System]:
    """The hypothesis files (``FILE`` or ``NAME=FILE``), each as long as the reference, names unique."""
    systems: list[System] = []
    seen: dict[str, str] = {}
    for spec in specs:
        name, path = system_spec(spec)
        if name in seen:
            raise ScoreInputError(f"--hyp {spec}: system name {name!r} is already used by --hyp {seen[name]}; "
                                  "name them with NAME=FILE")
        seen[name] = spec
        lines = read_lines(path, "--hyp")
        _check_length(path, "--hyp", len(lines), ref_path, n_ref)
        systems.append(System(name, path, lines))
    return systems


def language_backend(spec: str | None, needing: list[str]) -> Backend | None:
    """The language backend ``spec`` names (default lexicon), loaded only if an evaluator may use one."""
    if spec is None and not needing:
        return None
    try:
        return get_backend(spec or "lexicon")
    except ValueError as exc:
        if spec is None:  # the default backend is not available: each evaluator falls back on its own default
            return None
        raise ScoreInputError(f"--nlp {spec}: {exc}") from None
    except (RuntimeError, ImportError, OSError) as exc:
        raise ScoreInputError(f"--nlp {spec or 'lexicon'}: {exc}") from None


def _run(evaluator: CorpusEvaluator, name: str, corpus: Corpus, nlp: Backend | None) -> EvaluationResult:
    try:
        return evaluator.evaluate(corpus, nlp=nlp)
    except (ValueError, RuntimeError) as exc:
        raise ScoreInputError(f"--evaluator {name}: {exc}") from None


# ---------------------------------------------------------------------- scoring
def score_files(*, hyps: list[str], refs: list[str], evaluators: list[str], src: str | None = None,
                docs: str | None = None, annotations: str | None = None, target_language: str | None = None,
                source_language: str | None = None, nlp: str | None = None, paired: str | None = None,
                paired_n: int | None = None, paired_seed: int | None = None) -> FileScores:
    """Score the hypothesis files ``hyps`` (``FILE`` or ``NAME=FILE``) against ``refs`` with ``evaluators``.

    ``paired`` (``"bs"`` or ``"ar"``) adds sacrebleu's paired test of every other system against the first,
    for the sacrebleu metrics among ``evaluators`` (``paired_n`` samples, ``paired_seed``; sacrebleu's
    defaults when None).  Every input is read and checked before the first evaluator runs.
    """
    names = list(dict.fromkeys(evaluators))
    registry = find_evaluators(names)
    if paired and not any(n in SACREBLEU_KINDS for n in names):
        raise ScoreInputError(f"--paired-{paired}: sacrebleu's paired tests cover {', '.join(SACREBLEU_KINDS)} "
                              f"only; none of them was asked for (--evaluator {' '.join(names)})")
    target, source = language_code(target_language, "--target-language"), \
        language_code(source_language, "--source-language")

    ref_paths = [Path(p) for p in refs]
    ref_path = ref_paths[0]
    ref_lines = read_lines(ref_path, "--ref")
    more_refs = [read_lines(p, "--ref") for p in ref_paths[1:]]
    for path, lines in zip(ref_paths[1:], more_refs):
        _check_length(path, "--ref", len(lines), ref_path, len(ref_lines))
    single = [n for n in names if more_refs and not takes_several_references(registry[n])]
    if single:
        raise ScoreInputError(f"--ref: {len(ref_paths)} references given ({', '.join(map(str, ref_paths))}); "
                              f"{', '.join(single)} score{'s' if len(single) == 1 else ''} against one: give "
                              "one --ref (bleu, chrf and ter take several)")
    systems = read_systems(hyps, ref_path, len(ref_lines))
    sources = None
    if src:
        src_path = Path(src)
        sources = read_lines(src_path, "--src")
        _check_length(src_path, "--src", len(sources), ref_path, len(ref_lines))
    doc_ids = read_documents(Path(docs), len(ref_lines), ref_path) if docs else None
    if annotations and "blonde-plus" not in names:
        raise ScoreInputError("--annotations: only blonde-plus uses human annotations; add --evaluator blonde-plus")
    if "blonde-plus" in names and not annotations:
        raise ScoreInputError("evaluator blonde-plus needs the human annotations of the reference (BlonDe §4.3): "
                              "give --annotations FILE (one line per reference line; see docs/evaluators.md)")
    marked = read_annotations(Path(annotations), ref_lines, ref_path) if annotations else {}
    for name in names:
        ev = registry[name]
        if getattr(ev, "needs_source", False) and sources is None:
            raise ScoreInputError(f"evaluator {name} needs the source segments: give --src FILE")
        if getattr(ev, "needs_documents", False) and doc_ids is None:
            raise ScoreInputError(f"evaluator {name} scores documents: give --docs FILE (one document id a line)")

    guess_evidence = ""
    if target is None:
        guess = guess_language(ref_lines)
        if guess.language is None:
            raise ScoreInputError(f"--ref {ref_path}: cannot guess the target language ({guess.evidence}); "
                                  "give --target-language CODE")
        target, guess_evidence = guess.language, guess.evidence

    corpus = Corpus(
        segments=[Segment(key=str(i + 1), document=doc_ids[i] if doc_ids else "", reference=ref,
                          hypotheses={s.name: s.lines[i] for s in systems},
                          source=sources[i] if sources else None,
                          references=(ref, *(lines[i] for lines in more_refs)) if more_refs else ())
                  for i, ref in enumerate(ref_lines)],
        target_language=target, source_language=source or "", target_language_guessed=bool(guess_evidence),
        annotations=marked,
        reference_names=[str(p) for p in ref_paths] if more_refs else [])
    backend = language_backend(nlp, [n for n in names if n not in SACREBLEU_KINDS])
    for name in names:  # refused before any evaluator runs (each would refuse too, after the others' work)
        if getattr(registry[name], "needs_spacy", False) and not (backend and backend.name.startswith("spacy:")):
            # Only evaluators from the registry need spaCy, so blonde is loaded already; importing it at the
            # top would slow the bleu/chrf/ter case (see read_annotations).
            from evaluators.metrics.blonde import spacy_needed_message

            raise ScoreInputError(f"--evaluator {name}: "
                                  f"{spacy_needed_message(name, backend.name if backend else None)}")
    results = [_run(registry[name], name, corpus, backend) for name in names]
    tests: list[dict[str, Any]] = []
    skipped: list[str] = []
    if paired:
        for name in names:
            if name not in SACREBLEU_KINDS:
                skipped.append(name)
                continue
            try:
                tests.extend(paired_test(corpus, name, method=paired, n_samples=paired_n, seed=paired_seed))
            except ValueError as exc:
                raise ScoreInputError(f"--paired-{paired} ({name}): {exc}") from None
    language = {"code": target, "guessed": bool(guess_evidence), "evidence": guess_evidence or None,
                "source": "guessed from --ref" if guess_evidence else "--target-language"}
    return FileScores(corpus=corpus, results=results, tests=tests, skipped=skipped, language=language,
                      ref_path=ref_path, paired=paired)


# ---------------------------------------------------------------------- outputs
def scores_json(scores: FileScores) -> dict[str, Any]:
    """The ``--json`` output: one row per (evaluator, system), the paired tests; NaN and infinities as null."""
    rows: list[dict[str, Any]] = []
    for result in scores.results:
        for s in result.systems:
            row: dict[str, Any] = {"system": s.system, "evaluator": result.evaluator, "score": s.score,
                                   "higher_is_better": result.higher_is_better, "signature": s.signature}
            for key in ("categories", "counts", "documents"):
                if getattr(s, key) is not None:
                    row[key] = getattr(s, key)
            if s.notes:
                row["notes"] = list(s.notes)
            rows.append(row)
    corpus = scores.corpus
    out: dict[str, Any] = {"target_language": scores.language, "segments": len(corpus.segments),
                           "documents": len(corpus.documents()), "systems": rows, "paired": scores.tests}
    if scores.skipped:
        out["paired_skipped"] = {n: "sacrebleu's paired tests cover bleu, chrf and ter only" for n in scores.skipped}
    return finite(out)


def scores_text(scores: FileScores, width: int) -> str:
    """The text output, scores with ``width`` decimals (sacrebleu prints 1)."""
    corpus, language = scores.corpus, scores.language
    out: list[str] = []
    if language["guessed"]:
        out.append(f"Target language: {language['code']} (GUESSED from {scores.ref_path}: {language['evidence']}; "
                   "set it with --target-language)")
    else:
        out.append(f"Target language: {language['code']}")
    n_docs = len(corpus.documents())
    in_documents = f" in {n_docs} documents" if n_docs < len(corpus.segments) else ""
    out.append(f"Segments: {len(corpus.segments)}{in_documents}")
    label_width = max(len(s) for s in corpus.systems)
    for result in scores.results:
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
    if scores.paired:
        out += ["", *_paired_text(scores.tests, width, scores.paired)]
        out += [f"(no paired test for {n}: sacrebleu's tests cover bleu, chrf and ter only)" for n in scores.skipped]
    return "\n".join(out)


def _paired_text(tests: list[dict[str, Any]], width: int, method: str) -> list[str]:
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
