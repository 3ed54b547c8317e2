"""Property-based test of the whole API against its own OpenAPI schema (schemathesis, in process).

Every operation of the schema gets a bounded number of generated requests (valid and invalid
parameters and bodies), authenticated as the operation requires — the annotator's token on the
annotation API, a staff token on the researcher API — with path parameters pointing at real
objects half of the time. Checks: no 5xx, and every response conforms to the schema (status
code documented, body matching its declared shape).
"""
from __future__ import annotations

import zlib

import pytest
import schemathesis
from schemathesis import GenerationMode
from django.contrib.auth.models import User
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

from annotation import selectors, services
from annotation.services import annotators_create
from tests.factories import make_study

# Bounded: 20 generated requests per operation and mode keep the whole run under about a minute.
EXAMPLES = 20


@pytest.fixture
def world(db):
    study = make_study(slug="fuzz", n_items=3, n_candidates=3, settings={"redundancy": 3})
    # Two annotators judge everything, so the agreement and comparison endpoints compute on
    # real data (seed=-1 reached numpy and was a 500 only with judgments to resample).
    for judge in annotators_create(study=study, count=2):
        while (done := services.assignment_next(annotator=judge)) is not None:
            candidates = list(done.item.candidates.all())
            client_ids = selectors.assignment_payload(assignment=done, candidates=candidates,
                                                      progress_data=selectors.progress(annotator=judge))["candidates"]
            services.judgment_submit(assignment=done, payload={"ranks": {c["id"]: k + 1 for k, c in enumerate(client_ids)}})
    annotator = annotators_create(study=study, count=1)[0]
    assignment = services.assignment_next(annotator=annotator)
    assert assignment is not None
    staff = User.objects.create_superuser("fuzzer", "f@example.org", "pw")
    return {"slug": study.slug, "assignment": assignment.public_id, "annotator_token": annotator.token,
            "staff_token": Token.objects.create(user=staff).key}


@pytest.fixture
def wsgi_app():
    """The project's WSGI app, without closing the test's connection after each request
    (what Django's test client does too; the test's transaction must stay open)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield get_wsgi_application()
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def api_schema(world, wsgi_app):
    return schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", wsgi_app,
                                          headers={"Authorization": f"Token {world['staff_token']}"})


def _call(case, world):
    annotation = case.path.startswith("/api/v1/annotate/")
    token = world["annotator_token"] if annotation else world["staff_token"]
    params = case.path_parameters or {}
    # Three cases in four aim at real objects, so the views behind the 404 are exercised too.
    if zlib.crc32((repr(case.query) + repr(case.body)).encode()) % 4:  # stable across runs, unlike hash()
        for name, real in (("slug", world["slug"]), ("assignment", world["assignment"])):
            if name in params:
                params[name] = real
    case.call_and_validate(headers={"Authorization": f"Token {token}"},
                           checks=[not_a_server_error, status_code_conformance, response_schema_conformance])


# schemathesis' pytest plugin (schema.parametrize with a fixture) does not run under pytest 9,
# so the operations are walked here and each gets its own bounded Hypothesis run.
@override_settings(RATELIMIT_INVALID_TOKENS="1000000/60")  # generated bad tokens must not turn into 429s
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_api_conforms_to_its_schema(api_schema, world, mode):
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 6
    for operation in operations:
        raw = operation.definition.raw
        if mode == GenerationMode.NEGATIVE and not raw.get("parameters") and not raw.get("requestBody") \
                and "{" not in operation.path:
            continue  # nothing to make invalid (the token is always a valid one here)

        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy(generation_mode=mode))
        def run(case):
            _call(case, world)

        run()
