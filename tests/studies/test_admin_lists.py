"""Options and labels in the study admin: one per line or comma separated, stored as JSON lists, named errors."""
from __future__ import annotations

import pytest
from django.urls import reverse

from studies.forms import LineListField
from studies.models import Study
from tests.admin_forms import change_form_data
from tests.factories import make_study

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("typed,stored", [
    ("neither", ["neither"]), ("neither, tie", ["neither", "tie"]), ("neither\ntie\n\n invalid ", ["neither", "tie", "invalid"]),
    ("", []), ("a, b\nc", ["a, b", "c"]),
])
def test_line_list_field_reads_lines_or_commas(typed, stored):
    assert LineListField().clean(typed) == stored


def _post(staff, study: Study, **changes: str):
    url = reverse("admin:studies_study_change", args=[study.pk])
    page = staff.get(url)
    assert "Enter a valid JSON" not in page.content.decode()
    data = change_form_data(page)
    data.update(changes)
    return staff.post(url, data)


def test_typing_neither_is_stored_as_a_list(staff):
    study = make_study(slug="opt", protocol="choice", n_candidates=2, n_items=2)
    response = _post(staff, study, options="neither\ntie")
    assert response.status_code == 302
    study.refresh_from_db()
    assert study.options == ["neither", "tie"]
    page = staff.get(reverse("admin:studies_study_change", args=[study.pk])).content.decode()
    assert "neither\ntie</textarea>" in page  # shown back one per line, not as JSON


def test_unknown_option_and_repeated_label_are_named(staff):
    study = make_study(slug="opt2", protocol="choice", n_candidates=2, n_items=2)
    response = _post(staff, study, options="neither, maybe")
    assert response.status_code == 200
    assert "Unknown option 'maybe'" in response.context["adminform"].form.errors["options"][0]
    response = _post(staff, study, labels="good\nbad\ngood")
    assert "Label 'good' is repeated." in response.context["adminform"].form.errors["labels"][0]
    study.refresh_from_db()
    assert study.options == [] and study.labels == []


def test_labels_one_per_line_for_a_judgment_study(staff):
    study = make_study(slug="lab", protocol="judgment", n_candidates=1, n_items=2,
                       settings={"labels": ["correct", "incorrect"]})
    assert _post(staff, study, labels="correct\nincorrect\nunsure, maybe").status_code == 302
    study.refresh_from_db()
    assert study.labels == ["correct", "incorrect", "unsure, maybe"]
    response = _post(staff, study, labels="")
    assert response.status_code == 200 and "needs at least one label" in response.content.decode()
