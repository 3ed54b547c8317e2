"""load_demo's blinding warnings say, for each demo study, whether each one matters and why (studies/demo/blinding.py)."""
from __future__ import annotations

import pytest

from studies.controls.blinding import parsed_study_lint
from studies.demo.studies import DEMO_STUDIES, plug_in_demo_studies
from studies.demo.blinding import blinding_notes
from studies.importing.study_file import parse_study

pytestmark = pytest.mark.django_db


def _notes() -> dict[str, list[tuple[str, str]]]:
    out = {}
    for builder in [*DEMO_STUDIES, *plug_in_demo_studies()]:
        data = builder()
        parsed = parse_study(data)
        out[data["slug"]] = blinding_notes(data, parsed_study_lint(fields=parsed.fields, items=parsed.items))
    return out


def test_every_demo_warning_says_whether_it_matters_and_why():
    notes = _notes()
    assert sum(len(n) for n in notes.values()) >= 5  # the demo has content findings (docs/protocols/blinding.md)
    for slug, pairs in notes.items():
        for warning, note in pairs:
            assert warning.startswith("blinding: ")
            assert note.startswith(("matters: ", "does not matter: ")), (slug, note)
    # the connective-deletion study's highlight is there by design: both candidates are the human reference
    connective = notes["diabla-connective-preference"]
    assert [n for _, n in connective] and all(n.startswith("does not matter: ") for _, n in connective)
    assert "same human reference with its connective deleted" in connective[0][1]
    # a content cue in a study that puts the reference beside MT matters, with what it does to that protocol
    mqm = dict(notes["diabla-mqm-document"])
    assert any(n.startswith("matters: ") and "flatter the reference's MQM score" in n for n in mqm.values())
    ranking = [n for _, n in notes["diabla-pronoun-mono"]]
    assert any("highlights differ" in n for n in ranking) and all("flatter the reference in the ranking" in n
                                                                    for n in ranking)
    assert notes["diabla-pronoun-correctness"] == []  # the MT alone: nothing to tell apart


def test_load_demo_prints_each_note_under_its_warning(monkeypatch):
    import io

    from django.core.management import call_command

    from research.management.commands import load_demo

    connective = [b for b in DEMO_STUDIES if b().get("slug") == "diabla-connective-preference"]
    monkeypatch.setattr(load_demo, "DEMO_STUDIES", connective)  # one study: the whole demo also runs evaluators
    monkeypatch.setattr(load_demo, "plug_in_demo_studies", lambda: [])
    monkeypatch.setattr(load_demo.Command, "_imported_mqm", lambda self, base, **kw: None)
    out = io.StringIO()
    call_command("load_demo", "--base-url", "http://demo.test", stdout=out)
    lines = out.getvalue().splitlines()
    k = next(i for i, line in enumerate(lines) if "having highlighted spans separates" in line)
    assert "warning(s), each with whether it matters for this study:" in lines[k - 1]
    assert lines[k + 1].strip().startswith("-> does not matter: ")
