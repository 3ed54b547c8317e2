"""``import_judgments FILE --format export``: this tool's export loaded elsewhere gives the same report."""
from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.importing.judgments import JudgmentImportError, judgments_import
from annotation.models import Annotator, Judgment
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.models import Item, Study
from tests.factories import make_study, study_file
from tests.report_study import report_numbers

# The imports are owned by the server's only superuser (no --user; docs/access.md).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_user")]


def judge(study: Study, n_annotators: int, answer) -> None:
    for k, annotator in enumerate(annotators_create(study=study, count=n_annotators)):
        while (assignment := assignment_next(annotator=annotator)) is not None:
            judgment_submit(assignment=assignment, payload=answer(k, assignment, ordered_candidates(assignment)))


def ranking_answer(k: int, assignment, candidates) -> dict:
    order = sorted(candidates, key=lambda c: (c.system if (assignment.item.pk + k) % 3 else c.system[::-1]))
    return {"ranks": {c.public_id: order.index(c) + 1 for c in candidates}}


def report(slug: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command("agreement", slug, json=True, stdout=out)
    data = json.loads(out.getvalue())
    return _strip(data)


def _strip(value: Any) -> Any:
    """The report without names that differ by design (the study's slug, annotator codes, times of the run)."""
    if isinstance(value, dict):
        stripped = {k: _strip(v) for k, v in value.items()
                    if k not in ("study", "slug", "generated_at", "rater_a", "rater_b", "annotator", "title")}
        if "pairwise_cohen_kappa" in stripped:  # listed by annotator code, which an import may change
            stripped["pairwise_cohen_kappa"] = sorted(stripped["pairwise_cohen_kappa"], key=json.dumps)
        return stripped
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def same(a: Any, b: Any) -> bool:
    """Equal, floats to 1e-12 (sums over raters in another order differ in the last bit)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-12, abs=1e-12)
    return a == b


def export(slug: str, fmt: str, history: bool = False) -> str:
    out = io.StringIO()
    call_command("export_judgments", slug, "--format", fmt, *(["--history"] if history else []), stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_then_import_gives_the_same_report(tmp_path, fmt):
    study = make_study(slug="orig", n_items=8, settings={"redundancy": 3, "spam_rate": 0.2})
    judge(study, 4, ranking_answer)
    assert Item.objects.filter(study=study, is_spam=True).exists()
    path = tmp_path / f"orig.{fmt}"
    path.write_text(export("orig", fmt))
    data_file = tmp_path / "study.json"
    data_file.write_text(json.dumps(study_file(slug="orig", n_items=8, settings={"redundancy": 3, "spam_rate": 0.2})))
    out = io.StringIO()
    call_command("import_judgments", str(path), "--format", "export", "--slug", "copy", "--study-file",
                 str(data_file), stdout=out)
    assert out.getvalue().strip() == "copy"
    copy = Study.objects.get(slug="copy")
    assert copy.status == "closed" and "sha256" in copy.description and f"orig.{fmt}" in copy.description
    assert Judgment.objects.filter(assignment__item__study=copy).count() == \
        Judgment.objects.filter(assignment__item__study=study).count()
    assert same(report_numbers(report("copy")), report_numbers(report("orig")))
    # Exporting the copy gives the same rows, but for the study's slug, the judgments' public ids and, where
    # the original codes are taken on this server, the annotators' codes (the original code is kept as the
    # annotator's external id).
    codes = dict(Annotator.objects.filter(study=copy).values_list("code", "external_id"))

    def rows(text: str, rename: dict[str, str]) -> list[tuple]:
        table = list(csv.DictReader(io.StringIO(text)))
        return sorted(tuple((k, rename.get(v, v) if k == "annotator" else v) for k, v in row.items()
                            if k not in ("study", "judgment")) for row in table)

    a, b = rows(export("copy", "csv"), codes), rows(export("orig", "csv"), {})
    xa = [dict(x) for x in a if x not in b]
    xb = [dict(x) for x in b if x not in a]
    diffs = [(k, xa[0][k], xb[0][k]) for k in xa[0] if xa[0][k] != xb[0][k]] if xa else []
    assert diffs == [], (len(xa), diffs)
    # Nothing is handed out from an imported study.
    assert assignment_next(annotator=annotators_create(study=copy)[0]) is None


def test_choice_and_labels_and_history_round_trip(tmp_path):
    choice = make_study(slug="ch", protocol="choice", n_items=5, n_candidates=2,
                        settings={"redundancy": 2, "options": ["neither", "invalid"]})

    def pick(k, assignment, candidates):
        return {"choice": candidates[0].public_id if (assignment.item.pk + k) % 3 else "neither"}

    judge(choice, 2, pick)
    # A revised answer: the history export has both revisions.
    first = Judgment.objects.filter(assignment__item__study=choice).first()
    assert first is not None
    judgment_submit(assignment=first.assignment, payload={"choice": "invalid"})
    path = tmp_path / "ch.csv"
    path.write_text(export("ch", "csv", history=True))
    call_command("import_judgments", str(path), "--format", "export", "--slug", "ch2", stdout=io.StringIO())
    copy = Study.objects.get(slug="ch2")
    assert copy.owner is not None and copy.owner.is_superuser  # the server's only superuser (no --user)
    assert set(copy.options) >= {"neither", "invalid"}
    assert Judgment.objects.filter(assignment__item__study=copy, is_current=False).count() == 1
    assert same(report_numbers(report("ch2")), report_numbers(report("ch")))
    assert {c.text for c in copy.items.first().candidates.all()} == {"(text not in the imported file)"}

    labels = make_study(slug="lab", protocol="judgment", n_items=4,
                        settings={"redundancy": 2, "labels": ["Correct", "Wrong"], "multi_label": False})
    judge(labels, 2, lambda k, a, c: {"label": "Correct" if (a.item.pk + k) % 2 else "Wrong"})
    path = tmp_path / "lab.jsonl"
    path.write_text(export("lab", "jsonl"))
    call_command("import_judgments", str(path), "--format", "export", "--slug", "lab2", stdout=io.StringIO())
    assert same(report_numbers(report("lab2")), report_numbers(report("lab")))


def test_client_durations_survive_the_round_trip(tmp_path):
    """The client's figure (issue 14's last export column) is read back; the server's duration too."""
    study = make_study(slug="cd", n_items=2, settings={"redundancy": 1})
    annotator = annotators_create(study=study)[0]
    for seconds in (7, None):
        assignment = assignment_next(annotator=annotator)
        payload = ranking_answer(0, assignment, ordered_candidates(assignment))
        if seconds:
            payload |= {"client_started_at": "2026-01-01T10:00:00Z", "client_submitted_at": f"2026-01-01T10:00:0{seconds}Z"}
        judgment_submit(assignment=assignment, payload=payload)
    path = tmp_path / "cd.csv"
    path.write_text(export("cd", "csv"))
    call_command("import_judgments", str(path), "--format", "export", "--slug", "cd2", stdout=io.StringIO())

    def pairs(slug: str) -> list[tuple[int | None, int | None]]:
        return sorted(Judgment.objects.filter(assignment__item__study__slug=slug)
                      .values_list("duration_ms", "client_duration_ms"), key=str)

    assert pairs("cd2") == pairs("cd") and {c for _, c in pairs("cd2")} == {7000, None}


