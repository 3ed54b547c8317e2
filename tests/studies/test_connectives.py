"""The connective list (studies/definition/connectives.py) and the DiP A.4 connective demo on the DiaBLa subset."""
from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command

from studies.demo import studies as demo
from studies.definition.connectives import ANYWHERE, CLAUSE_INITIAL, connective_spans, first_connective
from studies.generators.choice import connective_study, delete_span, items_from_study
from studies.models import Study


@pytest.mark.parametrize("text, language, expected", [
    ("So it rained. But we left, so what.", "english", ["So", "But", "so"]),
    ("I love you so much, but then again", "english", ["but"]),  # "so" and "then" inside a clause are not marked
    ("We stayed even though it rained.", "english", ["even though"]),  # the longest match wins
    ("Je suis parti parce que il pleut, alors voilà.", "french", ["parce que", "alors"]),
    ("D’ailleurs, moi aussi. D'ailleurs non.", "french", ["D’ailleurs", "D'ailleurs"]),  # either apostrophe
    ("Il est donc parti.\nPuis il est revenu.", "french", ["donc", "Puis"]),  # a new line opens a clause
    ("Demain, je pars.", "french", []),
])
def test_connective_spans(text, language, expected):
    assert [text[a:b] for a, b in connective_spans(text, language)] == expected


def test_the_lists_are_explicit_and_documented():
    from pathlib import Path
    from django.conf import settings
    page = (Path(settings.BASE_DIR) / "docs" / "protocols" / "generators.md").read_text()
    for lists in (ANYWHERE, CLAUSE_INITIAL):
        assert set(lists) == {"english", "french"}
        for words in lists.values():
            for word in words:
                assert f"*{word}*" in page, word
    with pytest.raises(ValueError, match="language"):
        connective_spans("x", "german")


def test_every_demo_item_has_the_connective_highlighted_in_one_candidate_and_deleted_in_the_other():
    data = demo.build_connective_preference()
    assert data["slug"] == "diabla-connective-preference" and data["protocol"] == "choice"
    assert data["settings"]["options"] == ["neither", "invalid"] and data["settings"]["show_source"] is False
    assert len(data["items"]) >= 20
    languages = set()
    for item in data["items"]:
        ref, deleted = item["candidates"]
        assert ref["is_reference"] and deleted["system"] == "connective-deleted" and deleted["highlights"] == []
        [[start, end]] = ref["highlights"]
        connective = ref["text"][start:end]
        language = item["metadata"]["target_language"]
        languages.add(language)
        assert first_connective(ref["text"], language) == (start, end)
        assert item["phenomenon"] == connective.lower() and item["metadata"]["connective"] == connective
        assert deleted["text"] == delete_span(ref["text"], start, end) and deleted["text"] != ref["text"]
        assert len(deleted["text"]) < len(ref["text"]) and len(item["target_context"]) == 2
    assert languages == {"english", "french"}


@pytest.mark.django_db
def test_load_demo_prints_the_connective_study_links_and_the_generator_runs_on_the_demo_data():
    out = io.StringIO()
    call_command("load_demo", "--base-url", "http://demo.test:8765", stdout=out)
    block = out.getvalue().split("Study diabla-connective-preference (created)", 1)[1].split("\nStudy ", 1)[0]
    assert "http://demo.test:8765/studies/diabla-connective-preference/" in block
    assert len(re.findall(r"annotator \w+: http://demo\.test:8765/a/[\w-]+/", block)) == 3
    study = Study.objects.get(slug="diabla-connective-preference")
    assert study.items.filter(is_spam=True).exists()
    spam = study.items.filter(is_spam=True).first().candidates.get(is_spam=True)
    assert spam.system == "connective-deleted"  # the reference is never scrambled
    # the stored preference demo carries connective marks, so the generator works on it as a researcher runs it
    marked = [i for i in items_from_study(Study.objects.get(slug="diabla-mt-preference"))
              if "connective_span" in i.data["metadata"]]
    assert len(marked) >= 5
    assert len(connective_study(items=marked, slug="x").data["items"]) == len(marked)
    out = io.StringIO()
    call_command("make_connective_study", "diabla-mt-preference", "--slug", "mtp-connective", "--skip-unmarked",
                 stdout=out)
    generated = Study.objects.get(slug="mtp-connective")
    assert generated.items.filter(is_spam=False).count() == len(marked)
    for item in generated.items.filter(is_spam=False).prefetch_related("candidates"):
        ref, deleted = sorted(item.candidates.all(), key=lambda c: not c.is_reference)
        start, end = ref.highlights[0]
        assert ref.text[start:end] == item.metadata["connective"] and deleted.text == delete_span(ref.text, start, end)
