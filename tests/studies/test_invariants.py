"""Running-study invariants (studies/lifecycle/invariants.py): through the service, the admin, the import and the API."""
from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Annotator, Assignment, Judgment
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.importing.study_file import StudyFileError, study_import
from studies.lifecycle.invariants import (LOCKED_CANDIDATE_FIELDS, LOCKED_FIELDS, LOCKED_ITEM_FIELDS, StudyCopyError,
                                study_change_errors, study_copy, study_has_judgments, study_judged_redundancy)
from studies.models import Candidate, Item, Status, Study
from tests.admin_forms import change_form_data
from tests.factories import make_study, study_file

# The imports are owned by the server's only superuser (no --user; docs/access.md).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_user")]


def judge(study: Study, n_annotators: int = 1, n_each: int = 1) -> None:
    for annotator in annotators_create(study=study, count=n_annotators):
        for _ in range(n_each):
            assignment = assignment_next(annotator=annotator)
            assert assignment is not None
            cands = ordered_candidates(assignment)
            judgment_submit(assignment=assignment, payload={"ranks": {c.public_id: k + 1 for k, c in enumerate(cands)}})


#: A change of each locked setting, valid in itself (so only the lock can refuse it).
LOCKED_CHANGES = {
    "protocol": {"protocol": "choice"},
    "options": {"options": "neither"},
    "labels": {"labels": "good\nbad"},
    "allow_ties": {"allow_ties": "on"},
    "unit": {"unit": "document"},
    "multi_label": {"multi_label": "on"},
    "show_source": {"show_source": "on"},
}


# --- the service ---------------------------------------------------------------------------

def test_has_judgments_is_false_until_the_first_answer_is_stored():
    study = make_study(slug="lock", n_items=3)
    annotator = annotators_create(study=study)[0]
    assignment_next(annotator=annotator)  # handed out, not answered: nothing to protect yet
    assert not study_has_judgments(study=study)
    assert study_change_errors(study=study, changes={"protocol": "choice"}) == {}
    judge(study)
    assert study_has_judgments(study=study)
    errors = study_change_errors(study=study, changes={"protocol": "choice"})
    assert set(errors) == {"protocol"} and "already has judgments" in errors["protocol"]
    assert "Copy as new study" in errors["protocol"]


@pytest.mark.parametrize("field,value", [("protocol", "choice"), ("options", ["tie"]), ("labels", ["x"]),
                                         ("allow_ties", True), ("unit", "document"), ("multi_label", True),
                                         ("show_source", True)])
def test_each_locked_field_is_named(field, value):
    study = make_study(slug="lockf", n_items=2)
    judge(study)
    assert set(study_change_errors(study=study, changes={field: value})) == {field}
    # The same value as stored is no change.
    assert study_change_errors(study=study, changes={field: getattr(study, field)}) == {}


def test_redundancy_may_rise_and_fall_only_down_to_what_is_judged():
    study = make_study(slug="red", n_items=2, settings={"redundancy": 3})
    judge(study, n_annotators=2, n_each=2)  # every item judged twice
    assert study_judged_redundancy(study=study) == 2
    assert study_change_errors(study=study, changes={"redundancy": 5}) == {}
    assert study_change_errors(study=study, changes={"redundancy": 2}) == {}
    errors = study_change_errors(study=study, changes={"redundancy": 1})
    assert set(errors) == {"redundancy"} and "below 2" in errors["redundancy"]


def test_title_instructions_status_stay_editable():
    study = make_study(slug="free", n_items=2)
    judge(study)
    assert study_change_errors(study=study, changes={"title": "New", "instructions": "x", "status": "closed"}) == {}


# --- the admin -----------------------------------------------------------------------------

def _study_post(staff, study: Study, **changes: str):
    url = reverse("admin:studies_study_change", args=[study.pk])
    data = change_form_data(staff.get(url))
    for key in ("allow_ties", "multi_label", "show_source"):
        if changes.get(key) == "":
            data.pop(key, None)
    data.update({k: v for k, v in changes.items() if v != ""})
    return staff.post(url, data)


def test_admin_saves_an_unchanged_form_of_a_judged_study(staff):
    study = make_study(slug="adm0", n_items=2)
    judge(study)
    response = _study_post(staff, study, title="Renamed", instructions="New words", status="closed")
    assert response.status_code == 302, response.context["adminform"].form.errors
    study.refresh_from_db()
    assert (study.title, study.instructions, study.status) == ("Renamed", "New words", "closed")


