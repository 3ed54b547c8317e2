"""Every staff page of an MQM and an ESA study with judgments answers 200 (no crash on span answers).

Home, study list, study page (progress), preview of every item, quality, annotator pages,
report with its JSON, every CSV and paper table, compare page, exports and links.
"""
from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from annotation.models import Annotator
from research.views.reports import SPAN_DOWNLOADS
from tests.evaluators.reports.test_span_report import answer_all, esa_plan, mqm_plan, span_study
from tests.factories import persona

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    user = persona("owner")  # the owner of the studies the tests make (tests/factories.py), not a superuser
    client.force_login(user)
    return client


def staff_urls(study) -> list[str]:
    slug = study.slug
    urls = [reverse("home"), reverse("studies:list"), reverse("studies:detail", args=[slug]),
            reverse("studies:quality", args=[slug]), reverse("studies:preview", args=[slug]),
            reverse("evaluators:report", args=[slug]), reverse("evaluators:report-json", args=[slug]),
            reverse("compare-report", args=[slug]), reverse("studies:links-csv", args=[slug])]
    urls += [reverse("studies:preview", args=[slug]) + f"?item={k}" for k in range(1, study.items.count() + 1)]
    urls += [reverse("studies:annotator", args=[slug, a.code]) for a in Annotator.objects.filter(study=study)]
    urls += [reverse("evaluators:report-csv", args=[slug, name]) for name in SPAN_DOWNLOADS]
    urls += [reverse("evaluators:report-paper", args=[slug, name, ext])
             for name in ("ranking", "agreement") for ext in ("tex", "md")]
    urls += [reverse("studies:export", args=[slug, fmt]) for fmt in ("csv", "jsonl")]
    return urls


@pytest.mark.parametrize("protocol, plan, settings", [
    ("mqm", mqm_plan, {}),
    ("esa", esa_plan, {}),
    ("esa", lambda k, item, system: {"score": esa_plan(k, item, system)["score"]}, {"esa_spans": False}),
], ids=["mqm", "esa", "da"])
def test_every_staff_page_of_a_judged_span_study_answers_200(staff_client, protocol, plan, settings):
    study = span_study(f"staff-{protocol}-{len(settings)}", protocol, n_items=3, **settings)
    answer_all(study, plan)
    urls = staff_urls(study)
    assert len(urls) > 25
    failures = []
    for url in urls:
        resp = staff_client.get(url, follow=True)  # home sends staff on to the study list
        if resp.status_code != 200:
            failures.append((url, resp.status_code))
        elif hasattr(resp, "streaming_content"):
            b"".join(resp.streaming_content)  # a streamed CSV fails while it streams, not at the status
    assert failures == []
    detail = staff_client.get(reverse("studies:detail", args=[study.slug])).content.decode()
    assert "6 of 6 judgments" in detail.replace("<strong>", "").replace("</strong>", "")


@pytest.mark.parametrize("protocol, plan", [("mqm", mqm_plan), ("esa", esa_plan)])
def test_a_span_studys_ratings_csv_holds_the_units_its_agreement_is_computed_on(staff_client, protocol, plan):
    study = span_study(f"ratings-{protocol}", protocol, n_items=3)
    answer_all(study, plan)
    body = staff_client.get(reverse("evaluators:report-csv", args=[study.slug, "ratings"]))
    rows = list(csv.DictReader(io.StringIO(b"".join(body.streaming_content).decode())))
    report = staff_client.get(reverse("evaluators:report-json", args=[study.slug])).json()
    assert rows and all("|" in row["item"] for row in rows)  # item|system units, as the span report's agreement
    assert len(rows) == report["n_ratings"]
