"""The annotation API's fast path (annotation/api/fastpath.py) answers exactly as the DRF views behind the whole
middleware stack: status, every header in order, and body, on a table of requests run both ways from the same
database state."""
from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

import pytest
from django.conf import settings
from django.db import OperationalError, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.test import override_settings
from django.urls import resolve
from rest_framework.test import APIClient
from rest_framework.views import APIView

from annotation.api.views import JudgmentSubmitAPI, NextAssignmentAPI
from annotation.handout.exclusion import annotator_exclude
from annotation.handout.services import annotators_create
from annotation.models import Annotator
from tests.factories import make_study

pytestmark = pytest.mark.django_db

FAST = "annotation.api.fastpath.AnnotationFastPathMiddleware"
NEXT = "/api/v1/annotate/next"


def judgment_url(assignment: str) -> str:
    return f"/api/v1/annotate/{assignment}/judgment"


def ranks_body(data: dict[str, Any], reverse: bool = False) -> bytes:
    ids = [c["id"] for c in data["candidates"]]
    if reverse:
        ids = ids[::-1]
    return json.dumps({"ranks": {cid: k + 1 for k, cid in enumerate(ids)}}).encode()


class Run:
    """One way of answering: a fresh client per request, under the given middleware list."""

    def __init__(self, middleware: list[str], dispatched: list[str]):
        self.middleware = middleware
        self.dispatched = dispatched
        self.last: dict[str, Any] = {}

    def send(self, method: str, path: str, *, token: str | None, body: bytes | None = None,
             content_type: str | None = "application/json", **extra: str) -> tuple[Any, ...]:
        with override_settings(MIDDLEWARE=self.middleware):
            client = APIClient(raise_request_exception=False)
            if token is not None:
                client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
            kwargs: dict[str, Any] = dict(extra)
            if body is not None:
                kwargs["data"] = body
                kwargs["content_type"] = content_type
            response = getattr(client, method.lower())(path, **kwargs)
        if response.content and response.get("Content-Type", "").startswith("application/json"):
            self.last = json.loads(response.content)
        # The browsable page's CSRF token is masked afresh on every response.
        content = re.sub(rb'"csrfToken": "[^"]+"', b'"csrfToken": "(masked)"', response.content)
        return response.status_code, list(response.headers.items()), content, sorted(response.cookies)


@pytest.fixture
def both_ways() -> Iterator[Callable[[Callable[[Run], list[tuple[Any, ...]]]], tuple[list, list, list, list]]]:
    """Run a scenario on the whole stack without the fast path and on the configured stack, from the same
    database state (a savepoint rolled back in between) and the same public ids; which requests reached DRF's
    dispatch is recorded per run."""
    assert FAST in settings.MIDDLEWARE
    slow = [m for m in settings.MIDDLEWARE if m != FAST]

    def run(scenario: Callable[[Run], list[tuple[Any, ...]]]) -> tuple[list, list, list, list]:
        results, dispatches = [], []
        for middleware in (slow, list(settings.MIDDLEWARE)):
            counter = itertools.count()
            dispatched: list[str] = []
            original = APIView.dispatch

            def counting(self: APIView, request: Any, *args: Any, **kwargs: Any) -> Any:
                dispatched.append(request.path)
                return original(self, request, *args, **kwargs)

            sid = transaction.savepoint()
            with mock.patch("secrets.token_urlsafe", lambda n=None: f"id{next(counter):04d}"), \
                    mock.patch.object(APIView, "dispatch", counting):
                results.append(scenario(Run(middleware, dispatched)))
            transaction.savepoint_rollback(sid)
            dispatches.append(dispatched)
        return results[0], results[1], dispatches[0], dispatches[1]

    yield run


def test_the_fast_paths_are_the_drf_views_routes():
    assert getattr(resolve(NEXT).func, "view_class", None) is NextAssignmentAPI
    assert getattr(resolve(judgment_url("abc")).func, "view_class", None) is JudgmentSubmitAPI


