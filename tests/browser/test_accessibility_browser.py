"""Acceptance (issue 9): axe-core reports no serious or critical violation on any annotator page or
researcher page, at desktop (1366×850) and phone (390×844) widths; researcher pages fit 390 px
without horizontal page scroll. Screenshots of the researcher pages go to screenshots/.
"""
from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Assignment
from annotation.handout.services import annotators_create, assignment_next
from evaluators.metrics.scores import scores_import
from studies.models import Study
from tests.browser.axe import WIDTHS, axe_violations, describe
from tests.compare_study import compare_study, score_csv
from tests.factories import make_study
from tests.report_study import answer_all, ranking_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def login(context: Any, live_server) -> None:
    user = get_user_model().objects.create_user("axe", password="pw", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(user)
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME,
                          "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": live_server.url}])


def _item_url(study: Study) -> str:
    annotator = annotators_create(study=study, count=1)[0]
    assignment = assignment_next(annotator=annotator)
    assert assignment is not None
    return f"/a/{annotator.token}/item/{assignment.public_id}/"


def annotator_pages() -> dict[str, tuple[str, str]]:
    """Every annotator page: start, an item of each protocol (and a document unit), done, messages."""
    ranking = make_study(slug="a11y-rank", n_items=3, settings={"redundancy": 2})
    ranking.prolific_study_id = "s1"  # the entry is on, so a link without its parameters is "incomplete"
    ranking.save(update_fields=["prolific_study_id"])
    choice = make_study(slug="a11y-choice", protocol="choice", n_items=3, n_candidates=2,
                        settings={"options": ["neither", "tie", "invalid"], "redundancy": 2})
    judgment = make_study(slug="a11y-judge", protocol="judgment", n_items=3, n_candidates=1,
                          settings={"labels": ["no error", "pronoun", "connective"], "multi_label": True,
                                    "question": "Which errors does it make?"})
    document = make_study(slug="a11y-doc", n_items=4, documents=2, settings={"unit": "document"})
    closed = make_study(slug="a11y-closed", n_items=1, settings={"completion_code": "C0DE"})
    starter = annotators_create(study=ranking, count=1)[0]
    finisher = annotators_create(study=closed, count=1)[0]
    a = assignment_next(annotator=finisher)
    assert a is not None
    from annotation.handout.services import judgment_submit
    judgment_submit(assignment=a, payload={"ranks": {c.public_id: i + 1 for i, c in enumerate(a.item.candidates.all())}})
    closed_annotator = annotators_create(study=closed, count=1)[0]
    Study.objects.filter(pk=closed.pk).update(status="closed")
    from annotation.handout.exclusion import annotator_exclude

    excluded_study = make_study(slug="a11y-excluded", n_items=2, settings={
        "contact": "lab@example.org", "screened_out_code": "SCR33N"})
    excluded = annotator_exclude(annotator=annotators_create(study=excluded_study, count=1)[0], reason="spam")
    draft = make_study(slug="a11y-draft", n_items=1, status="draft")
    draft_annotator = annotators_create(study=draft, count=1)[0]
    # name: (path, a selector that proves the page is the one meant)
    return {
        "start": (f"/a/{starter.token}/", ".start-actions"),
        "item-ranking": (_item_url(ranking), ".item.protocol-ranking .ranks"),
        "item-choice": (_item_url(choice), ".item.protocol-choice .options"),
        "item-judgment": (_item_url(judgment), ".item.protocol-judgment .labels"),
        "item-document": (_item_url(document), ".cards.document"),
        "done": (f"/a/{finisher.token}/done/", "#completion-code"),
        "message-closed": (f"/a/{closed_annotator.token}/", "h1:has-text('closed')"),
        "message-draft": (f"/a/{draft_annotator.token}/", "h1:has-text('not started')"),
        "excluded": (f"/a/{excluded.token}/", "#study-contact"),
        "message-unknown-link": ("/a/no-such-token/", "h1:has-text('does not work')"),
        "message-bad-prolific-entry": (f"/p/{ranking.slug}/", "h1:has-text('incomplete')"),
    }


