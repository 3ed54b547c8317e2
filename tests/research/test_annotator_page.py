"""The per-annotator page: counts, median time, failed spam checks with the items, revisions, timeline."""
from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import Judgment
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from tests.factories import make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    """A spammer who picks the scrambled candidate of every spam item, and revises one answer."""
    study = make_study(slug="ap", protocol="choice", n_items=8, n_candidates=2,
                       settings={"spam_rate": 0.25, "seed": 3, "redundancy": 2, "options": ["neither", "tie"]})
    spammer, _idle = annotators_create(study=study, count=2)
    first = None
    while (assignment := assignment_next(annotator=spammer)) is not None:
        cands = ordered_candidates(assignment)
        pick = next((c for c in cands if c.is_spam), cands[0])
        judgment_submit(assignment=assignment, payload={"choice": pick.public_id})
        if not assignment.item.is_spam:
            first = first or (assignment, cands, pick)
    assignment, cands, pick = first
    other = next(c for c in cands if c.pk != pick.pk)
    judgment_submit(assignment=assignment, payload={"choice": other.public_id})  # a revision of a real item
    return study


def _spammer(study):
    return study.annotators.order_by("sequence").first()


def test_annotator_page(staff, study):
    spammer = _spammer(study)
    response = staff.get(reverse("studies:annotator", args=["ap", spammer.code]))
    assert response.status_code == 200
    context = response.context
    n_spam = study.items.filter(is_spam=True).count()
    assert n_spam >= 1
    assert context["counts"]["done"] == study.items.count()
    assert context["q"].spam_failed == n_spam == len(context["failed"])
    spam_ids = set(study.items.filter(is_spam=True).values_list("external_id", flat=True))
    assert {f.item for f in context["failed"]} == spam_ids
    page = response.content.decode()
    for f in context["failed"]:
        assert f.answered == ["chose scrambled copy"]
        assert f"<code>{f.item}</code>" in page
    assert "never the scrambled copy" in page
    assert len(context["timeline"]) == Judgment.objects.filter(assignment__annotator=spammer).count()
    assert [r.revision for r in context["revisions"]] == [2]
    assert "(replaced)" in page and "<svg" in page
    assert len(context["chart"]["bars"]) == len(context["timeline"])
    assert reverse("studies:quality-exclude", args=["ap", spammer.code]) in page


def test_idle_annotator_page(staff, study):
    idle = study.annotators.order_by("sequence").last()
    response = staff.get(reverse("studies:annotator", args=["ap", idle.code]))
    assert response.status_code == 200
    assert response.context["timeline"] == [] and response.context["chart"]["bars"] == []
    assert "No judgment yet." in response.content.decode()


def test_linked_from_quality_table(staff, study):
    spammer = _spammer(study)
    page = staff.get(reverse("studies:quality", args=["ap"])).content.decode()
    assert reverse("studies:annotator", args=["ap", spammer.code]) in page


def test_unknown_annotator_or_study_404(staff, study):
    assert staff.get(reverse("studies:annotator", args=["ap", "nobody"])).status_code == 404
    assert staff.get(reverse("studies:annotator", args=["nope", _spammer(study).code])).status_code == 404


def test_wrong_method(staff, study):
    assert staff.post(reverse("studies:annotator", args=["ap", _spammer(study).code])).status_code == 405


def test_staff_only(client, django_user_model, study):
    url = reverse("studies:annotator", args=["ap", _spammer(study).code])
    assert client.get(url).status_code == 302
    client.force_login(django_user_model.objects.create_user("outsider", password="x"))
    response = client.get(url)
    assert response.status_code == 302 and "/login/" in response["Location"]
