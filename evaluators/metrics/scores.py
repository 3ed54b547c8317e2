"""Services that store metric scores: importing a score file, running a registry evaluator on a study.

A score file is validated whole before anything is written: every bad row is
reported with its line and field, and a file with any error stores nothing
(one transaction, entered only after validation).
"""
from __future__ import annotations

import csv
import io
import json
import math
import multiprocessing
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils import timezone

from annotation.handout.statements import insert_rows
from config.safetext import json_problems, text_problem
from evaluators import progress
from evaluators.metrics.corpus import takes_several_references
from evaluators.metrics.language import get_backend
from evaluators.metrics.registry import evaluators
from evaluators.metrics.sacrebleu_metrics import KINDS
from evaluators.metrics.significance import DEFAULT_SAMPLES, DEFAULT_SEED, METHODS, paired_test
from evaluators.metrics.study_corpus import ReferenceChoiceError, build_study_corpus, references_text
from evaluators.models import Evaluator, EvaluatorKind, MetricScore
from studies.models import Candidate, Item, Study

if TYPE_CHECKING:
    from evaluators.metrics.language.base import Backend
    from evaluators.metrics.study_corpus import StudyCorpus

SCORE_COLUMNS = ("item", "system", "score")
OPTIONAL_COLUMNS = ("document", "name", "higher_is_better")
_TRUE = {"true", "1", "yes", "y", "t", "higher"}
_FALSE = {"false", "0", "no", "n", "f", "lower"}
MAX_ERRORS = 50  # a broken file should not produce a 100 000-line message


class ScoreFileError(Exception):
    """The score file has problems; ``errors`` lists them as "line N: field: message"."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


class UnknownEvaluatorError(ValueError):
    """No registered evaluator has this name; the message lists the available ones."""


class EvaluationError(ValueError):
    """The evaluator cannot score this study (no item with a reference, a language it has no list for, ...)."""


class PreparationFailed(EvaluationError):
    """Evaluator ``name`` of :func:`evaluators_prepare` refused the study; ``error`` says why."""

    def __init__(self, name: str, error: Exception) -> None:
        super().__init__(str(error))
        self.name = name
        self.error = error


def evaluator_names() -> list[str]:
    """Every evaluator ``evaluate`` can run on a study: the registry's, by name."""
    return sorted(evaluators())


@dataclass
class _Row:
    line: int
    name: str
    item: Item
    system: str
    score: float
    document: str
    higher_is_better: bool | None


def _records(file_name: str, content: str) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """(line number, raw record) pairs from CSV/TSV (by extension) or JSON Lines (otherwise)."""
    content = content.lstrip("\ufeff")
    lower = file_name.lower()
    errors: list[str] = []
    records: list[tuple[int, dict[str, Any]]] = []
    if lower.endswith((".csv", ".tsv")):
        reader = csv.DictReader(io.StringIO(content), delimiter="\t" if lower.endswith(".tsv") else ",")
        header = [h.strip() for h in (reader.fieldnames or [])]
        reader.fieldnames = header
        missing = [c for c in SCORE_COLUMNS if c not in header]
        if missing:
            return [], [f"line 1: header: missing column(s) {', '.join(missing)} (need item, system, score)"]
        for row in reader:
            line_start = reader.line_num  # the record's last physical line (= its line unless a cell spans lines)
            if None in row:  # more cells than header columns
                errors.append(f"line {line_start}: row has {len(header) + len(row[None])} cells, header has {len(header)}")
                continue
            if all((v or "").strip() == "" for v in row.values()):
                continue
            records.append((line_start, row))
        return records, errors
    for lineno, text in enumerate(content.splitlines(), start=1):
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            errors.append(f"line {lineno}: not valid JSON ({exc.msg})")
            continue
        if not isinstance(value, dict):
            errors.append(f"line {lineno}: expected a JSON object with item, system, score")
            continue
        unsafe = [f"line {lineno}: {field}: {problem}" for field, problem, _ in json_problems(value)
                  if not (field == "score" and isinstance(value.get("score"), float))]  # a NaN score: named below
        if unsafe:
            errors.extend(unsafe)
            continue
        records.append((lineno, value))
    return records, errors


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


