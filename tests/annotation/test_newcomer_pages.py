"""The annotator-page fixes of issue 22 at the Django level: word snapping per language and study, the favicon,
the back link's htmx attributes, and practice items rendered with the real items' controls."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.handout.services import annotators_create
from studies.importing.study_file import StudyFileError, study_import
from studies.definition.languages import writes_words_with_spaces
from tests.annotation.test_span_page import config
from tests.annotation.test_tutorial import make, tutorial_item
from tests.annotation.test_views_annotate import one_annotator, open_current
from tests.factories import make_study
from tests.span_study import span_study_file

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("tag", "spaced"), [
    ("en", True), ("fr", True), ("ar", True), ("", True), ("not a tag", True),
    ("zh", False), ("zh-Hans", False), ("ja", False), ("th", False), ("sr-Latn", True), ("pa-Arab", True),
    ("ko", True), ("en-Hani", False),
])
def test_languages_written_without_spaces(tag, spaced):
    assert writes_words_with_spaces(tag) is spaced


@pytest.mark.parametrize(("settings", "snap"), [
    ({}, {"target": True, "source": True}),
    ({"target_language": "zh-Hans"}, {"target": False, "source": True}),
    ({"source_language": "ja"}, {"target": True, "source": False}),
    ({"target_language": "zh", "snap_to_words": True}, {"target": True, "source": True}),
    ({"snap_to_words": False}, {"target": False, "source": False}),
])
def test_span_page_says_per_side_whether_selections_snap_to_words(client: Client, settings, snap):
    study = study_import(status="open", data=span_study_file(slug="snap", protocol="mqm", **settings))
    _, html = open_current(client, one_annotator(study))
    assert config(html)["snap"] == snap


def test_snap_to_words_must_be_true_false_or_null():
    with pytest.raises(StudyFileError) as refused:
        study_import(status="open", data=span_study_file(slug="snap-bad", protocol="mqm", snap_to_words="yes"))
    assert "settings.snap_to_words: must be true/false or null" in refused.value.errors


def test_favicon_is_linked_and_served(client: Client):
    study = make_study(slug="fav")
    page = client.get(reverse("annotation:start", args=[annotators_create(study=study)[0].token]), follow=True)
    assert b'rel="icon" href="/static/img/favicon.svg"' in page.content
    old_path = client.get("/favicon.ico")
    assert old_path.status_code == 301 and old_path["Location"] == "/static/img/favicon.svg"
    assert client.get("/static/img/favicon.svg").status_code == 200


def test_back_link_inside_the_item_form_does_not_inherit_the_forms_disabled_elt(client: Client):
    study = make_study(slug="disinherit")
    _, html = open_current(client, one_annotator(study))
    assert 'hx-disabled-elt="find button[type=submit]" hx-disinherit="hx-disabled-elt"' in html


def test_practice_ranking_uses_the_real_cards_and_marks_given_and_expected(client: Client):
    study = make("ranking", [tutorial_item(3, {"ranks": {"SYSgoldwin": 1, "SYSmiddling": 2, "SYSworstof": 3}})])
    annotator = annotators_create(study=study)[0]
    step = reverse("annotation:tutorial-step", args=[annotator.token, 1])
    html = client.get(step).content.decode()
    assert "<select" not in html and 'data-rank="1"' in html and 'class="keys"' in html
    assert "data-item " in html and 'data-protocol="ranking"' in html
    ids = [line.split('name="rank-')[1].split('"')[0] for line in html.splitlines() if 'name="rank-' in line]
    cands = list(dict.fromkeys(ids))
    answer = client.post(step, {f"rank-{cid}": str(k + 1) for k, cid in enumerate(reversed(cands))}).content.decode()
    assert answer.count("data-practice-mark") == 3
    assert "is-expected" in answer and "disabled" in answer and "data-item " not in answer


def test_skip_from_the_item_page_stores_the_reason_and_moves_on(client: Client):
    from annotation.models import Assignment, AssignmentStatus
    study = make_study(slug="skip-page", n_items=3)
    annotator = one_annotator(study)
    assignment, html = open_current(client, annotator)
    skip = reverse("annotation:item-skip", args=[annotator.token, assignment.public_id])
    assert f'action="{skip}"' in html
    blank = client.post(skip, {"reason": "   "})
    assert blank.status_code == 422 and b'id="skip-error"' in blank.content
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.PENDING
    moved = client.post(skip, {"reason": "I cannot read the source"})
    assert moved.status_code == 303 and moved["Location"] == reverse("annotation:item-current", args=[annotator.token])
    stored = Assignment.objects.get(pk=assignment.pk)
    assert (stored.status, stored.skip_reason) == (AssignmentStatus.SKIPPED, "I cannot read the source")
    following, html = open_current(client, annotator)
    assert following.item_id != assignment.item_id
    assert client.post(skip, {"reason": "again"}).status_code == 303  # idempotent, as the API
    assert Assignment.objects.get(pk=assignment.pk).skip_reason == "I cannot read the source"


def test_an_annotator_cannot_skip_another_annotators_item(client: Client):
    study = make_study(slug="skip-none", n_items=3, settings={"redundancy": 2})
    annotator, other = one_annotator(study), one_annotator(study)
    assignment, _ = open_current(client, annotator)
    skip = reverse("annotation:item-skip", args=[other.token, assignment.public_id])
    assert client.post(skip, {"reason": "not mine"}).status_code == 404
