"""Bad input, everywhere: NUL, lone surrogates, NaN/Infinity, directories, undecodable arguments, huge counts.

The import page (preview and Create), ``import_study``, ``import_judgments`` and ``invite`` refuse each
with a message naming the field, line or argument, store nothing, and never show a traceback — on
SQLite and PostgreSQL alike (run with DATABASE_URL=postgres://… for the latter).
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import Annotator, Judgment
from annotation.handout.services import MAX_INVITATIONS, annotators_create
from config.safetext import json_problem
from research.views.studies import IMPORT_SESSION_KEY
from studies.models import Candidate, Item, Study
from tests.factories import make_study, study_file

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_user")]  # imports are owned by the only superuser
ROOT = Path(__file__).resolve().parents[2]


def _bad_files() -> list[tuple[str, Any, str]]:
    """(case, a study-file dict with one bad value, the field the error must name)."""
    nul_title = study_file(slug="bad-nul")
    nul_title["title"] = "Study\x00"
    surrogate = study_file(slug="bad-sur")
    surrogate["items"][1]["candidates"][2]["text"] = "half of a pair \ud800"
    nan = study_file(slug="bad-nan", settings={"min_seconds": float("nan")})
    inf = study_file(slug="bad-inf", settings={"spam_rate": float("inf")})
    meta = study_file(slug="bad-meta")
    meta["items"][0]["metadata"] = {"note\x00": 1, "score": float("-inf")}
    return [("NUL", nul_title, "title"), ("surrogate", surrogate, "items[1].candidates[2].text"),
            ("NaN", nan, "settings.min_seconds"), ("Infinity", inf, "settings.spam_rate"),
            ("metadata", meta, "items[0].metadata")]


BAD_FILES = _bad_files()
CASES = [pytest.param(data, where, id=case) for case, data, where in BAD_FILES]


def _nothing_stored() -> None:
    assert not Study.objects.exists() and not Item.objects.exists() and not Candidate.objects.exists()


def test_json_problem_names_non_finite_numbers():
    assert json_problem({"settings": {"min_seconds": float("nan")}}) == (
        "settings.min_seconds", "settings.min_seconds is not a finite number (nan: NaN and Infinity are not JSON "
        "numbers).")
    assert json_problem([1.5, -0.0, 10**400]) is None  # a big int is an int, not Infinity


@pytest.mark.parametrize(("data", "where"), CASES)
def test_import_study_refuses_and_names_the_field(tmp_path, data, where):
    path = tmp_path / "study.json"
    path.write_text(json.dumps(data), encoding="utf-8")  # NaN/Infinity written as Python's json writes them
    with pytest.raises(CommandError) as raised:
        call_command("import_study", str(path), stdout=io.StringIO(), stderr=io.StringIO())
    assert "nothing stored" in str(raised.value) and f"\n  {where}" in str(raised.value)
    _nothing_stored()


def test_import_study_refuses_1e999_and_a_directory_and_undecodable_files(tmp_path):
    data = study_file(slug="big")
    path = tmp_path / "study.json"
    path.write_text(json.dumps(data).replace('"redundancy": 2', '"redundancy": 2, "min_seconds": 1e999'))
    with pytest.raises(CommandError, match=r"settings\.min_seconds: is not a finite number \(inf"):
        call_command("import_study", str(path), stdout=io.StringIO(), stderr=io.StringIO())
    with pytest.raises(CommandError, match="is a directory; give one file"):
        call_command("import_study", str(tmp_path), stdout=io.StringIO())
    items = tmp_path / "items.jsonl"
    items.mkdir()
    path.write_text(json.dumps(data))
    with pytest.raises(CommandError, match="--items: .*items.jsonl: is a directory"):
        call_command("import_study", str(path), "--items", str(items), stdout=io.StringIO())
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes(b'{\n"title": "caf\xe9"}')
    with pytest.raises(CommandError, match="line 2: not UTF-8 text"):
        call_command("import_study", str(latin1), stdout=io.StringIO())
    with pytest.raises(CommandError, match="holds the byte 0xFF, which is not UTF-8 text"):
        call_command("import_study", str(tmp_path / "s\udcff.json"), stdout=io.StringIO())
    _nothing_stored()


def _upload(data: Any) -> SimpleUploadedFile:
    return SimpleUploadedFile("s.json", json.dumps(data).encode())


@pytest.mark.parametrize(("data", "where"), CASES)
def test_import_page_preview_refuses_and_names_the_field(staff, data, where):
    response = staff.post(reverse("studies:import"), {"step": "preview", "study_file": _upload(data)})
    assert response.status_code == 400
    assert where in {e["where"] for e in response.context["errors"]}
    response.content.decode("utf-8")  # the page itself is valid text (a lone surrogate gave a 500)
    _nothing_stored()


@pytest.mark.parametrize(("data", "where"), CASES)
def test_import_page_create_refuses_what_an_earlier_preview_let_through(staff, data, where):
    """A preview made before this check (NaN passed it, then Create answered 500) cannot create the study."""
    session = staff.session
    session[IMPORT_SESSION_KEY] = {"study_text": json.dumps(data), "items_name": "", "items_text": ""}
    session.save()
    response = staff.post(reverse("studies:import"), {"step": "create"})
    assert response.status_code == 400
    assert where in {e["where"] for e in response.context["errors"]}
    _nothing_stored()


def _export_csv(slug: str) -> str:
    out = io.StringIO()
    call_command("export_judgments", slug, stdout=out)
    return out.getvalue()


def _judged(slug: str) -> Study:
    from annotation.items.selectors import ordered_candidates
    from annotation.handout.services import assignment_next, judgment_submit

    study = make_study(slug=slug, n_items=2, settings={"redundancy": 1})
    (annotator,) = annotators_create(study=study)
    while (assignment := assignment_next(annotator=annotator)) is not None:
        ranks = {c.public_id: k + 1 for k, c in enumerate(ordered_candidates(assignment))}
        judgment_submit(assignment=assignment, payload={"ranks": ranks})
    return study


def _import_fails(path: Path, *args: str) -> str:
    before = (Study.objects.count(), Judgment.objects.count(), Annotator.objects.count())
    with pytest.raises(CommandError) as raised:
        call_command("import_judgments", str(path), *args, stdout=io.StringIO(), stderr=io.StringIO())
    assert (Study.objects.count(), Judgment.objects.count(), Annotator.objects.count()) == before
    return str(raised.value)


def test_import_judgments_refuses_nul_surrogates_and_nan_by_line(tmp_path):
    _judged("src")
    lines = _export_csv("src").splitlines()
    csv_path = tmp_path / "nul.csv"
    csv_path.write_text("\n".join([*lines[:2], lines[2].replace("src", "src\x00", 1), *lines[3:]]) + "\n")
    message = _import_fails(csv_path, "--format", "export", "--slug", "copy1")
    assert "nul.csv: line 3: contains a NUL character (U+0000)" in message

    out = io.StringIO()
    call_command("export_judgments", "src", "--format", "jsonl", stdout=out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    for case, value, field in (("nul", "a\x00", "annotator"), ("sur", "\udc80x", "system"),
                               ("nan", float("nan"), "duration_ms")):
        bad = [dict(row) for row in rows]
        bad[1][field] = value
        path = tmp_path / f"{case}.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in bad) + "\n")
        message = _import_fails(path, "--format", "export", "--slug", f"copy-{case}")
        assert f"{case}.jsonl: line 2: {field}: " in message, message

    tsv = tmp_path / "mqm.tsv"
    tsv.write_text("system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"
                   "A\td\t1\t1\tr1\tSrc\tTgt\x00\tNo-error\tNo-error\n")
    assert "mqm.tsv: line 2: contains a NUL" in _import_fails(tsv, "--format", "mqm-tsv", "--slug", "mqm")
    assert "is a directory; give one file" in _import_fails(tmp_path, "--format", "export")
    assert "--slug: “x\\u0000” contains a NUL" in _import_fails(csv_path.with_name("nul.csv"), "--format", "scores",
                                                     "--slug", "x\x00")


def test_commands_refuse_undecodable_slugs_and_users():
    make_study(slug="s1", n_items=2)
    for command in ("quality", "export_judgments", "invite", "agreement", "evaluate", "copy_study"):
        args = ["--evaluator", "bleu"] if command == "evaluate" else []
        with pytest.raises(CommandError, match=r"slug: “\\udcff” holds the byte 0xFF, which is not UTF-8 text"):
            call_command(command, "\udcff", *args, stdout=io.StringIO(), stderr=io.StringIO())
    with pytest.raises(CommandError, match=r"slug: “s1\\u0000” contains a NUL character"):
        call_command("quality", "s1\x00", stdout=io.StringIO())
    with pytest.raises(CommandError, match=r"--user: “\\ud800” contains a lone surrogate"):
        call_command("quality", "s1", "--user", "\ud800", stdout=io.StringIO())


def test_an_undecodable_argv_byte_is_one_line_not_a_traceback():
    """``manage.py quality $'\\xff'`` from a shell: the byte reaches Python as U+DCFF (PEP 383)."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    result = subprocess.run([sys.executable, str(ROOT / "manage.py"), "quality", b"\xff"], cwd=ROOT, env=env,
                            capture_output=True, timeout=120)
    assert result.returncode == 1
    stderr = result.stderr.decode("utf-8", "backslashreplace")
    assert "Traceback" not in stderr and "slug:" in stderr and "0xFF, which is not UTF-8 text" in stderr


