"""import_scores / scores_import: good files are stored, every bad row is named by line and field, nothing stored."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluators.models import Evaluator, MetricScore
from evaluators.metrics.scores import ScoreFileError, scores_import
from tests.factories import make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    return make_study(slug="imp", n_items=3, n_candidates=3, documents=1)


def errors_of(study, content: str, file_name: str = "s.csv", **kw) -> list[str]:
    with pytest.raises(ScoreFileError) as exc:
        scores_import(study=study, file_name=file_name, content=content, **kw)
    assert MetricScore.objects.count() == 0 and Evaluator.objects.count() == 0, "nothing may be stored on error"
    return exc.value.errors


def test_csv_with_name_and_orientation_columns(study):
    content = "item,system,score,name,higher_is_better\next-0,sys1,0.5,m,true\next-0,sys2,0.25,m,true\next-1,reference,1,m,true\n"
    [evaluator] = scores_import(study=study, file_name="s.csv", content=content)
    assert evaluator.name == "m" and evaluator.higher_is_better and evaluator.kind == "imported"
    got = {(s.item.external_id, s.system): (s.score, s.document) for s in evaluator.scores.all()}
    # the document comes from the item when the file does not give one
    assert got == {("ext-0", "sys1"): (0.5, "doc-0"), ("ext-0", "sys2"): (0.25, "doc-0"), ("ext-1", "reference"): (1.0, "doc-0")}


def test_jsonl_with_options_and_reimport_replaces(study):
    rows = [{"item": "ext-0", "system": "sys1", "score": 3}, {"item": "ext-2", "system": "sys2", "score": -1.5}]
    content = "\n".join(json.dumps(r) for r in rows) + "\n"
    scores_import(study=study, file_name="s.jsonl", content=content, name="err", higher_is_better=False)
    [again] = scores_import(study=study, file_name="s.jsonl", content=json.dumps(rows[0]) + "\n", name="err")
    assert again.higher_is_better is False  # kept from the first import
    assert list(again.scores.values_list("system", "score")) == [("sys1", 3.0)]


def test_every_bad_row_is_named(study):
    content = (
        "item,system,score,name\n"
        "ext-0,sys1,0.5,m\n"      # 2 ok
        "ext-9,sys1,0.5,m\n"      # 3 unknown item
        "ext-0,sys7,0.5,m\n"      # 4 unknown system for the item
        "ext-1,sys1,abc,m\n"      # 5 non-numeric
        "ext-0,sys1,0.7,m\n"      # 6 duplicate of line 2
        "ext-1,sys2,0.1,\n"       # 7 missing name
        "ext-2,sys1,nan,m\n"      # 8 NaN
    )
    errors = errors_of(study, content, higher_is_better=True)
    text = "\n".join(errors)
    assert "line 3: item: unknown item id 'ext-9'" in text
    assert "line 4: system: 'sys7' has no candidate for item 'ext-0'" in text
    assert "line 5: score: 'abc' is not a finite number" in text
    assert "line 6: item/system: duplicate of line 2" in text
    assert "line 7: name: missing" in text
    assert "line 8: score:" in text
    assert len(errors) == 6


def test_header_and_orientation_errors(study):
    assert errors_of(study, "item,score\next-0,1\n", name="m", higher_is_better=True) == [
        "line 1: header: missing column(s) system (need item, system, score)"]
    errors = errors_of(study, "item,system,score\next-0,sys1,1\n", name="m")
    assert errors[0].startswith("line 2: higher_is_better: not given for metric 'm'")
    errors = errors_of(study, "item,system,score,higher_is_better\next-0,sys1,1,maybe\n", name="m")
    assert errors == ["line 2: higher_is_better: 'maybe' is not true/false"]
    errors = errors_of(study, "item,system,score,higher_is_better\next-0,sys1,1,true\next-0,sys2,1,false\n", name="m")
    assert "higher_is_better: inconsistent values for metric 'm'" in errors[0]


def test_builtin_names_documents_and_json_errors(study):
    assert "is a built-in evaluator" in errors_of(study, "item,system,score\next-0,sys1,1\n", name="bleu",
                                                   higher_is_better=True)[0]
    errors = errors_of(study, "item,system,score,document\next-0,sys1,1,doc-x\n", name="m", higher_is_better=True)
    assert errors == ["line 2: document: 'doc-x' but item 'ext-0' belongs to 'doc-0'"]
    errors = errors_of(study, '{"item": "ext-0", "system": "sys1", "score": 1}\n{oops\n[1]\n', file_name="s.jsonl",
                       name="m", higher_is_better=True)
    assert errors[0].startswith("line 2: not valid JSON") and errors[1].startswith("line 3: expected a JSON object")
    assert errors_of(study, "item,system,score\n", name="m", higher_is_better=True) == ["file: no score rows"]
    errors = errors_of(study, '{"item": "ext-0", "system": "sys1", "score": true}\n', file_name="s.jsonl", name="m",
                       higher_is_better=True)
    assert errors == ["line 1: score: True is not a finite number"]


def test_command_reports_errors_and_stores_nothing(study, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("item,system,score\next-0,sys1,1\next-0,nosys,2\n", encoding="utf-8")
    with pytest.raises(CommandError) as exc:
        call_command("import_scores", study.slug, str(bad), name="m", higher_is_better=True)
    assert "1 error(s), nothing stored" in str(exc.value) and "line 3: system: 'nosys'" in str(exc.value)
    assert not MetricScore.objects.exists()
    good = tmp_path / "good.csv"
    good.write_text("item,system,score\next-0,sys1,1\next-1,sys1,2\n", encoding="utf-8")
    out = StringIO()
    call_command("import_scores", study.slug, str(good), "--name", "m", "--lower-is-better", stdout=out)
    assert out.getvalue().strip() == "m: 2 scores stored (lower is better)"
    assert Evaluator.objects.get(name="m").higher_is_better is False
    with pytest.raises(CommandError, match="no study with slug 'nope'"):
        call_command("import_scores", "nope", str(good), name="m")
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_scores", study.slug, str(tmp_path / "missing.csv"), name="m")


def test_nul_and_lone_surrogates_are_refused_by_line(study):
    """Never stored: PostgreSQL refuses both with a traceback, SQLite keeps them (docs/study-file.md)."""
    content = "item,system,score,name\next-0,sys1,0.5,me\x00tric\n"
    assert errors_of(study, content) == ["line 2: contains a NUL character (U+0000)"]
    jsonl = json.dumps({"item": "ext-0", "system": "sys1", "score": 0.5, "name": "m\ud800"}) + "\n"
    [error] = errors_of(study, jsonl, file_name="s.jsonl")
    assert error.startswith("line 1: name: contains a lone surrogate (U+D800)")
    assert errors_of(study, "item,system,score\next-0,sys1,0.5\n", name="x\x00") == [
        "name: contains a NUL character (U+0000)"]
