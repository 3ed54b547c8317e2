"""The blinding lint (studies/controls/blinding.py) and the typography normaliser (studies/definition/typography.py)."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from studies.demo import studies as demo
from studies.controls.blinding import FEATURE_NAMES, blinding_lint, instructions_warning, parsed_study_lint
from studies.importing.study_file import parse_study
from studies.models import Study
from studies.definition.typography import normalise_typography
from tests.factories import study_file

TYPOGRAPHIC = {"typographic_quotes", "ellipsis", "dashes", "nbsp"}


def item(ext: str, ref: str, *systems: str, ref_hl=(), sys_hl=()) -> dict:
    return {"external_id": ext, "candidates": [{"text": ref, "is_reference": True, "highlights": list(ref_hl)}]
            + [{"text": t, "is_reference": False, "highlights": list(sys_hl)} for t in systems]}


def test_each_feature_separates_only_when_the_reference_differs_from_every_system():
    items = [
        item("q", "It’s fine here today.", "It's fine here today.", "Its fine here today."),
        item("q-not", "It’s fine here today.", "It’s fine here too.", "It's fine here today."),  # a system has it too
        item("e", "Well… we left then.", "Well... we left then."),
        item("d", "We left – then came.", "We left - then came."),
        item("n", "Quoi\u202f? Non merci.", "Quoi ? Non merci."),
        item("p", "We left then.", "We left then!"),
        item("c", "we left then.", "We left then."),
        item("h", "We left then.", "We left then.", ref_hl=[[0, 2]]),
        item("l", "We left then, all of us together.", "We left."),
        item("no-ref", "x", "y") | {"candidates": [{"text": "a"}, {"text": "b"}]},  # not counted
    ]
    report = blinding_lint(items=items, min_share=0.0)
    assert report.n_items == 9
    separated = {f.feature: f.item_ids for f in report.findings}
    assert separated["typographic_quotes"] == ["q"]
    assert separated["ellipsis"] == ["e"]
    assert separated["dashes"] == ["d"]
    assert separated["nbsp"] == ["n"]
    assert separated["trailing_punctuation"] == ["p"]
    assert separated["first_letter_case"] == ["c"]
    assert separated["highlights"] == ["h"]
    assert separated["length"] == ["l"]
    quotes = next(f for f in report.findings if f.feature == "typographic_quotes")
    assert quotes.n_separated == 1 and quotes.share == pytest.approx(1 / 9) and quotes.reference_values == {"yes": 1}
    assert "It’s" in quotes.examples[0].reference and "It's" in quotes.examples[0].system
    assert "1 of 9 items (11%)" in quotes.message() and "items q" in quotes.message()


def test_findings_below_the_threshold_are_not_reported():
    items = [item("q", "It’s fine.", "It's fine.")] + [item(f"x{k}", "Same text.", "Same text.") for k in range(30)]
    assert blinding_lint(items=items).findings == []  # 1 of 31 < 5%
    assert [f.feature for f in blinding_lint(items=items, min_share=0.01).findings] == ["typographic_quotes"]


def _demo_report(builder, **kwargs):
    data = builder()
    s = data["settings"]
    return blinding_lint(items=data["items"], instructions=s.get("instructions", ""), question=s.get("question", ""),
                         spam_rate=s.get("spam_rate", 0), **kwargs)


@pytest.mark.parametrize("builder, expected", [
    # measured on the demo data (docs/protocols/blinding.md): separated items of items with a reference
    (demo.build_pronoun_mono, {"typographic_quotes": 15, "ellipsis": 4, "nbsp": 13, "trailing_punctuation": 5,
                               "highlights": 10, "length": 10}),
    (demo.build_coherence_blocks, {"typographic_quotes": 29, "ellipsis": 10, "trailing_punctuation": 8, "length": 3}),
    (demo.build_mt_preference, {"typographic_quotes": 21, "ellipsis": 3, "nbsp": 9, "trailing_punctuation": 3,
                                "length": 8}),
])
def test_the_lint_reports_the_typography_of_the_demo_references(builder, expected):
    report = _demo_report(builder)
    n = {"diabla-pronoun-mono": 59, "diabla-coherence-blocks": 36, "diabla-mt-preference": 48}[builder()["slug"]]
    assert report.n_items == n
    assert {f.feature: f.n_separated for f in report.findings} == expected
    assert all(f.reference_values.get("yes") == f.n_separated for f in report.findings if f.feature in TYPOGRAPHIC)
    assert report.share_of["typographic_quotes"] == pytest.approx(expected["typographic_quotes"] / n)


@pytest.mark.parametrize("builder", [demo.build_pronoun_mono, demo.build_coherence_blocks, demo.build_mt_preference])
def test_with_normalise_typography_no_typographic_feature_separates_the_reference(builder):
    report = _demo_report(builder, normalise=True, min_share=0.0)
    assert report.n_items > 0 and not TYPOGRAPHIC & {f.feature for f in report.findings}
    # through the study file's own setting, as the import and the study page read it
    data = builder()
    data["settings"]["normalise_typography"] = True
    with pytest.MonkeyPatch.context() as mp:  # parse_study checks the slug against the database
        mp.setattr(Study.objects, "filter", lambda **kw: Study.objects.none())
        parsed = parse_study(data)
    assert not TYPOGRAPHIC & set(parsed_study_lint(fields=parsed.fields, items=parsed.items).share_of)


def test_the_connective_demo_is_flagged_by_design():
    report = _demo_report(demo.build_connective_preference)
    shares = report.share_of
    assert shares["highlights"] == 1.0  # the reference carries the highlighted connective
    assert not TYPOGRAPHIC & set(shares)  # both versions come from the same text


def test_instructions_that_restrict_judging_to_the_highlighted_words_clash_with_spam():
    old = "Judge **only the highlighted words**: are they right?\nIgnore every other error."
    assert "only the highlighted" in instructions_warning(instructions=old, spam_rate=0.1)
    assert instructions_warning(instructions=old, spam_rate=0) == ""  # no spam, no clash
    assert instructions_warning(instructions="Ignorez toutes les autres erreurs.", spam_rate=0.1)
    assert instructions_warning(instructions="Jugez uniquement les mots surlignés.", spam_rate=0.2)
    assert instructions_warning(instructions="", question="Judge the marked words only.", spam_rate=0.1)
    assert not instructions_warning(instructions="Pay attention to the highlighted pronouns.", spam_rate=0.1)
    fixed = demo.build_mt_correctness()["settings"]
    assert instructions_warning(instructions=fixed["instructions"], question=fixed["question"],
                                spam_rate=fixed["spam_rate"]) == ""
    assert "makes no sense at all" in fixed["instructions"]


@pytest.mark.parametrize("text, spans, expected_text, expected_spans", [
    ("“It’s” – fine…", [[1, 5], [9, 14]], '"It\'s" - fine...', [[1, 5], [9, 16]]),
    ("Quoi\u00a0? «\u202fnon\u202f»", [[9, 12]], 'Quoi ? " non "', [[9, 12]]),
    ("a…b…c", [[2, 3], [4, 5]], "a...b...c", [[4, 5], [8, 9]]),
    ("plain text", [[0, 5]], "plain text", [[0, 5]]),
    ("wait…", [[0, 99], "bad"], "wait...", [[0, 7], "bad"]),
])
def test_normaliser_keeps_highlights_on_their_words(text, spans, expected_text, expected_spans):
    new_text, new_spans = normalise_typography(text, spans)
    assert new_text == expected_text and new_spans == expected_spans
    for (a, b), (c, d) in zip([s for s in spans if isinstance(s, list)], [s for s in new_spans if isinstance(s, list)]):
        assert normalise_typography(text[a:min(b, len(text))], [])[0] == new_text[c:d]


def write(tmp_path: Path, data: dict) -> str:
    path = tmp_path / "study.json"
    path.write_text(json.dumps(data, ensure_ascii=False))
    return str(path)


@pytest.mark.django_db
@pytest.mark.usefixtures("admin_user")  # the import's owner
def test_import_study_warns_on_stderr_and_imports_a_draft(tmp_path):
    shipped = json.loads((Path(settings.BASE_DIR) / "fixtures" / "studies" / "diabla-mt-preference.json").read_text())
    assert shipped["settings"]["normalise_typography"] is True  # the demo hides DiaBLa's typography
    data = {**shipped, "settings": {**shipped["settings"], "normalise_typography": False}}  # as DiaBLa has it
    out, err = io.StringIO(), io.StringIO()
    call_command("import_study", write(tmp_path, data), stdout=out, stderr=err)
    assert out.getvalue().strip() == "diabla-mt-preference"
    assert Study.objects.get(slug=data["slug"]).status == "draft"  # a leaky file never goes live unseen
    assert "typographic quotes" in err.getvalue() and "21 of 48 items (44%)" in err.getvalue()
    assert "is a draft because of" in err.getvalue() and "annotators get no work until it is opened" in err.getvalue()
    Study.objects.all().delete()
    err = io.StringIO()
    call_command("import_study", write(tmp_path, shipped), stdout=io.StringIO(), stderr=err)
    assert "typographic" not in err.getvalue()


@pytest.mark.django_db
@pytest.mark.usefixtures("admin_user")  # the import's owner
def test_import_study_strict_refuses_and_stores_nothing(tmp_path):
    data = study_file(slug="strict", n_items=4, n_candidates=2)
    for it in data["items"]:
        it["candidates"][0]["text"] = "It’s the reference…"
    with pytest.raises(CommandError, match="blinding warning"):
        call_command("import_study", write(tmp_path, data), "--strict", stderr=io.StringIO())
    assert not Study.objects.exists()
    data["settings"]["normalise_typography"] = True  # typography hidden: only content features remain
    err = io.StringIO()
    call_command("import_study", write(tmp_path, data), stdout=io.StringIO(), stderr=err)
    assert "typographic" not in err.getvalue() and Study.objects.get(slug="strict").normalise_typography


def test_feature_names_are_documented():
    page = (Path(settings.BASE_DIR) / "docs" / "protocols" / "blinding.md").read_text()
    for name in FEATURE_NAMES:
        assert f"`{name}`" in page
