"""Context probes on the quality side: the catch rule of each protocol, the context-use rate beside the local
catch rate, and no probe mark in any page or API response an annotator gets."""
from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from annotation.items.selectors import ordered_candidates
from annotation.quality.checks import study_quality
from annotation.quality.probes import context_use_summary, study_probes, wilson_interval
from studies.controls.spam import PROBE_KEY
from studies.importing.study_file import study_import
from tests.conftest import annotator_client
from tests.studies.test_context_probes import _address_file, _story_file

pytestmark = pytest.mark.django_db

#: Nothing an annotator receives may name a probe or its record.
PROBE_WORDS = ("probe", "~ctx", "ctx:", "evidence", "original_system", "context_probe", "is_spam", "spam",
               "reference", "sys1", "sys2", "system", "address", "connective", "pronoun")


def _answer(protocol: str, candidates, *, catch: bool, probe_pk: int | None, original_pk: int | None) -> dict:
    """A payload that catches the probe (or misses it); on other items any valid answer."""
    ids = {c.pk: c.public_id for c in candidates}
    if protocol == "ranking":
        order = list(candidates)
        if probe_pk is not None and original_pk is not None:
            first, second = (original_pk, probe_pk) if catch else (probe_pk, original_pk)
            order = [c for c in candidates if c.pk == first] + [c for c in candidates if c.pk not in (first, second)] \
                + [c for c in candidates if c.pk == second]
        return {"ranks": {c.public_id: k + 1 for k, c in enumerate(order)}}
    if protocol == "choice":
        target = original_pk if catch else probe_pk
        return {"choice": ids[target] if target is not None else candidates[0].public_id}
    if protocol == "judgment":
        return {"label": "bad" if catch else "good"}
    entry: dict = {c.public_id: {"score": 80} for c in candidates}
    if probe_pk is not None and catch:
        entry[ids[probe_pk]]["score"] = 40
    return {"annotations": entry}


def _work(study, annotator, *, catch: bool) -> None:
    probes = study_probes(study)
    while (assignment := assignment_next(annotator=annotator)) is not None:
        probe = probes.get(assignment.item_id)
        payload = _answer(study.protocol, ordered_candidates(assignment), catch=catch,
                          probe_pk=probe.probe_pk if probe else None, original_pk=probe.original_pk if probe else None)
        judgment_submit(assignment=assignment, payload=payload)


@pytest.mark.parametrize("protocol, settings, n_candidates", [
    ("ranking", {"allow_ties": False}, 3), ("choice", {}, 2), ("judgment", {}, 1),
    ("esa", {"esa_spans": False, "show_source": True}, 2),
])
def test_each_protocol_counts_a_probe_caught_or_missed(protocol, settings, n_candidates):
    study = study_import(data=_story_file(f"q-{protocol}", protocol=protocol, n_candidates=n_candidates,
                                          spam_rate=0.3, redundancy=2, **settings), status="open")
    n_probes = study.items.filter(metadata__has_key=PROBE_KEY).count()
    assert n_probes == 3
    reader, skimmer = annotators_create(study=study, count=2)
    _work(study, reader, catch=True)
    _work(study, skimmer, catch=False)
    rows = {q.annotator: q for q in study_quality(study=study)}
    assert (rows[reader.code].probes_seen, rows[reader.code].probes_caught) == (3, 3)
    assert (rows[skimmer.code].probes_seen, rows[skimmer.code].probes_caught) == (3, 0)
    assert rows[reader.code].context_use_rate == 1.0 and rows[skimmer.code].context_use_rate == 0.0
    # probes are not spam checks: spam_seen counts the local controls only
    n_local = study.items.filter(is_spam=True).exclude(metadata__has_key=PROBE_KEY).count()
    if protocol != "esa":  # DA counts a check only where the annotator also scored the original
        assert rows[reader.code].spam_seen == n_local
    assert rows[reader.code].unit == "sentence"


@pytest.mark.parametrize("protocol, settings, n_candidates", [
    ("ranking", {"allow_ties": False}, 3), ("choice", {}, 2), ("judgment", {}, 1),
    ("esa", {"esa_spans": False}, 2),
])
def test_each_protocol_counts_an_address_probe_caught_or_missed(protocol, settings, n_candidates):
    study = study_import(data=_address_file(f"qa-{protocol}", protocol=protocol, n_candidates=n_candidates,
                                            redundancy=2, **settings), status="open")
    assert {i.metadata[PROBE_KEY]["kind"] for i in study.items.filter(metadata__has_key=PROBE_KEY)} == {"address"}
    reader, skimmer = annotators_create(study=study, count=2)
    _work(study, reader, catch=True)
    _work(study, skimmer, catch=False)
    rows = {q.annotator: q for q in study_quality(study=study)}
    assert (rows[reader.code].probes_seen, rows[reader.code].probes_caught) == (2, 2)
    assert (rows[skimmer.code].probes_seen, rows[skimmer.code].probes_caught) == (2, 0)


def test_a_span_on_the_changed_words_catches_a_probe_in_an_mqm_study():
    study = study_import(data=_story_file("q-mqm", protocol="mqm", show_source=True), status="open")
    probe = next(iter(study_probes(study).values()))
    spec = study.spec
    on = {"annotations": {str(probe.probe_pk): {"spans": [{"start": probe.start, "end": probe.end,
                                                           "severity": "minor", "category": "Fluency"}]}}}
    elsewhere = {"annotations": {str(probe.probe_pk): {"spans": [{"start": probe.end + 1, "end": probe.end + 3,
                                                                  "severity": "major", "category": "Fluency"}]}}}
    assert spec.probe_caught(study, on, probe) is True
    assert spec.probe_caught(study, elsewhere, probe) is False


