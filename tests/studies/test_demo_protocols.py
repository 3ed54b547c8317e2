"""Demo studies for choice and judgment from the DiaBLa subset: valid study files, spam items, answerable."""
from __future__ import annotations

import pytest

from annotation.quality.checks import annotator_quality
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.demo import studies as demo
from studies.demo.protocols import build_mt_correctness, build_mt_preference
from studies.importing.study_file import study_import
from studies.controls.spam import words_kept

pytestmark = pytest.mark.django_db


def test_builders_are_listed_in_the_demo():
    builders = [getattr(b, "__wrapped__") for b in demo.DEMO_STUDIES]  # each wrapped to normalise typography
    assert build_mt_preference in builders and build_mt_correctness in builders
    assert all(b()["settings"]["normalise_typography"] for b in demo.DEMO_STUDIES)


def test_preference_demo():
    data = build_mt_preference()
    assert data["protocol"] == "choice" and data["settings"]["options"] == ["neither", "invalid"]
    assert "CC BY-SA 4.0" in data["description"]
    assert len(data["items"]) >= 30
    for item in data["items"]:
        assert len(item["target_context"]) == 2
        ref, mt = item["candidates"]
        assert ref["is_reference"] and not mt.get("is_reference")
        assert ref["text"] != mt["text"]
    study = study_import(status="open", data=data)
    n_real = study.items.filter(is_spam=False).count()
    assert study.items.filter(is_spam=True).count() == round(n_real * 0.1)
    for spam in study.items.filter(is_spam=True):
        scrambled = spam.candidates.get(is_spam=True)
        assert not scrambled.is_reference
        original = spam.spam_of.candidates.get(system=scrambled.system).text.split()
        keep = words_kept(len(original))
        assert scrambled.text.split()[:keep] == original[:keep] and scrambled.text.split() != original


def test_correctness_demo_marks_the_phenomenon_and_catches_careless_annotators():
    data = build_mt_correctness()
    assert data["protocol"] == "judgment" and data["settings"]["labels"] == ["correct", "incorrect"]
    assert data["settings"]["show_source"] is True
    assert len(data["items"]) >= 30
    for item in data["items"]:
        (only,) = item["candidates"]
        assert only["highlights"] and not only.get("is_reference")
        assert item["source"] and len(item["source_context"]) == 2
    study = study_import(status="open", data=data)
    assert study.items.filter(is_spam=True).count() >= 3
    careless = annotators_create(study=study)[0]
    while (assignment := assignment_next(annotator=careless)) is not None:
        judgment_submit(assignment=assignment, payload={"label": "correct"})
        if careless.assignments.count() > 200:
            break
    q = annotator_quality(annotator=careless)
    assert q.spam_seen == study.items.filter(is_spam=True).count()
    assert q.spam_failed == q.spam_seen  # "correct" on every scrambled MT


def test_the_two_demos_use_mostly_different_turns():
    pref = {i["id"] for i in build_mt_preference()["items"]}
    corr = {i["id"] for i in build_mt_correctness()["items"]}
    assert len(pref & corr) < len(corr) / 2
