"""Migrate and seed the live-server test database (tests/config/live_server.py); prints the world as JSON.

Run as a child process with SQLITE_PATH pointing at a fresh file: a study 'live' of three items
that two annotators have judged completely (so the researcher endpoints compute on real data),
a third annotator with an item in hand, and a staff user with an API token and a password. Also an MQM
and an ESA study ('live-mqm', 'live-esa'), each with an annotator holding an item (``span_worlds``), so
the annotation API is exercised on span studies too.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402


def main() -> None:
    call_command("migrate", verbosity=0, skip_checks=True)
    from annotation.items import selectors
    from annotation.handout import services
    from annotation.handout.services import annotators_create
    from tests.factories import make_study

    study = make_study(slug="live", n_items=3, n_candidates=3, settings={"redundancy": 3})
    for judge in annotators_create(study=study, count=2):
        while (done := services.assignment_next(annotator=judge)) is not None:
            payload = selectors.assignment_payload(assignment=done, candidates=list(done.item.candidates.all()),
                                                   progress_data=selectors.progress(annotator=judge))
            services.judgment_submit(assignment=done,
                                     payload={"ranks": {c["id"]: k + 1 for k, c in enumerate(payload["candidates"])}})
    annotator = annotators_create(study=study, count=1)[0]
    assignment = services.assignment_next(annotator=annotator)
    assert assignment is not None
    payload = selectors.assignment_payload(assignment=assignment, candidates=list(assignment.item.candidates.all()),
                                           progress_data=selectors.progress(annotator=annotator))
    span_worlds = {protocol: _span_world(protocol) for protocol in ("mqm", "esa")}
    staff = User.objects.create_superuser("live-staff", "live@example.org", "live-password")
    print(json.dumps({"slug": study.slug, "annotator_token": annotator.token, "assignment": assignment.public_id,
                      "candidates": [c["id"] for c in payload["candidates"]],
                      "staff_token": Token.objects.create(user=staff).key,
                      "staff_username": "live-staff", "staff_password": "live-password",
                      "span_worlds": span_worlds}))


def _span_world(protocol: str) -> dict[str, str]:
    """A span study of four items with the source shown, and an annotator holding its first item."""
    from annotation.handout import services
    from annotation.handout.services import annotators_create
    from tests.factories import make_study

    study = make_study(slug=f"live-{protocol}", protocol=protocol, n_items=4, n_candidates=2,
                       settings={"redundancy": 2, "show_source": True})
    annotator = annotators_create(study=study, count=1)[0]
    assignment = services.assignment_next(annotator=annotator)
    assert assignment is not None
    return {"annotator_token": annotator.token, "assignment": assignment.public_id}


if __name__ == "__main__":
    main()
