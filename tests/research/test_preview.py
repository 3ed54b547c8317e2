"""research/views/preview.py: Preview as annotator — the annotator's item page for any item; nothing stored."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Annotator, Assignment, Judgment
from studies.models import Study
from tests.factories import make_study

pytestmark = pytest.mark.django_db


def url(slug: str, item: int | None = None) -> str:
    return reverse("studies:preview", args=[slug]) + (f"?item={item}" if item else "")


def nothing_stored() -> bool:
    return not (Annotator.objects.exists() or Assignment.objects.exists() or Judgment.objects.exists())


def test_preview_shows_the_annotator_item_page_for_every_item_of_a_draft(staff):
    study = make_study(slug="pv", n_items=3, status="draft", settings={"spam_rate": 0.34})
    total = study.items.count()
    seen = set()
    for k in range(1, total + 1):
        page = staff.get(url("pv", k))
        assert page.status_code == 200
        html = page.content.decode()
        assert 'id="item"' in html and "nothing is stored" in html and f"item {k} of {total}" in html
        assert ("data-preview-next" in html) == (k < total) and ("data-preview-previous" in html) == (k > 1)
        seen.add(page.context["item"].pk)
        for system in ("reference", "sys1", "sys2"):  # never a system name, as for annotators
            assert f">{system}<" not in html and f'"{system}"' not in html
    assert seen == set(study.items.values_list("pk", flat=True))
    assert staff.get(url("pv", 999)).context["position"] == total  # clamped, not a 500
    assert staff.get(reverse("studies:preview", args=["pv"]) + "?item=x").status_code == 200
    assert nothing_stored()


def test_a_valid_preview_answer_is_checked_and_not_stored(staff):
    study = make_study(slug="pv2", n_items=2, status="draft")
    page = staff.get(url("pv2", 1))
    cands = page.context["candidates"]
    data = {f"rank-{c['public_id']}": str(k + 1) for k, c in enumerate(cands)}
    response = staff.post(url("pv2", 1), data)
    assert response.status_code == 303 and "item=2" in response["Location"]  # a valid answer moves on, like Enter
    page = staff.get(response["Location"])
    html = page.content.decode()
    assert page.context["position"] == 2
    assert "valid answer: ranks A = 1, B = 2, C = 3" in html and "Spam check" not in html
    assert nothing_stored()
    assert study.items.filter(n_assigned__gt=0).count() == 0


def test_an_invalid_preview_answer_shows_the_annotators_error(staff):
    make_study(slug="pv3", n_items=2, status="draft")
    cands = staff.get(url("pv3", 1)).context["candidates"]
    response = staff.post(url("pv3", 1), {f"rank-{c['public_id']}": "1" for c in cands})
    assert response.status_code == 422
    assert "does not allow ties" in response.content.decode() and "data-preview-outcome" not in response.content.decode()
    assert response.context["position"] == 1  # a refused answer stays on its item
    assert nothing_stored()


@pytest.mark.parametrize("protocol,settings,post", [
    ("choice", {"options": ["neither", "tie"]}, {"choice": "neither"}),
    ("judgment", {"labels": ["good", "bad"]}, {"label": "bad"}),
])
def test_preview_other_protocols(staff, protocol, settings, post):
    make_study(slug="pv4", n_items=2, protocol=protocol, n_candidates=2 if protocol == "choice" else 1,
               status="draft", settings=settings)
    page = staff.get(url("pv4", 1))
    assert page.status_code == 200 and f"protocol-{protocol}" in page.content.decode()
    response = staff.post(url("pv4", 1), post, follow=True)
    assert "valid answer" in response.content.decode(), response.content.decode()[:2000]
    assert nothing_stored()


def test_preview_is_staff_only(client):
    make_study(slug="pv5", n_items=1, status="draft")
    response = client.get(url("pv5"))
    assert response.status_code == 302 and "/login" in response["Location"]
    assert client.post(url("pv5"), {}).status_code == 302
    assert Study.objects.get(slug="pv5").status == "draft"


# --- spam (control) copies: marked for the researcher, the answer judged by the quality check's own rule ----

def spam_positions(study: Study, slug: str, client) -> list[int]:
    """1-based preview numbers of the study's spam copies."""
    total = study.items.count()
    return [k for k in range(1, total + 1) if client.get(url(slug, k)).context["item"].is_spam]


