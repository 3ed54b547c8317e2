"""Issue 12, item 10: the blinding warning links its docs page (rendered for staff) and offers a one-click
"Normalise typography" (POST, staff, CSRF) on the study page of a draft and on the import preview."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from annotation.items.selectors import ordered_candidates
from studies.models import Status, Study
from tests.factories import make_study, owned, study_file

pytestmark = pytest.mark.django_db
IMPORT = reverse("studies:import")


def curly(data: dict) -> dict:
    """Every reference with curly quotes and an ellipsis, no system with them: a typographic cue in every item."""
    for item in data["items"]:
        item["candidates"][0]["text"] = "It’s the “reference”… really."
    return data


def leaky_study(slug: str, status: str = "draft") -> Study:
    from studies.importing.study_file import study_import

    return owned(study_import(data=curly(study_file(slug=slug, n_items=4, n_candidates=2)), status=status))


def button(page: str) -> bool:
    return 'data-testid="normalise-typography"' in page


# --- the docs link ------------------------------------------------------------------------------

def test_blinding_warning_links_the_rendered_docs_page(staff):
    leaky_study("dl")
    page = staff.get(reverse("studies:detail", args=["dl"])).content.decode()
    url = reverse("docs", args=["protocols/blinding.md"])
    assert f'href="{url}"' in page
    doc = staff.get(url)
    assert doc.status_code == 200
    html = doc.content.decode()
    assert "<h1" in html and "Blinding: can the reference be told by its surface?" in html
    assert "<table>" in html and "<code>normalise_typography</code>" in html  # Markdown tables and code rendered
    assert 'id="normalise_typography"' in html  # headings get anchors (toc)


@pytest.mark.parametrize("name", ["../README.md", "protocols/../../README.md", "img", "nope.md", "protocols/blinding.py",
                                  "/etc/passwd", "..%2FREADME.md", "a%00.md"])
def test_docs_view_serves_only_markdown_under_docs(staff, name):
    # A NUL in the path is refused before any view (config/middleware.py, issue 14): 400, not 404.
    assert staff.get("/help/" + name).status_code == (400 if "%00" in name else 404)


def test_docs_are_staff_only(client, django_user_model):
    url = reverse("docs", args=["protocols/blinding.md"])
    assert client.get(url).status_code == 302
    client.force_login(django_user_model.objects.create_user("u", password="x"))
    assert client.get(url).status_code == 302


def test_other_docs_names_on_researcher_pages_are_links(staff):
    make_study(slug="ex", n_items=1)
    assert f'href="{reverse("docs", args=["export.md"])}"' in staff.get(reverse("studies:detail", args=["ex"])).content.decode()
    assert f'href="{reverse("docs", args=["study-file.md"])}"' in staff.get(IMPORT).content.decode()
    for name in ("export.md", "study-file.md"):
        assert staff.get(reverse("docs", args=[name])).status_code == 200


# --- the study page -----------------------------------------------------------------------------

def test_draft_study_page_offers_the_button_and_it_turns_the_setting_on(staff):
    study = leaky_study("dr")
    url = reverse("studies:detail", args=["dr"])
    page = staff.get(url).content.decode()
    assert button(page) and f'action="{reverse("studies:normalise-typography", args=["dr"])}"' in page
    response = staff.post(reverse("studies:normalise-typography", args=["dr"]), follow=True)
    study.refresh_from_db()
    assert study.normalise_typography is True
    page = response.content.decode()
    assert "typography is now normalised" in page
    assert not button(page)  # nothing typographic is left to hide
    assert "typographic quotes" not in page


def test_running_study_says_why_it_cannot_and_the_post_is_refused(staff):
    study = leaky_study("run", status=Status.OPEN)
    page = staff.get(reverse("studies:detail", args=["run"])).content.decode()
    assert not button(page) and 'data-testid="typography-refused"' in page
    assert "only while a study is a draft" in page and "Copy as new study" in page
    response = staff.post(reverse("studies:normalise-typography", args=["run"]), follow=True)
    assert "normalise_typography: Typography can be normalised in one click only while a study is a draft" in \
        response.content.decode()
    study.refresh_from_db()
    assert study.normalise_typography is False


def test_draft_with_pilot_judgments_is_refused(staff):
    study = leaky_study("pil", status=Status.PILOT)
    annotator = annotators_create(study=study, count=1, is_pilot=True)[0]
    assignment = assignment_next(annotator=annotator)
    assert assignment is not None
    judgment_submit(assignment=assignment,
                    payload={"ranks": {c.public_id: k + 1 for k, c in enumerate(ordered_candidates(assignment))}})
    Study.objects.filter(pk=study.pk).update(status=Status.DRAFT)
    page = staff.get(reverse("studies:detail", args=["pil"])).content.decode()
    assert not button(page) and "already has (pilot) judgments" in page
    staff.post(reverse("studies:normalise-typography", args=["pil"]))
    study.refresh_from_db()
    assert study.normalise_typography is False


def test_no_button_without_a_typographic_cue(staff):
    make_study(slug="clean", n_items=2, status="draft")
    assert not button(staff.get(reverse("studies:detail", args=["clean"])).content.decode())


def test_the_button_needs_post_staff_and_the_csrf_token(client, django_user_model, admin_user):
    study = leaky_study("sec")
    url = reverse("studies:normalise-typography", args=["sec"])
    assert client.post(url).status_code == 302  # anonymous: to the login page
    checked = Client(enforce_csrf_checks=True)
    checked.force_login(admin_user)
    assert checked.post(url).status_code == 403  # no CSRF token
    checked.force_login(admin_user)
    assert checked.get(url).status_code == 405
    study.refresh_from_db()
    assert study.normalise_typography is False
    page = checked.get(reverse("studies:detail", args=["sec"])).content.decode()
    token = page.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
    assert checked.post(url, {"csrfmiddlewaretoken": token}).status_code == 302
    study.refresh_from_db()
    assert study.normalise_typography is True


# --- the import preview -------------------------------------------------------------------------

def test_import_preview_normalises_then_creates_with_the_setting_on(staff):
    data = curly(study_file(slug="imp-n", n_items=4, n_candidates=2))
    upload = SimpleUploadedFile("s.json", json.dumps(data).encode())
    preview = staff.post(IMPORT, {"step": "preview", "study_file": upload})
    page = preview.content.decode()
    assert button(page) and 'name="step" value="normalise"' in page
    normalised = staff.post(IMPORT, {"step": "normalise"})
    assert normalised.status_code == 200 and not Study.objects.exists()  # still only a preview
    assert normalised.context["blinding"].normalised is True
    assert not any(f.typographic for f in normalised.context["blinding"].findings)
    assert normalised.context["summary"]["settings"]["normalise_typography"] is True
    assert not button(normalised.content.decode()) and "Create the study" in normalised.content.decode()
    created = staff.post(IMPORT, {"step": "create"}, follow=True)
    assert Study.objects.get(slug="imp-n").normalise_typography is True
    assert "Typography is normalised" in created.content.decode()


def test_a_new_upload_forgets_an_earlier_normalise(staff):
    staff.post(IMPORT, {"step": "preview", "study_file": SimpleUploadedFile(
        "s.json", json.dumps(curly(study_file(slug="one", n_items=2, n_candidates=2))).encode())})
    staff.post(IMPORT, {"step": "normalise"})
    staff.post(IMPORT, {"step": "preview", "study_file": SimpleUploadedFile(
        "s.json", json.dumps(curly(study_file(slug="two", n_items=2, n_candidates=2))).encode())})
    staff.post(IMPORT, {"step": "create"})
    assert Study.objects.get(slug="two").normalise_typography is False


def test_normalise_without_a_preview_says_to_upload_again(staff):
    response = staff.post(IMPORT, {"step": "normalise"}, follow=True)
    assert "upload the study file again" in response.content.decode() and not Study.objects.exists()
