"""``invite SLUG --ids FILE``: one invitation per participant id, the id kept as the annotator's external id."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Annotator
from annotation.handout.services import annotators_create
from tests.factories import make_study

pytestmark = pytest.mark.django_db


def test_ids_file_gives_one_link_per_id(tmp_path):
    study = make_study(slug="inv", n_items=2)
    ids = tmp_path / "ids.txt"
    ids.write_text("P-001\n\n  P-002  \nP-003\n")
    out = io.StringIO()
    call_command("invite", "inv", "--ids", str(ids), "--base-url", "https://x.example", stdout=out)
    lines = out.getvalue().splitlines()
    assert [line.split("\t")[0] for line in lines] == ["P-001", "P-002", "P-003"]
    assert all(line.split("\t")[1].startswith("https://x.example/") for line in lines)
    stored = list(Annotator.objects.filter(study=study).order_by("sequence").values_list("external_id", flat=True))
    assert stored == ["P-001", "P-002", "P-003"]
    # Each link is that annotator's own.
    for line, annotator in zip(lines, Annotator.objects.filter(study=study).order_by("sequence")):
        assert annotator.token in line.split("\t")[1]


@pytest.mark.parametrize("content, message", [
    ("A\nB\nA\n", "line 3: id 'A' repeats line 1"),
    ("A\n" + "x" * 201 + "\n", "line 2: id longer than 200"),
    ("A\nB\x01C\n", "line 2: id has a control character"),
    ("\n\n", "the file has no id"),
    ("OLD\n", "line 1: id 'OLD' already has an invitation"),
])
def test_bad_ids_are_named_by_line_and_nothing_is_created(tmp_path, content, message):
    study = make_study(slug="bad", n_items=2)
    annotators_create(study=study, external_ids=["OLD"])
    path = tmp_path / "ids.txt"
    path.write_text(content)
    with pytest.raises(CommandError, match=message):
        call_command("invite", "bad", "--ids", str(path), stdout=io.StringIO())
    assert Annotator.objects.filter(study=study).count() == 1


def test_missing_ids_file_is_named(tmp_path):
    make_study(slug="nofile", n_items=2)
    with pytest.raises(CommandError, match="no such file"):
        call_command("invite", "nofile", "--ids", str(tmp_path / "none.txt"), stdout=io.StringIO())
