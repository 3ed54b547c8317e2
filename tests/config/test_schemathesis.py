"""Property-based test of the whole API against its own OpenAPI schema (schemathesis, over HTTP).

A real gunicorn (tests/config/live_server.py, two workers, temporary SQLite) serves the project
with the limits set for this test: the invalid-token limit so high that generated bad tokens are
answered 401, not 429 — at the default limit most requests would be 429s and prove little.

Every operation of the schema gets a bounded number of generated requests in each mode (valid
and invalid parameters and bodies), authenticated as the operation requires — the annotator's
token on the annotation API, a staff token on the researcher API — with path parameters pointing
at real objects three times in four. Then the stateful phase follows the schema's links (study
list → agreement / compare / judgments; next → submit), bounded in steps.

Checks: every check schemathesis has (no 5xx; status code, content type, headers and body as
documented; invalid data refused; valid data accepted; authentication not ignored; …), except
"valid data accepted" on the two operations whose validity the schema cannot fully state: a
judgment's ranks must name the candidates of *that* assignment, and ``compare?evaluator=``
must name an evaluator with scores in *that* study (both a 400 naming the field; the schema's
descriptions say so).

The annotation operations (next, judgment, skip) run once more for each span protocol (MQM,
ESA), with the token and assignment of an annotator of such a study: ``next`` then answers with
the ``spans`` block and the judgment body carries ``annotations``, both checked against the schema.
"""
from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.generation.stateful import run_state_machine_as_test
from schemathesis.specs.openapi.checks import positive_data_acceptance

from tests.config.live_server import LiveServer

# Bounded: generated requests per operation and mode, and the stateful phase's scenarios × steps.
EXAMPLES = 20
STATEFUL_SCENARIOS = 12
STATEFUL_STEPS = 4
REQUEST_TIMEOUT_S = 30

# Valid under the schema but refused by what the schema cannot say (module docstring).
SEMANTIC_VALIDITY = {"/api/v1/annotate/{assignment}/judgment", "/api/v1/studies/{slug}/compare"}


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    server = LiveServer(workers=2, env={"RATELIMIT_INVALID_TOKENS": "1000000/60", "RATELIMIT_PROLIFIC": "1000000/60"})
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def api_schema(live: LiveServer) -> Any:
    schema = schemathesis.openapi.from_url(f"{live.url}/api/v1/schema/?format=json",
                                           headers={"Authorization": f"Token {live.world['staff_token']}"})
    schema.config.base_url = live.url
    return schema


ANNOTATE_PREFIX = "/api/v1/annotate/"


def _headers(path: str, world: dict[str, Any]) -> dict[str, str]:
    token = world["annotator_token"] if path.startswith(ANNOTATE_PREFIX) else world["staff_token"]
    return {"Authorization": f"Token {token}"}


def _excluded(path: str) -> list[Any]:
    return [positive_data_acceptance] if path in SEMANTIC_VALIDITY else []


def _aim_at_real_objects(case: Any, world: dict[str, Any]) -> None:
    params = case.path_parameters or {}
    # Three cases in four aim at real objects, so the views behind the 404 are exercised too.
    if zlib.crc32((repr(case.query) + repr(case.body)).encode()) % 4:  # stable across runs, unlike hash()
        for name, real in (("slug", world["slug"]), ("assignment", world["assignment"])):
            if name in params:
                params[name] = real


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_api_conforms_to_its_schema(api_schema: Any, live: LiveServer, mode: GenerationMode) -> None:
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 6
    _conforms(operations, live, live.world, mode)


@pytest.mark.parametrize("protocol", ["mqm", "esa"])
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_annotation_api_conforms_for_span_studies(api_schema: Any, live: LiveServer, mode: GenerationMode,
                                                  protocol: str) -> None:
    world = {**live.world, **live.world["span_worlds"][protocol]}
    operations = [result.ok() for result in api_schema.get_all_operations()]
    operations = [op for op in operations if op.path.startswith(ANNOTATE_PREFIX)]
    assert {op.path for op in operations} >= {"/api/v1/annotate/next", "/api/v1/annotate/{assignment}/judgment",
                                              "/api/v1/annotate/{assignment}/skip"}
    got = requests.get(f"{live.url}/api/v1/annotate/next", headers=_headers(ANNOTATE_PREFIX, world),
                       timeout=REQUEST_TIMEOUT_S)
    assert got.status_code == 200 and got.json()["protocol"] == protocol and got.json()["spans"]["spans"]
    _conforms(operations, live, world, mode)


def _conforms(operations: list[Any], live: LiveServer, world: dict[str, Any], mode: GenerationMode) -> None:
    """Every check on generated requests to each operation, authenticated and aimed as ``world`` says."""
    session = requests.Session()
    for operation in operations:
        raw = operation.definition.raw
        if mode == GenerationMode.NEGATIVE and not raw.get("parameters") and not raw.get("requestBody") \
                and "{" not in operation.path:
            continue  # nothing to make invalid (the token is always a valid one here)

        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy(generation_mode=mode))
        def run(case: Any) -> None:
            _aim_at_real_objects(case, world)
            case.call_and_validate(base_url=live.url, session=session, headers=_headers(case.path, world),
                                   timeout=REQUEST_TIMEOUT_S, excluded_checks=_excluded(case.operation.path))

        run()


def test_stateful_phase_follows_the_links(api_schema: Any, live: LiveServer) -> None:
    base = api_schema.as_state_machine()
    calls: list[str] = []

    class Machine(base):  # type: ignore[misc, valid-type]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            calls.append(case.operation.path)
            return {"base_url": live.url, "headers": _headers(case.path, live.world), "timeout": REQUEST_TIMEOUT_S}

        def validate_response(self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any) -> None:
            case.validate_response(response, headers=_headers(case.path, live.world),
                                   transport_kwargs={**kwargs, "base_url": live.url},
                                   excluded_checks=_excluded(case.operation.path),
                                   recorder=getattr(self, "recorder", None))

    run_state_machine_as_test(Machine, settings=settings(max_examples=STATEFUL_SCENARIOS, stateful_step_count=STATEFUL_STEPS,
                                                         deadline=None, database=None, derandomize=True,
                                                         suppress_health_check=list(HealthCheck)))
    # The links were followed: a study from the list led to its endpoints, an assignment to its submission.
    assert "/api/v1/studies/{slug}/agreement" in calls or "/api/v1/studies/{slug}/judgments" in calls, calls
    assert "/api/v1/annotate/{assignment}/judgment" in calls, calls
