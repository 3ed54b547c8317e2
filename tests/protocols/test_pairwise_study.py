"""A pairwise study end to end: the demo study file, the API, the item page, export -> import, the report."""
from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.exporting.judgments import judgments_frame
from annotation.handout.services import annotators_create
from annotation.models import Judgment
from annotation.pages.links import page_url
from protocols.pairwise.demo import build_pairwise_sentences
from studies.importing.study_file import StudyFileError, parse_study, study_import
from tests.conftest import annotator_client

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_user")]


def demo(slug: str = "pw", n_items: int = 4, **settings):
    data = build_pairwise_sentences()
    data = {**data, "slug": slug, "items": data["items"][:n_items],
            "settings": {**data["settings"], "spam_rate": 0.0, **settings}}
    return study_import(status="open", data=data)


def answer_everything(study, preference=lambda k, ids, systems: ids[0]):
    for k, annotator in enumerate(annotators_create(study=study, count=2)):
        client = annotator_client(annotator)
        while (resp := client.get("/api/v1/annotate/next")).status_code == 200:
            data = resp.json()
            ids = [c["id"] for c in data["candidates"]]
            systems = {c.public_id: c.system for c in study.items.get(candidates__public_id=ids[0]).candidates.all()}
            body = {"annotations": {cid: {"score": 90 if systems[cid] == "reference" else 40 + 10 * k, "spans": []}
                                    for cid in ids}, "preference": preference(k, ids, systems)}
            posted = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", body, format="json")
            assert posted.status_code == 201, posted.content
        assert resp.status_code == 204


def test_the_demo_study_file_makes_a_pairwise_study_with_its_own_settings():
    study = demo()
    assert study.protocol == "pairwise"
    assert study.protocol_settings == {"spans": "esa", "preference": "required", "ties": True}
    assert study.uses_spans and study.uses_score
    assert all(item.candidates.count() == 2 for item in study.items.all())


def test_a_pairwise_item_needs_exactly_two_candidates_and_known_settings():
    data = build_pairwise_sentences()
    item = dict(data["items"][0])
    item["candidates"] = item["candidates"] + [{"system": "third", "text": "Autre chose."}]
    broken = {**data, "slug": "pw-bad", "items": [item], "settings": {**data["settings"], "preference": "always"}}
    with pytest.raises(StudyFileError) as refused:
        parse_study(broken)
    problems = "\n".join(refused.value.errors)
    assert "a pairwise item has at most 2 candidates" in problems
    assert "settings.preference: 'always' is not one of" in problems


def test_api_answers_are_stored_with_the_preference_as_a_choice_and_exported_by_system():
    study = demo()
    answer_everything(study)
    judgment = Judgment.objects.filter(assignment__item__study=study).first()
    assert set(judgment.answer) == {"annotations", "choice"}
    frame = judgments_frame(study)
    assert set(frame["protocol"]) == {"pairwise"}
    assert frame["score"].notna().all()
    assert frame["choice"].isin(set(frame["system"])).all()  # the preferred system's name, never an id


def test_a_missing_required_preference_is_refused_naming_the_field():
    study = demo("pw-req")
    (annotator,) = annotators_create(study=study, count=1)
    client = annotator_client(annotator)
    data = client.get("/api/v1/annotate/next").json()
    ids = [c["id"] for c in data["candidates"]]
    resp = client.post(f"/api/v1/annotate/{data['assignment']}/judgment",
                       {"annotations": {cid: {"score": 50, "spans": []} for cid in ids}}, format="json")
    assert resp.status_code == 400
    assert "preference" in resp.json()["errors"]
    assert Judgment.objects.filter(assignment__item__study=study).count() == 0


def test_export_then_import_gives_the_same_answers(tmp_path):
    study = demo("pw-round", preference="optional")
    answer_everything(study, preference=lambda k, ids, systems: "tie" if k else ids[1])
    out = io.StringIO()
    call_command("export_judgments", study.slug, "--format", "csv", "--user", "admin", stdout=out)
    path = tmp_path / "pw.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    call_command("import_judgments", str(path), "--format", "export", "--slug", "pw-back", "--user", "admin",
                 stdout=io.StringIO())
    def answers(slug):
        rows = judgments_frame(type(study).objects.get(slug=slug))
        return sorted(rows[["item", "system", "score", "choice"]].astype(str).values.tolist())  # codes are new
    assert answers("pw-back") == answers("pw-round")


def test_the_item_page_shows_two_cards_side_by_side_and_the_preference_without_system_names(client):
    study = demo("pw-page")
    (annotator,) = annotators_create(study=study, count=1)
    page = annotator_client(annotator).get("/api/v1/annotate/next")  # the same assignment the page shows
    assert page.status_code == 200
    html = client.get(page_url(annotator, "item-detail", page.json()["assignment"]), follow=True).content.decode()
    assert "side-by-side" in html and 'name="preference"' in html and 'value="tie"' in html
    for system in {c.system for c in study.items.first().candidates.all()}:
        assert not re.search(rf"\b{re.escape(system)}\b", html), system  # ("preference" holds "reference")


def test_the_report_gives_score_agreement_and_a_ranking(admin_client):
    study = demo("pw-report")
    answer_everything(study)
    report = admin_client.get(reverse("evaluators:report-json", args=[study.slug])).json()
    assert report["protocol"] == "pairwise"
    assert report["n_ratings"] > 0
    assert {row["system"] for row in report["ranking"]["systems"]} >= {"reference"}
    assert json.dumps(report)  # serialisable


def test_the_report_gives_preference_agreement_and_bradley_terry_strengths(admin_client):
    study = demo("pw-pref", n_items=6)
    def prefer(k, ids, systems):  # both annotators always prefer the reference
        return next(cid for cid in ids if systems[cid] == "reference")
    answer_everything(study, preference=prefer)
    report = admin_client.get(reverse("evaluators:report-json", args=[study.slug])).json()
    block = report["preference"]
    assert block["n_judgments"] == 12 and block["n_ties"] == 0
    assert block["agreement"]["coefficients"]["percent_agreement"]["value"] == 1.0
    strengths = block["bradley_terry"]
    assert strengths["systems"][0]["system"] == "reference"  # always preferred
    assert strengths["prior"] > 0 and "never less preferred: reference" in strengths["why_prior"]
    page = admin_client.get(reverse("evaluators:report", args=[study.slug])).content.decode()
    assert "Bradley–Terry strengths from 12 preferences" in page


def test_reopening_an_answered_pairwise_item_gives_back_its_scores_and_preference():
    from annotation.items.selectors import answer_for_client

    study = demo("pw-reopen", n_items=1)
    answer_everything(study, preference=lambda k, ids, systems: "tie")
    judgment = Judgment.objects.filter(assignment__item__study=study).first()
    candidates = list(judgment.assignment.item.candidates.all())
    again = answer_for_client(judgment, candidates)
    assert again["preference"] == "tie"
    assert sorted(entry["score"] for entry in again["annotations"].values()) in ([40, 90], [50, 90])
