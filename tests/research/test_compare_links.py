"""The comparison page is reachable from the study page and the agreement report."""
from __future__ import annotations

import pytest
from django.urls import reverse

from tests.compare_study import compare_study

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("page", ["studies:detail", "evaluators:report"])
def test_page_links_to_the_comparison(staff, page):
    study = compare_study(slug="links", n_items=4, n_annotators=2)
    response = staff.get(reverse(page, args=[study.slug]))
    assert response.status_code == 200
    target = reverse("compare-report", args=[study.slug])
    assert f'href="{target}"' in response.content.decode()
    assert staff.get(target, {"bootstrap": 20}).status_code == 200
