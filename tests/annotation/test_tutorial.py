"""Tutorial (practice) items (issue 15, scope 6): validated on import, feedback from the server, never counted."""
from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.exporting.judgments import export_lines
from annotation.models import Annotator, Assignment, Judgment
from annotation.quality.checks import study_quality
from annotation.handout.services import annotators_create
from annotation.pages.tutorial_feedback import score_range
from studies.importing.study_file import StudyFileError, study_import
from studies.models import Item, Study
from tests.factories import study_file

pytestmark = pytest.mark.django_db

SYSTEMS = ("SYSgoldwin", "SYSmiddling", "SYSworstof")
TEXT = "The bank approved the loan yesterday."


def tutorial_item(n_cands: int, gold: Any, **extra: Any) -> dict[str, Any]:
    cands = [{"system": SYSTEMS[k], "text": f"{TEXT} Variant {k}."} for k in range(n_cands)]
    return {"id": "t1", "source": "La banque a accordé le prêt hier.", "source_context": ["Ctx."],
            "candidates": cands, "gold": gold, "explanation": "Because **the bank** is a *financial* bank.",
            **extra}


def make(protocol: str, tutorial: list[dict[str, Any]], slug: str = "tut", n_candidates: int = 3,
         **settings: Any) -> Study:
    data = study_file(slug=slug, protocol=protocol, n_items=4, n_candidates=n_candidates, settings=settings)
    data["tutorial"] = tutorial
    return study_import(data=data, status="open")


def ranking_study() -> Study:
    return make("ranking", [tutorial_item(3, {"ranks": {"SYSgoldwin": 1, "SYSmiddling": 2, "SYSworstof": 3}}),
                            {**tutorial_item(2, {"ranks": {"SYSgoldwin": 2, "SYSmiddling": 1}}), "id": "t2"}])


def mqm_study() -> Study:
    gold = {"annotations": {"SYSgoldwin": {"spans": []},
                            "SYSmiddling": {"spans": [{"start": 4, "end": 8, "severity": "major",
                                                       "category": "Accuracy/Mistranslation"}]}}}
    return make("mqm", [tutorial_item(2, gold)], slug="mqmtut", n_candidates=2)


def esa_study() -> Study:
    gold = {"annotations": {"SYSgoldwin": {"spans": [{"start": 4, "end": 8, "severity": "minor"}], "score": 80}}}
    return make("esa", [tutorial_item(1, gold)], slug="esatut", n_candidates=1)


def ids_by_system(study: Study, index: int = 0) -> dict[str, str]:
    return {c["system"]: c["id"] for c in study.tutorial[index]["candidates"]}


def free(name: str, *extra: int) -> str:
    """The token-free address of an annotator page (the annotator is in the browser's cookie)."""
    return reverse(f"annotation:cookie-{name}", args=list(extra))


def step_url(annotator: Annotator, step: int) -> str:
    return reverse("annotation:tutorial-step", args=[annotator.token, step])


def post_json(client: Client, annotator: Annotator, step: int, payload: Any):
    return client.post(step_url(annotator, step), data=json.dumps(payload), content_type="application/json")


# --- the study file -----------------------------------------------------------------------

def test_tutorial_is_stored_on_the_study_with_opaque_ids_and_creates_no_items():
    study = ranking_study()
    assert len(study.tutorial) == 2 and study.n_real_items == 4 and Item.objects.filter(study=study, is_spam=False).count() == 4
    first = study.tutorial[0]
    assert first["gold"] == {"ranks": {"SYSgoldwin": 1, "SYSmiddling": 2, "SYSworstof": 3}}
    ids = [c["id"] for c in first["candidates"]]
    assert len(set(ids)) == 3 and all(len(i) >= 16 and not i.startswith("SYS") for i in ids)
    assert first["explanation"].startswith("Because")


