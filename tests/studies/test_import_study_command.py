"""The study file and `import_study`: validation names item and field, nothing stored on error."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from studies.importing.study_file import StudyFileError, parse_study, read_items_file
from studies.models import Candidate, Item, Study
from tests.factories import study_file

# The imports are owned by the server's only superuser (no --user; docs/access.md).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_user")]


def write(tmp_path, data, name="study.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def test_import_prints_the_slug_and_stores_items_and_candidates(tmp_path, capsys):
    call_command("import_study", write(tmp_path, study_file(slug="ok", n_items=4, n_candidates=3)))
    assert capsys.readouterr().out.strip() == "ok"
    study = Study.objects.get(slug="ok")
    assert study.items.filter(is_spam=False).count() == 4
    assert Candidate.objects.filter(item__study=study).count() == 12
    assert Candidate.objects.filter(item__study=study, is_reference=True).count() == 4


def test_every_error_is_named_by_item_and_field_and_nothing_is_stored(tmp_path):
    data = study_file(slug="bad", n_items=3)
    data["settings"]["redundancy"] = "three"
    data["settings"]["colour"] = "blue"
    data["items"][0]["candidates"][1]["text"] = ""
    data["items"][1]["candidates"][0]["highlights"] = [[5, 500]]
    data["items"][2]["id"] = "ext-0"
    data["items"][2]["candidates"][1]["system"] = "reference"
    with pytest.raises(CommandError) as exc:
        call_command("import_study", write(tmp_path, data))
    message = str(exc.value)
    for expected in ("settings.redundancy", "settings.colour", "item ext-0.candidates[1].text",
                     "item ext-1.candidates[0].highlights[0]", "item ext-0.id: duplicate id",
                     "candidates[1].system: duplicate system"):
        assert expected in message, expected
    assert not Study.objects.exists() and not Item.objects.exists()


def test_malformed_json_names_the_line(tmp_path):
    with pytest.raises(CommandError, match="line 2"):
        call_command("import_study", write(tmp_path, '{"slug": "x",\n  "title": }'))
    assert not Study.objects.exists()


@pytest.mark.parametrize("slug, fragment", [("import", "reserved"), ("Not A Slug", "lowercase")])
def test_bad_slugs_are_refused(slug, fragment):
    with pytest.raises(StudyFileError) as exc:
        parse_study(study_file(slug=slug))
    assert any(e.startswith("slug:") and fragment in e for e in exc.value.errors)


def test_existing_slug_is_refused():
    parse = parse_study(study_file(slug="dup"))
    from studies.importing.study_file import study_create
    study_create(parsed=parse)
    with pytest.raises(StudyFileError, match="already exists"):
        parse_study(study_file(slug="dup"))


def test_judgment_study_needs_labels_and_ranking_items_two_candidates():
    data = study_file(protocol="judgment", n_candidates=1)
    with pytest.raises(StudyFileError, match="settings.labels"):
        parse_study(data)
    with pytest.raises(StudyFileError, match="at least 2 candidates"):
        parse_study(study_file(n_candidates=1))


def test_items_from_jsonl_and_csv(tmp_path):
    data = study_file(slug="jl", n_items=3)
    items = data.pop("items")
    jsonl = write(tmp_path, "\n".join(json.dumps(i) for i in items), "items.jsonl")
    call_command("import_study", write(tmp_path, data), items=jsonl)
    assert Study.objects.get(slug="jl").items.filter(is_spam=False).count() == 3

    csv_text = ("id,document_id,position,target_context,system,text,is_reference,highlights\n"
                "c1,d1,0,Un. ||| Deux.,reference,Le chat dort.,true,\"[[0, 2]]\"\n"
                "c1,d1,0,,mt,Il chat dort.,false,\n")
    parsed = read_items_file("items.csv", csv_text)
    assert parsed == [{"id": "c1", "document_id": "d1", "position": 0, "target_context": ["Un.", "Deux."],
                       "candidates": [{"system": "reference", "text": "Le chat dort.", "is_reference": True,
                                       "highlights": [[0, 2]]},
                                      {"system": "mt", "text": "Il chat dort.", "is_reference": False}]}]


def test_bad_jsonl_and_csv_lines_are_named():
    with pytest.raises(StudyFileError) as exc:
        read_items_file("items.jsonl", '{"id": "a"}\n{oops\n')
    assert exc.value.errors == [exc.value.errors[0]] and exc.value.errors[0].startswith("line 2:")
    with pytest.raises(StudyFileError, match="missing column"):
        read_items_file("items.csv", "id,text\nx,y\n")
    with pytest.raises(StudyFileError, match="line 2: is_reference"):
        read_items_file("items.csv", "id,system,text,is_reference\nx,s,t,maybe\n")


def test_csv_rows_shorter_or_longer_than_the_header_are_named():
    """A short row once crashed the import (None.strip()) instead of naming its line."""
    with pytest.raises(StudyFileError) as exc:
        read_items_file("items.csv", "system,text,id\nA,hello\nB,hi,x\nC,hey,x,extra\n")
    assert exc.value.errors == ["line 2: 3 columns expected, like the header",
                                "line 4: 3 columns expected, like the header"]


def test_values_too_long_or_out_of_range_for_their_columns_are_named_and_nothing_is_stored(tmp_path):
    """They once escaped validation: a traceback (ValidationError, or PostgreSQL's DataError) instead of the list."""
    data = study_file(slug="limits", n_items=4, settings={"spam_rate": 0.5})
    data["title"] = "t" * 201
    data["settings"].update(completion_code="c" * 65, reservation_minutes=-1, seed=2**70)
    data["items"][0]["id"] = "e" * 196  # its spam copy "<id>~spam" would not fit
    data["items"][1]["phenomenon"] = "p" * 101
    data["items"][1]["candidates"][1]["system"] = "S" * 101
    data["items"][2]["position"] = 2**31
    data["items"][3]["id"] = "ext-0~spam"  # the name of ext-0's spam copy
    with pytest.raises(CommandError) as exc:
        call_command("import_study", write(tmp_path, data))
    message = str(exc.value)
    for fragment in ("title: Ensure this value has at most 200 characters",
                     "settings.completion_code: Ensure this value has at most 64 characters",
                     "settings.reservation_minutes: Ensure this value is greater than or equal to 0",
                     "settings.seed: Ensure this value is less than or equal to",
                     f"item {'e' * 196}.id: at most 195 characters",
                     "item ext-1.phenomenon: Ensure this value has at most 100 characters",
                     "item ext-1.candidates[1].system: Ensure this value has at most 100 characters",
                     "item ext-2.position: must be between",
                     "item ext-0~spam.id: ids ending in '~spam' are reserved"):
        assert fragment in message, fragment
    assert not Study.objects.exists() and not Item.objects.exists()


def test_import_of_a_file_nested_1000_deep_names_the_line_and_stores_nothing(tmp_path):
    data = json.dumps(study_file(slug="deep", n_items=2))
    data = data[:-1] + ',\n"metadata": ' + "[" * 1000 + "]" * 1000 + "}"  # a RecursionError for json.loads
    with pytest.raises(CommandError, match=r"line 2, column \d+: nested deeper than 64 levels; nothing stored"):
        call_command("import_study", write(tmp_path, data))
    assert not Study.objects.exists()


def test_items_file_line_nested_too_deep_is_named():
    deep = '{"id": "a", "metadata": ' + "[" * 100 + "]" * 100 + "}"
    with pytest.raises(StudyFileError) as error:
        read_items_file("items.jsonl", '{"id": "ok"}\n' + deep + "\n")
    assert error.value.errors == ["line 2, column 88: nested deeper than 64 levels"]


def test_the_import_is_owned_by_user_or_the_only_superuser(tmp_path, admin_user, django_user_model):
    """No study is ownerless: an import without --user used to have no owner (every staff account managed it)."""
    call_command("import_study", write(tmp_path, study_file(slug="mine", n_items=2)), stdout=io.StringIO())
    assert Study.objects.get(slug="mine").owner == admin_user
    alice = django_user_model.objects.create_user("alice", password=None, is_staff=True)
    call_command("import_study", write(tmp_path, study_file(slug="hers", n_items=2)), "--user", "alice",
                 stdout=io.StringIO())
    assert Study.objects.get(slug="hers").owner == alice


def test_with_several_superusers_or_none_the_import_needs_user(tmp_path, admin_user, django_user_model):
    django_user_model.objects.create_superuser("root2", password=None)
    with pytest.raises(CommandError) as refused:
        call_command("import_study", write(tmp_path, study_file(slug="which", n_items=2)), stdout=io.StringIO())
    assert "--user: give the new study's owner" in str(refused.value)
    assert "several superusers (admin, root2)" in str(refused.value)
    django_user_model.objects.filter(is_superuser=True).update(is_superuser=False)
    with pytest.raises(CommandError) as refused:
        call_command("import_study", write(tmp_path, study_file(slug="which", n_items=2)), stdout=io.StringIO())
    assert "no superuser to own it" in str(refused.value)
    assert not Study.objects.filter(slug="which").exists()
