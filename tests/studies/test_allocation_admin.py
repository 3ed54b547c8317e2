"""The allocation setting in the admin: "adaptive" typed there is stored with every option; bad values are
refused naming the field, and a protocol without a 0–100 score cannot be adaptive."""
from __future__ import annotations

import json

import pytest
from django.urls import reverse

from studies.models import Study
from tests.admin_forms import change_form_data
from tests.factories import make_study

pytestmark = pytest.mark.django_db


def _post(staff, study: Study, allocation: str):
    url = reverse("admin:studies_study_change", args=[study.pk])
    data = change_form_data(staff.get(url))
    data["allocation"] = allocation
    return staff.post(url, data)


def test_admin_stores_adaptive_with_its_defaults(staff):
    study = make_study(slug="alloc-admin", protocol="esa", n_items=2, settings={"esa_spans": False})
    response = _post(staff, study, json.dumps("adaptive"))
    assert response.status_code == 302
    study.refresh_from_db()
    assert study.allocation == {"policy": "adaptive", "alpha": 0.05, "min_effect": None, "warmup": 20,
                                "target": "all", "close_when_settled": False, "refresh_every": 10}
    response = _post(staff, study, json.dumps({"policy": "adaptive", "warmup": 5, "target": "top"}))
    assert response.status_code == 302
    study.refresh_from_db()
    assert (study.allocation["warmup"], study.allocation["target"]) == (5, "top")


@pytest.mark.parametrize("protocol, value, message", [
    ("esa", {"policy": "adaptive", "alpha": 2}, "allocation.alpha: 2 must be a number between 0 and 1"),
    ("esa", "sometimes", "allocation: &#x27;sometimes&#x27; is not one of uniform, adaptive"),
    ("ranking", {"policy": "adaptive", "min_effect": 1}, "allocation.min_effect: 1 must be null or a number above 0 "
                                                        "and below 1"),
    ("mqm", {"policy": "adaptive", "min_effect": 25}, "allocation.min_effect: 25 must be null or a number above 0 "
                                                      "and below 25"),
])
def test_admin_refuses_a_bad_allocation_naming_the_field(staff, protocol, value, message):
    study = make_study(slug="alloc-admin-bad", protocol=protocol, n_items=2)
    response = _post(staff, study, json.dumps(value))
    assert response.status_code == 200
    page = response.content.decode()
    assert message in page and "field-allocation" in page
    study.refresh_from_db()
    assert study.allocation == {}
