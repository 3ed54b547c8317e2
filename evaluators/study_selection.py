"""A study file's items ranked by a selection method, before import: only the top ``budget`` become the study.

The study does not exist yet, so the scores the methods read come from (docs/efficient-evaluation.md,
"Creating a study on the selected items"):

* a score file (``scores``): the long CSV ``system,segment,scorer,score`` (formats/mtme.py), whose
  segments are the study file's item ids and whose systems are its candidates' systems; ``metric``
  names the scorer;
* nothing, for the text methods: ``diversity`` reads the candidates' texts (``diversity:SIMILARITY``,
  default unigram) and ``random`` draws with ``seed``;
* a built-in sentence-level metric (``bleu``, ``chrf``, ``ter``: sacrebleu, through the evaluator
  registry, so the scores are those ``evaluate`` would store) computed for every candidate against
  the item's first reference candidate (``is_reference``, study-file order), when no file is given.

The systems are the items' candidates that are not references (as ``select_items --slug``); every system
needs a score on every item. Control (spam) items are made by ``study_create`` from the kept items, after
the selection; tutorial items are not study items and are kept as they are. A study of document blocks
(``unit: document``) is refused: selection picks single items and would cut its documents apart.

The selection is recorded in ``Study.provenance["selection"]`` (:func:`selection_record`), which the
report's ``facts`` block and methods paragraph read (evaluators/reports/facts.py).
"""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from evaluators.metrics.corpus import Corpus, Segment
from evaluators.metrics.registry import evaluators as registered_evaluators
from evaluators.stats.selection import (
    METHODS, SCORE_METHODS, SIMILARITIES, SelectionInputError, budget_count, item_utilities, rank_items,
)
from formats.mtme import ScoreTableError, read_long_csv
from studies.importing.study_file import ParsedStudy

#: The metrics computed at import when no score file is given: sentence-level, no model, no language backend.
BUILT_IN_METRICS = ("bleu", "chrf", "ter")
TEXT_METHODS = ("diversity", "random")
SOURCE = "subset2evaluate; Zouhar et al., 2025"
MAX_NAMED = 5


class SelectionError(ValueError):
    """Problems by field: ``{"method"|"metric"|"budget"|"scores"|"seed": [message, ...]}``."""

    def __init__(self, errors: dict[str, list[str]]):
        super().__init__("; ".join(f"{k}: {m}" for k, ms in errors.items() for m in ms))
        self.errors = errors


def _fail(field: str, message: str) -> SelectionError:
    return SelectionError({field: [message]})


@dataclass(frozen=True)
class SelectionRequest:
    """What the researcher asked for: ``METHOD[:METRIC]``, a budget, a seed and maybe a score file."""

    method: str
    metric: str
    budget: str
    seed: int = 0
    scores_name: str = ""
    scores_text: str | None = None


def parse_select(value: str) -> tuple[str, str]:
    """``METHOD:METRIC`` (``metric_var:chrf``), ``diversity[:SIMILARITY]`` or ``random`` as (method, metric)."""
    method, _, metric = value.strip().partition(":")
    method, metric = method.strip(), metric.strip()
    if method not in METHODS:
        raise _fail("method", f"unknown method {method!r}; methods: {', '.join(METHODS)}")
    if method in SCORE_METHODS and not metric:
        raise _fail("metric", f"{method} needs a metric: {method}:METRIC (a scorer of the score file, or one of "
                              f"{', '.join(BUILT_IN_METRICS)} computed against the items' reference)")
    if method == "diversity" and metric and metric not in SIMILARITIES:
        raise _fail("metric", f"diversity:{metric}: the similarity is one of {', '.join(SIMILARITIES)}")
    if method == "random" and metric:
        raise _fail("metric", "random takes no metric (the seed decides the order)")
    return method, metric


