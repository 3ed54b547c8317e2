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
    assert response.status_code == 200
    assert "Valid answer: ranks A = 1, B = 2, C = 3" in response.content.decode()
    assert nothing_stored()
    assert study.items.filter(n_assigned__gt=0).count() == 0


def test_an_invalid_preview_answer_shows_the_annotators_error(staff):
    make_study(slug="pv3", n_items=2, status="draft")
    cands = staff.get(url("pv3", 1)).context["candidates"]
    response = staff.post(url("pv3", 1), {f"rank-{c['public_id']}": "1" for c in cands})
    assert response.status_code == 422
    assert "does not allow ties" in response.content.decode() and "Valid answer" not in response.content.decode()
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
    response = staff.post(url("pv4", 1), post)
    assert "Valid answer" in response.content.decode(), response.content.decode()[:2000]
    assert nothing_stored()


def test_preview_is_staff_only(client):
    make_study(slug="pv5", n_items=1, status="draft")
    response = client.get(url("pv5"))
    assert response.status_code == 302 and "/login" in response["Location"]
    assert client.post(url("pv5"), {}).status_code == 302
    assert Study.objects.get(slug="pv5").status == "draft"
