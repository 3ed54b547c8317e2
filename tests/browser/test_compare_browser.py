"""The comparison page in headless Chromium: scatter plots render, running an evaluator works; screenshot."""
from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from evaluators.models import Evaluator
from evaluators.metrics.scores import scores_import
from tests.compare_study import compare_study, score_csv

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def login(page, live_server) -> None:
    user = get_user_model().objects.create_user("cmp-boss", password="pw", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(user)
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME,
                               "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                               "url": live_server.url}])


def test_compare_page_in_the_browser(browser_page, live_server, screenshot_dir):
    study = compare_study(slug="browser-cmp", spam_rate=0.2)
    scores_import(study=study, file_name="o.csv", content=score_csv(name="oracle"))
    scores_import(study=study, file_name="r.csv", content=score_csv(name="reversed", reverse=True))
    scores_import(study=study, file_name="d.csv", content=score_csv(name="pronoun-model", reference=True))
    login(browser_page, live_server)
    page = browser_page
    page.goto(f"{live_server.url}/reports/{study.slug}/compare/?bootstrap=200")
    assert page.title().startswith("Humans vs evaluators")
    assert page.locator(".plots svg").count() == 3
    assert page.locator(".plots svg circle").count() == 3 * 4  # four non-reference systems per plot
    box = page.locator(".plots svg").first.bounding_box()
    assert box and box["width"] >= 250 and box["height"] >= 150
    assert page.locator('[data-evaluator="oracle"][data-field="tau"]').inner_text() == "1.000"

    # Running an evaluator queues a background job (the dummy backend keeps it queued, as when no
    # worker has taken it yet); the page shows it and polls; when the job finishes, the page reloads
    # itself with the new evaluator's numbers.
    from django.test import override_settings

    from evaluators.jobs import job_execute
    from evaluators.models import EvaluationJob

    with override_settings(TASKS={"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}):
        page.check("input[name=evaluators][value=chrf]")
        with page.expect_navigation():
            page.click("button:has-text('Run')")
        assert page.url.endswith("/compare/?bootstrap=200")
        assert page.locator(".messages").inner_text().startswith("Queued chrf (job ")
        job = EvaluationJob.objects.get(study=study)
        row = page.locator(f'#jobs-panel tr[data-job="{job.pk}"]')
        assert row.get_attribute("data-state") == "queued" and row.locator("progress").count() == 1
        assert not page.locator('[data-evaluator="chrf"]').count()
        page.screenshot(path=str(screenshot_dir / "compare-job-queued.png"), full_page=False)
        assert job_execute(job.pk) == "done"  # what a worker does
        page.wait_for_selector('[data-evaluator="chrf"][data-field="tau"]', timeout=15_000)  # HX-Refresh reload
    assert page.locator(f'#jobs-panel tr[data-job="{job.pk}"]').get_attribute("data-state") == "done"
    assert "chrf: 32 scores stored" in page.locator("#jobs-panel").inner_text()
    assert Evaluator.objects.filter(study=study, name="chrf").exists()
    page.screenshot(path=str(screenshot_dir / "compare.png"), full_page=True)


def test_contrastive_study_page_in_the_browser(browser_page, live_server, screenshot_dir):
    """ContraPro accuracy, DiP Eq. 1 explained next to its numbers, means with CIs and t-tests."""
    from tests.evaluators.comparison.test_compare_contrastive import ITEMS, SCORES, judge
    from studies.generators.choice import SourceItem, contrastive_study, generated_import

    study = generated_import(status="open", generated=contrastive_study(
        items=[SourceItem(data=i, where=i["id"]) for i in ITEMS], slug="browser-contra", redundancy=2,
        spam_rate=0.0, seed=1))
    scores_import(study=study, file_name="m.csv", content=SCORES, name="pronoun-model", higher_is_better=True)
    judge(study, lambda seq, item: "contrastive-1" if (seq == 2 and item == "p3") else "reference")
    login(browser_page, live_server)
    page = browser_page
    page.goto(f"{live_server.url}/reports/{study.slug}/compare/?bootstrap=200")
    assert page.locator('[data-evaluator="pronoun-model"][data-field="contrapro"]').inner_text() == "0.667"
    assert page.locator('[data-evaluator="humans"][data-field="contrapro"]').inner_text() == "0.833"
    explain = page.locator(".dip-explain")
    assert explain.is_visible() and "lower is better" in explain.inner_text()
    page.click("text=what is this?")
    assert page.url.endswith("#dip-h")
    assert page.locator("details.t-tests[open] table").is_visible()
    page.screenshot(path=str(screenshot_dir / "compare-contrastive.png"), full_page=True)


def test_meta_evaluation_section_fits_and_is_accessible(browser_page, live_server, screenshot_dir):
    """The WMT meta-evaluation tables: readable at 1280 and 390 px (scrolling inside their box), axe-clean."""
    from tests.browser.axe import axe_violations, describe

    study = compare_study(slug="browser-meta", spam_rate=0.0)
    scores_import(study=study, file_name="o.csv", content=score_csv(name="oracle"))
    scores_import(study=study, file_name="r.csv", content=score_csv(name="reversed", reverse=True))
    login(browser_page, live_server)
    page = browser_page
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/reports/{study.slug}/compare/?bootstrap=100")
        section = page.locator("section[aria-labelledby=meta-h]")
        section.scroll_into_view_if_needed()
        assert section.locator("tbody tr").count() >= 2
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1  # no sideways page scroll
        section.screenshot(path=str(screenshot_dir / f"compare-meta-{width}.png"))
        found = axe_violations(page)
        assert not found, describe(found, f"compare page {width}px")


@pytest.mark.parametrize("width", [1280, 390])
def test_blonde_without_spacy_is_refused_under_the_backend_field(width, chromium_browser, live_server, screenshot_dir):
    """The run form refuses BlonDe proper without a spaCy pipeline, next to the field to fix; nothing is queued."""
    from evaluators.models import EvaluationJob

    study = compare_study(slug=f"browser-blonde-{width}", spam_rate=0.0)
    context = chromium_browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        login(page, live_server)
        page.goto(f"{live_server.url}/reports/{study.slug}/compare/?bootstrap=50")
        page.check("input[name=evaluators][value=blonde]")
        page.click("button:has-text('Run')")
        error = page.locator("p.errors", has_text="blonde needs a spaCy pipeline")
        error.wait_for()
        assert "spacy:en_core_web_sm" in error.inner_text() and "blonde-lex" in error.inner_text()
        assert not EvaluationJob.objects.filter(study=study).exists()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        error.scroll_into_view_if_needed()
        page.screenshot(path=str(screenshot_dir / f"compare-blonde-refused-{width}.png"))
    finally:
        context.close()
