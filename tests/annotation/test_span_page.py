"""The MQM / ESA / DA item page at the Django level: what it shows (taxonomy, anchors, no system names) and
its POST path (the JSON answer of the page, the form without JavaScript, refusals beside their candidate)."""
from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Judgment
from annotation.items.selectors import ordered_candidates
from annotation.pages.span_screen import shown_offsets, stored_offset
from studies.importing.study_file import study_import
from studies.definition.taxonomy import DEFAULT_MQM_TAXONOMY
from tests.annotation.test_views_annotate import one_annotator, open_current, url
from tests.span_study import span_document_file, span_study, span_study_file

pytestmark = pytest.mark.django_db

#: "reference" as a system's flag or name ("Discourse/Pronoun reference" is a category annotators must see).
SECRETS = (r"(?<!pronoun )\breference\b", r"system-\d", "is_reference", "is_spam", r"\bspam\b")


def no_secrets(html: str) -> None:
    for secret in SECRETS:
        assert not re.search(secret, html, re.IGNORECASE), secret


def config(html: str) -> dict[str, Any]:
    match = re.search(r'<script id="span-config" type="application/json">(.*?)</script>', html, re.S)
    assert match, "no span-config on the page"
    return json.loads(match.group(1))


def post(client: Client, annotator, assignment, data: dict[str, str]):
    return client.post(url("item-detail", annotator, assignment.public_id), data)


def test_mqm_page_shows_the_taxonomy_severities_and_source_but_no_system_names():
    study = span_study(slug="page-mqm", protocol="mqm", candidates=3)
    annotator = one_annotator(study)
    assignment, html = open_current(Client(), annotator)
    no_secrets(html)
    for category in DEFAULT_MQM_TAXONOMY:
        assert f'data-cat="{category["name"]}"' in html
    assert "A pronoun does not agree with, or points to the wrong, antecedent" in html  # descriptions shown
    assert html.count("&#x27;however&#x27; translated as &#x27;therefore&#x27;.") == 2  # examples: help and popup
    assert '<details class="taxonomy-help">' in html
    assert [s for s in re.findall(r'data-sev="(\w+)"', html)] == ["minor", "major", "critical"]
    assert html.count('data-side="source"') == 3 and html.count('data-side="target"') == 3
    assert "No error: this translation is correct" in html
    assert 'type="range"' not in html
    cfg = config(html)
    assert cfg["protocol"] == "mqm" and cfg["overlap"] is False and cfg["initial"] == {}
    for cand in ordered_candidates(assignment):  # each text whole, at offset 0, escaped
        assert f'<span class="seg" data-seg data-start="0">{cand.text}</span>' in html


def test_neutral_severity_and_custom_taxonomy_reach_the_page():
    taxonomy = [{"name": "Meaning", "description": "Wrong meaning.", "examples": []}, {"name": "Form"}]
    study = span_study(slug="page-custom", protocol="mqm", severities=["neutral", "minor", "major"],
                       taxonomy=taxonomy, allow_overlap=True)
    _, html = open_current(Client(), one_annotator(study))
    assert re.findall(r'data-sev="(\w+)"', html) == ["neutral", "minor", "major"]
    assert re.findall(r'data-cat="([^"]+)"', html) == ["Meaning", "Form"]
    assert config(html)["overlap"] is True


def test_esa_page_has_anchors_and_no_categories_and_da_has_no_marking():
    _, html = open_current(Client(), one_annotator(span_study(slug="page-esa", protocol="esa")))
    no_secrets(html)
    assert "data-cat=" not in html and re.findall(r'data-sev="(\w+)"', html) == ["minor", "major"]
    for value, text in ((0, "No meaning preserved"), (33, "Some meaning preserved"),
                        (66, "Most meaning preserved, few grammar mistakes"), (100, "Perfect meaning and grammar")):
        assert f'<span class="anchor-value">{value}</span> <span class="anchor-text">{text}</span>' in html
    assert 'type="range"' in html and 'step="1"' in html and 'min="0"' in html and 'max="100"' in html
    _, da = open_current(Client(), one_annotator(span_study(slug="page-da", protocol="esa", esa_spans=False)))
    assert "data-span-panel" not in da and 'tabindex="0" role="textbox"' not in da
    assert "How much of the meaning does each translation preserve?" in da