@pytest.mark.parametrize("protocol, settings, tutorial, expected", [
    ("ranking", {}, "nope", "tutorial: must be a list"),
    ("ranking", {}, [{"id": "t", "candidates": [{"system": "a", "text": "x"}, {"system": "b", "text": "y"}]}],
     "tutorial[0].gold: required"),
    ("ranking", {}, [tutorial_item(3, {"ranks": {"SYSgoldwin": 1, "SYSmiddling": 2, "nobody": 3}})],
     "tutorial[0].gold.ranks: unknown system(s) ['nobody']"),
    ("ranking", {}, [tutorial_item(3, {"ranks": {"SYSgoldwin": 1, "SYSmiddling": 1, "SYSworstof": 3}})],
     "tutorial[0].gold.ranks: two candidates share a rank"),
    ("ranking", {}, [tutorial_item(3, {"choice": "SYSgoldwin"})], "tutorial[0].gold: must be an object with one field, ranks"),
    ("ranking", {}, [tutorial_item(1, {"ranks": {"SYSgoldwin": 1}})], "tutorial[0].candidates: required, a list of at least 2"),
    ("ranking", {}, [tutorial_item(2, {"ranks": {"SYSgoldwin": 1, "SYSmiddling": 2}}, extra_field=1)],
     "tutorial[0]: unknown field(s) ['extra_field']"),
    ("ranking", {}, [tutorial_item(2, {"ranks": {"SYSgoldwin": 1, "SYSmiddling": 2}}),
                     tutorial_item(2, {"ranks": {"SYSgoldwin": 1, "SYSmiddling": 2}})], "tutorial[1].id: duplicate"),
    ("choice", {"options": ["tie"]}, [tutorial_item(2, {"choice": "neither"})], "tutorial[0].gold.choice: 'neither' is neither"),
    ("judgment", {"labels": ["ok", "bad"]}, [tutorial_item(1, {"label": "awful"})], "tutorial[0].gold.label: not a label"),
    ("judgment", {"labels": ["ok", "bad"]}, [tutorial_item(1, {"labels": ["ok"]})], "tutorial[0].gold.labels: this study takes a single label"),
    ("mqm", {}, [tutorial_item(1, {"annotations": {"SYSgoldwin": {"spans": [{"start": 0, "end": 999, "severity": "major", "category": "Other"}]}}})],
     "tutorial[0].gold.annotations.SYSgoldwin.spans[0]: span [0, 999) is outside the text"),
    ("mqm", {}, [tutorial_item(1, {"annotations": {"SYSgoldwin": {"spans": [{"start": 0, "end": 3, "severity": "major", "category": "Made up"}]}}})],
     "tutorial[0].gold.annotations.SYSgoldwin.spans[0].category"),
    ("esa", {}, [tutorial_item(1, {"annotations": {"SYSgoldwin": {"spans": []}}})],
     "tutorial[0].gold.annotations.SYSgoldwin.score: required"),
    ("esa", {}, [tutorial_item(1, {"annotations": {"SYSgoldwin": {"spans": [{"start": 0, "end": 3, "severity": "critical"}], "score": 5}}})],
     "tutorial[0].gold.annotations.SYSgoldwin.spans[0].severity"),
])
def test_bad_tutorials_are_refused_with_the_index_and_field_and_nothing_is_stored(protocol, settings, tutorial, expected):
    n = 1 if protocol in ("judgment", "mqm", "esa") else 2
    data = study_file(slug="badtut", protocol=protocol, n_items=2, n_candidates=n, settings=settings)
    data["tutorial"] = tutorial
    with pytest.raises(StudyFileError) as err:
        study_import(data=data)
    assert any(e.startswith(expected) for e in err.value.errors), err.value.errors
    assert not Study.objects.filter(slug="badtut").exists()


# --- feedback per protocol ------------------------------------------------------------------

def test_ranking_feedback_names_the_expected_ranks_and_the_explanation():
    study = ranking_study()
    annotator = annotators_create(study=study)[0]
    ids = ids_by_system(study)
    client = Client()
    wrong = post_json(client, annotator, 1, {"ranks": {ids["SYSgoldwin"]: 2, ids["SYSmiddling"]: 1, ids["SYSworstof"]: 3}})
    assert wrong.status_code == 200
    body = wrong.json()
    assert body["correct"] is False and body["expected"] == {"ranks": {ids[s]: k + 1 for k, s in enumerate(SYSTEMS)}}
    rows = {r["id"]: r for r in body["candidates"]}
    assert rows[ids["SYSgoldwin"]]["given"] == 2 and rows[ids["SYSgoldwin"]]["correct"] is False
    assert rows[ids["SYSworstof"]]["correct"] is True
    assert body["explanation"].startswith("Because") and body["next"] == step_url(annotator, 2)
    right = post_json(client, annotator, 1, {"ranks": {ids[s]: k + 1 for k, s in enumerate(SYSTEMS)}})
    assert right.json()["correct"] is True
    refused = post_json(client, annotator, 1, {"ranks": {ids["SYSgoldwin"]: 1}})
    assert refused.status_code == 400 and "ranks" in refused.json()["errors"]


