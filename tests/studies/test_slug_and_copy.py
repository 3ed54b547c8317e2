"""Issue 12, item 10: one slug rule with one message on every path; a copy's title tells it from the original."""
from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth.models import Permission
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from studies.importing.study_file import StudyFileError, parse_study
from studies.lifecycle.invariants import SLUG_RULE, StudyCopyError, free_copy_title, slug_error, study_copy
from studies.models import Study
from tests.admin_forms import change_form_data
from tests.factories import make_study, study_file

# The imports are owned by the server's only superuser (no --user; docs/access.md).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_user")]
#: Bad slugs and a word of the one message each gets.
BAD_SLUGS = {"Bad Slug!": "not a valid slug", "Bad_Slug": "not a valid slug", "-lead": "not a valid slug",
             "import": "reserved", "a" * 81: "at most 80", "été": "not a valid slug"}


# --- the rule ---------------------------------------------------------------------------------

@pytest.mark.parametrize("slug", ["a", "pronouns-2024", "de_en", "x-", "0-ab"])
def test_good_slugs_pass(slug):
    assert slug_error(slug) is None


@pytest.mark.parametrize("slug,word", sorted(BAD_SLUGS.items()))
def test_bad_slugs_get_one_message_that_states_the_rule(slug, word):
    message = slug_error(slug)
    assert message is not None and word in message
    if word == "not a valid slug":
        assert "lowercase" in message and SLUG_RULE in message


# --- every path says it once ------------------------------------------------------------------

@pytest.mark.parametrize("slug,word", sorted(BAD_SLUGS.items()))
def test_study_file_reports_a_bad_slug_once(slug, word):
    data = study_file(slug="x", n_items=2)
    data["slug"] = slug
    with pytest.raises(StudyFileError) as refused:
        parse_study(data)
    slug_errors = [e for e in refused.value.errors if e.startswith("slug:")]
    assert len(slug_errors) == 1 and word in slug_errors[0], refused.value.errors
    assert "letters, numbers, underscores or hyphens" not in " ".join(refused.value.errors)  # Django's other wording


def test_import_page_lists_a_bad_slug_once(staff):
    data = study_file(slug="x", n_items=2)
    data["slug"] = "Bad Slug!"
    upload = SimpleUploadedFile("s.json", json.dumps(data).encode())
    response = staff.post(reverse("studies:import"), {"step": "preview", "study_file": upload})
    assert response.status_code == 400
    rows = [e for e in response.context["errors"] if e["where"] == "slug"]
    assert len(rows) == 1 and "not a valid slug" in rows[0]["what"] and not Study.objects.exists()


def test_import_study_command_reports_a_bad_slug_once(tmp_path):
    data = study_file(slug="x", n_items=2)
    data["slug"] = "Bad Slug!"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CommandError) as refused:
        call_command("import_study", str(path), stdout=io.StringIO(), stderr=io.StringIO())
    assert "1 error(s)" in str(refused.value) and "not a valid slug" in str(refused.value)


@pytest.mark.parametrize("slug,word", sorted(BAD_SLUGS.items()))
def test_admin_change_form_reports_a_bad_slug_once(staff, slug, word):
    study = make_study(slug="orig", n_items=2)
    url = reverse("admin:studies_study_change", args=[study.pk])
    data = change_form_data(staff.get(url))
    data["slug"] = slug
    response = staff.post(url, data)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["slug"]
    assert len(errors) == 1 and word in errors[0]
    assert Study.objects.get(pk=study.pk).slug == "orig"


def test_admin_add_form_uses_the_same_rule(staff, owner):
    owner.user_permissions.add(Permission.objects.get(codename="add_study"))  # what adding in the admin needs
    url = reverse("admin:studies_study_add")
    data = change_form_data(staff.get(url))
    data.update({"slug": "Bad_Slug", "title": "T"})
    errors = staff.post(url, data).context["adminform"].form.errors["slug"]
    assert len(errors) == 1 and "not a valid slug" in errors[0]


