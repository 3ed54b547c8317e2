"""HTML built from study data for the annotator's pages (annotation/items/rendering.py, annotation/pages/forms.py)."""
from __future__ import annotations

import pytest
from django.http import QueryDict

from annotation.pages.forms import answer_from_payload, payload_from_post
from annotation.items.rendering import candidate_letter, highlighted_lines, instructions_html
from annotation.pages.screens import readable_errors
from tests.factories import make_study


def test_text_is_escaped_and_spans_marked():
    assert highlighted_lines('Tom said "<it>" & left', [[10, 14]]) == [
        'Tom said &quot;<mark>&lt;it&gt;</mark>&quot; &amp; left']


@pytest.mark.parametrize("spans, expected", [
    ([[0, 3], [2, 5]], "<mark>abcde</mark>fgh"),            # overlapping spans merge
    ([[6, 99]], "abcdef<mark>gh</mark>"),                   # end past the text is clipped
    ([[-5, 2]], "<mark>ab</mark>cdefgh"),                   # negative start is clipped
    ([[4, 2], [3, 3]], "abcdefgh"),                         # reversed and empty spans are ignored
    ([[1, "x"], [True, 3], "ab", [1], None, [1.5, 3]], "abcdefgh"),  # malformed spans are ignored
    ("not a list", "abcdefgh"),
    ([[0, 2], [2, 4]], "<mark>abcd</mark>efgh"),            # adjacent spans join
    ([[0, 1], [7, 8]], "<mark>a</mark>bcdefg<mark>h</mark>"),
])
def test_spans_are_handled_safely(spans, expected):
    assert highlighted_lines("abcdefgh", spans) == [expected]


def test_document_blocks_split_into_lines_and_spans_cross_lines_validly():
    lines = highlighted_lines("One two.\nThree four.\n<Five>.", [[4, 13], [21, 27]])
    assert lines == ["One <mark>two.</mark>", "<mark>Thre</mark>e four.", "<mark>&lt;Five&gt;</mark>."]


def test_instructions_markdown_without_raw_html():
    html = instructions_html("Read **carefully**.\n\n<img src=x onerror=alert(1)>\n\nInline <i>tag</i> "
                             "[x](javascript:alert(1)) [y](JAVASCRIPT:alert(2)) [ok](/guide)")
    assert "<strong>carefully</strong>" in html
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<i>" not in html and "&lt;i&gt;tag&lt;/i&gt;" in html
    assert "javascript" not in html.lower()
    assert 'href="/guide"' in html
    assert instructions_html("  ") == ""


def test_candidate_letters():
    assert [candidate_letter(k) for k in (0, 1, 25, 26, 27, 51, 52)] == ["A", "B", "Z", "AA", "AB", "AZ", "BA"]


@pytest.mark.django_db
def test_form_fields_become_the_api_payload():
    study = make_study(n_items=1, n_candidates=3)
    cands = list(study.items.first().candidates.all())
    data = QueryDict(mutable=True)
    data.update({f"rank-{cands[0].public_id}": "1", f"rank-{cands[1].public_id}": " 2 ",
                 f"rank-{cands[2].public_id}": "x", "rank-foreign": "3", "client_started_at": "garbage"})
    payload = payload_from_post(study=study, candidates=cands, data=data)
    assert payload == {"ranks": {cands[0].public_id: 1, cands[1].public_id: 2, cands[2].public_id: "x"}}
    assert answer_from_payload(payload) == {"ranks": {cands[0].public_id: 1, cands[1].public_id: 2}}


@pytest.mark.django_db
def test_error_messages_name_letters_not_ids():
    study = make_study(n_items=1)
    messages = readable_errors(study=study, errors={"ranks": ["Rank of candidate Xy_9 must be a whole number from 1 to 3."],
                                                    "choice": ["This field is required."]},
                               letters={"Xy_9": "B"})
    assert messages == ["Rank of candidate B must be a whole number from 1 to 3.",
                        "Give every candidate a rank before going on."]
