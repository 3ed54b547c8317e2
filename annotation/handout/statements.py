"""The statements of the annotation hot path ("next" and submit), as fixed SQL text.

Why not the ORM here, and only here: every annotator request runs these, and
building them with the ORM cost more CPU than running them. Measured on a
2,000-item study on PostgreSQL (``make loadtest``, profile in docs/load.md):
compiling the hand-out's window query took 2.1 of its 2.9 ms, the token
look-up 0.9 ms against 0.3 ms as plain SQL, and the ORM's SQL compiler was
about 45% of a worker's CPU. The text of each statement here is built once
per shape from the models' ``_meta`` (a renamed column fails the tests, never
silently), runs unchanged on SQLite and PostgreSQL, and comes back as model
instances made the way the ORM makes them (``Model.from_db`` after the
fields' database converters), so callers cannot tell the difference.

One statement here serves another path: ``insert_rows``, the bulk INSERT of an
MQM TSV import (annotation/importing/mqm.py), where ``bulk_create`` cost about 70% more CPU
on 100,000 rows (tests/annotation/test_insert_rows.py checks both store the
same rows; the figures are in docs/mqm.md), and the evaluators' scores that
``evaluate`` stores (evaluators/metrics/scores.py: ~100,000 rows for a WMT release).

Everything else — researcher pages, exports, quality control, the rare paths
of the hand-out — stays in the ORM.
"""
from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from typing import Any, Callable, Sequence, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import DateTimeField, Field, JSONField, Model
from django.db.models.base import ModelState
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
from django.db.models.query_utils import DeferredAttribute
from django.db.models.signals import post_init, pre_init

from studies.models import Candidate, Item, Study

from annotation.models import Annotator, Assignment, Judgment

M = TypeVar("M", bound=Model)
Converter = Callable[[Any, Any, Any], Any]


def _db() -> BaseDatabaseWrapper:
    """The default connection, held in a local while a statement runs (``django.db.connection`` is a
    proxy that looks it up again on every attribute access)."""
    return connections[DEFAULT_DB_ALIAS]


def _preparing_cursor_class() -> type:
    """psycopg's server-binding cursor (Django's class) that asks for every statement to be prepared."""
    from django.db.backends.postgresql.base import ServerBindingCursor  # type: ignore[attr-defined]  # psycopg 3 only

    class PreparingCursor(ServerBindingCursor):
        def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
            return super().execute(query, params, prepare=True, **kwargs)

        def close(self) -> None:
            """Kept open for the connection's next statement of this module (``with`` closes Django's wrapper
            around it, not the cursor): making a psycopg cursor costs more than the statement's own Python.
            The connection closes it with itself."""

    return PreparingCursor


_PREPARING: list[type] = []


def _cursor(connection: BaseDatabaseWrapper) -> Any:
    """A cursor of Django's (counted by ``assertNumQueries``, errors wrapped as Django's) whose statements
    PostgreSQL prepares once per connection: their parameters are bound by the server and each text is
    parsed and planned on its first run only, not on every call (psycopg keeps the connection's prepared
    statements, at most ``prepared_max``, 100; each module-level SQL text here is one of them).

    Django turns psycopg's preparation off (``prepare_threshold`` None) so that a transaction
    pooler without prepared-statement support keeps working; ``DB_PREPARED_STATEMENTS=0`` (config/settings.py,
    docs/deploy.md) does the same here. Only this module's fixed statements use it: the rest of the ORM keeps
    Django's client-side binding, whose SQL is not always valid with server-side parameters. SQLite: the
    ordinary cursor.
    """
    if connection.vendor != "postgresql" or not settings.DB_PREPARED_STATEMENTS:
        return connection.cursor()
    if not _PREPARING:
        _PREPARING.append(_preparing_cursor_class())
    connection.close_if_health_check_failed()  # what ``connection.cursor()`` does first
    connection.ensure_connection()
    raw = connection.connection
    if raw.prepare_threshold is None:
        # Django's None turns preparing off for the whole connection, ``prepare=True`` included. Any number
        # turns it back on; only server-binding cursors (this module's) ever prepare: Django's own cursors
        # bind on the client, and psycopg never prepares their statements.
        raw.prepare_threshold = 5
    kept = getattr(connection, "_handout_cursor", None)
    if kept is None or kept.connection is not raw or kept.closed:
        kept = _PREPARING[0](raw)
        connection._handout_cursor = kept  # type: ignore[attr-defined]  # one per connection (thread)
    with connection.wrap_database_errors:
        return connection._prepare_cursor(kept)  # type: ignore[attr-defined]  # what cursor() wraps with


def _q(name: str) -> str:
    return _db().ops.quote_name(name)


def _table(model: type[Model]) -> str:
    return _q(model._meta.db_table)


def _col(model: type[Model], attname: str) -> str:
    field = model._meta.get_field(attname)
    assert isinstance(field, Field) and field.column, attname
    return _q(field.column)


def _columns(model: type[Model], alias: str) -> str:
    """``alias."col1", alias."col2", …``: every concrete column, in the order ``_load`` reads them."""
    return ", ".join(f"{alias}.{_q(f.column)}" for f in model._meta.concrete_fields)


