"""Every CSV the product writes is safe to open in a spreadsheet (OWASP's CSV injection rule), and reads back.

A text cell starting with = + - @, a tab or a carriage return gets a leading "'" (formats/csvcells.py);
numbers written as numbers stay as they are; ``--raw`` writes the cells as stored; the product's own
readers (``import_judgments --format export``, ``agreement --judgments``) undo the escaping.
"""
from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Judgment
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.access.audit import audit
from formats.csvcells import csv_writer, escape_cell, unescape_cell
from studies.importing.study_file import study_import
from studies.models import Item, Study
from tests.factories import study_file

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_user")]  # imports are owned by the only superuser

FORMULA_ITEM = "@SUM(1+1)*cmd"
CMD_ITEM = "=cmd"
FORMULA_ID = "=cmd|' /C calc'!A0"
DANGEROUS_SYSTEM = "-sys"


def _study(slug: str = "inj") -> Study:
    data = study_file(slug=slug, n_items=4, settings={"redundancy": 1, "spam_rate": 0})
    data["items"][0]["id"] = FORMULA_ITEM
    data["items"][1]["id"] = CMD_ITEM
    data["items"][2]["id"] = "'=already quoted"
    for item in data["items"]:
        item["candidates"][2]["system"] = DANGEROUS_SYSTEM
    study = study_import(data=data, status="open")
    (annotator,) = annotators_create(study=study, external_ids=[FORMULA_ID])
    while (assignment := assignment_next(annotator=annotator)) is not None:
        ranks = {c.public_id: k + 1 for k, c in enumerate(ordered_candidates(assignment))}
        judgment_submit(assignment=assignment, payload={"ranks": ranks})
    return study


