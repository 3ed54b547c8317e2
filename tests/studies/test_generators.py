"""Study generators: connective deletion (DiP A.4) and contrastive choice (ContraPro); commands and admin actions."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.handout.services import annotators_create, assignment_next
from studies.generators.choice import (SourceItem, connective_study, contrastive_study, delete_span, items_from_study)
from studies.importing.study_file import StudyFileError, study_import
from studies.models import Item, Study
from tests.factories import owned_import


def cut(text: str, word: str) -> str:
    start = text.index(word)
    return delete_span(text, start, start + len(word))


@pytest.mark.parametrize("text,word,expected", [
    ("But we left. So it rained", "So ", "But we left. It rained"),
    ("But we left. So it rained", "So", "But we left. It rained"),
    ("We left because it rained.", "because", "We left it rained."),
    ("However, we left.", "However", "We left."),
    ("However, we left.", "However,", "We left."),
    ("It rained, however, we left.", "however", "It rained, we left."),
    ("It rained; however, we left.", "however", "It rained; we left."),
    ("We left, but it rained.", "but", "We left, it rained."),
    ("We left too.", "too", "We left."),
    ("Is it late? Then we go.", "Then", "Is it late? We go."),
    ("We stayed. “Anyway it was fun.”", "Anyway", "We stayed. “It was fun.”"),
    ("He said (so to speak) no.", "so", "He said (to speak) no."),
    ("And so it goes.", "And so", "It goes."),
])
def test_delete_span_repairs_spacing_commas_and_capitals(text, word, expected):
    assert cut(text, word) == expected
    assert "  " not in cut(text, word)


def item(ext, ref_text, highlights=None, metadata=None, others=()):
    cands = [{"system": "reference", "text": ref_text, "is_reference": True, "highlights": highlights or []}]
    cands += [{"system": s, "text": t} for s, t in others]
    data = {"id": ext, "target_context": ["Context one.", "Context two."], "candidates": cands}
    if metadata is not None:
        data["metadata"] = metadata
    return SourceItem(data=data, where=f"item {ext}")


def test_connective_study_from_highlight_metadata_span_and_word():
    items = [
        item("h", "But we left. So it rained.", highlights=[[13, 15]]),
        item("s", "However, we left early.", metadata={"connective_span": [0, 7]}),
        item("w", "We left because it rained.", metadata={"connective": "because"}),
    ]
    generated = connective_study(items=items, slug="conn", seed=3)
    data = generated.data
    assert data["protocol"] == "choice"
    assert data["settings"]["options"] == ["neither", "invalid"]
    assert data["settings"]["show_source"] is False
    by_id = {i["id"]: i for i in data["items"]}
    assert [c["text"] for c in by_id["h"]["candidates"]] == ["But we left. So it rained.", "But we left. It rained."]
    assert by_id["h"]["candidates"][0]["highlights"] == [[13, 15]]
    assert by_id["h"]["candidates"][1] == {"system": "connective-deleted", "text": "But we left. It rained.",
                                           "highlights": []}
    assert by_id["s"]["candidates"][1]["text"] == "We left early."
    assert by_id["w"]["candidates"][1]["text"] == "We left it rained."
    assert by_id["w"]["candidates"][0]["highlights"] == [[8, 15]]
    assert by_id["w"]["phenomenon"] == "because" and by_id["h"]["phenomenon"] == "so"
    assert by_id["w"]["metadata"]["connective"] == "because"
    assert by_id["h"]["target_context"] == ["Context one.", "Context two."]


def test_connective_errors_name_item_and_field_and_nothing_is_stored():
    items = [
        item("two-hl", "So we left, but late.", highlights=[[0, 2], [12, 15]]),
        item("bad-span", "We left.", metadata={"connective_span": [3, 99]}),
        item("twice", "So so so.", metadata={"connective": "so"}),
        item("none", "Nothing marked here."),
        SourceItem(data={"id": "noref", "candidates": [{"system": "x", "text": "t"}]}, where="line 6 (item noref)"),
    ]
    with pytest.raises(StudyFileError) as err:
        connective_study(items=items, slug="bad")
    text = "\n".join(err.value.errors)
    assert "item two-hl.candidates[0].highlights: 2 spans" in text
    assert "item bad-span.metadata.connective_span" in text
    assert "item twice.metadata.connective: 'so' occurs 3 times" in text
    assert "item none: no connective marked" in text
    assert "line 6 (item noref).candidates: needs exactly one candidate with is_reference true" in text
    assert len(err.value.errors) == 5


def test_skip_unmarked_and_study_two_with_a_system_output():
    items = [
        item("a", "However, we left.", metadata={"connective": "However"}, others=[("S2S", "We left.")]),
        item("b", "So we left.", metadata={"connective": "So"}, others=[("S2S", "So we left too.")]),
        item("c", "And we left.", metadata={"connective": "And"}),
        item("d", "Nothing here."),
    ]
    generated = connective_study(items=items, slug="conn2", system="S2S", skip_unmarked=True)
    assert [i["id"] for i in generated.data["items"]] == ["a"]
    assert generated.data["items"][0]["candidates"][1] == {"system": "S2S", "text": "We left.", "highlights": []}
    assert set(generated.skipped) == {"item b", "item c", "item d"}
    assert "contains 'So'" in generated.skipped["item b"]
    with pytest.raises(StudyFileError, match="no item with a marked connective and an output of 'S2S'"):
        connective_study(items=items[2:], slug="x", system="S2S", skip_unmarked=True)


@pytest.mark.django_db
@pytest.mark.usefixtures("admin_user")  # owns what the commands make (docs/access.md)
def test_contrastive_study_from_candidates_and_metadata():
    items = [
        SourceItem(where="item p1", data={"id": "p1", "source": "Es ist rot.", "source_context": ["Der Hut."],
                                           "phenomenon": "es-it", "candidates": [
            {"system": "reference", "text": "It is red.", "is_reference": True, "highlights": [[0, 2]]},
            {"system": "contrastive-he", "text": "He is red.", "highlights": [[0, 2]]},
            {"system": "contrastive-she", "text": "She is red."}]}),
        SourceItem(where="item p2", data={"id": "p2", "source": "Sie ist da.", "metadata": {"variants": [
            "It is there.", {"text": "He is there.", "highlights": [[0, 2]]}]}, "candidates": [
            {"system": "ref", "text": "She is there.", "is_reference": True}]}),
    ]
    data = contrastive_study(items=items, slug="contra", seed=1).data
    assert data["settings"]["options"] == [] and data["settings"]["show_source"] is True
    p1, p2 = data["items"]
    assert [c["system"] for c in p1["candidates"]] == ["reference", "contrastive-1", "contrastive-2"]
    assert p1["candidates"][1]["highlights"] == [[0, 2]] and p1["phenomenon"] == "es-it"
    assert [c["text"] for c in p2["candidates"]] == ["She is there.", "It is there.", "He is there."]
    study = study_import(status="open", data=data)  # a valid study file
    assert study.options == [] and study.items.filter(is_spam=False).count() == 2


def test_contrastive_errors():
    items = [
        SourceItem(where="item x", data={"id": "x", "candidates": [{"system": "r", "text": "It is.", "is_reference": True}]}),
        SourceItem(where="item y", data={"id": "y", "metadata": {"variants": ["It is.", 3]},
                                          "candidates": [{"system": "r", "text": "It is.", "is_reference": True}]}),
    ]
    with pytest.raises(StudyFileError) as err:
        contrastive_study(items=items, slug="c")
    text = "\n".join(err.value.errors)
    assert "item x: no contrastive variant" in text
    assert "item y.metadata.variants[1]: must be a text" in text
    assert "item y.metadata.variants[0].text: the same as the reference" in text


# --- stored studies, commands, admin -------------------------------------------------

CONNECTIVE_ITEMS = [
    {"id": f"c{k}", "phenomenon": "", "target_context": ["A said hello.", "B waved."],
     "candidates": [{"system": "reference", "is_reference": True,
                     "text": f"However, the meeting number {k} ended late and everyone went home tired.",
                     "highlights": [[0, 7]]},
                    {"system": "S2S", "text": f"The meeting number {k} ended late and everyone went home tired."}]}
    for k in range(20)
]


@pytest.mark.django_db
@pytest.mark.usefixtures("admin_user")  # owns what the commands make (docs/access.md)
def test_command_from_jsonl_stores_a_study_with_spam(tmp_path):
    path = tmp_path / "conn.jsonl"
    path.write_text("\n".join(json.dumps(i) for i in CONNECTIVE_ITEMS) + "\n")
    out = io.StringIO()
    call_command("make_connective_study", str(path), "--slug", "conn", "--seed", "5", "--spam-rate", "0.1", stdout=out)
    assert out.getvalue().strip() == "conn"
    study = Study.objects.get(slug="conn")
    assert (study.protocol, study.options, study.seed) == ("choice", ["neither", "invalid"], 5)
    assert study.items.filter(is_spam=False).count() == 20
    assert study.items.filter(is_spam=True).count() == 2
    first = study.items.get(external_id="c0")
    texts = {c.system: c.text for c in first.candidates.all()}
    assert texts["connective-deleted"] == "The meeting number 0 ended late and everyone went home tired."
    spam_item = study.items.filter(is_spam=True).first()
    assert spam_item.candidates.get(is_spam=True).system == "connective-deleted"  # the reference stays intact


@pytest.mark.django_db
@pytest.mark.usefixtures("admin_user")  # owns what the commands make (docs/access.md)
def test_study_two_from_a_file_with_system_outputs(tmp_path):
    path = tmp_path / "conn.json"
    path.write_text(json.dumps({"items": CONNECTIVE_ITEMS}))
    call_command("make_connective_study", str(path), "--slug", "conn-s2s", "--system", "S2S", stdout=io.StringIO())
    study = Study.objects.get(slug="conn-s2s")
    assert study.items.filter(is_spam=False).count() == 20
    systems = set(study.items.filter(is_spam=False).values_list("candidates__system", flat=True))
    assert systems == {"reference", "S2S"}


@pytest.mark.django_db
@pytest.mark.usefixtures("admin_user")  # owns what the commands make (docs/access.md)
def test_command_errors_name_line_and_store_nothing(tmp_path):
    path = tmp_path / "bad.jsonl"
    lines = [CONNECTIVE_ITEMS[0], {"id": "bad", "candidates": [{"system": "reference", "is_reference": True,
                                                               "text": "Short.", "highlights": [[0, 3], [4, 5]]}]}]
    path.write_text("\n".join(json.dumps(i) for i in lines))
    with pytest.raises(CommandError) as err:
        call_command("make_connective_study", str(path), "--slug", "x", stdout=io.StringIO())
    assert "line 2 (item bad).candidates[0].highlights: 2 spans" in str(err.value)
    assert "nothing stored" in str(err.value)
    assert not Study.objects.filter(slug="x").exists()
    with pytest.raises(CommandError, match="neither a file nor the slug of a study"):
        call_command("make_connective_study", "no-such-thing", "--slug", "y", stdout=io.StringIO())


@pytest.mark.django_db
@pytest.mark.usefixtures("admin_user")  # owns what the commands make (docs/access.md)
def test_dry_run_prints_the_study_file(tmp_path):
    path = tmp_path / "conn.jsonl"
    path.write_text("\n".join(json.dumps(i) for i in CONNECTIVE_ITEMS[:2]))
    out = io.StringIO()
    call_command("make_connective_study", str(path), "--slug", "dry", "--dry-run", stdout=out)
    data = json.loads(out.getvalue())
    assert data["slug"] == "dry" and len(data["items"]) == 2
    assert not Study.objects.filter(slug="dry").exists()


@pytest.mark.django_db
@pytest.mark.usefixtures("admin_user")  # owns what the commands make (docs/access.md)
def test_contrastive_command_from_a_stored_study():
    source = study_import(status="open", data={"slug": "contra-src", "title": "t", "protocol": "ranking", "items": [
        {"id": f"p{k}", "source": "Er ist rot.", "candidates": [
            {"system": "reference", "text": f"It is red number {k} today, said the old man slowly.", "is_reference": True},
            {"system": "contrastive-1", "text": f"He is red number {k} today, said the old man slowly."},
            {"system": "contrastive-2", "text": f"She is red number {k} today, said the old man slowly."}]}
        for k in range(10)]})
    call_command("make_contrastive_study", source.slug, "--slug", "contra", "--spam-rate", "0.1", "--seed", "2",
                 stdout=io.StringIO())
    study = Study.objects.get(slug="contra")
    assert study.protocol == "choice" and study.options == []
    assert study.items.filter(is_spam=True).count() == 1
    assert set(study.items.first().candidates.values_list("system", flat=True)) == {"reference", "contrastive-1", "contrastive-2"}
    assert len(items_from_study(study)) == 10  # spam copies are not source items


@pytest.mark.django_db
def test_admin_actions(staff, owner):
    """The generator actions as the source study's owner (a manager of it, not a superuser)."""
    client = staff
    source = owned_import(status="open", data={"slug": "src", "title": "t", "protocol": "choice",
                                "settings": {"spam_rate": 0.1, "seed": 3}, "items": CONNECTIVE_ITEMS[:10] + [
        {"id": "plain", "candidates": [{"system": "reference", "text": "No marks at all here.", "is_reference": True},
                                       {"system": "S2S", "text": "None here."}]}]})
    url = "/admin/studies/study/"
    resp = client.post(url, {"action": "make_connective_study", "_selected_action": [source.pk]}, follow=True)
    assert resp.status_code == 200
    new = Study.objects.get(slug="src-connective")
    assert new.owner == owner  # whoever generates a study owns it
    assert new.items.filter(is_spam=False).count() == 10
    assert "1 item(s) skipped" in resp.content.decode()
    client.post(url, {"action": "make_connective_study", "_selected_action": [source.pk]}, follow=True)
    assert Study.objects.filter(slug="src-connective-2").exists()  # never overwrites

    resp = client.post(url, {"action": "make_contrastive_study", "_selected_action": [source.pk]}, follow=True)
    assert "nothing created" in resp.content.decode() and "no contrastive variant" in resp.content.decode()
    assert not Study.objects.filter(slug="src-contrastive").exists()

    before = sorted(Item.objects.filter(study=source, is_spam=True).values_list("external_id", flat=True))
    resp = client.post(url, {"action": "regenerate_spam_items", "_selected_action": [source.pk]}, follow=True)
    assert "Study src: 1 spam item(s)" in resp.content.decode()
    assert sorted(Item.objects.filter(study=source, is_spam=True).values_list("external_id", flat=True)) == before
    assignment_next(annotator=annotators_create(study=source)[0])
    resp = client.post(url, {"action": "regenerate_spam_items", "_selected_action": [source.pk]}, follow=True)
    assert "already has assignments" in resp.content.decode()
