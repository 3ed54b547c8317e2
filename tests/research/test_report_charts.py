"""The report's per-phenomenon AC1 chart: drawn when there is a value to plot, else a sentence saying why."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.handout.services import annotators_create
from evaluators.reports.svg import phenomenon_chart_note, phenomenon_svg
from studies.importing.study_file import study_import
from tests.conftest import annotator_client
from tests.factories import owned, study_file

pytestmark = pytest.mark.django_db


def esa_with_phenomena(slug: str, n_annotators: int):
    study = owned(study_import(status="open", data=study_file(slug=slug, protocol="esa", n_items=6, n_candidates=3,
                                                              phenomena=("pron", "conn"), settings={"redundancy": 2})))
    for k, annotator in enumerate(annotators_create(study=study, count=n_annotators)):
        client = annotator_client(annotator)
        while (resp := client.get("/api/v1/annotate/next")).status_code != 204:
            data = resp.json()
            answer = {c["id"]: {"score": 40 + 10 * n + k, "spans": [] if n != 1 else [
                {"start": 0, "end": 4, "severity": ("minor", "major")[k]}]} for n, c in enumerate(data["candidates"])}
            posted = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", {"annotations": answer},
                                 format="json")
            assert posted.status_code == 201, posted.content
    return study


def test_an_esa_report_with_one_rater_a_unit_shows_no_empty_ac1_chart_but_why(staff):
    """It drew the chart's frame with 'undefined' on every row."""
    study = esa_with_phenomena("esa-one", 1)
    page = staff.get(reverse("evaluators:report", args=[study.slug]), {"bootstrap": "50"}).content.decode()
    section = page[page.index('id="phen-h"'):]
    section = section[:section.index("</section>")]
    assert "<svg" not in section and ">undefined<" not in section
    assert ('<p class="muted" id="phen-chart-note">No AC1 chart: AC1 is undefined for every phenomenon: no item '
            'was rated by two or more raters.</p>') in section


def test_an_esa_report_with_two_raters_draws_the_chart(staff):
    study = esa_with_phenomena("esa-two", 2)  # their worst severities differ on one candidate an item
    page = staff.get(reverse("evaluators:report", args=[study.slug]), {"bootstrap": "50"}).content.decode()
    section = page[page.index('id="phen-h"'):]
    assert "Gwet&#x27;s AC1 per phenomenon" in section or "Gwet's AC1 per phenomenon" in section
    assert 'id="phen-chart-note"' not in section


def test_one_category_everywhere_is_said_in_the_readers_words():
    one = {"a": {"coefficients": {"gwet_ac1": {"value": None, "note": (
        "only one category: chance agreement is 1 and every chance-corrected coefficient is 0/0 (undefined); "
        "pass the full category list via `categories`")}}}}
    assert phenomenon_chart_note(one) == ("No AC1 chart: AC1 is undefined for every phenomenon: only one category: "
                                          "chance agreement is 1 and every chance-corrected coefficient is 0/0 "
                                          "(undefined).")


def test_chart_and_note_functions():
    undefined = {"a": {"coefficients": {"gwet_ac1": {"value": None, "note": "too few"}}},
                 "b": {"coefficients": {"gwet_ac1": {"value": None, "note": "too few"}}}}
    assert phenomenon_svg(undefined) == ""
    assert phenomenon_chart_note(undefined) == "No AC1 chart: AC1 is undefined for every phenomenon: too few."
    mixed = {**undefined, "c": {"coefficients": {"gwet_ac1": {"value": 0.5, "ci_low": 0.1, "ci_high": 0.9}}}}
    assert "<svg" in phenomenon_svg(mixed) and phenomenon_chart_note(mixed) == ""
    assert phenomenon_svg({}) == "" and phenomenon_chart_note({}) == ""