@lru_cache(maxsize=None)
def _loader(model: type[Model], vendor: str) -> tuple[list[str], list[tuple[int, Any, list[Converter]]]]:
    """The attribute names of ``model``'s concrete fields and, per field that has any, its converters
    (the backend's, then the field's own), as the ORM's compiler applies them."""
    connection = _db()
    fields = model._meta.concrete_fields
    converters = []
    for k, field in enumerate(fields):
        expression = field.get_col(model._meta.db_table)
        found = connection.ops.get_db_converters(expression) + field.get_db_converters(connection)  # type: ignore[attr-defined]
        if isinstance(field, JSONField) and field.decoder is None:
            found = [_json_column if f == field.from_db_value else f for f in found]
        if found:
            converters.append((k, expression, found))
    return [f.attname for f in fields], converters


#: The JSON texts most columns of the hot path's rows hold (45 of the 52 decoded a judgment on the load
#: benchmark's study), made without the JSON decoder; each call makes a new object, as ``json.loads`` does.
_LITERALS: dict[str, Callable[[], Any]] = {"[]": list, "{}": dict, "null": lambda: None}


def _json_column(value: Any, expression: Any, connection: Any) -> Any:
    """``JSONField.from_db_value`` of a whole column (no key transform, no custom decoder), the empty list and
    object and null made directly (tests/annotation/test_statements_load.py compares both on every kind)."""
    if value is None:
        return None
    if type(value) is str:
        make = _LITERALS.get(value)
        if make is not None:
            return make()
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


@lru_cache(maxsize=None)
def _plain(model: type[Model]) -> bool:
    """Whether ``Model.__init__`` (through ``from_db``) does nothing for a full row of ``model`` beyond a fresh
    ``ModelState`` and one ``__dict__`` entry per column: the model has no ``__init__`` or ``from_db`` of its
    own, and every column's attribute is Django's plain descriptor (``DeferredAttribute``, whose reads and
    writes go to ``__dict__``; ``ForeignKeyDeferredAttribute``, which also drops a cached related object
    that a new instance does not have). The ``pre_init``/``post_init`` signals are checked on every load."""
    if model.__init__ is not Model.__init__ or model.from_db.__func__ is not Model.from_db.__func__:  # type: ignore[attr-defined]
        return False
    for field in model._meta.concrete_fields:
        owner = next((k for k in model.__mro__ if field.attname in k.__dict__), None)
        if owner is None or type(owner.__dict__[field.attname]) not in (DeferredAttribute, ForeignKeyDeferredAttribute):
            return False
    return True


def _load(model: type[M], values: Sequence[Any], connection: BaseDatabaseWrapper) -> M:
    attnames, converters = _loader(model, connection.vendor)
    row = list(values)
    for k, expression, functions in converters:
        value = row[k]
        for function in functions:
            value = function(value, expression, connection)
        row[k] = value
    if pre_init.receivers or post_init.receivers or len(row) != len(attnames) or not _plain(model):
        return model.from_db(connection.alias, attnames, row)
    # What ``from_db`` makes of a full row for such a model (``_plain``), without ``__init__``'s per-field
    # ``setattr`` and its two signals (tests/annotation/test_statements_load.py compares both).
    instance = model.__new__(model)
    state = ModelState()
    state.adding = False
    state.db = connection.alias
    instance._state = state
    instance.__dict__.update(zip(attnames, row))
    return instance


def _rows(sql: str, params: Sequence[Any], models: Sequence[type[Model]]) -> list[tuple[Any, ...]]:
    """Run ``sql``; split each row into one instance per model (columns in ``_columns`` order), then the rest."""
    connection = _db()
    with _cursor(connection) as cursor:
        cursor.execute(sql, params)
        fetched = cursor.fetchall()
    widths = [len(m._meta.concrete_fields) for m in models]
    out = []
    for row in fetched:
        start, objects = 0, []
        for model, width in zip(models, widths):
            objects.append(_load(model, row[start:start + width], connection))
            start += width
        out.append((*objects, *row[start:]))
    return out


def _for_update(alias: str) -> str:
    """Row lock on PostgreSQL; SQLite's transactions are IMMEDIATE already (config/settings.py)."""
    return f" FOR UPDATE OF {alias}" if _db().features.has_select_for_update_of else ""


# --- reads ---------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _annotator_sql(vendor: str) -> str:
    return (f"SELECT {_columns(Annotator, 'a')}, {_columns(Study, 's')} FROM {_table(Annotator)} a "
            f"JOIN {_table(Study)} s ON s.{_q('id')} = a.{_col(Annotator, 'study_id')} "
            f"WHERE a.{_col(Annotator, 'token')} = %s")


def annotator_with_study(token: str) -> Annotator | None:
    """The annotator with this token, its study loaded (one query)."""
    rows = _rows(_annotator_sql(_db().vendor), [token], [Annotator, Study])
    if not rows:
        return None
    annotator, study = rows[0]
    annotator.study = study
    return annotator