def ranks_with_spam(page, *, spam_last: bool) -> dict[str, str]:
    """Form data ranking every candidate, the scrambled one last (or first)."""
    item = page.context["item"]
    spam_public = item.candidates.get(is_spam=True).public_id
    others = [c["public_id"] for c in page.context["candidates"] if c["public_id"] != spam_public]
    order = others + [spam_public] if spam_last else [spam_public] + others
    return {f"rank-{public_id}": str(k + 1) for k, public_id in enumerate(order)}


def test_a_spam_copy_is_marked_for_the_researcher_only(staff):
    study = make_study(slug="pvs", n_items=4, status="draft", settings={"spam_rate": 0.5})
    positions = spam_positions(study, "pvs", staff)
    assert positions
    page = staff.get(url("pvs", positions[0]))
    html = page.content.decode()
    letter = page.context["spam_letter"]
    spam_public = page.context["item"].candidates.get(is_spam=True).public_id
    assert letter == next(c["letter"] for c in page.context["candidates"] if c["public_id"] == spam_public)
    assert "data-preview-spam-note" in html and f"candidate {letter} is the scrambled copy" in html
    assert f'.card[data-letter="{letter.lower()}"]' in html  # the scrambled card is outlined
    real = next(k for k in range(1, study.items.count() + 1) if k not in positions)
    real_html = staff.get(url("pvs", real)).content.decode()
    assert "data-preview-spam-note" not in real_html and "scrambled" not in real_html
    # The marks belong to the preview page, never to the annotator's template.
    item_part = html[html.index('<div id="item"'):]
    assert "spam" not in item_part.lower() and "scrambled" not in item_part.lower()
    assert nothing_stored()


@pytest.mark.parametrize("spam_last,verdict", [(True, "passed"), (False, "failed")])
def test_a_spam_answer_says_whether_it_passes_the_check(staff, spam_last, verdict):
    study = make_study(slug="pvc", n_items=4, status="draft", settings={"spam_rate": 0.5})
    position = spam_positions(study, "pvc", staff)[0]
    page = staff.get(url("pvc", position))
    response = staff.post(url("pvc", position), ranks_with_spam(page, spam_last=spam_last))
    assert response.status_code == 303
    after = staff.get(response["Location"])
    html = after.content.decode()
    assert after.context["outcome"]["spam"] == verdict
    assert f'data-spam-check="{verdict}"' in html and f"Spam check: {verdict}" in html
    assert nothing_stored()


def test_the_preview_verdict_is_the_quality_checks_verdict(staff):
    """Same answers, same verdicts: the preview calls the quality check's rule, for every protocol shape."""
    from annotation.quality.checks import spam_check_failed
    from research.views.preview import spam_outcome
    study = make_study(slug="pvq", n_items=4, status="draft", settings={"spam_rate": 0.5})
    spam_item = study.items.filter(is_spam=True).first()
    cands = list(spam_item.candidates.all())
    spam = next(c for c in cands if c.is_spam)
    for first in cands:
        ranks = {str(first.pk): 1, **{str(c.pk): k + 2 for k, c in enumerate(c for c in cands if c != first)}}
        answer = {"ranks": ranks}
        expected = "failed" if spam_check_failed(study=study, answer=answer, spam_pk=spam.pk) else "passed"
        assert spam_outcome(study=study, candidates=cands, answer=answer) == expected
    real = study.items.filter(is_spam=False).first()
    assert spam_outcome(study=study, candidates=list(real.candidates.all()), answer={"ranks": {}}) is None


def test_a_forged_outcome_is_ignored(staff):
    make_study(slug="pvf", n_items=2, status="draft")
    page = staff.get(url("pvf", 2) + "&last=not-signed")
    assert page.status_code == 200 and page.context["outcome"] is None


def test_preview_progress_says_which_item_this_is_not_a_done_count(staff):
    study = make_study(slug="pvp", n_items=3, status="draft")
    total = study.items.count()
    html = staff.get(url("pvp", 2)).content.decode()
    assert f"Item 2 of {total}" in html and " done<" not in html
    assert f'max="{total}" value="2"' in html


def test_the_last_item_stays_put_and_reports_its_own_outcome(staff):
    study = make_study(slug="pvl", n_items=2, status="draft")
    total = study.items.count()
    page = staff.get(url("pvl", total))
    data = {f"rank-{c['public_id']}": str(k + 1) for k, c in enumerate(page.context["candidates"])}
    after = staff.post(url("pvl", total), data, follow=True)
    assert after.context["position"] == total and after.context["outcome_is_this_item"]
    assert "This item: valid answer" in after.content.decode()