@pytest.mark.parametrize("slug,word", sorted(BAD_SLUGS.items()) + [("orig", "already exists")])
def test_admin_copy_form_reports_a_bad_slug_once(staff, slug, word):
    study = make_study(slug="orig", n_items=2)
    response = staff.post(reverse("admin:studies_study_copy", args=[study.pk]), {"slug": slug, "title": ""})
    assert response.status_code == 200
    errors = response.context["form"].errors["slug"]
    assert len(errors) == 1 and word in errors[0] and Study.objects.count() == 1


def test_copy_study_command_names_its_option(tmp_path):
    make_study(slug="orig", n_items=2)
    with pytest.raises(CommandError, match=r"^--new-slug: 'Bad_Slug' is not a valid slug"):
        call_command("copy_study", "orig", "--new-slug", "Bad_Slug")


# --- the copy's title --------------------------------------------------------------------------

def test_a_copy_is_titled_copy_then_copy_2_and_a_copy_of_a_copy_counts_on():
    study = make_study(slug="orig", n_items=2)
    assert study.title == "Study orig"
    first = study_copy(study=study, slug="orig-a")
    assert first.title == "Study orig (copy)"
    second = study_copy(study=study, slug="orig-b")
    assert second.title == "Study orig (copy 2)"
    assert study_copy(study=first, slug="orig-c").title == "Study orig (copy 3)"
    assert Study.objects.get(slug="orig").title == "Study orig"  # the original keeps its title


def test_a_long_title_is_cut_to_keep_the_suffix():
    study = make_study(slug="long", n_items=1)
    Study.objects.filter(pk=study.pk).update(title="T" * 200)
    study.refresh_from_db()
    title = free_copy_title(study)
    assert len(title) == 200 and title.endswith(" (copy)")


def test_a_given_title_is_kept_and_a_too_long_one_is_named():
    study = make_study(slug="orig", n_items=1)
    assert study_copy(study=study, slug="orig-x", title="Second run").title == "Second run"
    with pytest.raises(StudyCopyError) as refused:
        study_copy(study=study, slug="orig-y", title="T" * 201)
    assert "title" in refused.value.errors and not Study.objects.filter(slug="orig-y").exists()


def test_admin_action_copy_page_and_command_give_distinct_titles(staff):
    study = make_study(slug="src", n_items=2)
    response = staff.post(reverse("admin:studies_study_changelist"),
                          {"action": "copy_studies", "_selected_action": [study.pk]}, follow=True)
    assert Study.objects.get(slug="src-copy").title == "Study src (copy)"
    assert any("Study src (copy)" in str(m) for m in get_messages(response.wsgi_request))
    url = reverse("admin:studies_study_copy", args=[study.pk])
    page = staff.get(url)
    assert page.context["form"].initial["title"] == "Study src (copy 2)"
    assert 'value="Study src (copy 2)"' in page.content.decode()
    staff.post(url, {"slug": "src-v2", "title": page.context["form"].initial["title"]})
    assert Study.objects.get(slug="src-v2").title == "Study src (copy 2)"
    staff.post(url, {"slug": "src-v3", "title": "  "})  # blank: the next free one
    assert Study.objects.get(slug="src-v3").title == "Study src (copy 3)"
    call_command("copy_study", "src", "--new-slug", "src-cli", stdout=io.StringIO())
    assert Study.objects.get(slug="src-cli").title == "Study src (copy 4)"
    call_command("copy_study", "src", "--new-slug", "src-cli2", "--new-title", "Rerun", stdout=io.StringIO())
    assert Study.objects.get(slug="src-cli2").title == "Rerun"
    titles = list(Study.objects.values_list("title", flat=True))
    assert len(titles) == len(set(titles)) == 6  # no two studies share a title


def test_study_page_offers_copy_as_new_study(staff):
    study = make_study(slug="page", n_items=1)
    page = staff.get(reverse("studies:detail", args=["page"])).content.decode()
    assert reverse("admin:studies_study_copy", args=[study.pk]) in page and "Copy as new study" in page
