"""Exporting judgments: one row per (judgment, candidate).

``judgment_rows`` is the single source of every export — the ``export_judgments``
command, the staff download views, the admin action, the researcher API and
``judgments_frame`` (the DataFrame the statistics read) — so they can never
disagree. It runs a constant number of queries (candidates, items, annotators,
judgments), streams the judgments with ``iterator()``, and never loads model
instances.
"""
from __future__ import annotations

import io
import json
import operator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import IntegerField, Value

from annotation.handout.suggestions import candidate_suggestions, study_suggestions
from annotation.models import Judgment
from formats.csvcells import SUSPECT_FIRST, csv_writer, escape_cell
from studies.models import Candidate, Item, Study

if TYPE_CHECKING:  # pandas is imported lazily: the CSV export does not need it
    import pandas

#: The columns of INTERFACES.md, in order.
BASE_COLUMNS = [
    "study", "item", "document", "annotator", "system", "is_reference", "is_spam",
    "rank", "choice", "label", "screen_position", "started_at", "submitted_at", "duration_ms",
]
#: Extra columns (extending the interface, never renaming it).
EXTRA_COLUMNS = [
    "is_spam_candidate", "judgment", "revision", "is_current", "phenomenon", "protocol", "chosen", "excluded",
    "pilot", "client_duration_ms", "score", "spans", "control_error", "assisted", "suggestions",
]
COLUMNS = BASE_COLUMNS + EXTRA_COLUMNS

FORMATS = ("csv", "jsonl")


@contextmanager
def _snapshot() -> Iterator[None]:
    """One transaction that every read of an export sees the database through, as of one moment.

    On PostgreSQL, REPEATABLE READ: every statement of the transaction sees the snapshot taken by its first
    one, so candidates, items, annotators and judgments read in separate queries (and the judgments streamed
    afterwards) agree even while annotators arrive, answer or are excluded; the reads never block writers.
    On SQLite one transaction is a snapshot already (IMMEDIATE, config/settings.py: writers wait for the
    export, up to the connection's timeout). Inside a caller's transaction the isolation can no longer be
    chosen: the export then reads through that transaction (a savepoint), as the caller set it up.
    """
    connection = connections[DEFAULT_DB_ALIAS]
    outer = connection.in_atomic_block
    with transaction.atomic():
        if not outer and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


def judgment_rows(study: Study, *, history: bool = False) -> Iterator[dict[str, Any]]:
    """Yield one dict per (judgment, candidate of its item), keys = ``COLUMNS``.

    Only current judgments unless ``history``: then superseded revisions too,
    with ``is_current`` False. Rows come annotator by annotator in the order they
    worked, then candidates in study-file order. Values are Python objects
    (datetimes, bools, None); the writers below format them.

    Every query runs in one snapshot (``_snapshot``), held until the last row
    is yielded or the consumer closes the generator. An error part-way
    (a lost connection, say) propagates to the consumer: streaming responses
    then abort the transfer (docs/export.md), never end it as a short file.
    """
    with _snapshot():
        yield from _judgment_rows(study, history=history, columns=_ALL, as_dict=True)


def judgment_cells(study: Study, columns: Iterable[str], *, history: bool = False) -> Iterator[tuple[Any, ...]]:
    """The rows of :func:`judgment_rows` as tuples of ``columns`` (names of ``COLUMNS``), in that order.

    The same rows and values, read in the same snapshot; what no requested column needs is not read (the
    times, the screen order), and no dict is built per row. The reports read their frame this way.
    """
    wanted = tuple(columns)
    unknown = [c for c in wanted if c not in COLUMNS]
    if unknown:
        raise ValueError(f"unknown export column(s): {', '.join(unknown)}")
    with _snapshot():
        yield from _judgment_rows(study, history=history, columns=wanted)


_ALL = tuple(COLUMNS)