def test_quality_command_and_page_show_the_context_use_rate_with_its_interval(staff):
    study = study_import(data=_story_file("q-cmd", spam_rate=0.3, redundancy=2, allow_ties=False), status="open")
    from tests.factories import owned
    owned(study)
    reader = annotators_create(study=study)[0]
    _work(study, reader, catch=True)
    from io import StringIO
    out = StringIO()
    call_command("quality", study.slug, "--json", stdout=out)
    row = json.loads(out.getvalue())[0]
    assert (row["probes_seen"], row["probes_caught"], row["context_use_rate"]) == (3, 3, 1.0)
    low, high = wilson_interval(3, 3)
    assert row["context_use_ci"] == [low, high] and 0.4 < low < 0.5 and high == 1.0
    assert row["local_catch_rate"] is not None and row["unit"] == "sentence"
    table = StringIO()
    call_command("quality", study.slug, stdout=table)
    assert "context_use" in table.getvalue()
    html = staff.get(f"/studies/{study.slug}/quality/").content.decode()
    assert "Context use" in html and "Local catch" in html and "100%" in html
    report = staff.get(f"/reports/{study.slug}/").content.decode()
    assert 'id="context-probes"' in report and 'data-path="context_probes/context_use/caught" data-value="3"' in report
    agreement = StringIO()
    call_command("agreement", study.slug, "--json", stdout=agreement)
    block = json.loads(agreement.getvalue())["context_probes"]
    assert block["unit"] == "sentence" and block["context_use"]["rate"] == 1.0
    assert block["annotators"][reader.code]["context_use"]["seen"] == 3
    methods = StringIO()
    call_command("agreement", study.slug, "--methods", stdout=methods)
    assert "3 context probes (50% of items) were mixed in" in methods.getvalue()


def test_wilson_interval_against_published_values():
    # Brown, Cai & DasGupta (2001), Table 1 style check: 0 of 10 → [0, 0.2775]; 5 of 10 → [0.2366, 0.7634]
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.27753), abs=1e-4)
    assert wilson_interval(5, 10) == pytest.approx((0.23659, 0.76341), abs=1e-4)
    assert wilson_interval(0, 0) is None


def test_summary_groups_by_kind_and_annotator():
    summary = context_use_summary(unit="document", probes={"a": [("term", True), ("pronoun", False)], "b": []},
                                  local={"a": (4, 5), "b": (5, 5)})
    assert summary["unit"] == "document"
    assert summary["context_use"]["rate"] == 0.5 and summary["local_catch"]["rate"] == 0.9
    assert summary["by_kind"]["term"]["caught"] == 1 and summary["annotators"]["b"]["context_use"]["rate"] is None


# --- never visible to annotators ---------------------------------------------------------------------

def _assert_hidden(text: str) -> None:
    lowered = text.lower()
    for word in PROBE_WORDS:
        assert word not in lowered, word


@pytest.mark.parametrize("protocol, n_candidates, make, n_probes", [
    ("ranking", 2, _story_file, 3), ("judgment", 1, _story_file, 3), ("ranking", 2, _address_file, 2)])
def test_no_probe_mark_in_any_api_response(protocol, n_candidates, make, n_probes):
    study = study_import(data=make(f"hide-{protocol}", protocol=protocol, n_candidates=n_candidates,
                                   spam_rate=0.3), status="open")
    client = annotator_client(annotators_create(study=study)[0])
    probes_seen = 0
    while (resp := client.get("/api/v1/annotate/next")).status_code == 200:
        data = resp.json()
        _assert_hidden(resp.content.decode())
        ids = [c["id"] for c in data["candidates"]]
        payload: dict[str, Any] = ({"ranks": {cid: k + 1 for k, cid in enumerate(ids)}} if protocol == "ranking"
                                   else {"label": "good"})
        answer = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", payload, format="json")
        assert answer.status_code == 201, answer.content
        _assert_hidden(answer.content.decode())
        probes_seen += any(PROBE_KEY in i.metadata for i in study.items.filter(
            assignments__public_id=data["assignment"]))
    assert resp.status_code == 204
    assert probes_seen == n_probes  # the probes went through the same responses


@pytest.mark.parametrize("make, n_probes", [(_story_file, 3), (_address_file, 2)])
def test_no_probe_mark_in_any_page_source(make, n_probes):
    study = study_import(data=make("hide-page", spam_rate=0.3), status="open")
    annotator = annotators_create(study=study)[0]
    client = Client()
    probes_seen = 0
    while True:
        response = client.get(f"/a/{annotator.token}/item/", follow=True)
        assert response.status_code == 200
        assignment = assignment_next(annotator=annotator)
        if assignment is None:
            break
        _assert_hidden(response.content.decode())
        probes_seen += PROBE_KEY in assignment.item.metadata
        candidates = ordered_candidates(assignment)
        judgment_submit(assignment=assignment,
                        payload={"ranks": {c.public_id: k + 1 for k, c in enumerate(candidates)}})
    assert probes_seen == n_probes


def test_the_staff_preview_scores_a_probe_by_the_probe_rule():
    from research.views.preview import spam_outcome
    study = study_import(data=_story_file("p-preview"), status="open")
    probe = next(iter(study_probes(study).values()))
    candidates = list(study.items.get(pk=probe.item_id).candidates.all())
    assert probe.original_pk is not None
    below = {"ranks": {str(probe.original_pk): 1, str(probe.probe_pk): 2}}
    above = {"ranks": {str(probe.original_pk): 2, str(probe.probe_pk): 1}}
    assert spam_outcome(study=study, candidates=candidates, answer=below) == "passed"
    assert spam_outcome(study=study, candidates=candidates, answer=above) == "failed"
