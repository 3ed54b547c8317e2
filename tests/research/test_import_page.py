"""The admin-side "Import study" page: upload → preview (errors or summary) → create."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from studies.models import Candidate, Item, Study
from tests.factories import make_study, study_file

pytestmark = pytest.mark.django_db
URL = reverse("studies:import")


def upload(name: str, content: str | bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content.encode() if isinstance(content, str) else content)


def test_staff_only(client, django_user_model):
    assert client.get(URL).status_code == 302
    client.force_login(django_user_model.objects.create_user("u", password="x"))
    response = client.post(URL, {"step": "preview", "study_file": upload("s.json", json.dumps(study_file()))})
    assert response.status_code == 302 and not Study.objects.exists()


def test_linked_from_the_study_changelist(staff):
    make_study(slug="mine", n_items=1)  # a researcher without any study gets no admin module (docs/access.md)
    page = staff.get(reverse("admin:studies_study_changelist")).content.decode()
    assert f'href="{URL}"' in page and "Import study" in page


def test_valid_upload_previews_then_creates(staff):
    data = study_file(slug="up", n_items=10, n_candidates=3, phenomena=("it-sie", "they-sie"),
                      settings={"spam_rate": 0.2, "redundancy": 3})
    response = staff.post(URL, {"step": "preview", "study_file": upload("s.json", json.dumps(data))})
    assert response.status_code == 200
    summary = response.context["summary"]
    assert summary["n_items"] == 10 and summary["n_spam"] == 2 and summary["n_needed"] == 36
    assert summary["candidates_per_item"] == [(3, 10)]
    assert summary["systems"] == [("reference", 10), ("sys1", 10), ("sys2", 10)]
    assert summary["phenomena"] == [("it-sie", 5), ("they-sie", 5)]
    page = response.content.decode()
    assert "Create the study" in page and "it-sie" in page
    assert not Study.objects.exists()  # preview stores nothing
    created = staff.post(URL, {"step": "create"})
    assert created.status_code == 302 and created["Location"] == reverse("studies:detail", args=["up"])
    study = Study.objects.get(slug="up")
    assert study.items.filter(is_spam=False).count() == 10 and study.items.filter(is_spam=True).count() == 2
    assert Candidate.objects.filter(item__study=study, item__is_spam=False).count() == 30
    again = staff.post(URL, {"step": "create"})  # the preview is used up
    assert again.status_code == 302 and Study.objects.count() == 1


def test_several_errors_all_listed_nothing_stored(staff):
    data = study_file(slug="bad", n_items=3)
    data["settings"]["redundancy"] = 0
    data["items"][0]["candidates"][1]["text"] = ""
    data["items"][2]["candidates"][0]["highlights"] = [[5, 500]]
    data["items"][1]["id"] = "ext-0"
    response = staff.post(URL, {"step": "preview", "study_file": upload("s.json", json.dumps(data))})
    assert response.status_code == 400
    errors = {(e["where"], e["what"].split(" ")[0]) for e in response.context["errors"]}
    assert ("settings.redundancy", "must") in errors
    assert ("item ext-0.candidates[1].text", "required,") in errors
    assert ("item ext-2.candidates[0].highlights[0]", "span") in errors
    assert ("item ext-0.id", "duplicate") in errors
    page = response.content.decode()
    assert "5 problems" in page and "nothing was stored" in page and "item ext-2.candidates[0].highlights[0]" in page
    assert not Study.objects.exists() and not Item.objects.exists()
    assert staff.post(URL, {"step": "create"}).status_code == 302 and not Study.objects.exists()


def test_malformed_json_names_the_line(staff):
    text = '{\n  "slug": "x",\n  "title": "y"\n  "protocol": "ranking"\n}'
    response = staff.post(URL, {"step": "preview", "study_file": upload("s.json", text)})
    assert response.status_code == 400
    [error] = response.context["errors"]
    assert error["where"] == "study file" and error["what"].startswith("line 4,")
    assert not Study.objects.exists()


def test_not_utf8(staff):
    response = staff.post(URL, {"step": "preview", "study_file": upload("s.json", b"\xff\xfe{")})
    assert response.status_code == 400 and "not UTF-8" in response.context["errors"][0]["what"]


def test_missing_file_is_a_form_error(staff):
    response = staff.post(URL, {"step": "preview"})
    assert response.status_code == 400 and "study_file" in response.context["form"].errors


def test_items_as_csv(staff):
    header = {"slug": "csvs", "title": "CSV items", "protocol": "ranking", "settings": {"redundancy": 2}}
    csv_text = ("id,document_id,position,target_context,system,text,is_reference,highlights\n"
                "i1,d1,0,Hello. ||| How are you?,reference,I am fine.,true,\"[[0, 1]]\"\n"
                "i1,d1,0,,mt,Me fine am.,false,\n"
                "i2,d1,1,,reference,Thanks.,1,\n"
                "i2,d1,1,,mt,Thank.,0,\n")
    response = staff.post(URL, {"step": "preview", "study_file": upload("s.json", json.dumps(header)),
                                "items_file": upload("items.csv", csv_text)})
    assert response.status_code == 200, response.context["errors"]
    assert response.context["summary"]["n_items"] == 2 and response.context["summary"]["n_documents"] == 1
    staff.post(URL, {"step": "create"})
    item = Item.objects.get(study__slug="csvs", external_id="i1")
    assert item.target_context == ["Hello.", "How are you?"]
    assert list(item.candidates.values_list("system", "is_reference", "highlights")) == [
        ("reference", True, [[0, 1]]), ("mt", False, [])]


def test_items_as_jsonl_with_a_bad_line(staff):
    header = {"slug": "jl", "title": "JSONL", "protocol": "ranking"}
    good = json.dumps(study_file(n_items=1)["items"][0])
    response = staff.post(URL, {"step": "preview", "study_file": upload("s.json", json.dumps(header)),
                                "items_file": upload("items.jsonl", good + "\n{oops\n")})
    assert response.status_code == 400
    assert response.context["errors"][0]["where"] == "items file items.jsonl"
    assert response.context["errors"][0]["what"].startswith("line 2:")
    assert not Study.objects.exists()


def test_slug_taken_between_preview_and_create(staff):
    data = study_file(slug="race")
    staff.post(URL, {"step": "preview", "study_file": upload("s.json", json.dumps(data))})
    from studies.importing.study_file import study_import
    study_import(data=data)
    response = staff.post(URL, {"step": "create"})
    assert response.status_code == 400 and "already exists" in response.content.decode()
    assert Study.objects.count() == 1


def test_study_file_nested_too_deep_is_a_named_error(staff):
    text = '{"slug": "deep", "items": ' + "[" * 1000 + "]" * 1000 + "}"
    response = staff.post(URL, {"step": "preview", "study_file": upload("s.json", text)})
    assert response.status_code == 400
    [error] = response.context["errors"]
    assert error["where"] == "study file" and error["what"].startswith("line 1, column")
    assert "nested deeper than 64 levels" in response.content.decode()
    assert not Study.objects.exists()


def test_preview_shows_blinding_warnings_before_anything_is_created(staff):
    data = study_file(slug="blind", n_items=4, n_candidates=2, settings={"spam_rate": 0.2,
                      "instructions": "Judge only the highlighted words."})
    for item in data["items"]:
        item["candidates"][0]["text"] = "It’s the reference… really."
    response = staff.post(URL, {"step": "preview", "study_file": upload("s.json", json.dumps(data))})
    assert response.status_code == 200 and not Study.objects.exists()
    blinding = response.context["blinding"]
    assert {f.feature: f.n_separated for f in blinding.findings}["typographic_quotes"] == 4
    page = response.content.decode()
    assert "Blinding warnings" in page and "4 of 4" in page and "ext-0" in page
    assert "only the highlighted" in page  # the instructions clash with the spam items
    assert "Create the study" in page  # a warning, not an error
    assert staff.post(URL, {"step": "create"}).status_code == 302 and Study.objects.filter(slug="blind").exists()


def test_preview_without_a_reference_cue_shows_no_blinding_section(staff):
    response = staff.post(URL, {"step": "preview", "study_file": upload("s.json", json.dumps(study_file(slug="ok")))})
    assert response.context["blinding"].findings == [] and "Blinding warnings" not in response.content.decode()


def test_the_preview_names_redundancy_once_and_the_admin_form_has_the_same_range(staff):
    """The preview listed ``redundancy`` twice (summary and settings); the admin took 0-32767, the file 1-100."""
    import re

    from django import forms
    from django.core.exceptions import ValidationError

    from studies.forms import StudyAdminForm

    data = study_file(slug="once", n_items=4, settings={"redundancy": 7, "spam_rate": 0.0})
    page = staff.post(URL, {"step": "preview", "study_file": upload("s.json", json.dumps(data))}).content.decode()
    terms = re.findall(r"<dt>([^<]*)</dt>", page)
    assert [t for t in terms if "edundancy" in t] == ["Redundancy"]
    assert "spam_rate" not in terms
    assert re.search(r'<dd id="preview-redundancy">7 annotators judge each item</dd>', page)
    field = StudyAdminForm().fields["redundancy"]
    assert isinstance(field, forms.IntegerField) and (field.min_value, field.max_value) == (1, 100) and "(1–100)" in str(field.help_text)
    for bad in (0, 101, 500):
        assert not field.widget.attrs["min"] <= bad <= field.widget.attrs["max"]
        with pytest.raises(ValidationError):
            field.clean(bad)
    assert field.clean(100) == 100


# ---------------------------------------------------------------- "Select items": the study on the selected items
def _scores_csv(n_items: int, *, skip: tuple[str, str] | None = None) -> str:
    """chrF per (system, item): sys1 - sys2 grows with the item number, so metric_var ranks the last items first."""
    lines = ["system,segment,scorer,score"]
    for j in range(n_items):
        for system, value in (("sys1", 50 + j), ("sys2", 50 - j)):
            if skip != (system, f"ext-{j}"):
                lines.append(f"{system},ext-{j},chrF,{value}")
    return "\n".join(lines) + "\n"


def _select_post(data: dict, **fields: object) -> dict:
    return {"step": "preview", "study_file": upload("s.json", json.dumps(data)), **fields}


def test_select_items_previews_the_kept_items_and_creates_the_study_on_them(staff):
    data = study_file(slug="sel", n_items=10, n_candidates=3, settings={"spam_rate": 0.5})
    response = staff.post(URL, _select_post(data, select_method="metric_var", select_metric="chrF",
                                            select_budget="30%", scores_file=upload("chrf.csv", _scores_csv(10))))
    assert response.status_code == 200
    assert [row["id"] for row in response.context["selection"]["kept"]] == ["ext-9", "ext-8", "ext-7"]
    assert response.context["summary"]["n_items"] == 3
    page = response.content.decode()
    assert "Selected items: 3 of 10" in page and "<code>ext-9</code>" in page and "ext-0</code>" not in page
    assert not Study.objects.exists()  # the preview stores nothing
    created = staff.post(URL, {"step": "create"})
    assert created.status_code == 302
    study = Study.objects.get(slug="sel")
    real = set(study.items.filter(is_spam=False).values_list("external_id", flat=True))
    assert real == {"ext-7", "ext-8", "ext-9"}
    assert {i.spam_of.external_id for i in study.items.filter(is_spam=True).select_related("spam_of")} <= real
    record = study.provenance["selection"]
    assert (record["method"], record["metric"], record["n_kept"], record["n_total"]) == ("metric_var", "chrF", 3, 10)
    assert record["scores"]["file"] == "chrf.csv"


def test_without_a_selection_every_item_is_created_and_nothing_is_recorded(staff):
    staff.post(URL, _select_post(study_file(slug="all", n_items=4)))
    staff.post(URL, {"step": "create"})
    study = Study.objects.get(slug="all")
    assert study.items.filter(is_spam=False).count() == 4 and study.provenance == {}


def test_a_text_method_needs_no_score_file(staff):
    response = staff.post(URL, _select_post(study_file(slug="div", n_items=6), select_method="random",
                                            select_budget="2", select_seed="5"))
    assert response.status_code == 200 and len(response.context["selection"]["kept"]) == 2
    staff.post(URL, {"step": "create"})
    assert Study.objects.get(slug="div").provenance["selection"]["seed"] == 5


@pytest.mark.parametrize("fields, field, fragment", [
    ({"select_method": "metric_var", "select_metric": "chrF", "select_budget": "0"}, "select_budget", "at least 1"),
    ({"select_method": "metric_var", "select_metric": "chrF"}, "select_budget", "needs a budget"),
    ({"select_method": "best", "select_budget": "3"}, "select_method", "not one of the available choices"),
    ({"select_method": "metric_var", "select_budget": "3"}, "select_metric", "needs a metric"),
    ({"select_method": "metric_var", "select_metric": "comet", "select_budget": "3"}, "select_metric",
     "'comet' is not computed here"),
    ({"select_method": "metric_var", "select_metric": "BLEU", "select_budget": "3", "with_scores": True},
     "select_metric", "no scorer 'BLEU'"),
    ({"select_method": "metric_var", "select_metric": "chrF", "select_budget": "3", "with_scores": "gap"},
     "scores_file", "no score for system 'sys2' on item 'ext-4'"),
    ({"select_method": "random", "select_budget": "3", "with_scores": True}, "scores_file", "reads no scores"),
    ({"select_budget": "3"}, "select_budget", "Only with a selection method"),
    ({"select_method": "random", "select_budget": "3", "select_seed": "-1"}, "select_seed", "greater than or equal"),
])
def test_bad_selection_values_are_shown_at_their_field_and_nothing_is_stored(staff, fields, field, fragment):
    fields = dict(fields)
    with_scores = fields.pop("with_scores", None)
    if with_scores:
        fields["scores_file"] = upload("chrf.csv", _scores_csv(8, skip=("sys2", "ext-4") if with_scores == "gap"
                                                               else None))
    response = staff.post(URL, _select_post(study_file(slug="bad-sel", n_items=8), **fields))
    assert response.status_code == 400
    errors = response.context["select_form"].errors
    assert fragment in " ".join(errors.get(field, [])), errors
    assert f"{field}: " in response.content.decode()
    assert response.context["summary"] is None and not Study.objects.exists()
    assert staff.post(URL, {"step": "create"}).status_code == 302 and not Study.objects.exists()


def test_a_score_file_that_is_not_utf8_is_named_at_its_field(staff):
    response = staff.post(URL, _select_post(study_file(slug="u8", n_items=4), select_method="metric_avg",
                                            select_metric="chrF", select_budget="2",
                                            scores_file=upload("s.csv", b"system,segment\xff")))
    assert response.status_code == 400 and "not UTF-8" in " ".join(response.context["select_form"].errors["scores_file"])
    assert not Study.objects.exists()
