"""normalise_typography: what annotators are shown (item page and API) vs what is stored and exported."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.handout.services import annotators_create
from studies.controls.blinding import blinding_lint
from studies.models import Candidate
from tests.conftest import annotator_client
from tests.factories import study_file
from studies.importing.study_file import study_import

pytestmark = pytest.mark.django_db

REFERENCE = "“Well… it’s late” – she said."  # the highlight is on "it’s"
SYSTEM = "\"Well... it's late\" - she said."


def make(normalise: bool):
    data = study_file(slug=f"typo-{int(normalise)}", n_items=1, n_candidates=2,
                      settings={"normalise_typography": normalise})
    ref, system = data["items"][0]["candidates"]
    ref.update(text=REFERENCE, highlights=[[7, 11]])
    system.update(text=SYSTEM, highlights=[[9, 13]])
    study = study_import(data=data, status="open")
    return study, annotators_create(study=study)[0]


@pytest.mark.parametrize("normalise", [True, False])
def test_api_next_shows_one_typographic_form_with_highlights_moved(normalise):
    study, annotator = make(normalise)
    data = annotator_client(annotator).get("/api/v1/annotate/next").json()
    shown = sorted((c["text"], tuple(map(tuple, c["highlights"]))) for c in data["candidates"])
    if normalise:
        assert shown == [(SYSTEM, ((9, 13),))] * 2  # the reference looks exactly like the system
        assert [c["text"][slice(*c["highlights"][0])] for c in data["candidates"]] == ["it's", "it's"]
        # what annotators see has nothing typographic left to separate the reference
        items = [{"external_id": "i", "candidates": [{"text": c["text"], "highlights": c["highlights"],
                                                      "is_reference": k == 0} for k, c in
                                                     enumerate(data["candidates"])]}]
        assert blinding_lint(items=items, min_share=0).findings == []
    else:
        assert shown == sorted([(REFERENCE, ((7, 11),)), (SYSTEM, ((9, 13),))])
    # stored texts (and so the export) are unchanged
    assert set(Candidate.objects.filter(item__study=study).values_list("text", flat=True)) == {REFERENCE, SYSTEM}


def test_item_page_shows_the_normalised_text_and_marks_the_same_word():
    study, annotator = make(True)
    client = Client()
    response = client.get(reverse("annotation:item-current", args=[annotator.token]))
    page = client.get(response["Location"]).content.decode()
    assert "<mark>it&#x27;s</mark>" in page and page.count("<mark>it&#x27;s</mark>") == 2
    assert "“Well" not in page and "it’s" not in page and "” – she" not in page  # no reference typography on screen
    assert page.count("&quot;Well... <mark>it&#x27;s</mark> late&quot; - she said.") == 2
