"""Only a database that cannot be reached is "503, retry later"; every other database error is a 500
(JSON under /api/, the 500 page elsewhere) with its traceback in the log (config/errors.py)."""
from __future__ import annotations

import logging
import sqlite3

import psycopg
import psycopg.errors
import pytest
from django.db import DatabaseError, InterfaceError, OperationalError, ProgrammingError, connection, transaction
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation.models import Judgment
from annotation.handout.services import annotators_create
from config.errors import is_db_outage
from tests.conftest import annotator_client
from tests.factories import make_study, persona

pytestmark = pytest.mark.django_db


def wrapped(cause: Exception, django_class: type[Exception] = OperationalError) -> Exception:
    """The Django error for a driver error, as Django's DatabaseErrorWrapper raises it (``from`` the driver's)."""
    error = django_class(*cause.args)
    error.__cause__ = cause
    return error


def pg(sqlstate: str, message: str = "") -> Exception:
    return psycopg.errors.lookup(sqlstate)(message or sqlstate)


@pytest.mark.parametrize("error", [
    wrapped(pg("08006", "connection failure")),
    wrapped(pg("08001", "sqlclient unable to establish sqlconnection")),
    wrapped(pg("08003", "connection does not exist")),
    wrapped(pg("57P01", "terminating connection due to administrator command")),
    wrapped(pg("57P02", "terminating connection because of crash of another server process")),
    wrapped(pg("57P03", "the database system is starting up")),
    wrapped(psycopg.OperationalError("connection to server at 127.0.0.1, port 5432 failed: Connection refused")),
    wrapped(psycopg.OperationalError("consuming input failed: server closed the connection unexpectedly")),
    wrapped(psycopg.InterfaceError("the connection is closed"), InterfaceError),
    wrapped(sqlite3.OperationalError("database is locked")),
], ids=lambda e: str(e)[:40])
def test_connection_class_failures_are_outages(error):
    assert is_db_outage(error)


@pytest.mark.parametrize("error", [
    wrapped(pg("57014", "canceling statement due to statement timeout")),
    wrapped(pg("40P01", "deadlock detected")),
    wrapped(pg("40001", "could not serialize access due to concurrent update")),
    wrapped(pg("55P03", "could not obtain lock on row")),
    wrapped(pg("53100", "could not extend file: No space left on device")),
    wrapped(pg("42703", 'column "title" does not exist'), ProgrammingError),
    wrapped(sqlite3.OperationalError("no such column: studies_study.title")),
    wrapped(sqlite3.OperationalError("no such table: annotation_judgment")),
    wrapped(sqlite3.InterfaceError("bad parameter or other API misuse"), InterfaceError),
    ValueError("not a database error"),
], ids=lambda e: str(e)[:40])
def test_other_database_errors_are_not_outages(error):
    assert not is_db_outage(error)


def logged_tracebacks(caplog, exception_class: type[BaseException]) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.ERROR and r.exc_info
            and isinstance(r.exc_info[1], exception_class)]


@pytest.fixture
def researcher() -> Client:
    user = persona("owner")  # the owner of the studies the tests make (tests/factories.py), not a superuser
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}", raise_request_exception=False)


def rename_column(table: str, column: str) -> None:
    """What a missed migration looks like to the ORM: the model's column is not in the table
    (rolled back with the test's transaction, on SQLite as on PostgreSQL)."""
    with connection.cursor() as cursor:
        cursor.execute(f'ALTER TABLE "{table}" RENAME COLUMN "{column}" TO "{column}_not_migrated"')


def test_a_missing_column_is_a_500_with_the_traceback_logged_not_a_503(researcher, caplog):
    study = make_study(slug="mig", n_items=2)
    annotator = annotators_create(study=study, count=1)[0]
    api = annotator_client(annotator)
    api.raise_request_exception = False
    rename_column("studies_study", "title")

    def get(client: Client, path: str):
        # PostgreSQL aborts the (test's) transaction on the error: each request in a savepoint.
        savepoint = transaction.savepoint()
        try:
            return client.get(path)
        finally:
            transaction.savepoint_rollback(savepoint)

    with caplog.at_level(logging.ERROR):
        on_researcher_api = get(researcher, "/api/v1/studies/")
        on_annotator_api = get(api, "/api/v1/annotate/next")
        on_annotator_page = get(Client(raise_request_exception=False), f"/a/{annotator.token}/item/")
    for response in (on_researcher_api, on_annotator_api):
        assert response.status_code == 500 and "Retry-After" not in response
        assert response["Content-Type"].startswith("application/json")
        assert response.json() == {"detail": "Server error."}
    assert on_annotator_page.status_code == 500 and "Retry-After" not in on_annotator_page
    assert not on_annotator_page["Content-Type"].startswith("application/json")
    # The traceback of each, naming the column, is in the log (Django's "django.request" logger).
    records = logged_tracebacks(caplog, DatabaseError)
    assert len(records) == 3
    assert all("title" in str(r.exc_info[1]) for r in records)
    assert {r.name for r in records} == {"django.request"}


def test_a_statement_timeout_is_a_500_not_a_retry(caplog):
    study = make_study(n_items=2)
    annotator = annotators_create(study=study, count=1)[0]
    client = annotator_client(annotator)
    data = client.get("/api/v1/annotate/next").json()
    ranks = {c["id"]: k + 1 for k, c in enumerate(data["candidates"])}
    client.raise_request_exception = False

    def time_out(execute, sql, params, many, context):
        if 'INSERT INTO "annotation_judgment"' in sql:  # PostgreSQL: after WITH d AS (UPDATE …), same statement
            raise wrapped(pg("57014", "canceling statement due to statement timeout"))
        return execute(sql, params, many, context)

    with caplog.at_level(logging.ERROR), connection.execute_wrapper(time_out):
        response = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", {"ranks": ranks}, format="json")
    assert response.status_code == 500 and "Retry-After" not in response
    assert response.json() == {"detail": "Server error."}
    [record] = logged_tracebacks(caplog, OperationalError)
    assert "statement timeout" in str(record.exc_info[1])
    assert Judgment.objects.count() == 0


def test_a_deadlock_outside_the_hand_out_is_a_500(researcher, caplog):
    make_study(slug="dl", n_items=2)

    def deadlock(execute, sql, params, many, context):
        if "studies_study" in sql:
            raise wrapped(pg("40P01", "deadlock detected"))
        return execute(sql, params, many, context)

    with caplog.at_level(logging.ERROR), connection.execute_wrapper(deadlock):
        response = researcher.get("/api/v1/studies/")
    assert response.status_code == 500 and response.json() == {"detail": "Server error."}
    assert len(logged_tracebacks(caplog, OperationalError)) == 1


@pytest.mark.parametrize("cause", [
    sqlite3.OperationalError("database is locked"),
    pg("57P01", "terminating connection due to administrator command"),
    pg("08006", "server conn crashed?"),
], ids=["sqlite-locked", "pg-admin-shutdown", "pg-connection-failure"])
def test_connection_failures_through_a_request_are_still_503(researcher, cause, caplog):
    make_study(slug="down", n_items=2)

    def fail(execute, sql, params, many, context):
        if "studies_study" in sql:
            raise wrapped(cause)
        return execute(sql, params, many, context)

    with caplog.at_level(logging.WARNING), connection.execute_wrapper(fail):
        api = researcher.get("/api/v1/studies/")
    assert api.status_code == 503 and int(api["Retry-After"]) > 0
    assert "unreachable" in api.json()["detail"]
    assert any(r.levelno == logging.WARNING and "answered 503" in r.getMessage() for r in caplog.records)