def _bool(value: Any) -> bool | None | str:
    """True/False, None when blank, or the string "bad" when unreadable."""
    if isinstance(value, bool):
        return value
    text = _text(value).lower()
    if text == "":
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return "bad"


def _score(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        try:
            number = float(_text(value))
        except ValueError:
            return None
    return number if math.isfinite(number) else None


def _unsafe_text(content: str, name: str | None) -> list[str]:
    """A NUL character or lone surrogate in the file (by line) or the name: never stored (config/safetext.py)."""
    errors = [f"name: {problem}" for problem in [text_problem(name or "")] if problem]
    if text_problem(content):
        errors += [f"line {n}: {problem}" for n, line in enumerate(content.splitlines(), start=1)
                   for problem in [text_problem(line)] if problem]
    return errors[:MAX_ERRORS]


def parse_scores(*, study: Study, file_name: str, content: str, name: str | None = None,
                 higher_is_better: bool | None = None) -> dict[str, tuple[bool, list[_Row]]]:
    """Validate a score file; return {metric name: (higher_is_better, rows)} or raise ScoreFileError.

    Checks, each reported as ``line N: field: message``: required columns,
    unknown item id, a system that has no candidate for that item, a
    non-numeric (or NaN/infinite) score, a document that contradicts the item's,
    a duplicate (name, item, system), a missing metric name (no ``name`` column
    and no ``name`` option), a name clashing with a built-in evaluator,
    an unreadable or inconsistent ``higher_is_better``, and a metric whose
    orientation is given nowhere (neither option, column, nor an earlier import).
    """
    unsafe = _unsafe_text(content, name)
    if unsafe:
        raise ScoreFileError(unsafe)
    records, errors = _records(file_name, content)
    items = {ext: item for ext, item in ((i.external_id, i) for i in Item.objects.filter(study=study))}
    systems: dict[int, set[str]] = {}
    for item_id, system in Candidate.objects.filter(item__study=study).values_list("item_id", "system"):
        systems.setdefault(item_id, set()).add(system)
    option_name = (name or "").strip() or None
    seen: dict[tuple[str, str, str], int] = {}
    rows: list[_Row] = []
    for line, rec in records:
        where = f"line {line}"
        row_name = _text(rec.get("name")) or option_name
        bad = False
        if row_name is None:
            errors.append(f"{where}: name: missing (give --name or a 'name' column)")
            bad = True
        elif option_name and _text(rec.get("name")) and _text(rec.get("name")) != option_name:
            errors.append(f"{where}: name: {_text(rec.get('name'))!r} differs from the --name option {option_name!r}")
            bad = True
        ext = _text(rec.get("item"))
        item = items.get(ext)
        if not ext:
            errors.append(f"{where}: item: missing")
            bad = True
        elif item is None:
            errors.append(f"{where}: item: unknown item id {ext!r} in study {study.slug!r}")
            bad = True
        system = _text(rec.get("system"))
        if not system:
            errors.append(f"{where}: system: missing")
            bad = True
        elif item is not None and system not in systems.get(item.pk, set()):
            known = ", ".join(sorted(systems.get(item.pk, set()))) or "none"
            errors.append(f"{where}: system: {system!r} has no candidate for item {ext!r} (systems: {known})")
            bad = True
        score = _score(rec.get("score"))
        if score is None:
            errors.append(f"{where}: score: {rec.get('score')!r} is not a finite number")
            bad = True
        document = _text(rec.get("document"))
        if item is not None and document and item.document_id and document != item.document_id:
            errors.append(f"{where}: document: {document!r} but item {ext!r} belongs to {item.document_id!r}")
            bad = True
        hib = _bool(rec.get("higher_is_better"))
        if hib == "bad":
            errors.append(f"{where}: higher_is_better: {rec.get('higher_is_better')!r} is not true/false")
            bad = True
        elif hib is not None and higher_is_better is not None and hib != higher_is_better:
            errors.append(f"{where}: higher_is_better: {hib} contradicts the option ({higher_is_better})")
            bad = True
        if row_name and ext and system:
            key = (row_name, ext, system)
            if key in seen:
                errors.append(f"{where}: item/system: duplicate of line {seen[key]} ({ext!r}, {system!r})")
                bad = True
            else:
                seen[key] = line
        if not bad:
            assert row_name is not None and item is not None and score is not None  # else the row was bad
            rows.append(_Row(line, row_name, item, system, score, document or item.document_id,
                             hib if isinstance(hib, bool) else None))
    if not records and not errors:
        errors.append("file: no score rows")

    metrics: dict[str, tuple[bool, list[_Row]]] = {}
    by_name: dict[str, list[_Row]] = {}
    for row in rows:
        by_name.setdefault(row.name, []).append(row)
    existing = {e.name: e for e in Evaluator.objects.filter(study=study, name__in=list(by_name))}
    for metric, metric_rows in by_name.items():
        first = metric_rows[0].line
        if metric in evaluator_names() or (metric in existing and existing[metric].kind == EvaluatorKind.BUILTIN):
            errors.append(f"line {first}: name: {metric!r} is a built-in evaluator; import under another name")
            continue
        if len(metric) > 100:
            errors.append(f"line {first}: name: longer than 100 characters")
            continue
        given = {r.higher_is_better for r in metric_rows if r.higher_is_better is not None}
        if len(given) > 1:
            lines = [r.line for r in metric_rows if r.higher_is_better is not None and r.higher_is_better != metric_rows[0].higher_is_better]
            errors.append(f"line {lines[0] if lines else first}: higher_is_better: inconsistent values for metric {metric!r}")
            continue
        orientation = higher_is_better if higher_is_better is not None else (given.pop() if given else None)
        if orientation is None and metric in existing:
            orientation = existing[metric].higher_is_better
        if orientation is None:
            errors.append(f"line {first}: higher_is_better: not given for metric {metric!r} "
                          "(use --higher-is-better / --lower-is-better or a higher_is_better column)")
            continue
        metrics[metric] = (orientation, metric_rows)
    if errors:
        shown = errors[:MAX_ERRORS]
        if len(errors) > MAX_ERRORS:
            shown.append(f"… and {len(errors) - MAX_ERRORS} more error(s)")
        raise ScoreFileError(shown)
    return metrics


def _replace_scores(evaluator: Evaluator, rows: list[MetricScore]) -> None:
    MetricScore.objects.filter(evaluator=evaluator).delete()
    MetricScore.objects.bulk_create(rows, batch_size=2000)


def scores_import(*, study: Study, file_name: str, content: str, name: str | None = None,
                  higher_is_better: bool | None = None, description: str = "") -> list[Evaluator]:
    """Store an external metric's scores (CSV/TSV or JSON Lines); one Evaluator per metric name.

    Re-importing a name replaces that metric's scores wholly. Raises
    :class:`ScoreFileError` (nothing stored) when any row is bad.
    """
    metrics = parse_scores(study=study, file_name=file_name, content=content, name=name,
                           higher_is_better=higher_is_better)
    out: list[Evaluator] = []
    with transaction.atomic():
        for metric, (orientation, rows) in metrics.items():
            evaluator, _ = Evaluator.objects.update_or_create(
                study=study, name=metric,
                defaults={"higher_is_better": orientation, "kind": EvaluatorKind.IMPORTED,
                          **({"description": description} if description else {})})
            evaluator.full_clean()
            _replace_scores(evaluator, [MetricScore(evaluator=evaluator, item=r.item, system=r.system, score=r.score,
                                                    document=r.document) for r in rows])
            out.append(evaluator)
    return out


#: Paired test methods ``evaluator_run`` accepts (sacrebleu's), or None for no test.
PAIRED_METHODS = ("bs", "ar")


def _json_safe(value: Any) -> Any:
    """``value`` with every non-finite float (NaN, ±inf) as None, tuples as lists: storable as JSON anywhere."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def _paired(corpus: Any, name: str, method: str | None) -> tuple[dict[str, Any] | None, list[str]]:
    """sacrebleu's paired test of every system against the first, for a corpus metric; (None, notes) if none."""
    if method is None or len(corpus.systems) < 2 or name not in KINDS:  # sacrebleu's tests: its metrics only
        return None, []

    try:
        tests = paired_test(corpus, name, method=method)
    except ValueError as exc:  # not a sacrebleu corpus metric, no segment every system translated, ...
        return None, [f"no paired significance test: {exc}"]
    return {"method": method, "method_name": METHODS[method], "baseline": tests[0]["baseline"],
            "n_samples": tests[0]["n_samples"] if tests else DEFAULT_SAMPLES[method],
            "seed": tests[0]["seed"] if tests else DEFAULT_SEED, "tests": tests}, []


def reference_label(names: list[str]) -> str:
    """The reference part of a stored signature: ``ref:refB`` (``ref:ref,refB`` for several; "" unnamed)."""
    return f"ref:{','.join(names)}" if names else ""


def with_reference(signature: str, names: list[str]) -> str:
    """``signature`` naming the reference(s) it was computed against (``...|ref:refB``)."""
    label = reference_label(names)
    if not label or not signature:
        return signature or label
    return f"{signature}|{label}"


@dataclass
class PreparedRun:
    """A registry evaluator's finished run on a study, not stored yet (:func:`evaluators_store` stores it)."""

    study: Study
    name: str
    fields: dict[str, Any]  # the Evaluator's fields (orientation, description, signature, backend, ...)
    #: the MetricScore rows by attname (``item_id``, ``system``, ``score``, ``document``), without their evaluator:
    #: plain dicts, not model instances (100,000 of them on a WMT release; :func:`evaluators_store`)
    rows: list[dict[str, Any]]


def evaluator_run(*, study: Study, name: str, nlp: str | Backend | None = None, paired: str | None = "bs",
                  built: StudyCorpus | None = None, reference: str | None = None) -> Evaluator:
    """Run one registry evaluator over the study and store (replace) its results: :func:`evaluator_prepare`, stored."""
    return evaluators_store([evaluator_prepare(study=study, name=name, nlp=nlp, paired=paired, built=built,
                                               reference=reference)])[0]


def evaluators_store(runs: list[PreparedRun]) -> list[Evaluator]:
    """Store (replace) every prepared run in one transaction: all of them or, on any error, none."""
    out: list[Evaluator] = []
    with transaction.atomic():
        for run in runs:
            evaluator, _ = Evaluator.objects.update_or_create(study=run.study, name=run.name, defaults=run.fields)
            MetricScore.objects.filter(evaluator=evaluator).delete()
            # one executemany, no model instances: bulk_create cost ~5 s CPU on the 14 x 529 TED study's
            # 100,000 scores (docs/evaluators.md, "Speed at release scale")
            insert_rows(MetricScore, [{**row, "evaluator_id": evaluator.pk} for row in run.rows], now=timezone.now())
            out.append(evaluator)
    return out


def evaluator_prepare(*, study: Study, name: str, nlp: str | Backend | None = None, paired: str | None = "bs",
                      built: StudyCorpus | None = None, reference: str | None = None) -> PreparedRun:
    """Run a registry evaluator over the study: its scores, system scores and signature, ready to store.

    Nothing is written: several evaluators are run first and stored together
    (:func:`evaluators_store`), so that a failing one leaves the study's scores as they were.

    The study becomes a :class:`~evaluators.metrics.corpus.Corpus`
    (:func:`evaluators.metrics.study_corpus.build_study_corpus`); the
    evaluator's segment scores are stored as :class:`MetricScore` rows (an
    undefined score, ``None``, is not stored and is counted in a note; a
    document-level score is stored on each of the document's items with
    ``document`` set); its corpus-level system scores, signature, notes and,
    for sacrebleu's corpus metrics with two or more systems, the paired test
    of every system against the first (``paired``: ``"bs"``, ``"ar"`` or
    None) go on the :class:`Evaluator`.  ``nlp``: the language backend spec
    (``lexicon``, ``spacy:NAME``) or a ready backend; None: the evaluator's default.  ``built``: the
    study's corpus when the caller already has it (several evaluators in a row build it once), built with
    the same ``reference``.  ``reference``: the reference system to score against (one of the study's
    reference candidates; the others are then scored like systems); None: the study's only one, or, when
    items have several, all of them for the evaluators that take several references (sacrebleu's BLEU,
    chrF, TER) and :class:`EvaluationError` listing them for the others.  The references used are stored
    (``Evaluator.references``) and named in every signature (``|ref:NAME``) and in a note.

    Raises :class:`UnknownEvaluatorError` naming the available evaluators, or
    :class:`EvaluationError` (a ``ValueError``) when the evaluator refuses the
    study.
    """
    registry = evaluators()
    spec = registry.get(name)
    if spec is None:
        raise UnknownEvaluatorError(f"unknown evaluator {name!r}; available: {', '.join(sorted(registry))}")
    if paired is not None and paired not in PAIRED_METHODS:
        raise ValueError(f"paired: unknown method {paired!r}; one of {', '.join(PAIRED_METHODS)} or none")
    backend: Backend | None = None
    if nlp is not None and not isinstance(nlp, str):
        backend = nlp
    elif nlp:
        try:
            backend = get_backend(nlp)
        except (ValueError, RuntimeError, ImportError, OSError) as exc:  # unknown kind; spaCy/pipeline missing
            raise EvaluationError(f"nlp: {exc}") from exc
    if built is None:
        try:
            built = build_study_corpus(study, reference)
        except ReferenceChoiceError as exc:
            raise EvaluationError(str(exc)) from exc
    corpus = built.corpus
    several = corpus.several_references
    if several and not takes_several_references(spec):
        raise EvaluationError(
            f"study {study.slug!r} has several references per item ({references_text(corpus.reference_names)}) "
            f"and {name} scores against one: choose it with --reference NAME (one of "
            f"{references_text(corpus.reference_names)}); bleu, chrf and ter use all references by default")
    if not corpus.segments:
        raise EvaluationError(f"{name}: study {study.slug!r} has no real item with a reference candidate: "
                              "nothing to score (reference-based metrics)")

    def report(done: int, total: int) -> None:
        progress.report(done, total, name)

    try:
        result = spec.evaluate(corpus, nlp=backend, progress=report)
    except (ValueError, LookupError) as exc:
        raise EvaluationError(str(exc)) from exc
    paired_block, paired_notes = _paired(corpus, name, paired)
    rows: list[dict[str, Any]] = []
    undefined = 0
    for seg in result.segments:
        item = built.items.get(seg.key)
        if item is None:
            continue
        if seg.score is None or not math.isfinite(seg.score):
            undefined += 1
            continue
        rows.append({"item_id": item.pk, "system": seg.system, "score": float(seg.score),
                     "document": item.document_id if seg.document else ""})
    notes = list(built.notes)
    used = list(corpus.reference_names)
    if several:
        notes.append(f"scored against all {len(used)} references ({references_text(used)}), sacrebleu's "
                     "multi-reference statistic; --reference NAME scores against one")
    elif used and not any(n.startswith(f"reference {used[0]!r} (chosen)") for n in notes):
        notes.append(f"reference: {references_text(used)}")
    # The corpus' own note on the target language says it already (the evaluators repeat it per system).
    language_said = any(n.startswith("target language") for n in built.notes)
    for system in result.systems:  # a note every system has is said once; others name their system
        for note in system.notes:
            if language_said and note.startswith(f"target language {corpus.target_language!r} was guessed"):
                continue
            shared = all(note in other.notes for other in result.systems)
            text = note if shared or note.startswith(f"{system.system} ") else f"{system.system}: {note}"
            if text not in notes:
                notes.append(text)
    if undefined:
        notes.append(f"{undefined} segment score(s) undefined: not stored, left out of the means")
    notes += paired_notes
    system_scores = _json_safe({s.system: {"score": s.score, "signature": with_reference(s.signature, used),
                                           "categories": s.categories, "counts": s.counts, "notes": s.notes}
                                for s in result.systems})
    signature = "\n".join(dict.fromkeys(with_reference(s.signature, used) for s in result.systems if s.signature))
    return PreparedRun(study=study, name=name, rows=rows, fields={
        "higher_is_better": result.higher_is_better, "kind": EvaluatorKind.BUILTIN,
        "description": spec.description, "signature": signature, "backend": backend.name if backend is not None else "",
        "system_scores": system_scores, "notes": notes, "paired": _json_safe(paired_block), "references": used})


def uses_backend(name: str) -> bool:
    """Whether the registry evaluator ``name`` analyses text with a language backend (True unless it says not)."""
    return bool(getattr(evaluators().get(name), "uses_backend", True))


#: Called as each evaluator of :func:`evaluators_prepare` finishes, with its name (from a helper thread when
#: the run is split over two processes).
DoneCallback = Callable[[str], None]


def evaluators_prepare(*, study: Study, names: list[str], nlp: str | Backend | None = None,
                       paired: str | None = "bs", built: StudyCorpus, reference: str | None = None,
                       processes: int = 1, done: DoneCallback | None = None) -> list[PreparedRun]:
    """:func:`evaluator_prepare` of every evaluator of ``names``, in that order; nothing is stored.

    The first evaluator (in ``names``' order) that refuses the study raises :class:`PreparationFailed`.

    ``processes=2`` runs the evaluators that use no language backend (sacrebleu's) in a forked child process
    and the others here, at the same time: the wall time of the longer half, not their sum, when the second core
    is free, for a little more CPU (the child's runs pickled back; docs/evaluators.md has the figures). The
    backend's cache of analysed texts stays shared by the evaluators that use it, all in this process.
    The child computes on the corpus already in memory and sends its runs back through a pipe; it makes no
    database query (the parent stores everything); refusals are raised once both halves are finished.
    """
    apart = [n for n in names if not uses_backend(n)] if processes > 1 else []
    here = [n for n in names if n not in apart]
    kwargs: dict[str, Any] = {"study": study, "nlp": nlp, "paired": paired, "built": built, "reference": reference}
    if not apart or not here:
        out = []
        for name in names:
            try:
                out.append(evaluator_prepare(name=name, **kwargs))
            except (UnknownEvaluatorError, EvaluationError) as exc:
                raise PreparationFailed(name, exc) from exc
            if done:
                done(name)
        return out
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_prepare_apart, args=(send, apart, kwargs), daemon=True)
    child.start()
    send.close()
    results: dict[str, PreparedRun | Exception] = {}

    def collect() -> None:  # a thread: the child's runs are read while this process computes its own
        while True:
            try:
                name, outcome = receive.recv()
            except EOFError:  # the child ended
                return
            results[name] = outcome
            if done and not isinstance(outcome, Exception):
                done(name)

    reader = threading.Thread(target=collect, daemon=True)
    reader.start()
    for name in here:
        try:
            results[name] = evaluator_prepare(name=name, **kwargs)
        except (UnknownEvaluatorError, EvaluationError) as exc:
            results[name] = exc
            continue
        if done:
            done(name)
    child.join()
    reader.join()
    receive.close()
    prepared: list[PreparedRun] = []
    for name in names:
        outcome = results.get(name)
        if outcome is None:
            raise RuntimeError(f"{name}: the process computing it ended without a result (exit code {child.exitcode})")
        if isinstance(outcome, (UnknownEvaluatorError, EvaluationError)):
            raise PreparationFailed(name, outcome) from outcome
        if isinstance(outcome, Exception):
            raise outcome
        prepared.append(outcome)
    return prepared


def _prepare_apart(send: Any, names: list[str], kwargs: dict[str, Any]) -> None:
    """The forked child of :func:`evaluators_prepare`: each run (or its refusal, or the error) sent as it ends."""
    name = names[0]
    try:
        for name in names:
            try:
                send.send((name, evaluator_prepare(name=name, **kwargs)))
            except (UnknownEvaluatorError, EvaluationError) as exc:
                send.send((name, exc))
    except BaseException as exc:  # an unexpected error: raised in the parent instead of lost with this process
        send.send((name, RuntimeError(f"{name}: {type(exc).__name__}: {exc}")))
    finally:
        send.close()