def test_next_and_submit_answer_alike_and_skip_drf(both_ways):
    study = make_study(n_items=3, n_candidates=3, settings={"redundancy": 2})
    mine, other = annotators_create(study=study, count=2)

    def scenario(run: Run) -> list[tuple[Any, ...]]:
        out = [run.send("GET", NEXT, token=other.token)]
        theirs = run.last["assignment"]
        out.append(first := run.send("GET", NEXT, token=mine.token))
        data = json.loads(first[2])
        out.append(run.send("GET", NEXT, token=mine.token, HTTP_ACCEPT="*/*"))
        out.append(run.send("GET", NEXT, token=mine.token, HTTP_ACCEPT="application/json"))
        url = judgment_url(data["assignment"])
        out.append(run.send("POST", url, token=mine.token, body=ranks_body(data)))  # 201
        out.append(run.send("POST", url, token=mine.token, body=ranks_body(data)))  # 200, the same answer
        out.append(run.send("POST", url, token=mine.token, body=ranks_body(data, reverse=True)))  # 201 revision 2
        out.append(run.send("POST", url, token=mine.token, body=b'{"ranks": '))  # malformed
        out.append(run.send("POST", url, token=mine.token, body=b'{"ranks": {"nope": 1}}'))  # a bad field
        out.append(run.send("POST", url, token=mine.token, body=b"[" * 200 + b"]" * 200))  # too deep
        out.append(run.send("POST", url, token=mine.token, body=b'{"ranks": {"a\\u0000": 1}}'))  # a NUL
        out.append(run.send("POST", url, token=mine.token, body=b'{"ranks": NaN}'))
        out.append(run.send("POST", url, token=mine.token, body=b"\xff\xfe"))  # not UTF-8
        out.append(run.send("POST", judgment_url(theirs), token=mine.token, body=ranks_body(data)))  # 404
        out.append(run.send("POST", judgment_url("nosuch"), token=mine.token, body=ranks_body(data)))  # 404
        out.append(run.send("POST", url, token="wrong", body=ranks_body(data)))  # 401
        out.append(run.send("POST", url, token=None, body=ranks_body(data)))  # 401
        out.append(run.send("GET", NEXT, token="wrong"))  # 401
        out.append(run.send("GET", NEXT, token=None))  # 401
        out.append(run.send("POST", url, token=mine.token, body=b"ranks=1", content_type="text/plain"))  # 415
        out.append(run.send("POST", url, token=mine.token, body=b"", content_type="application/json"))  # empty
        out.append(run.send("GET", url, token=mine.token))  # 405
        out.append(run.send("POST", NEXT, token=mine.token, body=b"{}"))  # 405
        out.append(run.send("HEAD", NEXT, token=mine.token))
        out.append(run.send("OPTIONS", NEXT, token=mine.token))
        out.append(run.send("GET", NEXT, token=mine.token, HTTP_ACCEPT="application/xml"))  # 406
        out.append(run.send("GET", NEXT, token=mine.token, HTTP_ACCEPT="application/json; indent=4"))
        out.append(run.send("GET", NEXT, token=mine.token, HTTP_ACCEPT="text/html"))  # the browsable API
        out.append(run.send("GET", NEXT, token=mine.token, HTTP_COOKIE="sessionid="))
        out.append(run.send("GET", NEXT + "/", token=mine.token))  # not the route
        out.append(run.send("GET", NEXT, token=mine.token, HTTP_HOST="elsewhere.example"))  # not in ALLOWED_HOSTS
        out.append(run.send("POST", url, token=mine.token, body=ranks_body(data), HTTP_HOST="elsewhere.example"))
        return out

    slow, fast, slow_dispatched, fast_dispatched = both_ways(scenario)
    codes = [status for status, *_ in slow]
    assert codes == [200, 200, 200, 200, 201, 200, 201, 400, 400, 400, 400, 400, 400, 404, 404, 401, 401, 401, 401,
                     415, 400, 405, 405, 200, 200, 406, 200, 200, 200, 404, 400, 400]
    for k, (old, new) in enumerate(zip(slow, fast, strict=True)):
        assert new == old, k
    headers = dict(fast[1][1])
    assert headers["Allow"] == "GET, HEAD, OPTIONS" and headers["Vary"] == "Accept"
    assert headers["X-Frame-Options"] == "DENY" and headers["X-Content-Type-Options"] == "nosniff"
    assert dict(fast[4][1])["Allow"] == "POST, OPTIONS"
    unauthorised = dict(fast[17][1])
    assert unauthorised["WWW-Authenticate"] == "Token"
    # The ordinary requests (the first 13 and the 200 with a bad body) never reached DRF; the rest did, as before.
    assert len(slow_dispatched) == len(slow) - 3  # every request but the unrouted one and the two refused hosts
    assert len(fast_dispatched) == len(slow_dispatched) - 13


def test_nothing_left_excluded_and_outage_answer_alike(both_ways):
    study = make_study(n_items=1, settings={"redundancy": 1, "completion_code": "C0DE",
                                             "contact": "lab@example.org"})
    done, late, excluded = annotators_create(study=study, count=3)
    annotator_exclude(annotator=Annotator.objects.get(pk=excluded.pk), reason="test")

    def scenario(run: Run) -> list[tuple[Any, ...]]:
        data = json.loads((first := run.send("GET", NEXT, token=done.token))[2])
        out = [first, run.send("POST", judgment_url(data["assignment"]), token=done.token, body=ranks_body(data))]
        out.append(run.send("GET", NEXT, token=late.token))  # 204 and the completion headers
        out.append(run.send("GET", NEXT, token=excluded.token))  # 403
        with mock.patch.object(BaseDatabaseWrapper, "ensure_connection", refuse):
            out.append(run.send("GET", NEXT, token=late.token))  # 503
        return out

    slow, fast, _, fast_dispatched = both_ways(scenario)
    assert [status for status, *_ in slow] == [200, 201, 204, 403, 503]
    for k, (old, new) in enumerate(zip(slow, fast, strict=True)):
        assert new == old, k
    nothing_left = dict(fast[2][1])
    assert nothing_left["X-Completion-Code"] == "C0DE" and "Content-Type" not in nothing_left
    assert dict(fast[4][1])["Retry-After"]
    assert fast_dispatched == []


def refuse(self: Any, *args: Any, **kwargs: Any) -> None:
    raise OperationalError("connection to server at 127.0.0.1, port 5432 failed: Connection refused")


def test_an_unexpected_error_is_still_a_500(both_ways, monkeypatch):
    study = make_study(n_items=1)
    annotator = annotators_create(study=study)[0]

    def broken(**kwargs: Any) -> None:
        raise ValueError("a bug")

    monkeypatch.setattr("annotation.handout.services.assignment_next", broken)
    slow, fast, _, _ = both_ways(lambda run: [run.send("GET", NEXT, token=annotator.token)])
    assert slow[0][0] == 500 and fast == slow