def researcher_pages() -> dict[str, str]:
    study = ranking_study("a11y-report", n_items=12, n_annotators=3)
    code = study.annotators.order_by("sequence").first().code
    compared = compare_study(slug="a11y-compare", n_items=8, n_annotators=2)
    scores_import(study=compared, file_name="o.csv", content=score_csv(name="oracle"))
    make_study(slug="a11y-one-system", n_items=3, n_candidates=2)
    # Six annotators with 8 items each out of 16, two per item: pairs share 0 to 8 items (hatched cells).
    sparse = make_study(slug="a11y-sparse", n_items=16, n_candidates=3, phenomena=("it-sie", "it-er"),
                        settings={"allow_ties": True, "redundancy": 3, "spam_rate": 0.0, "items_per_annotator": 8})
    answer_all(sparse, annotators_create(study=sparse, count=6))
    # Issue 12: the blinding warnings (a typographic cue in every item) with "Normalise typography", at 390 px too.
    from studies.importing.study_file import study_import
    from tests.factories import study_file

    leaky = study_file(slug="a11y-blinding", n_items=6, n_candidates=3)
    for item in leaky["items"]:
        item["candidates"][0]["text"] = "It’s the “reference”… with\u00a0a rather long sentence that has to wrap somewhere."
    study_import(data=leaky, status="draft")
    return {
        "study-blinding": "/studies/a11y-blinding/",
        "docs-blinding": "/help/protocols/blinding.md",
        "dashboard": "/studies/",
        "study": f"/studies/{study.slug}/",
        "import": "/studies/import/",
        "quality": f"/studies/{study.slug}/quality/",
        "annotator": f"/studies/{study.slug}/annotators/{code}/",
        "report": f"/reports/{study.slug}/",
        "compare": f"/reports/{compared.slug}/compare/",
        "compare-cannot": "/reports/a11y-one-system/compare/",
        "preview": f"/studies/{study.slug}/preview/",
        "report-sparse": "/reports/a11y-sparse/",
    }


def _check(page, url: str, where: str, problems: list[str], *, fit: int | None) -> None:
    response = page.goto(url)
    assert response is not None and response.status < 500, f"{where}: HTTP {response and response.status}"
    page.wait_for_load_state("networkidle")
    problems.extend(describe(axe_violations(page), where))
    if fit is not None:
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > fit:
            problems.append(f"{where}: page is {width} px wide at a {fit} px viewport (horizontal scroll)")


@pytest.mark.parametrize("width", list(WIDTHS))
def test_researcher_pages(width, chromium_browser, live_server, screenshot_dir):
    pages = researcher_pages()
    context = chromium_browser.new_context(viewport=WIDTHS[width])
    login(context, live_server)
    page = context.new_page()
    problems: list[str] = []
    try:
        for name, path in pages.items():
            fit = WIDTHS[width]["width"] if width == "phone" else None
            _check(page, live_server.url + path, f"{name} ({width})", problems, fit=fit)
            page.screenshot(path=str(screenshot_dir / f"research-{name}-{width}.png"))
            if name == "report-sparse":
                heat = page.locator("section[aria-labelledby=kappa-h]")
                assert heat.locator("g.kappa-cell.few").count() > 0  # some pairs share under 10 items
                heat.screenshot(path=str(screenshot_dir / f"kappa-heatmap-{width}.png"))
        # The import page after a bad upload (its error table).
        page.goto(live_server.url + pages["import"])
        page.set_input_files("input[type=file][name=study_file]",
                             files=[{"name": "s.json", "mimeType": "application/json", "buffer": b'{"slug": ""}'}])
        page.locator("form[enctype] button[type=submit]").click()
        page.wait_for_load_state("networkidle")
        assert page.locator(".errors-table").count() == 1
        problems.extend(describe(axe_violations(page), f"import-errors ({width})"))
        if width == "phone":
            w = page.evaluate("document.documentElement.scrollWidth")
            if w > 390:
                problems.append(f"import-errors (phone): page is {w} px wide")
    finally:
        context.close()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("width", list(WIDTHS))
def test_annotator_pages(width, chromium_browser, live_server, screenshot_dir):
    pages = annotator_pages()
    context = chromium_browser.new_context(viewport=WIDTHS[width])
    page = context.new_page()
    problems: list[str] = []
    try:
        for name, (path, proof) in pages.items():
            _check(page, live_server.url + path, f"{name} ({width})", problems, fit=None)
            assert page.locator(proof).count() >= 1, f"{name}: {proof} not on {page.url}"
            page.screenshot(path=str(screenshot_dir / f"annotator-{name}-{width}.png"), full_page=True)
    finally:
        context.close()
    assert not problems, "\n".join(problems)


