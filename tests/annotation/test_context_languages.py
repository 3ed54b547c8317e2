"""Context sentences in a language other than their side's (a bilingual dialogue's turns) carry their own lang:
the study file's ``source_context_languages`` / ``target_context_languages``, checked, stored, copied to spam
items and shown as each sentence's lang."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from studies.importing.study_file import StudyFileError, study_import
from studies.models import Item
from tests.annotation.test_views_annotate import one_annotator, open_current
from tests.factories import study_file

pytestmark = pytest.mark.django_db


def bilingual(slug: str, tags, **settings):
    data = study_file(slug=slug, n_items=2, settings={"show_source": True, "source_language": "en",
                                                      "target_language": "fr", "spam_rate": 0.5, **settings})
    for item in data["items"]:
        item["source_context"] = ["Bonjour, je cherche la gare.", "Is it far from here?"]
        item["source_context_languages"] = tags
    return data


def test_each_context_sentence_gets_its_own_lang_where_it_differs(client: Client):
    study = study_import(status="open", data=bilingual("ctx-lang", ["fr", "en"]))
    assert all(i.context_languages == {"source_context": ["fr", "en"]} for i in Item.objects.filter(study=study))
    assert Item.objects.filter(study=study, is_spam=True).exists()  # spam copies carry the same tags
    _, html = open_current(client, one_annotator(study))
    box = re.search(r'<div class="context-text"[^>]*lang="en"[^>]*>(.*?)</div>', html, re.S)
    assert box, "the box keeps the source language"
    assert '<p class="context-sentence" lang="fr" dir="ltr">Bonjour, je cherche la gare.</p>' in box.group(1)
    assert '<p class="context-sentence">Is it far from here?</p>' in box.group(1)  # the box's own lang


@pytest.mark.parametrize(("tags", "message"), [
    (["fr"], "item ext-0.source_context_languages: 1 tag(s) for 2 sentence(s) of source_context"),
    (["fr", "not a tag!"], "item ext-0.source_context_languages[1]:"),
    ("fr", "item ext-0.source_context_languages: must be a list of language tags"),
])
def test_bad_context_languages_are_refused_naming_the_item_and_field(tags, message):
    with pytest.raises(StudyFileError) as refused:
        study_import(status="open", data=bilingual("ctx-bad", tags))
    assert any(e.startswith(message) for e in refused.value.errors), refused.value.errors


def test_document_blocks_context_sentences_get_their_lang_too(client: Client):
    data = bilingual("ctx-doc", ["fr", ""], unit="document", spam_rate=0.0)
    for k, item in enumerate(data["items"]):
        item["document_id"], item["position"] = "doc-1", k
    study = study_import(status="open", data=data)
    _, html = open_current(client, one_annotator(study))
    assert '<p class="context-sentence" lang="fr" dir="ltr">Bonjour, je cherche la gare.</p>' in html
    assert '<p class="context-sentence">Is it far from here?</p>' in html