@lru_cache(maxsize=None)
def _annotator_for_next_sql(vendor: str) -> str:
    status = f"x.{_col(Assignment, 'status')}"
    counts = (f"SELECT COUNT(CASE WHEN {status} = %s THEN 1 END) AS n_done, "
              f"COUNT(CASE WHEN {status} = %s THEN 1 END) AS n_pending, "
              f"COUNT(CASE WHEN xi.{_col(Item, 'is_open')} THEN 1 END) AS n_mine_open "
              f"FROM {_table(Assignment)} x JOIN {_table(Item)} xi ON xi.{_q('id')} = x.{_col(Assignment, 'item_id')} "
              f"JOIN {_table(Annotator)} xa ON xa.{_q('id')} = x.{_col(Assignment, 'annotator_id')} "
              f"WHERE xa.{_col(Annotator, 'token')} = %s")
    last = (f"SELECT y.{_q('id')} FROM {_table(Assignment)} y WHERE y.{_col(Assignment, 'annotator_id')} = a.{_q('id')} "
            f"ORDER BY y.{_col(Assignment, 'sequence')} DESC LIMIT 1")
    return (f"SELECT {_columns(Annotator, 'a')}, {_columns(Study, 's')}, {_columns(Assignment, 'g')}, "
            f"{_columns(Item, 'i')}, c.n_done, c.n_pending, c.n_mine_open FROM {_table(Annotator)} a "
            f"JOIN {_table(Study)} s ON s.{_q('id')} = a.{_col(Annotator, 'study_id')} "
            f"CROSS JOIN ({counts}) c "
            f"LEFT JOIN {_table(Assignment)} g ON g.{_q('id')} = ({last}) "
            f"LEFT JOIN {_table(Item)} i ON i.{_q('id')} = g.{_col(Assignment, 'item_id')} "
            f"WHERE a.{_col(Annotator, 'token')} = %s")


def annotator_for_next(token: str, *, done: str, pending: str) -> tuple[Annotator, Assignment | None,
                                                                       tuple[int, int, int, int]] | None:
    """What ``next`` needs first, in one statement: the annotator with this token (its study loaded), their
    latest assignment with its item (``last_assignment``), and their progress counts as ``progress_counts``
    gives them (done, pending, of their assignments those whose item is still open, the study's open items).
    None for an unknown token."""
    connection = _db()
    with _cursor(connection) as cursor:
        cursor.execute(_annotator_for_next_sql(connection.vendor), [done, pending, token, token])
        row = cursor.fetchone()
    if row is None:
        return None
    widths = [len(m._meta.concrete_fields) for m in (Annotator, Study, Assignment, Item)]
    parts, start = [], 0
    for width in widths:
        parts.append(row[start:start + width])
        start += width
    annotator = _load(Annotator, parts[0], connection)
    study = _load(Study, parts[1], connection)
    annotator.study = study
    last = None
    if parts[2][0] is not None:  # the assignment's id: NULL when the annotator has none yet
        last = _load(Assignment, parts[2], connection)
        item = _load(Item, parts[3], connection)
        item.study = study
        last.item = item
        last.annotator = annotator
    n_done, n_pending, mine_open = row[start:start + 3]
    return annotator, last, (int(n_done or 0), int(n_pending or 0), int(mine_open or 0), int(study.n_open_items))


@lru_cache(maxsize=None)
def _assignment_by_token_sql(vendor: str) -> str:
    return (f"SELECT {_columns(Assignment, 'g')}, {_columns(Item, 'i')}, {_columns(Study, 's')}, "
            f"{_columns(Annotator, 'a')} FROM {_table(Assignment)} g "
            f"JOIN {_table(Annotator)} a ON a.{_q('id')} = g.{_col(Assignment, 'annotator_id')} "
            f"JOIN {_table(Item)} i ON i.{_q('id')} = g.{_col(Assignment, 'item_id')} "
            f"JOIN {_table(Study)} s ON s.{_q('id')} = i.{_col(Item, 'study_id')} "
            f"WHERE a.{_col(Annotator, 'token')} = %s AND g.{_col(Assignment, 'public_id')} = %s")


@lru_cache(maxsize=None)
def _assignment_with_candidates_sql(vendor: str) -> str:
    return (f"SELECT {_columns(Assignment, 'g')}, {_columns(Item, 'i')}, {_columns(Study, 's')}, "
            f"{_columns(Annotator, 'a')}, {_columns(Candidate, 'c')} FROM {_table(Assignment)} g "
            f"JOIN {_table(Annotator)} a ON a.{_q('id')} = g.{_col(Assignment, 'annotator_id')} "
            f"JOIN {_table(Item)} i ON i.{_q('id')} = g.{_col(Assignment, 'item_id')} "
            f"JOIN {_table(Study)} s ON s.{_q('id')} = i.{_col(Item, 'study_id')} "
            f"LEFT JOIN {_table(Candidate)} c ON c.{_col(Candidate, 'item_id')} = i.{_q('id')} "
            f"WHERE a.{_col(Annotator, 'token')} = %s AND g.{_col(Assignment, 'public_id')} = %s "
            f"ORDER BY c.{_col(Candidate, 'position')}, c.{_q('id')}")