def test_invite_count_is_bounded():
    study = make_study(slug="inv", n_items=2)
    for count in (1_000_000_000, MAX_INVITATIONS + 1, 0):
        with pytest.raises(CommandError, match=f"--count: must be between 1 and {MAX_INVITATIONS}"):
            call_command("invite", "inv", "--count", str(count), stdout=io.StringIO(), stderr=io.StringIO())
    with pytest.raises(ValueError, match="one call creates 0 to"):
        annotators_create(study=study, count=MAX_INVITATIONS + 1)
    assert not Annotator.objects.exists()


def test_invite_ids_over_the_bound_and_a_directory(tmp_path):
    make_study(slug="inv", n_items=2)
    path = tmp_path / "ids.txt"
    path.write_text("".join(f"P{k}\n" for k in range(MAX_INVITATIONS + 1)))
    with pytest.raises(CommandError, match=f"{MAX_INVITATIONS + 1} ids; one call invites at most"):
        call_command("invite", "inv", "--ids", str(path), stdout=io.StringIO(), stderr=io.StringIO())
    with pytest.raises(CommandError, match="--ids: .*: is a directory"):
        call_command("invite", "inv", "--ids", str(tmp_path), stdout=io.StringIO(), stderr=io.StringIO())
    assert not Annotator.objects.exists()