def test_choice_and_judgment_feedback():
    study = make("choice", [tutorial_item(2, {"choice": "SYSmiddling"}),
                            {**tutorial_item(2, {"choice": "tie"}), "id": "t2"}], slug="choicetut", n_candidates=2,
                 options=["tie"])
    annotator = annotators_create(study=study)[0]
    ids = ids_by_system(study)
    client = Client()
    wrong = post_json(client, annotator, 1, {"choice": ids["SYSgoldwin"]}).json()
    assert wrong["correct"] is False and wrong["expected"] == {"choice": ids["SYSmiddling"]}
    assert post_json(client, annotator, 1, {"choice": ids["SYSmiddling"]}).json()["correct"] is True
    tie = post_json(client, annotator, 2, {"choice": "tie"}).json()
    assert tie["correct"] is True and tie["expected"] == {"choice": "tie"}

    study = make("judgment", [tutorial_item(1, {"label": "bad"})], slug="judgetut", n_candidates=1, labels=["ok", "bad"])
    annotator = annotators_create(study=study)[0]
    wrong = post_json(client, annotator, 1, {"label": "ok"}).json()
    assert wrong["correct"] is False and wrong["expected"] == {"labels": ["bad"]}
    assert post_json(client, annotator, 1, {"label": "bad"}).json()["correct"] is True


def test_mqm_feedback_found_missed_extra_and_severity():
    study = mqm_study()
    annotator = annotators_create(study=study)[0]
    ids = ids_by_system(study)
    good, mid = ids["SYSgoldwin"], ids["SYSmiddling"]
    client = Client()
    # Overlapping the gold span (5–10 vs 4–8) with another severity; an extra span in the clean candidate.
    answer = {"annotations": {
        mid: {"spans": [{"start": 5, "end": 10, "severity": "minor", "category": "accuracy/mistranslation"}]},
        good: {"spans": [{"start": 0, "end": 3, "severity": "minor", "category": "Style/Awkward"}]}}}
    body = post_json(client, annotator, 1, answer).json()
    rows = {r["id"]: r for r in body["candidates"]}
    assert body["correct"] is False
    assert rows[mid]["found"][0]["text"] == "bank" and rows[mid]["found"][0]["severity_ok"] is False
    assert rows[mid]["found"][0]["category_ok"] is True and rows[mid]["missed"] == []
    assert rows[good]["extra"][0]["text"] == "The" and rows[good]["missed"] == []
    assert any("Expected severity: major" in m for m in body["messages"])
    # Nothing marked: the gold span is missed.
    body = post_json(client, annotator, 1, {"annotations": {mid: {"spans": []}, good: {"spans": []}}}).json()
    rows = {r["id"]: r for r in body["candidates"]}
    assert body["correct"] is False and rows[mid]["missed"][0]["text"] == "bank" and rows[mid]["found"] == []
    # The gold answer itself is correct.
    exact = {"annotations": {mid: {"spans": [{"start": 4, "end": 8, "severity": "major",
                                             "category": "Accuracy/Mistranslation"}]}, good: {"spans": []}}}
    assert post_json(client, annotator, 1, exact).json()["correct"] is True
    # A payload the real validator refuses is refused here too (unknown category), naming the field.
    bad = {"annotations": {mid: {"spans": [{"start": 4, "end": 8, "severity": "major", "category": "Nope"}]},
                           good: {"spans": []}}}
    refused = post_json(client, annotator, 1, bad)
    assert refused.status_code == 400 and "annotations" in refused.json()["errors"]


def test_esa_feedback_score_range_plus_minus_twenty():
    assert score_range(80) == (60, 100) and score_range(10) == (0, 30)
    study = esa_study()
    annotator = annotators_create(study=study)[0]
    cid = ids_by_system(study)["SYSgoldwin"]
    client = Client()
    span = [{"start": 4, "end": 8, "severity": "minor"}]
    inside = post_json(client, annotator, 1, {"annotations": {cid: {"spans": span, "score": 61}}}).json()
    assert inside["correct"] is True and inside["candidates"][0]["score"] == {
        "given": 61, "expected": 80, "range": [60, 100], "within": True}
    outside = post_json(client, annotator, 1, {"annotations": {cid: {"spans": span, "score": 59}}}).json()
    assert outside["correct"] is False and outside["candidates"][0]["score"]["within"] is False
    assert any("outside the expected range 60–100" in m for m in outside["messages"])