def assignment_by_token(*, token: str, public_id: str, candidates: bool = False) -> Assignment | None:
    """The assignment with this public id of the annotator with this token; its item, study and annotator loaded.

    ``candidates``: the item's candidates too, in their stored order, as ``Assignment.candidates_loaded``
    (still one statement: a row per candidate, the other objects read from the first)."""
    connection = _db()
    sql = (_assignment_with_candidates_sql if candidates else _assignment_by_token_sql)(connection.vendor)
    with _cursor(connection) as cursor:
        cursor.execute(sql, [token, public_id])
        fetched = cursor.fetchall()
    if not fetched:
        return None
    bounds, start = [], 0
    for model in (Assignment, Item, Study, Annotator):
        bounds.append((start, start + len(model._meta.concrete_fields)))
        start = bounds[-1][1]
    first = fetched[0]
    assignment = _load(Assignment, first[bounds[0][0]:bounds[0][1]], connection)
    item = _load(Item, first[bounds[1][0]:bounds[1][1]], connection)
    study = _load(Study, first[bounds[2][0]:bounds[2][1]], connection)
    annotator = _load(Annotator, first[bounds[3][0]:bounds[3][1]], connection)
    item.study = study
    annotator.study = study
    assignment.item = item
    assignment.annotator = annotator
    if candidates:
        assignment.candidates_loaded = [_load(Candidate, row[start:], connection) for row in fetched
                                        if row[start] is not None]  # none: an item without candidates
    return assignment


@lru_cache(maxsize=None)
def _last_assignment_sql(vendor: str) -> str:
    return (f"SELECT {_columns(Assignment, 'g')}, {_columns(Item, 'i')} FROM {_table(Assignment)} g "
            f"JOIN {_table(Item)} i ON i.{_q('id')} = g.{_col(Assignment, 'item_id')} "
            f"WHERE g.{_col(Assignment, 'annotator_id')} = %s "
            f"ORDER BY g.{_col(Assignment, 'sequence')} DESC LIMIT 1")


def last_assignment(annotator: Annotator) -> Assignment | None:
    """The annotator's latest assignment (highest sequence) with its item; the item's study is the annotator's."""
    rows = _rows(_last_assignment_sql(_db().vendor), [annotator.pk], [Assignment, Item])
    if not rows:
        return None
    assignment, item = rows[0]
    item.study = annotator.study
    assignment.item = item
    assignment.annotator = annotator
    return assignment


@lru_cache(maxsize=None)
def _item_with_candidates_sql(vendor: str) -> str:
    return (f"SELECT {_columns(Item, 'i')}, {_columns(Candidate, 'c')} FROM {_table(Item)} i "
            f"JOIN {_table(Candidate)} c ON c.{_col(Candidate, 'item_id')} = i.{_q('id')} "
            f"WHERE i.{_q('id')} = %s ORDER BY c.{_col(Candidate, 'position')}, c.{_q('id')}")


def item_with_candidates(item_id: int) -> tuple[Item, list[Candidate]]:
    """An item and its candidates in their stored order (one query; the item's columns are read once)."""
    connection = _db()
    with _cursor(connection) as cursor:
        cursor.execute(_item_with_candidates_sql(connection.vendor), [item_id])
        fetched = cursor.fetchall()
    if not fetched:  # an item without candidates (the study file refuses those; kept safe anyway)
        return Item.objects.get(pk=item_id), []
    return _item_and_candidates(fetched, connection)


def _item_and_candidates(fetched: Sequence[Sequence[Any]],
                         connection: BaseDatabaseWrapper) -> tuple[Item, list[Candidate]]:
    """Rows of an item's columns then a candidate's (NULL when it has none) as the item and its candidates."""
    width = len(Item._meta.concrete_fields)
    item = _load(Item, fetched[0][:width], connection)
    return item, [_load(Candidate, row[width:], connection) for row in fetched if row[width] is not None]


@lru_cache(maxsize=None)
def _candidates_sql(vendor: str) -> str:
    return (f"SELECT {_columns(Candidate, 'c')} FROM {_table(Candidate)} c "
            f"WHERE c.{_col(Candidate, 'item_id')} = %s "
            f"ORDER BY c.{_col(Candidate, 'position')}, c.{_q('id')}")


def candidates_of(item_id: int) -> list[Candidate]:
    """An item's candidates in their stored order (Candidate.Meta.ordering)."""
    return [row[0] for row in _rows(_candidates_sql(_db().vendor), [item_id], [Candidate])]