@dataclass
class Selection:
    """The ranked study-file items and what was kept; ``record()`` is what the study stores."""

    request: SelectionRequest
    ranked: list[tuple[str, float]]  # every item id with its utility, most useful first
    kept: list[str]
    n_total: int
    n_systems: int
    scores: dict[str, Any]  # where the scores came from (selection_record's "scores")

    def record(self) -> dict[str, Any]:
        """The selection as ``Study.provenance["selection"]`` stores it (docs/reports.md, "The facts block")."""
        req = self.request
        method = req.method
        return {
            "method": method,
            "metric": req.metric if method in SCORE_METHODS else None,
            "similarity": (req.metric or "unigram") if method == "diversity" else None,
            "seed": req.seed if method == "random" else None,
            "budget": req.budget,
            "n_kept": len(self.kept),
            "n_total": self.n_total,
            "n_systems": self.n_systems,
            "scores": self.scores,
            "kept_sha256": _ids_digest(self.kept),
            "source": SOURCE,
        }


def _ids_digest(ids: list[str]) -> str:
    """SHA-256 of the ids one a line, in the given order (the kept items, most useful first)."""
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()


def _systems(parsed: ParsedStudy) -> list[str]:
    """The non-reference systems of the study file, in first-seen order."""
    return list(dict.fromkeys(c["system"] for item in parsed.items for c in item["candidates"]
                              if not c["is_reference"]))


def _matrix_from_file(parsed: ParsedStudy, request: SelectionRequest, systems: list[str]) -> np.ndarray:
    try:
        table = read_long_csv(request.scores_name or "scores", request.scores_text or "")
    except ScoreTableError as exc:
        raise SelectionError({"scores": exc.errors}) from None
    if request.metric not in table.seg:
        raise _fail("metric", f"no scorer {request.metric!r} in {request.scores_name or 'the score file'}; "
                              f"scorers: {', '.join(table.scorers)}")
    values = table.seg[request.metric]
    at_system = {s: i for i, s in enumerate(table.systems)}
    at_segment = {s: j for j, s in enumerate(table.segments)}
    ids = [item["external_id"] for item in parsed.items]
    if not any(i in at_segment for i in ids):
        raise _fail("scores", f"no segment of {request.scores_name or 'the score file'} is an item id of the study "
                              f"file (segments such as {', '.join(repr(s) for s in table.segments[:3])}; item ids "
                              f"such as {', '.join(repr(i) for i in ids[:3])})")
    matrix = np.full((len(systems), len(ids)), np.nan)
    for j, item in enumerate(parsed.items):
        col = at_segment.get(item["external_id"])
        for cand in item["candidates"]:
            if cand["is_reference"] or col is None or cand["system"] not in at_system:
                continue
            matrix[systems.index(cand["system"]), j] = values[at_system[cand["system"]], col]
    return matrix


def _first_reference(item: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in sorted(item["candidates"], key=lambda c: c["position"]) if c["is_reference"]), None)


def _matrix_computed(parsed: ParsedStudy, request: SelectionRequest, systems: list[str]) -> np.ndarray:
    """Sentence scores of every candidate against its item's first reference, by the registry's evaluator."""
    missing = [item["external_id"] for item in parsed.items if _first_reference(item) is None]
    if missing:
        more = f" and {len(missing) - MAX_NAMED} more" if len(missing) > MAX_NAMED else ""
        raise _fail("scores", f"{request.metric} is computed against each item's reference candidate "
                              f"(is_reference), and item(s) {', '.join(repr(i) for i in missing[:MAX_NAMED])}{more} "
                              "have none: give a score file instead")
    segments = []
    for item in parsed.items:
        reference = _first_reference(item)
        assert reference is not None
        segments.append(Segment(key=item["external_id"], document=item["document_id"], reference=reference["text"],
                                hypotheses={c["system"]: c["text"] for c in item["candidates"]
                                            if not c["is_reference"]}, source=item["source"] or None))
    languages = Counter(item["target_language"] for item in parsed.items if item["target_language"])
    language = (parsed.fields.get("target_language") or "").strip() or (
        languages.most_common(1)[0][0] if languages else "")
    result = registered_evaluators()[request.metric].evaluate(Corpus(segments=segments, target_language=language))
    at_item = {item["external_id"]: j for j, item in enumerate(parsed.items)}
    matrix = np.full((len(systems), len(parsed.items)), np.nan)
    for row in result.segments:
        if row.score is not None and row.system in systems and row.key in at_item:
            matrix[systems.index(row.system), at_item[row.key]] = row.score
    return -matrix if not result.higher_is_better else matrix