def _body(response: Any) -> str:
    return b"".join(response.streaming_content).decode()


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def _assert_safe(text: str) -> None:
    bad = [cell for cell in _cells(text) if cell[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert bad == [], bad


@pytest.mark.parametrize(("value", "escaped"), [
    (FORMULA_ITEM, "'" + FORMULA_ITEM), (FORMULA_ID, "'" + FORMULA_ID), ("+1", "'+1"), ("-x", "'-x"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("'=x", "''=x"), ("''@x", "'''@x"),
    ("plain", "plain"), ("'quoted", "'quoted"), ("", ""), ("a=b", "a=b"), ("'", "'"),
])
def test_escape_cell_is_owasp_and_reversible(value, escaped):
    assert escape_cell(value) == escaped
    assert unescape_cell(escaped) == value


def test_numbers_stay_numbers():
    out = io.StringIO()
    csv_writer(out, lineterminator="\n").writerow([-0.5, -3, "-0.5", None, True])
    assert out.getvalue() == "-0.5,-3,'-0.5,,True\n"
    out = io.StringIO()
    csv_writer(out, raw=True, lineterminator="\n").writerow(["=x", -1])
    assert out.getvalue() == "=x,-1\n"


def _export(slug: str, *extra: str) -> str:
    out = io.StringIO()
    call_command("export_judgments", slug, *extra, stdout=out)
    return out.getvalue()


def test_export_command_escapes_and_raw_is_byte_exact():
    _study()
    text = _export("inj")
    _assert_safe(text)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {"'" + FORMULA_ITEM, "'" + CMD_ITEM, "''=already quoted"} <= {r["item"] for r in rows}
    assert "'" + DANGEROUS_SYSTEM in {r["system"] for r in rows}
    raw = list(csv.DictReader(io.StringIO(_export("inj", "--raw"))))
    assert {FORMULA_ITEM, CMD_ITEM, "'=already quoted"} <= {r["item"] for r in raw}
    assert DANGEROUS_SYSTEM in {r["system"] for r in raw}
    # Apart from the escaped cells, the two files are the same.
    assert [{k: unescape_cell(v) for k, v in r.items()} for r in rows] == raw


def test_export_round_trips_through_import_judgments(tmp_path):
    study = _study()
    path = tmp_path / "inj.csv"
    path.write_text(_export("inj"), encoding="utf-8")
    call_command("import_judgments", str(path), "--format", "export", "--slug", "inj-copy", stdout=io.StringIO())
    copy = Study.objects.get(slug="inj-copy")
    assert set(Item.objects.filter(study=copy).values_list("external_id", flat=True)) == \
        set(Item.objects.filter(study=study).values_list("external_id", flat=True))
    assert {FORMULA_ITEM, CMD_ITEM, "'=already quoted"} <= set(copy.items.values_list("external_id", flat=True))
    assert DANGEROUS_SYSTEM in set(copy.items.first().candidates.values_list("system", flat=True))
    assert Judgment.objects.filter(assignment__item__study=copy).count() == \
        Judgment.objects.filter(assignment__item__study=study).count()
    # The copy's export is the original's, escaped the same way (but for slug, judgment ids and annotator codes).
    def comparable(text: str) -> list[tuple]:
        return sorted((r["item"], r["system"], r["rank"]) for r in csv.DictReader(io.StringIO(text)))
    assert comparable(_export("inj-copy")) == comparable(_export("inj"))


def test_agreement_reads_an_escaped_export_back(tmp_path):
    _study()
    path = tmp_path / "inj.csv"
    path.write_text(_export("inj"), encoding="utf-8")
    from evaluators.reports.table_files import read_table
    frame = read_table(path)
    assert FORMULA_ITEM in set(frame["item"]) and DANGEROUS_SYSTEM in set(frame["system"])


def test_audit_csv_is_escaped(django_user_model):
    study = _study()
    audit(django_user_model.objects.create_user("=evil()", password="x"), "settings_changed", study, title="x")
    text = _export("inj", "--audit")
    _assert_safe(text)
    assert "'=evil()" in _cells(text)
    assert "=evil()" in _cells(_export("inj", "--audit", "--raw"))


def test_api_csv_links_csv_and_ratings_csv_are_escaped(client, admin_user):
    _study()
    api = APIClient()
    api.force_authenticate(admin_user)
    response = api.get(reverse("api-study-judgments", args=["inj"]) + "?format=csv")
    assert response.status_code == 200
    text = _body(response)
    _assert_safe(text)
    assert "'" + FORMULA_ITEM in _cells(text)

    client.force_login(admin_user)
    links = client.get(reverse("studies:links-csv", args=["inj"])).content.decode()
    _assert_safe(links)
    assert "'" + FORMULA_ID in _cells(links)

    response = client.get(reverse("evaluators:report-csv", args=["inj", "ratings"]))
    assert response.status_code == 200
    ratings = _body(response)
    _assert_safe(ratings)
    assert any(cell.startswith("'" + FORMULA_ITEM) for cell in _cells(ratings))
    assert "'" + DANGEROUS_SYSTEM in _cells(ratings)

    page = client.get(reverse("studies:export", args=["inj", "csv"]))
    assert page.status_code == 200
    _assert_safe(_body(page))


def test_mqm_tsv_is_written_as_stored_for_byte_compatibility(tmp_path):
    """Google's TSV is not escaped: a formula-like system, rater or text comes back byte for byte."""
    header = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity"
    rows = ["=sys\td1\t1\t1\t@rater\t-Quelle.\t=A <v>bad</v> text.\tAccuracy/Mistranslation\tMajor",
            "=sys\td1\t1\t2\t@rater\t+Zwei.\tTwo.\tNo-error\tNo-error"]
    source = tmp_path / "in.tsv"
    source.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    call_command("import_judgments", str(source), "--format", "mqm-tsv", "--slug", "tsv", stdout=io.StringIO(),
                 stderr=io.StringIO())
    out = tmp_path / "out.tsv"
    call_command("export_judgments", "tsv", "--format", "mqm-tsv", "--output", str(out), stderr=io.StringIO())
    written = out.read_text(encoding="utf-8").splitlines()
    assert written[1:] == rows