def test_page_json_answer_is_stored_as_offsets():
    study = span_study(slug="post-json", protocol="mqm", candidates=2)
    annotator = one_annotator(study)
    client = Client()
    assignment, _ = open_current(client, annotator)
    first, second = ordered_candidates(assignment)
    answer = {first.public_id: {"spans": [{"start": 3, "end": 8, "side": "target", "severity": "major",
                                            "category": "fluency/grammar"},
                                           {"start": 0, "end": 3, "side": "source", "severity": "minor",
                                            "category": "Accuracy/Omission"}]},
              second.public_id: {"spans": []}}
    resp = post(client, annotator, assignment, {"annotations": json.dumps(answer)})
    assert resp.status_code == 303
    stored = Judgment.objects.get().answer["annotations"]
    assert stored[str(first.pk)]["spans"] == [
        {"start": 3, "end": 8, "side": "target", "severity": "major", "category": "Fluency/Grammar"},
        {"start": 0, "end": 3, "side": "source", "severity": "minor", "category": "Accuracy/Omission"}]
    assert stored[str(second.pk)] == {"spans": []}
    # A revision shows the stored marks again (offsets of the text as shown).
    page = client.get(url("item-detail", annotator, assignment.public_id)).content.decode()
    assert config(page)["initial"][first.public_id]["spans"][0]["start"] == 3
    assert 'id="noerror-B" name="noerror-%s" value="1" data-no-error checked' % second.public_id in page


def test_form_without_javascript_no_error_boxes_and_scores():
    study = span_study(slug="post-form", protocol="mqm", candidates=2)
    annotator = one_annotator(study)
    client = Client()
    assignment, _ = open_current(client, annotator)
    cands = ordered_candidates(assignment)
    resp = post(client, annotator, assignment, {f"noerror-{cands[0].public_id}": "1"})
    assert resp.status_code == 422 and Judgment.objects.count() == 0
    html = resp.content.decode()
    problem_b = re.search(r'id="cand-B-problem" data-card-problem>(.*?)</div>', html, re.S)
    assert problem_b and "Mark this translation&#x27;s errors, or confirm that it has none." in problem_b.group(1)
    assert re.search(r'id="cand-A-problem" data-card-problem hidden>', html)
    assert "See the message under candidate B." in html
    resp = post(client, annotator, assignment, {f"noerror-{c.public_id}": "1" for c in cands})
    assert resp.status_code == 303
    assert Judgment.objects.get().answer == {"annotations": {str(c.pk): {"spans": []}
                                                             for c in sorted(cands, key=lambda c: c.pk)}}
    esa = span_study(slug="post-esa", protocol="esa", candidates=2)
    esa_annotator = one_annotator(esa)
    assignment, _ = open_current(client, esa_annotator)
    cands = ordered_candidates(assignment)
    resp = post(client, esa_annotator, assignment, {f"score-{cands[1].public_id}": "72"})
    assert resp.status_code == 422
    html = resp.content.decode()
    problem_a = re.search(r'id="cand-A-problem" data-card-problem>(.*?)</div>', html, re.S)
    assert problem_a and "Give this translation a score from 0 to 100." in problem_a.group(1)
    assert 'value="72" aria-label="Score for candidate B, typed"' in html  # kept on the page
    resp = post(client, esa_annotator, assignment, {f"score-{c.public_id}": "72" for c in cands})
    assert resp.status_code == 303


def test_bad_span_refusal_is_shown_beside_its_candidate_by_letter():
    study = span_study(slug="post-bad", protocol="mqm", candidates=2)
    annotator = one_annotator(study)
    client = Client()
    assignment, _ = open_current(client, annotator)
    first, second = ordered_candidates(assignment)
    answer = {first.public_id: {"spans": []},
              second.public_id: {"spans": [{"start": 5, "end": 999, "side": "target", "severity": "major",
                                             "category": "Other"}]}}
    resp = post(client, annotator, assignment, {"annotations": json.dumps(answer)})
    assert resp.status_code == 422 and Judgment.objects.count() == 0
    html = resp.content.decode()
    problem_b = re.search(r'id="cand-B-problem" data-card-problem>(.*?)</div>', html, re.S)
    assert problem_b and "candidate B.spans[0]: span [5, 999) is outside the text" in problem_b.group(1)
    assert second.public_id not in re.sub(r'(data-cand|name)="[^"]*"|"initial": \{.*?\}\}\}?', "", problem_b.group(1))
    assert re.search(r'<article class="card span-card is-invalid" data-card data-cand="%s"' % second.public_id, html)
    assert config(html)["initial"][second.public_id]["spans"][0]["end"] == 999  # the refused marks come back
    resp = post(client, annotator, assignment, {"annotations": "not json"})
    assert resp.status_code == 422 and "Must be an object mapping every candidate id" in resp.content.decode()