def _rows(tmp_path) -> list[str]:
    study = make_study(slug="src", n_items=3, settings={"redundancy": 1, "spam_rate": 0.0})
    judge(study, 1, ranking_answer)
    return export("src", "csv").splitlines()


def _set_cell(header: str, row: str, column: str, value: str) -> str:
    """The CSV row with one column's cell replaced (rows of these tests have no quoted commas before it)."""
    cells = row.split(",")
    cells[header.split(",").index(column)] = value
    return ",".join(cells)


@pytest.mark.parametrize("mutate, message", [
    (lambda h, r: [h, r[0].replace(",true,", ",maybe,", 1)] + r[1:], "line 2: is_reference: 'maybe' is not true/false"),
    (lambda h, r: [h.replace("started_at", "begun_at")] + r, "line 1: missing column(s) started_at"),
    (lambda h, r: [h] + r + [r[0].replace("2026", "20x6").replace("2025", "20x5")], "is not an ISO 8601 time"),
    (lambda h, r: [h, r[0].replace(",ext-", ",,", 1)] + r[1:], "line 2: item is empty"),
    (lambda h, r: [h] + r + [r[0]], "lists a system twice"),
    (lambda h, r: [h, _set_cell(h, r[0], "client_duration_ms", "-5")] + r[1:],
     "line 2: client_duration_ms -5 is out of range"),
])
def test_bad_rows_are_named_and_nothing_is_stored(tmp_path, mutate, message):
    header, *rows = _rows(tmp_path)
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(mutate(header, rows)) + "\n")
    n_studies, n_annotators = Study.objects.count(), Annotator.objects.count()
    with pytest.raises(CommandError, match=re.escape(message)) as exc:
        call_command("import_judgments", str(path), "--format", "export", "--slug", "bad", stdout=io.StringIO())
    assert exc.value.returncode == 2
    assert Study.objects.count() == n_studies and Annotator.objects.count() == n_annotators


def test_unknown_formats_and_taken_slugs_are_named(tmp_path):
    path = tmp_path / "x.tsv"
    path.write_text("a\tb\n")
    # Every format is read now (the score formats: tests/annotation/test_import_formats.py); the library call
    # still names a format it does not know.
    with pytest.raises(JudgmentImportError, match="'xml' is not one of export"):
        judgments_import(name="x.tsv", content="a\tb\n", fmt="xml", slug="x")
    make_study(slug="taken", n_items=1)
    with pytest.raises(CommandError, match="a study 'taken' exists already"):
        call_command("import_judgments", str(path), "--format", "export", "--slug", "taken", stdout=io.StringIO())
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_judgments", str(tmp_path / "none.csv"), "--format", "export", stdout=io.StringIO())


def test_import_judgments_is_owned_by_user_and_refuses_to_guess(tmp_path, django_user_model):
    source = make_study(slug="src", protocol="choice", n_items=2, n_candidates=2,
                        settings={"redundancy": 1, "options": ["neither"]}, owner=None)
    judge(source, 1, lambda k, a, c: {"choice": "neither"})
    path = tmp_path / "src.csv"
    path.write_text(export("src", "csv"))
    alice = django_user_model.objects.create_user("alice", password=None, is_staff=True)
    call_command("import_judgments", str(path), "--format", "export", "--slug", "a1", "--user", "alice",
                 stdout=io.StringIO())
    assert Study.objects.get(slug="a1").owner == alice
    django_user_model.objects.create_superuser("root2", password=None)
    with pytest.raises(CommandError) as refused:
        call_command("import_judgments", str(path), "--format", "export", "--slug", "a2", stdout=io.StringIO())
    assert "several superusers" in str(refused.value) and not Study.objects.filter(slug="a2").exists()
    assert Study.objects.get(slug="src").owner is None  # importing its judgments does not claim the source