def test_admin_shows_the_locked_settings_read_only_once_judged(staff):
    """Before the first judgment every setting is an input; after it the locked ones are text, with the way out."""
    study = make_study(slug="adm-ro", n_items=2)
    url = reverse("admin:studies_study_change", args=[study.pk])
    before = staff.get(url)
    assert set(LOCKED_FIELDS) <= set(before.context["adminform"].form.fields)
    assert "This study has judgments" not in before.content.decode()
    judge(study)
    after = staff.get(url)
    page = after.content.decode()
    assert not set(LOCKED_FIELDS) & set(after.context["adminform"].form.fields)
    for field in LOCKED_FIELDS:
        assert f'name="{field}"' not in page, field
    assert {"title", "instructions", "status", "redundancy"} <= set(after.context["adminform"].form.fields)
    assert "This study has judgments" in page and reverse("admin:studies_study_copy", args=[study.pk]) in page


@pytest.mark.parametrize("field", sorted(LOCKED_CHANGES))
def test_admin_ignores_a_locked_setting_posted_anyway(staff, field):
    """A stale page (opened before the first judgment) posting a locked change: saved without it."""
    study = make_study(slug="adm1", n_items=2)
    url = reverse("admin:studies_study_change", args=[study.pk])
    data = change_form_data(staff.get(url))  # the page as it was before any judgment
    judge(study)
    before = Study.objects.filter(pk=study.pk).values(field).get()[field]
    if field in ("allow_ties", "multi_label", "show_source"):
        data[field] = "on"
    else:
        data.update(LOCKED_CHANGES[field])
    data["title"] = "Renamed"
    assert staff.post(url, data).status_code == 302
    after = Study.objects.filter(pk=study.pk).values(field, "title").get()
    assert after[field] == before and after["title"] == "Renamed"


@pytest.mark.parametrize("field", sorted(LOCKED_CHANGES))
def test_study_form_still_refuses_each_locked_change_with_a_copy_link(field):
    """The form behind the admin keeps the invariant when the field is an input (a subclass, another admin)."""
    from django.forms.models import model_to_dict

    from studies.forms import StudyAdminForm

    study = make_study(slug="adm1f", n_items=2)
    judge(study)
    data = {k: v for k, v in model_to_dict(study).items() if v is not None and v is not False}
    data.update({"options": "", "labels": ""})
    data.update(LOCKED_CHANGES[field])
    form = StudyAdminForm(data, instance=study)
    assert not form.is_valid()
    assert field in form.errors and "already has judgments" in form.errors[field][0]
    copy_url = reverse("admin:studies_study_copy", args=[study.pk])
    assert any(copy_url in str(e) for e in form.non_field_errors())


@pytest.mark.parametrize("field", sorted(LOCKED_CHANGES))
def test_admin_allows_the_same_changes_before_any_judgment(staff, field):
    study = make_study(slug="adm2", n_items=2)
    annotators_create(study=study)
    response = _study_post(staff, study, **LOCKED_CHANGES[field])
    assert response.status_code == 302, response.context["adminform"].form.errors


def test_admin_refuses_lowering_redundancy_below_what_is_judged(staff):
    study = make_study(slug="adm3", n_items=2, settings={"redundancy": 3})
    judge(study, n_annotators=2, n_each=2)
    response = _study_post(staff, study, redundancy="1")
    assert response.status_code == 200
    assert "below 2" in response.context["adminform"].form.errors["redundancy"][0]
    assert _study_post(staff, study, redundancy="4").status_code == 302
    study.refresh_from_db()
    assert study.redundancy == 4


def _item_page(staff, item: Item):
    url = reverse("admin:studies_item_change", args=[item.pk])
    return url, change_form_data(staff.get(url))


def test_item_admin_shows_texts_and_candidates_read_only_once_judged(staff):
    study = make_study(slug="cand-ro", n_items=2)
    item = study.items.first()
    url = reverse("admin:studies_item_change", args=[item.pk])
    page = staff.get(url).content.decode()
    assert 'name="source"' in page and 'name="candidates-0-text"' in page and 'name="candidates-0-DELETE"' in page
    judge(study)
    response = staff.get(url)
    page = response.content.decode()
    for field in LOCKED_ITEM_FIELDS:
        assert f'name="{field}"' not in page, field
    for field in LOCKED_CANDIDATE_FIELDS:
        assert f'name="candidates-0-{field}"' not in page, field
    assert 'name="candidates-0-DELETE"' not in page  # no deleting …
    (inline,) = response.context["inline_admin_formsets"]
    assert not inline.has_add_permission and not inline.has_delete_permission  # … and no adding
    assert 'name="candidates-0-position"' in page and 'name="document_id"' in page  # the rest stays editable
    assert "has judgments" in page and reverse("admin:studies_study_copy", args=[study.pk]) in page
    assert item.candidates.first().text in page  # the locked text is still shown


