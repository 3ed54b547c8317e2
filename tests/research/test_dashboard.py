"""The researcher dashboard (studies/views.py): study list, study page, invitations."""
from __future__ import annotations

import random

import pytest
from django.urls import reverse

from annotation.handout import services
from annotation.models import Annotator
from studies.models import Study
from studies.importing.study_file import study_import
from tests.annotation.test_adaptive_allocation import _answer, _da_file, _run
from tests.factories import make_study, owned

pytestmark = pytest.mark.django_db


@pytest.fixture
def outsider(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("outsider", password="x"))
    return client


def test_list_shows_studies_with_progress(staff):
    make_study(slug="first", n_items=4, settings={"redundancy": 2})
    response = staff.get(reverse("studies:list"))
    assert response.status_code == 200
    page = response.content.decode()
    assert reverse("studies:detail", args=["first"]) in page and "0 / 8" in page and 'role="progressbar"' in page


def test_pages_are_staff_only(outsider, client):
    make_study(slug="s1", n_items=1)
    for url in (reverse("studies:list"), reverse("studies:detail", args=["s1"]), reverse("studies:import")):
        assert outsider.get(url).status_code == 302
    response = outsider.post(reverse("studies:invite", args=["s1"]), {"count": 2})
    assert response.status_code == 302 and not Annotator.objects.exists()


def test_detail_page(staff):
    study = make_study(slug="det", n_items=3, settings={"redundancy": 2, "spam_rate": 0.3})
    response = staff.get(reverse("studies:detail", args=["det"]))
    assert response.status_code == 200
    page = response.content.decode()
    assert reverse("studies:export", args=["det", "csv"]) in page
    assert reverse("studies:export", args=["det", "jsonl"]) in page
    assert reverse("admin:studies_study_change", args=[study.pk]) in page
    assert "/reports/det/" in page and response.context["quality_url"].endswith("/studies/det/quality/")
    assert reverse("api-study-judgments", args=["det"]) in page
    assert response.context["progress"]["n_needed"] == (3 + 1) * 2


def test_detail_unknown_slug_404(staff):
    assert staff.get(reverse("studies:detail", args=["nope"])).status_code == 404


