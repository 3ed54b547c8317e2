"""The demo: studies/demo/studies.py builders, fixtures/studies/*.json and the load_demo command."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import authenticate
from django.core.management import call_command

from annotation.models import Annotator
from studies.demo import studies as demo
from studies.demo.data import PRONOUNS, load_dialogues
from studies.demo.span import WMT_MQM_SLUG
from studies.models import Study

FIXTURES = Path(settings.BASE_DIR) / "fixtures"


def run_demo(*args: str) -> str:
    out = io.StringIO()
    call_command("load_demo", "--base-url", "http://demo.test:8765", *args, stdout=out)
    return out.getvalue()


def test_data_subset_keeps_attribution_and_licence():
    readme = (FIXTURES / "diabla" / "README.md").read_text()
    assert "10.1007/s10579-020-09514-4" in readme and "55:635–660" in readme
    assert "CC BY-SA 4.0" in readme and "Bawden" in readme
    assert "Attribution-ShareAlike 4.0" in (FIXTURES / "diabla" / "LICENSE").read_text()
    dialogues = [json.loads(x) for x in (FIXTURES / "diabla" / "dialogues.jsonl").read_text().splitlines()]
    assert sorted(d["model"] for d in dialogues) == ["2to2"] * 6 + ["baseline"] * 6


def test_fixture_study_files_match_the_builders():
    for builder in [*demo.DEMO_STUDIES, *demo.plug_in_demo_studies()]:
        data = builder()
        stored = json.loads((FIXTURES / "studies" / f"{data['slug']}.json").read_text())
        assert stored == data, f"fixtures/studies/{data['slug']}.json is stale: run load_demo --write-fixtures"


def test_pronoun_items_keep_one_target_language():
    data = demo.build_pronoun_mono()
    dialogues = {d["dialogue_id"]: d for d in load_dialogues()}
    assert data["settings"]["spam_rate"] == pytest.approx(0.15)
    for item in data["items"]:
        meta = item["metadata"]
        turns = dialogues[meta["dialogue_id"]]["utterances"]
        k = meta["turn"]
        language = meta["target_language"]
        assert item["phenomenon"] == "pronoun-" + {"english": "en", "french": "fr"}[language]
        # each context turn as the target-language reader has it: the original if written in it, else the reference
        expected = [t["source"] if t["source_language"] == language else t["reference"] for t in turns[k - 2:k]]
        assert item["target_context"] == expected and len(expected) == 2
        ref, mt = item["candidates"]
        assert ref["is_reference"] and ref["system"] == "reference" and mt["system"] in {"baseline", "2to2"}
        assert ref["text"] != mt["text"] and ref["highlights"]
        for cand in (ref, mt):
            for start, end in cand["highlights"]:
                assert cand["text"][start:end].lower() in PRONOUNS[language]


def test_coherence_blocks_are_english_four_turn_blocks():
    data = demo.build_coherence_blocks()
    assert data["settings"]["unit"] == "document" and data["settings"]["allow_ties"] is False
    dialogues = {d["dialogue_id"]: d for d in load_dialogues()}
    for item in data["items"]:
        ref, mt = item["candidates"]
        assert len(ref["text"].split("\n")) == 4 and len(mt["text"].split("\n")) == 4 and ref["text"] != mt["text"]
        assert len(item["source_sentences"]) == 4 and item["source"] == "\n".join(item["source_sentences"])
        for cand in (ref, mt):  # one turn a sentence of the document view, aligned with the source turns
            assert len(cand["sentences"]) == 4 and cand["text"] == "\n".join(cand["sentences"])
        turns = {u["turn"]: u for u in dialogues[item["document_id"]]["utterances"]}
        assert all(turns[t]["source_language"] == "french" for t in item["metadata"]["turns"])


@pytest.mark.django_db
def test_load_demo_creates_studies_admin_and_links(client):
    output = run_demo()
    slugs = [builder()["slug"] for builder in [*demo.DEMO_STUDIES, *demo.plug_in_demo_studies()]]
    for slug in slugs:
        study = Study.objects.get(slug=slug)
        assert study.items.filter(is_spam=False).count() > 10
        assert study.annotators.count() == 3
    ranking = Study.objects.get(slug="diabla-pronoun-mono")
    assert ranking.items.filter(is_spam=True).exists()
    assert ranking.items.filter(is_spam=True, candidates__is_spam=True).exists()
    links = re.findall(r"http://demo\.test:8765/a/[\w-]+/", output)
    assert len(links) == 3 * len(slugs)
    assert {link.rsplit("/", 2)[1] for link in links} == set(  # the imported MQM study's raters get no link
        Annotator.objects.exclude(study__slug=WMT_MQM_SLUG).values_list("token", flat=True))
    password = re.search(r"user: admin\s+password: (\S+)", output).group(1)
    admin = authenticate(username="admin", password=password)
    assert admin.is_superuser
    # No demo study is ownerless (every staff account used to manage them): admin owns each one.
    assert set(Study.objects.values_list("owner", flat=True)) == {admin.pk}
    assert "http://demo.test:8765/admin/" in output
    # an annotator link serves the annotator's page
    response = client.get(links[0].replace("http://demo.test:8765", ""), follow=True)
    assert response.status_code == 200


@pytest.mark.django_db
def test_load_demo_is_idempotent_and_resets():
    first = run_demo()
    n_items = Study.objects.get(slug="diabla-pronoun-mono").items.count()
    Study.objects.update(owner=None)  # as an earlier version left them
    second = run_demo()
    assert not Study.objects.filter(owner__isnull=True).exists()
    assert "already loaded" in second and Study.objects.filter(slug="diabla-pronoun-mono").count() == 1
    assert Study.objects.get(slug="diabla-pronoun-mono").items.count() == n_items
    assert Annotator.objects.exclude(study__slug=WMT_MQM_SLUG).count() == 3 * len(
        [*demo.DEMO_STUDIES, *demo.plug_in_demo_studies()])  # same links
    assert re.findall(r"/a/[\w-]+/", first) == re.findall(r"/a/[\w-]+/", second)
    old = re.search(r"password: (\S+)", first).group(1)
    new = re.search(r"password: (\S+)", second).group(1)
    assert authenticate(username="admin", password=new) and not authenticate(username="admin", password=old)
    third = run_demo("--reset")
    assert "created" in third and re.findall(r"/a/[\w-]+/", third) != re.findall(r"/a/[\w-]+/", first)