def window_sql(*, study_id: int, annotator_id: int, documents: Sequence[int], limit: int,
               columns: str = "") -> tuple[str, list[Any]]:
    """The hand-out's window query: the first open items of these documents that the annotator never had,
    in the given document order, then document order (position, id).

    Served by the partial index ``item_open_by_document`` (study, doc_index, position) WHERE is_open,
    probed once per document, and the unique (annotator, item) index; the sort is over those few rows.
    """
    docs = list(documents)
    marks = ", ".join(["%s"] * len(docs))
    rank = " ".join(f"WHEN %s THEN {k}" for k in range(len(docs)))
    doc_index = f"i.{_col(Item, 'doc_index')}"
    sql = (f"SELECT {columns or _columns(Item, 'i')} FROM {_table(Item)} i "
           f"WHERE i.{_col(Item, 'study_id')} = %s AND i.{_col(Item, 'is_open')} AND {doc_index} IN ({marks}) "
           f"AND NOT EXISTS (SELECT 1 FROM {_table(Assignment)} g WHERE g.{_col(Assignment, 'annotator_id')} = %s "
           f"AND g.{_col(Assignment, 'item_id')} = i.{_q('id')}) "
           f"ORDER BY CASE {doc_index} {rank} END, i.{_col(Item, 'position')}, i.{_q('id')} LIMIT {int(limit)}")
    return sql, [study_id, *docs, annotator_id, *docs]


def window_slots(*, study_id: int, annotator_id: int, documents: Sequence[int], limit: int) -> list[tuple[int, int, int]]:
    """The window query's rows as (item id, n_assigned, doc_index): what a claim needs (the claimed item is
    loaded whole afterwards, the others never are)."""
    if not documents:
        return []
    columns = f"i.{_q('id')}, i.{_col(Item, 'n_assigned')}, i.{_col(Item, 'doc_index')}"
    sql, params = window_sql(study_id=study_id, annotator_id=annotator_id, documents=documents, limit=limit,
                             columns=columns)
    with _cursor(_db()) as cursor:
        cursor.execute(sql, params)
        return [(int(pk), int(n), int(doc)) for pk, n, doc in cursor.fetchall()]


@lru_cache(maxsize=None)
def _progress_sql(vendor: str) -> str:
    status = f"g.{_col(Assignment, 'status')}"
    return (f"SELECT COUNT(CASE WHEN {status} = %s THEN 1 END), COUNT(CASE WHEN {status} = %s THEN 1 END), "
            f"COUNT(CASE WHEN i.{_col(Item, 'is_open')} THEN 1 END), "
            f"(SELECT s.{_col(Study, 'n_open_items')} FROM {_table(Study)} s WHERE s.{_q('id')} = %s) "
            f"FROM {_table(Assignment)} g JOIN {_table(Item)} i ON i.{_q('id')} = g.{_col(Assignment, 'item_id')} "
            f"WHERE g.{_col(Assignment, 'annotator_id')} = %s")


def progress_counts(*, annotator_id: int, study_id: int, done: str, pending: str) -> tuple[int, int, int, int]:
    """(done, pending, of those assignments the ones whose item is still open, the study's open items), one query
    over the annotator's own assignments (index on annotator) and the study row."""
    connection = _db()
    with _cursor(connection) as cursor:
        cursor.execute(_progress_sql(connection.vendor), [done, pending, study_id, annotator_id])
        n_done, n_pending, mine_open, n_open = cursor.fetchone()
    return int(n_done or 0), int(n_pending or 0), int(mine_open or 0), int(n_open or 0)


@lru_cache(maxsize=None)
def _locked_sql(vendor: str) -> str:
    judgment = f"j.{_col(Judgment, 'assignment_id')} = g.{_q('id')} AND j.{_col(Judgment, 'is_current')}"
    return (f"SELECT {_columns(Assignment, 'g')}, j.{_q('id')}, j.{_col(Judgment, 'payload_digest')}, "
            f"j.{_col(Judgment, 'revision')} FROM {_table(Assignment)} g "
            f"LEFT JOIN {_table(Judgment)} j ON {judgment} WHERE g.{_q('id')} = %s" + _for_update("g"))


def assignment_locked(assignment_id: int) -> tuple[Assignment, int | None, str | None, int | None]:
    """The assignment, locked for the rest of the transaction, and its current judgment's (id, digest, revision)."""
    assignment, current_pk, digest, revision = _rows(_locked_sql(_db().vendor), [assignment_id], [Assignment])[0]
    return assignment, current_pk, digest, revision


#: First key of the transaction-scoped advisory lock that orders an adaptive study's judgments (the second is
#: the study's id): a constant of its own, so no other lock of the project shares the key space.
JUDGMENT_ORDER_LOCK = 0x4A4F5244  # "JORD"


def study_judgments_ordered(study_id: int) -> None:
    """Make the study's judgments commit in the order of their ids, for the rest of the transaction.

    Adaptive allocation extends its confidence sequences with the judgments stored after the highest id it has
    read (evaluators/live_allocation.py), which is exact only if no judgment of the study with a lower id can
    still commit later. PostgreSQL hands out ids before commit, so two submits may commit out of order: this
    takes a transaction-scoped advisory lock on (JUDGMENT_ORDER_LOCK, study) before the id is drawn, and the
    study's submits queue on it. SQLite runs one writing transaction at a time, so ids are already in commit
    order there and nothing is run. Must be the first lock the submit takes (every submit of the study takes
    this one first, so two never wait on each other's assignment rows).
    """
    connection = _db()
    if connection.vendor == "postgresql":
        with _cursor(connection) as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [JUDGMENT_ORDER_LOCK, study_id % 2**31])