def test_typography_normalised_text_offsets_are_moved_to_the_stored_text():
    data = span_study_file(slug="post-typo", protocol="mqm", candidates=1, normalise_typography=True)
    text = "Il a dit… « non » – puis il est parti."
    for item in data["items"]:
        item["candidates"][0]["text"] = text
    study = study_import(status="open", data=data)
    annotator = one_annotator(study)
    client = Client()
    assignment, html = open_current(client, annotator)
    shown = 'Il a dit... " non " - puis il est parti.'
    assert f'data-start="0">{shown.replace(chr(34), "&quot;")}</span>' in html
    (cand,) = ordered_candidates(assignment)
    word = "puis"
    answer = {cand.public_id: {"spans": [{"start": shown.index(word), "end": shown.index(word) + len(word),
                                           "side": "target", "severity": "minor", "category": "Other"},
                                          {"start": 5, "end": 10, "side": "target", "severity": "minor",
                                           "category": "Style/Awkward"}]}}
    assert post(client, annotator, assignment, {"annotations": json.dumps(answer)}).status_code == 303
    spans = Judgment.objects.get().answer["annotations"][str(cand.pk)]["spans"]
    assert text[spans[0]["start"]:spans[0]["end"]] == "dit…"  # 5..10 of "dit..." is the whole "dit…"
    assert text[spans[1]["start"]:spans[1]["end"]] == word


def test_offset_maps_both_ways():
    offsets = shown_offsets("a…b", True)
    assert offsets == [0, 1, 4, 5]
    assert [stored_offset(offsets, s, end=False) for s in range(6)] == [0, 1, 1, 1, 2, 3]
    assert [stored_offset(offsets, s, end=True) for s in range(6)] == [0, 1, 2, 2, 2, 3]
    assert shown_offsets("abc", False) == [0, 1, 2, 3]


def test_document_unit_segments_carry_their_offsets_in_the_block():
    study = study_import(status="open", data=span_document_file(slug="page-doc", candidates=2, segments=4))
    annotator = one_annotator(study)
    client = Client()
    assignment, html = open_current(client, annotator)
    for cand in ordered_candidates(assignment):
        starts = [0]
        for sentence in cand.sentences[:-1]:
            starts.append(starts[-1] + len(sentence) + 1)
        for start, sentence in zip(starts, cand.sentences):
            assert cand.text[start:start + len(sentence)] == sentence
            assert f'data-start="{start}">{sentence}</span>'.replace("'", "&#x27;") in html
    no_secrets(html)


def test_staff_preview_renders_span_studies(staff):
    for protocol in ("mqm", "esa"):
        study = span_study(slug=f"pv-{protocol}", protocol=protocol)
        resp = staff.get(reverse("studies:preview", args=[study.slug]))
        assert resp.status_code == 200
        html = resp.content.decode()
        assert "data-span-cards" in html and 'id="span-config"' in html
        first = study.items.order_by("order_key", "position", "pk").first()
        ids = [c.public_id for c in first.candidates.all()]
        entry = {"spans": [], **({"score": 50} if protocol == "esa" else {})}
        resp = staff.post(reverse("studies:preview", args=[study.slug]),
                          {"annotations": json.dumps({i: entry for i in ids})})
        assert resp.status_code == 303, re.findall(r"<li>(.*?)</li>", resp.content.decode())
        assert Judgment.objects.count() == 0  # a preview stores nothing


def test_start_page_legend_has_the_span_keys():
    annotator = one_annotator(span_study(slug="start-mqm", protocol="mqm"))
    html = Client().get(url("start", annotator), follow=True).content.decode()
    assert "mark the selected words as an error" in html and "type part of a category's name" in html
    assert "<kbd>3</kbd>/<kbd>c</kbd> Critical" in html
    esa = one_annotator(span_study(slug="start-esa", protocol="esa"))
    html = Client().get(url("start", esa), follow=True).content.decode()
    assert "on a score slider: change it by 1 / by 10" in html and "Critical" not in html