def test_esa_plain_form_locates_the_words_and_reports_words_not_found():
    study = esa_study()
    annotator = annotators_create(study=study)[0]
    cid = ids_by_system(study)["SYSgoldwin"]
    client = Client()
    page = client.post(step_url(annotator, 1), {f"span-{cid}-0-text": "bank", f"span-{cid}-0-severity": "minor",
                                                f"score-{cid}": "75"})
    html = page.content.decode()
    assert page.status_code == 200 and 'id="tutorial-feedback"' in html and "matches the expected one" in html
    missing = client.post(step_url(annotator, 1), {f"span-{cid}-0-text": "river", f"score-{cid}": "75"})
    errors = missing.content.decode().split('id="tutorial-errors"')[1].split("</div>")[0]
    assert missing.status_code == 422 and "Candidate A: the words “river” are not in its text." in errors
    assert cid not in errors  # the letter on screen, never the id


# --- the flow, and what is never shown or counted ---------------------------------------------

def test_start_page_leads_through_the_practice_then_to_the_items():
    """The browser follows the invitation link, so every link is token-free (the annotator is in its cookie)."""
    study = ranking_study()
    annotator = annotators_create(study=study)[0]
    client = Client()
    start = client.get(reverse("annotation:start", args=[annotator.token]), follow=True).content.decode()
    assert free("tutorial-step", 1) in start and 'id="tutorial-intro"' in start
    ids = ids_by_system(study)
    form = {f"rank-{ids[s]}": str(k + 1) for k, s in enumerate(SYSTEMS)}
    first = client.post(free("tutorial-step", 1), form)
    html = first.content.decode()
    assert first.status_code == 200 and "matches the expected one" in html
    assert "<strong>the bank</strong>" in html and f'href="{free("tutorial-step", 2)}"' in html
    # Progress is remembered: the practice entry now points at screen 2.
    resumed = client.get(reverse("annotation:tutorial", args=[annotator.token]))
    assert resumed.status_code == 302 and resumed["Location"] == free("tutorial-step", 2)
    ids2 = ids_by_system(study, 1)
    last = client.post(free("tutorial-step", 2), {f"rank-{ids2['SYSgoldwin']}": "1", f"rank-{ids2['SYSmiddling']}": "2"})
    assert "Not quite" in last.content.decode()
    assert f'href="{free("item-current")}"' in last.content.decode()
    start = client.get(reverse("annotation:start", args=[annotator.token]), follow=True).content.decode()
    assert "/tutorial/" not in start and free("item-current") in start
    # Another browser (no cookie) starts the practice again; a forged cookie counts as none.
    fresh = Client()
    fresh.cookies[f"tutorial_{annotator.code}"] = "2"
    assert free("tutorial-step", 1) in fresh.get(reverse("annotation:start", args=[annotator.token]), follow=True).content.decode()


def test_no_system_name_or_gold_before_answering_in_practice_pages():
    for study in (ranking_study(), mqm_study(), esa_study()):
        annotator = annotators_create(study=study)[0]
        client = Client()
        pages = [client.get(step_url(annotator, 1)).content.decode()]
        ids = ids_by_system(study)
        if study.protocol == "ranking":
            pages.append(client.post(step_url(annotator, 1), {f"rank-{i}": str(k + 1) for k, i in enumerate(ids.values())}).content.decode())
            pages.append(post_json(client, annotator, 1, {"ranks": {i: k + 1 for k, i in enumerate(ids.values())}}).content.decode())
        else:
            answer: dict[str, Any] = {"annotations": {i: ({"spans": []} | ({"score": 50} if study.protocol == "esa" else {})) for i in ids.values()}}
            pages.append(post_json(client, annotator, 1, answer).content.decode())
            pages.append(client.post(step_url(annotator, 1), {"annotations": json.dumps(answer)}).content.decode())
        if study.protocol != "ranking":  # the span studies practise on the real marking interface
            assert "data-span-cards" in pages[0] and 'id="span-config"' in pages[0]
        for page in pages:
            assert not any(s in page for s in SYSTEMS), study.protocol
        assert "Because" not in pages[0] and "expected" not in pages[0].lower().replace("expected one, with", "")