def test_api_docs_render_without_leaving_127_0_0_1(chromium_browser, live_server, screenshot_dir):
    """Swagger UI and its assets come from our static files: every request outside the test server is
    aborted and recorded, and none may happen. (axe runs on this page in test_admin_and_api_docs_pages.)"""
    context = chromium_browser.new_context(viewport=WIDTHS["desktop"])
    page = context.new_page()
    outside: list[str] = []
    local = live_server.url.rstrip("/")

    def route(route_: Any) -> None:
        url = route_.request.url
        if url.startswith(local + "/") or url == local:
            route_.continue_()
        else:
            outside.append(url)
            route_.abort()

    try:
        page.route("**/*", route)
        page.goto(f"{live_server.url}/api/v1/docs/")
        page.locator(".swagger-ui .opblock").first.wait_for(timeout=15_000)
        assert page.locator(".swagger-ui .opblock-tag").count() >= 2
        assert "/api/v1/studies/" in page.content()
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(screenshot_dir / "api-docs.png"))
    finally:
        context.close()
    assert outside == []


def _superuser_login(context: Any, live_server) -> None:
    """The admin pages need model permissions: a superuser's session."""
    user = get_user_model().objects.create_superuser("axe-admin", password="pw")
    client = Client()
    client.force_login(user)
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME,
                          "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": live_server.url}])


def admin_pages() -> dict[str, str]:
    """The admin pages issue 12 named (study list and change, item change), in their judged and unjudged states."""
    from django.urls import reverse

    judged = ranking_study("a11y-admin", n_items=6, n_annotators=2)
    Study.objects.filter(pk=judged.pk).update(spam_rate=0.2)
    fresh = make_study(slug="a11y-admin-fresh", n_items=4, n_candidates=3, phenomena=("it-sie", ""),
                       settings={"spam_rate": 0.25})
    return {
        "study-list": reverse("admin:studies_study_changelist"),
        "study-change-judged": reverse("admin:studies_study_change", args=[judged.pk]),
        "study-change": reverse("admin:studies_study_change", args=[fresh.pk]),
        "study-copy": reverse("admin:studies_study_copy", args=[judged.pk]),
        "item-change-judged": reverse("admin:studies_item_change", args=[judged.items.filter(is_spam=False).first().pk]),
        "item-change": reverse("admin:studies_item_change", args=[fresh.items.filter(is_spam=False).first().pk]),
        "item-list": reverse("admin:studies_item_changelist"),
        "annotator-list": reverse("admin:annotation_annotator_changelist"),
        "judgment-list": reverse("admin:annotation_judgment_changelist"),
    }


@pytest.mark.parametrize("width", list(WIDTHS))
def test_admin_and_api_docs_pages(width, chromium_browser, live_server, screenshot_dir):
    """Issue 12: no serious or critical axe violation on the admin change pages and on /api/v1/docs/
    (collapsed, with an operation expanded, and with the Authorize dialog open)."""
    pages = admin_pages()
    context = chromium_browser.new_context(viewport=WIDTHS[width])
    _superuser_login(context, live_server)
    page = context.new_page()
    problems: list[str] = []
    try:
        for name, path in pages.items():
            _check(page, live_server.url + path, f"admin-{name} ({width})", problems, fit=None)
            assert page.locator("#content").count() == 1, f"{name}: not an admin page ({page.url})"
            page.screenshot(path=str(screenshot_dir / f"admin-{name}-{width}.png"), full_page=True)
        # A bad slug on the change page: its one error message, checked too.
        page.goto(live_server.url + pages["study-change"])
        page.fill("#id_slug", "Bad Slug!")
        page.locator("input[name=_save]").click()
        page.wait_for_load_state("networkidle")
        assert page.locator(".field-slug .errorlist li").count() == 1
        problems.extend(describe(axe_violations(page), f"admin-study-change-bad-slug ({width})"))

        page.goto(f"{live_server.url}/api/v1/docs/")
        page.locator(".swagger-ui .opblock").first.wait_for(timeout=15_000)
        page.wait_for_load_state("networkidle")
        assert page.evaluate("document.documentElement.lang") == "en"
        problems.extend(describe(axe_violations(page), f"api-docs ({width})"))
        page.screenshot(path=str(screenshot_dir / f"admin-api-docs-{width}.png"), full_page=True)
        page.locator(".opblock-get .opblock-summary-control").first.click()
        page.locator(".opblock-get .opblock-body").first.wait_for(timeout=5_000)
        problems.extend(describe(axe_violations(page), f"api-docs-operation ({width})"))
        page.screenshot(path=str(screenshot_dir / f"admin-api-docs-operation-{width}.png"), full_page=True)
        page.locator(".btn.authorize").first.click()
        page.locator(".modal-ux").wait_for(timeout=5_000)
        assert page.get_attribute("button.close-modal", "aria-label") == "Close"
        problems.extend(describe(axe_violations(page), f"api-docs-authorize ({width})"))
    finally:
        context.close()
    assert not problems, "\n".join(problems)