@pytest.mark.parametrize("field,value", [("text", "Another text."), ("system", "renamed")])
def test_item_admin_ignores_a_candidate_change_posted_anyway(staff, field, value):
    study = make_study(slug="cand", n_items=2)
    item = study.items.first()
    url, data = _item_page(staff, item)  # the page as it was before any judgment
    judge(study)
    data[f"candidates-0-{field}"] = value
    staff.post(url, data)
    assert not Candidate.objects.filter(item=item, **{field: value}).exists()


@pytest.mark.parametrize("field,value", [("text", "Another text."), ("system", "renamed")])
def test_candidate_form_still_refuses_a_change_of_a_judged_study(field, value):
    from django.forms.models import model_to_dict

    from studies.forms import CandidateAdminForm

    study = make_study(slug="cand-f", n_items=2)
    judge(study)
    candidate = study.items.first().candidates.first()
    data = {k: v for k, v in model_to_dict(candidate).items() if v is not None and v is not False}
    data.update({field: value, "highlights": json.dumps(candidate.highlights)})
    form = CandidateAdminForm(data, instance=candidate)
    assert not form.is_valid() and "already has judgments" in form.errors[field][0]


def test_item_admin_refuses_deleting_or_adding_a_candidate_of_a_judged_study(staff):
    study = make_study(slug="cand2", n_items=2)
    item = study.items.first()
    n = item.candidates.count()
    url, stale = _item_page(staff, item)  # opened before the first judgment: it still offers delete and add
    judge(study)
    data = dict(stale, **{"candidates-0-DELETE": "on"})
    staff.post(url, data)
    assert item.candidates.count() == n
    data = dict(stale)
    data.update({"candidates-TOTAL_FORMS": n + 1, f"candidates-{n}-system": "new", f"candidates-{n}-text": "New.",
                 f"candidates-{n}-position": "9", f"candidates-{n}-highlights": "[]", f"candidates-{n}-item": item.pk})
    staff.post(url, data)
    assert item.candidates.count() == n


def test_item_admin_keeps_the_source_of_a_judged_study(staff):
    study = make_study(slug="src", n_items=2)
    item = study.items.first()
    url, data = _item_page(staff, item)
    data["source"] = "Edited before any judgment."
    assert staff.post(url, data).status_code == 302
    url, data = _item_page(staff, item)
    judge(study, n_each=2)
    data["source"] = "Edited after."
    staff.post(url, data)
    item.refresh_from_db()
    assert item.source == "Edited before any judgment."


def test_item_form_still_refuses_changing_the_source_of_a_judged_study():
    from django.forms.models import model_to_dict

    from studies.forms import ItemAdminForm

    study = make_study(slug="src-f", n_items=2)
    judge(study)
    item = study.items.first()
    data = {k: v for k, v in model_to_dict(item).items() if v is not None and v is not False}
    data.update({"source": "Edited after.", "metadata": json.dumps(item.metadata),
                 "source_sentences": json.dumps(item.source_sentences)})
    form = ItemAdminForm(data, instance=item)
    assert not form.is_valid() and "source cannot change" in form.errors["source"][0]


def test_item_admin_edits_candidates_before_any_judgment(staff):
    study = make_study(slug="cand3", n_items=2)
    item = study.items.first()
    url, data = _item_page(staff, item)
    data["candidates-0-text"] = "Fixed typo."
    assert staff.post(url, data).status_code == 302
    assert Candidate.objects.filter(item=item, text="Fixed typo.").exists()


# --- the import and the API ----------------------------------------------------------------

def test_import_onto_a_judged_study_refuses_and_points_at_the_copy(tmp_path):
    study = make_study(slug="imp", n_items=2)
    judge(study)
    with pytest.raises(StudyFileError) as refused:
        study_import(data=study_file(slug="imp", protocol="choice", n_items=2))
    (message,) = [e for e in refused.value.errors if e.startswith("slug:")]
    assert "has judgments" in message and "Copy as new study" in message
    path = tmp_path / "imp.json"
    path.write_text(json.dumps(study_file(slug="imp", n_items=2)))
    with pytest.raises(CommandError, match="has judgments"):
        call_command("import_study", str(path))
    assert Study.objects.get(slug="imp").protocol == "ranking"