#: The upper bound of the new judgments' ids in the hook's read: every id there is. Stated so that the plan
#: PostgreSQL keeps for the prepared statement (a generic plan, made without the parameters' values) reckons
#: with a narrow id range (0.5% of the rows) and reads the new judgments through the primary key, not a third
#: of the table (its guess for an open range).
ID_CEILING = 2**63 - 1


@lru_cache(maxsize=None)
def _judgments_after_sql(vendor: str) -> str:
    # The new judgments are found by their ids (the primary key's range: a few rows), then joined. Both planners
    # would rather start at the study's items (every item of the study) without statistics, or with stale ones:
    # PostgreSQL is held to the id range by a materialised CTE, SQLite by the unary plus on the item's study
    # (which keeps its index out of the plan). The study's excluded annotators come in the same statement (the
    # rows with a null judgment id), so both are read from one snapshot. The items' candidates are not read:
    # the caller knows them (they are made with their item and never change).
    excluded = (f"UNION ALL SELECT NULL, NULL, NULL, NULL, x.{_q('id')} FROM {_table(Annotator)} x "
                f"WHERE x.{_col(Annotator, 'study')} = %s AND x.{_col(Annotator, 'excluded')} = %s ORDER BY 1, 5")
    if vendor == "postgresql":
        # The plan of a prepared statement is made once, whatever the ids: each new judgment's assignment, item
        # and annotator are looked up by their primary keys in a LATERAL subquery that OFFSET 0 keeps apart (a
        # nested loop, one index probe each), never joined by hashing whole tables.
        return (f"SELECT j.{_q('id')}, j.{_col(Judgment, 'revision')}, g.excluded_, j.{_col(Judgment, 'answer')}, "
                f"g.item_ FROM (WITH recent AS MATERIALIZED (SELECT {_q('id')}, {_col(Judgment, 'revision')}, "
                f"{_col(Judgment, 'answer')}, {_col(Judgment, 'assignment')} FROM {_table(Judgment)} "
                f"WHERE {_q('id')} > %s AND {_q('id')} <= %s AND {_col(Judgment, 'is_current')} = %s) "
                f"SELECT * FROM recent) j CROSS JOIN LATERAL (SELECT i.{_q('id')} AS item_, "
                f"a.{_col(Annotator, 'excluded')} AS excluded_ FROM {_table(Assignment)} g "
                f"JOIN {_table(Item)} i ON i.{_q('id')} = g.{_col(Assignment, 'item')} "
                f"JOIN {_table(Annotator)} a ON a.{_q('id')} = g.{_col(Assignment, 'annotator')} "
                f"WHERE g.{_q('id')} = j.{_col(Judgment, 'assignment')} AND i.{_col(Item, 'study')} = %s "
                f"AND i.{_col(Item, 'is_spam')} = %s OFFSET 0) g " + excluded)
    return (f"SELECT j.{_q('id')}, j.{_col(Judgment, 'revision')}, a.{_col(Annotator, 'excluded')}, "
            f"j.{_col(Judgment, 'answer')}, i.{_q('id')} FROM {_table(Judgment)} j "
            f"JOIN {_table(Assignment)} g ON g.{_q('id')} = j.{_col(Judgment, 'assignment')} "
            f"JOIN {_table(Item)} i ON i.{_q('id')} = g.{_col(Assignment, 'item')} "
            f"JOIN {_table(Annotator)} a ON a.{_q('id')} = g.{_col(Assignment, 'annotator')} "
            f"WHERE j.{_q('id')} > %s AND j.{_q('id')} <= %s AND j.{_col(Judgment, 'is_current')} = %s "
            f"AND +i.{_col(Item, 'study')} = %s AND i.{_col(Item, 'is_spam')} = %s " + excluded)


@lru_cache(maxsize=None)
def _answer_converters(vendor: str) -> tuple[Any, list[Converter]]:
    """The answer column's converters (the backend's, then the JSON field's), as the ORM applies them."""
    field = Judgment._meta.get_field("answer")
    assert isinstance(field, Field)
    expression = field.get_col(Judgment._meta.db_table)
    return expression, _db().ops.get_db_converters(expression) + field.get_db_converters(_db())  # type: ignore[attr-defined]


def judgments_after(*, study_id: int, after: int,
                    ) -> tuple[list[tuple[int, int, bool, Any, int]], tuple[int, ...]]:
    """The study's current judgments of real items with an id above ``after``, in id order — (id, revision, the
    annotator excluded, the answer, the item's id) — and the ids of the study's excluded annotators, in order,
    from the same snapshot. One prepared statement: what an adaptive study's allocation reads after each
    judgment (evaluators/live_allocation.py)."""
    connection = _db()
    with _cursor(connection) as cursor:
        cursor.execute(_judgments_after_sql(connection.vendor),
                       [after, ID_CEILING, True, study_id, False, study_id, True])
        fetched = cursor.fetchall()
    expression, converters = _answer_converters(connection.vendor)
    out: list[tuple[int, int, bool, Any, int]] = []
    excluded = []
    for pk, revision, annotator_excluded, answer, item in fetched:
        if pk is None:
            excluded.append(item)
            continue
        for function in converters:
            answer = function(answer, expression, connection)
        out.append((pk, revision, bool(annotator_excluded), answer, item))
    return out, tuple(sorted(excluded))