def test_practice_item_as_json_has_opaque_ids_and_no_gold():
    study = mqm_study()
    annotator = annotators_create(study=study)[0]
    resp = Client().get(step_url(annotator, 1), HTTP_ACCEPT="application/json")
    body = resp.json()
    assert resp.status_code == 200 and body["step"] == 1 and body["total"] == 1
    assert sorted(c["id"] for c in body["candidates"]) == sorted(ids_by_system(study).values())
    text = resp.content.decode()
    assert not any(s in text for s in SYSTEMS) and "gold" not in text and "Because" not in text


def test_practice_answers_are_never_counted():
    study = ranking_study()
    annotator = annotators_create(study=study)[0]
    before_export = "".join(export_lines(study))
    before_quality = [q.as_dict() for q in study_quality(study=study)]
    before_assigned = list(Item.objects.filter(study=study).order_by("pk").values_list("n_assigned", "is_open"))
    client = Client()
    ids = ids_by_system(study)
    for _ in range(3):
        post_json(client, annotator, 1, {"ranks": {ids[s]: k + 1 for k, s in enumerate(SYSTEMS)}})
        client.post(step_url(annotator, 1), {f"rank-{i}": "1" for i in ids.values()})
    assert Judgment.objects.count() == 0 and Assignment.objects.count() == 0
    assert "".join(export_lines(study)) == before_export
    assert [q.as_dict() for q in study_quality(study=study)] == before_quality
    assert list(Item.objects.filter(study=study).order_by("pk").values_list("n_assigned", "is_open")) == before_assigned
    study.refresh_from_db()
    assert study.n_open_items == 4 and study.n_real_items == 4


def test_unknown_step_is_a_polite_404():
    study = ranking_study()
    annotator = annotators_create(study=study)[0]
    assert Client().get(step_url(annotator, 3)).status_code == 404


def test_practice_page_and_feedback_in_the_interface_language():
    study = make("ranking", [tutorial_item(2, {"ranks": {"SYSgoldwin": 1, "SYSmiddling": 2}})], slug="frtut",
                 interface_language="fr")
    annotator = annotators_create(study=study)[0]
    client = Client()
    assert "Élément d'entraînement 1 sur 1" in client.get(step_url(annotator, 1)).content.decode()
    ids = ids_by_system(study)
    body = post_json(client, annotator, 1, {"ranks": {ids["SYSgoldwin"]: 2, ids["SYSmiddling"]: 1}}).json()
    assert any(m.startswith("Traduction ") and "rang attendu 1" in m for m in body["messages"])


def test_a_copy_keeps_the_tutorial_and_a_hand_edited_one_is_checked():
    from django.core.exceptions import ValidationError

    from studies.lifecycle.invariants import study_copy

    study = ranking_study()
    copy = study_copy(study=study, slug="tut-copy")
    assert copy.tutorial == study.tutorial
    copy.tutorial = [{"id": "x", "candidates": [{"system": "s", "text": "t"}], "gold": {}}]
    with pytest.raises(ValidationError) as err:
        copy.full_clean()
    assert "tutorial" in err.value.message_dict and "tutorial[0]" in err.value.message_dict["tutorial"][0]


@pytest.mark.parametrize("protocol, show_source, refused", [("mqm", True, False), ("mqm", False, True),
                                                            ("esa", True, True)])
def test_gold_source_spans_follow_the_annotators_rule(protocol, show_source, refused):
    """A gold span in the source (an omission) only where an annotator may mark one: MQM studies showing the source."""
    span = {"start": 0, "end": 2, "side": "source", "severity": "major"}
    if protocol == "mqm":
        span["category"] = "Accuracy/Omission"
    entry: dict[str, Any] = {"spans": [span]} | ({"score": 40} if protocol == "esa" else {})
    tutorial = [tutorial_item(1, {"annotations": {"SYSgoldwin": entry}})]
    if not refused:
        study = make(protocol, tutorial, slug=f"src-{protocol}", n_candidates=1, show_source=show_source)
        assert study.tutorial[0]["gold"]["annotations"]["SYSgoldwin"]["spans"][0]["side"] == "source"
        return
    with pytest.raises(StudyFileError) as exc:
        make(protocol, tutorial, slug=f"src-{protocol}", n_candidates=1, show_source=show_source)
    assert any("spans[0].side: source spans (omissions) are for MQM studies that show the source" in e
               for e in exc.value.errors)