def test_import_page_refuses_a_judged_study_by_name(staff):
    from django.core.files.uploadedfile import SimpleUploadedFile

    study = make_study(slug="imp2", n_items=2)
    judge(study)
    upload = SimpleUploadedFile("s.json", json.dumps(study_file(slug="imp2", n_items=2)).encode())
    response = staff.post(reverse("studies:import"), {"study_file": upload})
    assert response.status_code == 400
    assert "has judgments" in response.content.decode()


def test_the_researcher_api_has_no_write_path(api, admin_user):
    """No endpoint changes a study through the API (it is read-only): every write method is refused."""
    study = make_study(slug="api", n_items=2)
    judge(study)
    api.force_authenticate(admin_user)
    for url in (reverse("api-studies"), reverse("api-study-judgments", args=["api"]),
                reverse("api-study-agreement", args=["api"])):
        for method in ("post", "put", "patch", "delete"):
            response = getattr(api, method)(url, {"protocol": "choice"}, format="json")
            assert response.status_code == 405, (url, method)
    assert Study.objects.get(slug="api").protocol == "ranking"


# --- Copy as new study ---------------------------------------------------------------------

def test_copy_clones_settings_items_candidates_and_spam_without_work():
    study = make_study(slug="orig", n_items=6, settings={"spam_rate": 0.3, "redundancy": 2})
    judge(study, n_annotators=2, n_each=2)
    copy = study_copy(study=study, slug="orig-v2")
    assert copy.status == Status.DRAFT and copy.seed == study.seed and copy.protocol == study.protocol
    assert (copy.redundancy, copy.spam_rate, copy.instructions) == (2, 0.3, study.instructions)
    assert copy.annotators.count() == 0
    assert not Assignment.objects.filter(item__study=copy).exists()
    old = {(i.external_id, i.is_spam, i.order_key) for i in study.items.all()}
    assert {(i.external_id, i.is_spam, i.order_key) for i in copy.items.all()} == old
    assert set(copy.items.values_list("n_assigned", flat=True)) == {0}
    spam = copy.items.filter(is_spam=True)
    assert spam.exists() and all(s.spam_of.study_id == copy.pk for s in spam)
    key = ("item__external_id", "system", "text", "is_reference", "is_spam", "highlights", "position")
    assert (sorted(Candidate.objects.filter(item__study=copy).values_list(*key))
            == sorted(Candidate.objects.filter(item__study=study).values_list(*key)))
    old_ids = set(Candidate.objects.filter(item__study=study).values_list("public_id", flat=True))
    assert not old_ids & set(Candidate.objects.filter(item__study=copy).values_list("public_id", flat=True))
    # The copy is free to change: no judgments.
    assert study_change_errors(study=copy, changes={"protocol": "choice"}) == {}


@pytest.mark.parametrize("slug,message", [("orig", "already exists"), ("Bad Slug", "lowercase"), ("import", "reserved")])
def test_copy_refuses_a_bad_slug_and_stores_nothing(slug, message):
    study = make_study(slug="orig", n_items=2)
    with pytest.raises(StudyCopyError, match=message):
        study_copy(study=study, slug=slug)
    assert Study.objects.count() == 1


def test_copy_from_the_admin_page_action_and_command(staff):
    study = make_study(slug="adm-copy", n_items=3)
    judge(study)
    url = reverse("admin:studies_study_copy", args=[study.pk])
    page = staff.get(url)
    assert page.status_code == 200 and "adm-copy-copy" in page.content.decode()
    response = staff.post(url, {"slug": "adm-copy-v2"})
    new = Study.objects.get(slug="adm-copy-v2")
    assert response.status_code == 302 and response["Location"] == reverse("admin:studies_study_change", args=[new.pk])
    assert new.items.count() == 3 and new.status == Status.DRAFT
    assert staff.post(url, {"slug": "adm-copy-v2"}).status_code == 200  # taken: the form says so
    staff.post(reverse("admin:studies_study_changelist"),
               {"action": "copy_studies", "_selected_action": [study.pk]})
    assert Study.objects.filter(slug="adm-copy-copy").exists()
    call_command("copy_study", "adm-copy", "--new-slug", "adm-copy-cli")
    assert Study.objects.get(slug="adm-copy-cli").items.count() == 3
    with pytest.raises(CommandError, match="already exists"):
        call_command("copy_study", "adm-copy", "--new-slug", "adm-copy-cli")
    assert Judgment.objects.filter(assignment__item__study__slug__startswith="adm-copy-").count() == 0
    assert Annotator.objects.filter(study__slug__startswith="adm-copy-").count() == 0