@lru_cache(maxsize=None)
def _excluded_sql(vendor: str) -> str:
    return (f"SELECT {_q('id')} FROM {_table(Annotator)} WHERE {_col(Annotator, 'study')} = %s "
            f"AND {_col(Annotator, 'excluded')} = %s ORDER BY {_q('id')}")


def study_excluded_annotators(*, study_id: int) -> tuple[int, ...]:
    """The ids of the study's excluded annotators, in order."""
    connection = _db()
    with connection.cursor() as cursor:
        cursor.execute(_excluded_sql(connection.vendor), [study_id, True])
        return tuple(row[0] for row in cursor.fetchall())


# --- writes --------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _claim_sql(vendor: str) -> str:
    return (f"UPDATE {_table(Item)} SET {_col(Item, 'n_assigned')} = %s, {_col(Item, 'is_open')} = %s "
            f"WHERE {_q('id')} = %s AND {_col(Item, 'n_assigned')} = %s")


def item_slot_update(*, item_id: int, seen: int, full: bool) -> bool:
    """Raise the item's count from ``seen`` to seen+1 if nobody changed it since; True when it did."""
    connection = _db()
    with _cursor(connection) as cursor:
        cursor.execute(_claim_sql(connection.vendor), [seen + 1, not full, item_id, seen])
        return cursor.rowcount == 1


def writes_return_rows() -> bool:
    """Whether a write and the read after it go in one statement (PostgreSQL: a data-modifying WITH)."""
    return _db().vendor == "postgresql"


@lru_cache(maxsize=None)
def _claim_loading_sql(vendor: str) -> str:
    return (f"WITH u AS ({_claim_sql(vendor)} RETURNING *) "
            f"SELECT {_columns(Item, 'u')}, {_columns(Candidate, 'c')} FROM u "
            f"LEFT JOIN {_table(Candidate)} c ON c.{_col(Candidate, 'item_id')} = u.{_q('id')} "
            f"ORDER BY c.{_col(Candidate, 'position')}, c.{_q('id')}")


def item_claim_with_candidates(*, item_id: int, seen: int, full: bool) -> tuple[Item, list[Candidate]] | None:
    """``item_slot_update`` then ``item_with_candidates`` in one statement (``writes_return_rows`` only): the
    item as the UPDATE left it and its candidates in their stored order; None when nobody's count was raised."""
    connection = _db()
    with _cursor(connection) as cursor:
        cursor.execute(_claim_loading_sql(connection.vendor), [seen + 1, not full, item_id, seen])
        fetched = cursor.fetchall()
    return _item_and_candidates(fetched, connection) if fetched else None


@lru_cache(maxsize=None)
def _open_items_sql(vendor: str) -> str:
    column = _col(Study, "n_open_items")
    return f"UPDATE {_table(Study)} SET {column} = {column} + %s WHERE {_q('id')} = %s"


def study_open_items_add(*, study_id: int, delta: int) -> None:
    connection = _db()
    with _cursor(connection) as cursor:
        cursor.execute(_open_items_sql(connection.vendor), [delta, study_id])


@lru_cache(maxsize=None)
def _done_sql(vendor: str) -> str:
    return (f"UPDATE {_table(Assignment)} SET {_col(Assignment, 'status')} = %s, "
            f"{_col(Assignment, 'completed_at')} = %s WHERE {_q('id')} = %s")


def assignment_mark_done(*, assignment_id: int, status: str, completed_at: Any) -> None:
    field = Assignment._meta.get_field("completed_at")
    connection = _db()
    with _cursor(connection) as cursor:
        cursor.execute(_done_sql(connection.vendor),
                       [status, field.get_db_prep_value(completed_at, connection), assignment_id])


@lru_cache(maxsize=None)
def _insert_sql(model: type[Model], vendor: str) -> tuple[str, list[Field]]:
    connection = _db()
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    sql = (f"INSERT INTO {_table(model)} ({', '.join(_q(f.column) for f in fields)}) "
           f"VALUES ({', '.join(['%s'] * len(fields))})")
    if connection.features.can_return_columns_from_insert:
        sql += f" RETURNING {_q(model._meta.pk.column)}"
    return sql, fields


@lru_cache(maxsize=None)
def _insert_assignment_sql(vendor: str) -> tuple[str, list[Field]]:
    connection = _db()
    fields = [f for f in Assignment._meta.concrete_fields if not f.primary_key]
    lock = " FOR SHARE" if connection.features.has_select_for_update else ""  # PostgreSQL; SQLite has none
    sql = (f"INSERT INTO {_table(Assignment)} ({', '.join(_q(f.column) for f in fields)}) "
           f"SELECT {', '.join(['%s'] * len(fields))} WHERE EXISTS (SELECT 1 FROM {_table(Annotator)} a "
           f"WHERE a.{_q('id')} = %s AND NOT a.{_col(Annotator, 'excluded')}{lock})")
    if connection.features.can_return_columns_from_insert:
        sql += f" RETURNING {_q(Assignment._meta.pk.column)}"
    return sql, fields