def _same(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return row


#: Columns read from the judgment row only when asked for: (column, the judgment field it needs).
_OPTIONAL_FIELDS = (("started_at", "started_at"), ("submitted_at", "submitted_at"),
                    ("screen_position", "assignment__candidate_order"), ("client_duration_ms", "client_duration_ms"))


def _judgment_rows(study: Study, *, history: bool, columns: tuple[str, ...], as_dict: bool = False) -> Iterator[Any]:
    """Tuples of ``columns`` (``as_dict``: dicts of every column, ``columns`` being ``COLUMNS``); a column that is
    not asked for and costs a read (``_OPTIONAL_FIELDS``) is None."""
    candidates: dict[int, list[tuple[int, str, bool, bool]]] = {}
    for pk, item_id, system, is_ref, is_spam in (Candidate.objects.filter(item__study=study)
                                                 .order_by("item_id", "position", "pk")
                                                 .values_list("pk", "item_id", "system", "is_reference", "is_spam")
                                                 .iterator(chunk_size=5000)):
        candidates.setdefault(item_id, []).append((pk, system, is_ref, is_spam))
    items = {pk: (ext, doc, phen, spam) for pk, ext, doc, phen, spam in
             Item.objects.filter(study=study).values_list("pk", "external_id", "document_id", "phenomenon", "is_spam")
             .iterator(chunk_size=5000)}
    # Span studies' control items: where the generated error is (studies/controls/spam.py), JSON text on the item's rows.
    controls = {pk: json.dumps(meta["control_error"], ensure_ascii=False, separators=(",", ":"))
                for pk, meta in Item.objects.filter(study=study, is_spam=True).values_list("pk", "metadata")
                if isinstance(meta, dict) and meta.get("control_error")} if study.spec.generated_error_controls else {}
    annotators = dict((pk, (code, excluded, pilot)) for pk, code, excluded, pilot in
                      study.annotators.values_list("pk", "code", "excluded", "is_pilot"))
    judgments = Judgment.objects.filter(assignment__annotator__study=study)
    if not history:
        judgments = judgments.filter(is_current=True)
    read = {column: field if column in columns else Value(None, output_field=IntegerField())
            for column, field in _OPTIONAL_FIELDS}
    rows = judgments.order_by("assignment__annotator__sequence", "assignment__sequence", "revision").values_list(
        "public_id", "revision", "is_current", "answer", read["started_at"], read["submitted_at"], "duration_ms",
        "assignment__item_id", "assignment__annotator_id", read["screen_position"], read["client_duration_ms"])
    pick: Callable[[tuple[Any, ...]], tuple[Any, ...]]
    if columns == _ALL:
        pick = _same
    elif len(columns) == 1:  # itemgetter of one index returns the value, not a tuple
        one = operator.itemgetter(COLUMNS.index(columns[0]))
        pick = lambda row: (one(row),)  # noqa: E731
    else:
        pick = operator.itemgetter(*(COLUMNS.index(c) for c in columns))
    system_of = {pk: system for cands in candidates.values() for pk, system, _, _ in cands}
    candidate_pks = {item_id: [c[0] for c in cands] for item_id, cands in candidates.items()}
    suggested = study_suggestions(study)
    protocol = study.protocol
    for (public_id, revision, is_current, answer, started, submitted, duration,
         item_id, annotator_id, order, client_duration) in rows.iterator(chunk_size=2000):
        ext, doc, phenomenon, item_spam = items[item_id]
        code, excluded, pilot = annotators[annotator_id]
        screen = {pk: k for k, pk in enumerate(order, start=1)} if order else {}
        prefill = answer.get("prefill") if suggested else None
        assisted = prefill.get("assisted") if isinstance(prefill, dict) else None
        control = controls.get(item_id)
        cands = candidates.get(item_id, [])
        for (pk, system, is_ref, cand_spam), (rank, choice, label, chosen, score, spans) in zip(
                cands, _answer_values(answer, candidate_pks.get(item_id, []), system_of)):
            if as_dict:  # a dict literal: dict(zip(COLUMNS, the tuple below)) costs ~10% more on a release
                yield {
                    "study": study.slug, "item": ext, "document": doc, "annotator": code, "system": system,
                    "is_reference": is_ref, "is_spam": item_spam, "rank": rank,
                    "choice": choice, "label": label, "screen_position": screen.get(pk),
                    "started_at": started, "submitted_at": submitted, "duration_ms": duration,
                    "is_spam_candidate": cand_spam, "judgment": public_id, "revision": revision,
                    "is_current": is_current, "phenomenon": phenomenon, "protocol": protocol,
                    "chosen": chosen, "excluded": excluded, "pilot": pilot,
                    "client_duration_ms": client_duration, "score": score, "spans": spans,
                    "control_error": control, "assisted": assisted,
                    "suggestions": (_json(candidate_suggestions(answer, suggested.get(pk, [])))
                                    if suggested else None),
                }
                continue
            yield pick((  # in COLUMNS order
                study.slug, ext, doc, code, system, is_ref, item_spam, rank, choice, label,
                screen.get(pk), started, submitted, duration,
                cand_spam, public_id, revision, is_current, phenomenon, protocol, chosen, excluded, pilot,
                client_duration, score, spans, control, assisted,
                _json(candidate_suggestions(answer, suggested.get(pk, []))) if suggested else None,
            ))


def answer_cells(answer: dict[str, Any], candidates: list[int], system_of: dict[int, str]) -> list[dict[str, Any]]:
    """The answer columns (``rank``, ``choice``, ``label``, ``chosen``, ``score``, ``spans``) of a stored answer,
    one dict per candidate pk of ``candidates`` in that order (``system_of``: candidate pk → system name).

    Shared by the export and by whatever else turns a stored answer into export rows (an LLM judge's answers,
    evaluators/judges/), so both read an answer the same way.
    """
    return [dict(zip(ANSWER_COLUMNS, values)) for values in _answer_values(answer, candidates, system_of)]


#: The keys of :func:`answer_cells`' dicts, in order: the values of :func:`_answer_values`' tuples.
ANSWER_COLUMNS = ("rank", "choice", "label", "chosen", "score", "spans")


def _answer_values(answer: dict[str, Any], candidates: list[int],
                   system_of: dict[int, str]) -> list[tuple[Any, Any, Any, Any, Any, Any]]:
    """:func:`answer_cells` as tuples of :data:`ANSWER_COLUMNS` (the export reads them without a dict a row)."""
    ranks = answer.get("ranks") or {}
    choice = answer.get("choice")
    chosen_pk = choice.get("candidate") if isinstance(choice, dict) else None
    if chosen_pk is not None:
        choice_value = system_of.get(chosen_pk)
    elif isinstance(choice, dict):
        choice_value = choice.get("option")
    else:
        choice_value = None
    labels = answer.get("labels")
    label = "+".join(labels) if labels else None
    annotations = answer.get("annotations") or {}
    values = []
    for pk in candidates:
        key = str(pk)
        entry = annotations.get(key)
        values.append((ranks.get(key), choice_value, label, (chosen_pk == pk) if choice is not None else None,
                       entry.get("score") if entry is not None else None, _spans_cell(entry)))
    return values


#: ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` without building an encoder per call.
_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _spans_cell(entry: dict[str, Any] | None) -> str | None:
    """MQM/ESA: the candidate's spans as JSON text (a list; "[]" = no error marked); None without an entry or spans."""
    if entry is None:
        return None
    spans = entry.get("spans")
    if spans is None:
        return None
    if spans == []:  # no error marked (most candidates)
        return "[]"
    # one key order on every backend (PostgreSQL's jsonb stores keys in its own order)
    return _json([{**{k: span[k] for k in SPAN_KEY_ORDER if k in span},
                   **{k: v for k, v in span.items() if k not in SPAN_KEY_ORDER}} for span in spans])


#: The order of a span's keys in the ``spans`` column.
SPAN_KEY_ORDER = ("start", "end", "side", "severity", "category", "note", "whole")


def _cells(row: dict[str, Any], times: dict[datetime, str], raw: bool) -> list[Any]:
    """CSV cells: ISO 8601 times, lowercase booleans, empty for missing; formula-like text escaped unless ``raw``.

    The rows of one judgment share their times, so formatted times are memoised
    (``times``, cleared by the caller): formatting dominated the export's cost. Text is escaped
    here (``escape_cell``, formats/csvcells.py), where its type is known, rather than by a second
    pass over every cell: one set lookup per text cell.
    """
    cells = []
    for column in COLUMNS:
        value = row[column]
        kind = type(value)
        if kind is str:
            cells.append(value if raw or value[:1] not in SUSPECT_FIRST else escape_cell(value))
        elif kind is int:
            cells.append(value)
        elif value is None:
            cells.append("")
        elif kind is bool:
            cells.append("true" if value else "false")
        elif isinstance(value, datetime):
            text = times.get(value)
            if text is None:
                text = times[value] = value.isoformat()
            cells.append(text)
        else:  # floats (score) stay numbers; escape_cell changes text only
            cells.append(value if raw else escape_cell(value))
    return cells


def csv_lines(rows: Iterable[dict[str, Any]], batch: int = 1000, *, raw: bool = False) -> Iterator[str]:
    """CSV text, header first, in chunks of ``batch`` rows (for streaming responses and files).

    Text cells that a spreadsheet would run as a formula get a leading ``'`` (formats/csvcells.py)
    unless ``raw``; numbers stay numbers.
    """
    buffer = io.StringIO()
    writer = csv_writer(buffer, raw=True)  # the cells come escaped from _cells
    writer.writerow(COLUMNS)
    times: dict[datetime, str] = {}
    chunk = []
    for row in rows:
        chunk.append(_cells(row, times, raw))
        if len(chunk) == batch:
            writer.writerows(chunk)
            chunk.clear()
            times.clear()
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate(0)
    writer.writerows(chunk)
    yield buffer.getvalue()


#: Columns that hold JSON text in a row (and a CSV cell); JSON Lines writes them as JSON values, not strings.
JSON_COLUMNS = frozenset({"spans", "control_error", "suggestions"})


def _jsonl_value(column: str, value: Any) -> Any:
    """A row's value as JSON Lines writes it: times in ISO 8601, the JSON-text columns decoded (a real array)."""
    if isinstance(value, datetime):
        return value.isoformat()
    if column in JSON_COLUMNS and isinstance(value, str):
        return json.loads(value)
    return value


def jsonl_lines(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """JSON Lines, one object per row, times in ISO 8601, ``spans``/``control_error`` as JSON (not JSON text)."""
    for row in rows:
        yield json.dumps({c: _jsonl_value(c, row[c]) for c in COLUMNS}, ensure_ascii=False) + "\n"


def export_lines(study: Study, *, fmt: str = "csv", history: bool = False, raw: bool = False) -> Iterator[str]:
    """The study's export as text chunks in ``fmt`` (csv or jsonl; ``raw``: CSV cells unescaped)."""
    if fmt not in FORMATS:
        raise ValueError(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")
    rows = judgment_rows(study, history=history)
    return csv_lines(rows, raw=raw) if fmt == "csv" else jsonl_lines(rows)


def judgments_frame(study: Study, history: bool = False) -> pandas.DataFrame:
    """The export as a pandas DataFrame, one row per (judgment, candidate).

    Columns (in this order):

    - ``study`` (str, slug), ``item`` (str, the item's id in the study file;
      spam copies end in ``~spam``), ``document`` (str, document id, may be ""),
      ``annotator`` (str, the annotator's non-secret code), ``system`` (str),
    - ``is_reference`` (bool), ``is_spam`` (bool: the *item* is a generated spam
      copy), ``is_spam_candidate`` (bool: this candidate is the scrambled one),
    - ``rank`` (Int64, nullable: the rank the annotator gave this candidate,
      1 = best, as submitted; ties share a rank; missing outside rankings),
    - ``choice`` (str or None: the chosen candidate's *system name*, or the option
      ``neither``/``tie``/``invalid``; same on every row of the judgment),
      ``chosen`` (boolean, nullable: this candidate is the one chosen; missing
      outside choice studies),
    - ``label`` (str or None: the labels given, joined by "+"),
    - ``screen_position`` (Int64: 1-based position on the annotator's screen),
    - ``started_at``, ``submitted_at`` (datetime64[ns, UTC], server times),
      ``duration_ms`` (Int64: server time on the item, ``submitted_at`` − ``started_at``),
    - ``judgment`` (str, public id), ``revision`` (int), ``is_current`` (bool:
      always True unless ``history``), ``phenomenon`` (str), ``protocol`` (str),
      ``excluded`` (bool: the annotator has been excluded; their rows are kept,
      consumers decide whether to drop them), ``pilot`` (bool: a pilot annotator's
      judgment; reports leave them out unless asked), ``client_duration_ms`` (Int64,
      nullable: the client's own figure when it sent both its times; never used by QC),
    - ``score`` (float, nullable: ESA/DA, the 0–100 score given to this candidate),
      ``spans`` (str or None: MQM/ESA, the candidate's error spans as JSON text, a list of
      ``{start, end, side, severity[, category][, note]}``, offsets into the candidate's text or,
      with side "source", the item's source; "[]" = the annotator marked no error),
    - ``control_error`` (str or None: MQM/ESA control items only, the generated error as JSON text
      ``{kind, start, end, before, after}``, offsets into the degraded candidate's text; researchers only),
    - ``assisted`` (boolean, nullable: studies with suggested spans, whether this item was shown with them),
      ``suggestions`` (str or None: studies with suggested spans, the candidate's suggestions as JSON text,
      a list of ``{id, start, end, side, severity[, category], score, decoy, fate, edit}``; ``fate`` is
      kept / edited / deleted, None where the item was shown without them; docs/ai-assistance.md).

    An empty study gives an empty frame with the same columns.
    """
    import pandas as pd

    frame = pd.DataFrame.from_records(list(judgment_rows(study, history=history)), columns=COLUMNS)
    for column in ("rank", "screen_position", "duration_ms", "client_duration_ms"):
        frame[column] = frame[column].astype("Int64")
    frame["chosen"] = frame["chosen"].astype("boolean")
    frame["assisted"] = frame["assisted"].astype("boolean")
    frame["score"] = pd.to_numeric(frame["score"], errors="coerce").astype("float64")
    for column in ("started_at", "submitted_at"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    for column in ("is_reference", "is_spam", "is_spam_candidate", "is_current", "excluded", "pilot"):
        frame[column] = frame[column].astype(bool)
    frame["revision"] = frame["revision"].astype("int64")
    return frame