def test_invite_with_htmx_returns_the_table(staff):
    make_study(slug="hx", n_items=1)
    response = staff.post(reverse("studies:invite", args=["hx"]), {"count": 3}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    annotators = list(Annotator.objects.filter(study__slug="hx"))
    assert len(annotators) == 3
    page = response.content.decode()
    assert page.lstrip().startswith('<section id="annotators"')
    assert all(f"http://testserver/a/{a.token}/" in page for a in annotators)
    assert page.count('class="new"') == 3


def test_invite_without_htmx_redirects(staff):
    make_study(slug="plain", n_items=1)
    response = staff.post(reverse("studies:invite", args=["plain"]), {"count": 2})
    assert response.status_code == 302 and response["Location"] == reverse("studies:detail", args=["plain"])
    assert Annotator.objects.count() == 2
    detail = staff.get(response["Location"]).content.decode()
    assert "2 annotator(s) invited" in detail


@pytest.mark.parametrize("count", ["0", "-1", "abc", "201"])
def test_invite_bad_count_stores_nothing(staff, count):
    make_study(slug="bad", n_items=1)
    response = staff.post(reverse("studies:invite", args=["bad"]), {"count": count}, HTTP_HX_REQUEST="true")
    assert response.status_code == 400 and "count:" in response.content.decode()
    assert not Annotator.objects.exists()


def test_invite_get_not_allowed(staff):
    make_study(slug="g", n_items=1)
    assert staff.get(reverse("studies:invite", args=["g"])).status_code == 405


def test_list_shows_last_activity_and_eta(staff):
    make_study(slug="quiet", n_items=2)
    response = staff.get(reverse("studies:list"))
    page = response.content.decode()
    assert "Last activity" in page and "ETA" in page
    (row,) = response.context["rows"]
    assert row["activity"].last_activity is None and row["activity"].eta is None
    assert row["activity"].eta_note in page and "never" in page


def test_list_queries_do_not_grow_with_studies(staff):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert staff.get(reverse("studies:list")).status_code == 200
        return len(queries)

    make_study(slug="q1", n_items=2)
    few = count()
    for i in range(2, 6):
        make_study(slug=f"q{i}", n_items=2)
    assert count() == few


def test_detail_page_shows_the_blinding_lint_of_the_stored_items(staff):
    from studies.importing.study_file import study_import
    from tests.factories import study_file
    data = study_file(slug="blind", n_items=5, n_candidates=2)
    for item in data["items"]:
        item["candidates"][0]["text"] = "“Quoted” reference."
    study = owned(study_import(data=data))
    page = staff.get(reverse("studies:detail", args=["blind"])).content.decode()
    assert "Blinding warnings" in page and "5 of 5" in page and "hidden by <code>normalise_typography</code>" in page
    study.normalise_typography = True  # the lint reads what annotators see: nothing typographic is left
    study.save()
    response = staff.get(reverse("studies:detail", args=["blind"]))
    assert not {"typographic_quotes"} & set(response.context["blinding"].share_of)
    assert "normalised on screen" in response.content.decode()


def test_members_form_error_is_shown_at_the_form_once(staff):
    """It was a message at the top of the page while the page reloaded at the form, 2,500 px below."""
    make_study(slug="mem", n_items=1)
    response = staff.post(reverse("studies:members", args=["mem"]), {"username": "ghost", "role": "viewer"})
    assert response.status_code == 302 and response["Location"] == reverse("studies:detail", args=["mem"])
    page = staff.get(response["Location"]).content.decode()
    assert 'class="messages"' not in page
    assert '<p id="members-notice" class="errors" role="alert">username: no user &#x27;ghost&#x27;</p>' in page
    assert 'value="ghost" aria-invalid="true" aria-describedby="members-notice" autofocus' in page
    assert page.index('id="members-notice"') > page.index('id="members-h"')
    assert "members-notice" not in staff.get(response["Location"]).content.decode()  # shown once


def test_inviting_pilots_sends_the_status_card_out_of_band(staff):
    make_study(slug="pil", n_items=1, status="pilot")
    assert "(0 invited)" in staff.get(reverse("studies:detail", args=["pil"])).content.decode()
    response = staff.post(reverse("studies:invite", args=["pil"]), {"count": 2, "pilot": "1"}, HTTP_HX_REQUEST="true")
    page = response.content.decode()
    assert response.status_code == 200 and 'id="annotators"' in page
    assert 'id="lifecycle" aria-labelledby="lifecycle-h" hx-swap-oob="true"' in page and "(2 invited)" in page


def test_study_page_reports_adaptive_allocation_settled_with_its_pairs(staff):
    study = owned(study_import_open(_da_file("alloc-page", n_items=60, allocation={
        "policy": "adaptive", "warmup": 5, "target": "top"})))
    page = staff.get(reverse("studies:detail", args=[study.slug])).content.decode()
    assert "Adaptive allocation" in page and "Warm-up: 0 of 5" in page and "data-testid=\"allocation-settled\"" not in page
    assert "re-decides every 10 judgments (<code>refresh_every</code>), so it may follow a state up to 9" in page
    # a study stored before the setting existed: the page says the default is used
    Study.objects.filter(pk=study.pk).update(allocation={k: v for k, v in study.allocation.items() if k != "refresh_every"})
    page = staff.get(reverse("studies:detail", args=[study.slug])).content.decode()
    assert "every 10 judgments (<code>refresh_every</code>, the default: the study does not set it)" in page
    Study.objects.filter(pk=study.pk).update(allocation={**study.allocation, "refresh_every": 1})
    page = staff.get(reverse("studies:detail", args=[study.slug])).content.decode()
    assert "The hand-out re-decides after every judgment;" in page
    Study.objects.filter(pk=study.pk).update(allocation=study.allocation)
    _run(study, services.annotators_create(study=study, count=3), random.Random(4))
    page = staff.get(reverse("studies:detail", args=[study.slug])).content.decode()
    assert 'data-testid="allocation-settled">Settled' in page
    assert "reference vs sys1" in page and "sys1 better" in page
    listing = staff.get(reverse("studies:list")).content.decode()
    assert 'class="badge settled"' in listing


def test_study_page_of_a_ranking_study_says_its_pairs_are_compared_by_preference(staff):
    from tests.annotation.test_adaptive_preferences import CLEAR
    from tests.annotation.test_adaptive_preferences import _file as preference_file
    from tests.annotation.test_adaptive_preferences import _run as preference_run

    study = owned(study_import(status="open", data=preference_file("alloc-rank-page", "ranking", n_items=60, allocation={
        "policy": "adaptive", "warmup": 5, "target": "top", "min_effect": 0.5})))
    preference_run(study, services.annotators_create(study=study, count=2), random.Random(4), CLEAR)
    page = staff.get(reverse("studies:detail", args=[study.slug])).content.decode()
    assert "minimum effect 0.5 (share preferred minus share dispreferred)" in page
    assert "observation is which of the two the annotator preferred" in page
    assert "sys1 better" in page and 'data-testid="allocation-settled">Settled' in page
    da = owned(study_import_open(_da_file("alloc-da-page", n_items=4, allocation="adaptive")))
    assert "annotator preferred" not in staff.get(reverse("studies:detail", args=[da.slug])).content.decode()


def test_study_page_of_an_open_adaptive_study_gives_the_judgments_expected(staff):
    study = owned(study_import_open(_da_file("alloc-open", n_items=60, allocation={
        "policy": "adaptive", "warmup": 3})))
    annotator = services.annotators_create(study=study)[0]
    rng = random.Random(5)
    for _ in range(4):
        assignment = services.assignment_next(annotator=Annotator.objects.select_related("study").get(pk=annotator.pk))
        # Three systems far apart: every pair's evidence grows, so each has a predicted decision.
        services.judgment_submit(assignment=assignment, payload=_answer(
            assignment, rng, {"reference": 20.0, "sys1": 90.0, "sys2": 55.0}))
    page = staff.get(reverse("studies:detail", args=[study.slug])).content.decode()
    assert "<strong>Open</strong>" in page and 'data-testid="allocation-left">about ' in page
    assert 'class="badge settled"' not in staff.get(reverse("studies:list")).content.decode()


def test_uniform_study_page_has_no_allocation_card(staff):
    study = make_study(slug="uniform-page", n_items=2)
    page = staff.get(reverse("studies:detail", args=[study.slug])).content.decode()
    assert "Adaptive allocation" not in page and "uniform (every item to its redundancy)" in page


def study_import_open(data):
    return study_import(data=data, status="open")