def insert_assignment(obj: Assignment) -> Assignment | None:
    """INSERT a new assignment as ``insert`` does, but only while its annotator is not excluded; None otherwise.

    The check reads the annotator row under ``FOR SHARE`` (PostgreSQL), which waits for an exclusion
    in progress (its UPDATE holds the row) and then sees it; an exclusion that comes second waits for this
    transaction instead, and its sweep then finds the new assignment (annotation.handout.exclusion). SQLite's
    IMMEDIATE transactions are serialised already.
    """
    connection = _db()
    sql, fields = _insert_assignment_sql(connection.vendor)
    values = [f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields]
    with _cursor(connection) as cursor:
        cursor.execute(sql, [*values, obj.annotator_id])
        if connection.features.can_return_columns_from_insert:
            row = cursor.fetchone()
            if row is None:
                return None
            obj.pk = row[0]
        else:
            if cursor.rowcount != 1:
                return None
            obj.pk = cursor.lastrowid
    obj._state.adding = False
    obj._state.db = connection.alias
    return obj


def insert_judgment(obj: Judgment, *, done_at: datetime | None = None, status: str = "") -> Judgment:
    """``insert`` of a judgment; with ``done_at``, its assignment marked ``status`` at that time as
    ``assignment_mark_done`` does, in the same statement where ``writes_return_rows`` (else in a second one)."""
    if done_at is None:
        return insert(obj)
    if not writes_return_rows():
        insert(obj)
        assignment_mark_done(assignment_id=obj.assignment_id, status=status, completed_at=done_at)
        return obj
    connection = _db()
    completed = Assignment._meta.get_field("completed_at").get_db_prep_value(done_at, connection)
    return insert(obj, before=(_done_first_sql(connection.vendor), [status, completed, obj.assignment_id]))


@lru_cache(maxsize=None)
def _done_first_sql(vendor: str) -> str:
    return f"WITH d AS ({_done_sql(vendor)}) "


def insert(obj: M, *, before: tuple[str, list[Any]] = ("", [])) -> M:
    """INSERT a new instance as ``save()`` would — defaults, ``auto_now_add``, each field's database
    preparation — without the save machinery (no model here has save signals or an overridden save).
    ``before``: a ``WITH`` clause run in the same statement, and its parameters."""
    connection = _db()
    sql, fields = _insert_sql(type(obj), connection.vendor)
    values = [f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields]
    with _cursor(connection) as cursor:
        cursor.execute(before[0] + sql, [*before[1], *values])
        obj.pk = cursor.fetchone()[0] if connection.features.can_return_columns_from_insert else cursor.lastrowid
    obj._state.adding = False
    obj._state.db = connection.alias
    return obj


#: Rows a single ``executemany`` of ``insert_rows`` sends.
INSERT_ROWS_BATCH = 5000


def insert_rows(model: type[Model], rows: Sequence[dict[str, Any]], *, now: datetime) -> None:
    """INSERT ``rows`` (dicts by attname, every row with the same keys) with ``executemany``, in batches: no
    model instances, no primary keys returned.

    Why: ``bulk_create`` builds a model instance and prepares every value of every row through its field;
    an MQM TSV import of 100,000 rows makes about 100,000 candidates, assignments and judgments. Here a
    column missing from the rows takes the value Django would give it (its default — a callable one, such
    as the opaque public ids, called per row — else "" for a text column, else NULL), ``auto_now`` and
    ``auto_now_add`` columns take ``now``, and only JSON and date-time values go through the field's own
    conversion; strings, numbers, booleans and foreign keys are passed as they are, which every backend
    accepts. The columns come from the model, so a field added later with a default needs no change here.
    """
    if not rows:
        return
    connection = _db()
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    given = set(rows[0])
    plan: list[tuple[Field, str, Any]] = []  # (field, "row" | "call" | "constant", constant)
    for f in fields:
        if f.attname in given:
            plan.append((f, "row", None))
        elif getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            plan.append((f, "constant", f.get_db_prep_save(now, connection)))
        elif f.has_default() and callable(f.default):
            plan.append((f, "call", None))
        else:  # Django's own default: the field's, else "" for a text column, else NULL
            default = f.get_default()
            if default is None and not f.null:
                raise ValueError(f"{model.__name__}.{f.attname}: no value and no default")
            plan.append((f, "constant", f.get_db_prep_save(default, connection)))
    convert = {f.attname: isinstance(f, (JSONField, DateTimeField)) for f in fields}
    sql = (f"INSERT INTO {_table(model)} ({', '.join(_q(f.column) for f, _, _ in plan)}) "
           f"VALUES ({', '.join(['%s'] * len(plan))})")
    params = []
    for row in rows:
        values = []
        for f, how, constant in plan:
            if how == "constant":
                values.append(constant)
                continue
            value = row[f.attname] if how == "row" else f.default()
            values.append(f.get_db_prep_save(value, connection) if convert[f.attname] else value)
        params.append(values)
    with connection.cursor() as cursor:
        for start in range(0, len(params), INSERT_ROWS_BATCH):
            cursor.executemany(sql, params[start:start + INSERT_ROWS_BATCH])