def _missing_cells(matrix: np.ndarray, systems: list[str], ids: list[str], parsed: ParsedStudy) -> str | None:
    rows, cols = np.nonzero(~np.isfinite(matrix))
    if rows.size == 0:
        return None
    has = [{c["system"] for c in item["candidates"]} for item in parsed.items]
    shown = [f"system {systems[i]!r} on item {ids[j]!r}" + ("" if systems[i] in has[j] else " (no such candidate)")
             for i, j in zip(rows[:MAX_NAMED], cols[:MAX_NAMED])]
    more = f" and {rows.size - MAX_NAMED} more" if rows.size > MAX_NAMED else ""
    return f"no score for {'; '.join(shown)}{more} (every system needs a score on every item)"


def select_items(parsed: ParsedStudy, request: SelectionRequest) -> Selection:
    """Rank the parsed study file's items by ``request`` and keep the top budget; SelectionError by field."""
    method, metric = parse_select(f"{request.method}:{request.metric}" if request.metric else request.method)
    if parsed.fields.get("unit") == "document":
        raise _fail("method", "the study is judged in document blocks (unit: document); selection picks single "
                              "items and would cut its documents apart")
    if not 0 <= request.seed < 2 ** 63:
        raise _fail("seed", "between 0 and 2^63 - 1")
    ids = [item["external_id"] for item in parsed.items]
    try:
        count = budget_count(request.budget, len(ids))
    except ValueError as exc:
        raise _fail("budget", str(exc)) from None
    systems = _systems(parsed)
    if not systems:
        raise _fail("method", "the study file's items have no candidate that is not a reference")
    texts = [[c["text"] for c in item["candidates"] if not c["is_reference"]] for item in parsed.items]
    scores: dict[str, Any]
    if method in TEXT_METHODS:
        if request.scores_text is not None:
            raise _fail("scores", f"{method} reads no scores: leave the score file out")
        matrix = np.zeros((len(systems), len(ids)))
        scores = {"source": "texts" if method == "diversity" else None, "file": None, "sha256": None,
                  "reference": None}
    elif request.scores_text is not None:
        matrix = _matrix_from_file(parsed, request, systems)
        scores = {"source": "file", "file": request.scores_name or None,
                  "sha256": hashlib.sha256(request.scores_text.encode()).hexdigest(), "reference": None}
    elif metric in BUILT_IN_METRICS:
        matrix = _matrix_computed(parsed, request, systems)
        scores = {"source": "computed", "file": None, "sha256": None,
                  "reference": "the first reference candidate (is_reference) of each item"}
    else:
        raise _fail("metric", f"{metric!r} is not computed here (built in: {', '.join(BUILT_IN_METRICS)}): give a "
                              "score file with its scores")
    if method not in TEXT_METHODS:
        missing = _missing_cells(matrix, systems, ids, parsed)
        if missing:
            raise _fail("scores", f"{metric}: {missing}")
    try:
        utilities = item_utilities(method, scores=matrix, texts=texts, seed=request.seed,
                                   similarity=metric or "unigram")
    except SelectionInputError as exc:
        raise _fail("method", str(exc)) from None
    ranked = [(r.segment, r.utility) for r in rank_items(ids, utilities)]
    return Selection(request=SelectionRequest(method, metric, request.budget.strip(), request.seed,
                                              request.scores_name, request.scores_text),
                     ranked=ranked, kept=[i for i, _ in ranked[:count]], n_total=len(ids), n_systems=len(systems),
                     scores=scores)


def apply_selection(parsed: ParsedStudy, selection: Selection) -> ParsedStudy:
    """The parsed study with the kept items only (in study-file order) and the selection in its provenance."""
    kept = set(selection.kept)
    fields = {**parsed.fields, "provenance": {"selection": selection.record()}}
    return ParsedStudy(fields=fields, items=[item for item in parsed.items if item["external_id"] in kept])
