"""studies/admin/studies.py and annotation/admin.py: columns, actions, and read-only judgments."""
from __future__ import annotations

import csv
import io

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from annotation.models import Annotator, Assignment, Judgment
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.models import Status, Study
from tests.factories import make_study

pytestmark = pytest.mark.django_db
CHANGELIST = reverse("admin:studies_study_changelist")


def judge(study, n_annotators: int, n_each: int) -> None:
    for annotator in annotators_create(study=study, count=n_annotators):
        for _ in range(n_each):
            assignment = assignment_next(annotator=annotator)
            cands = ordered_candidates(assignment)
            judgment_submit(assignment=assignment, payload={"ranks": {c.public_id: k + 1 for k, c in enumerate(cands)}})


def test_changelist_columns_and_progress(staff):
    study = make_study(slug="prog", n_items=10, settings={"redundancy": 2, "spam_rate": 0.2})
    judge(study, n_annotators=2, n_each=3)
    response = staff.get(CHANGELIST)
    assert response.status_code == 200
    row = response.context["cl"].result_list[0]
    assert (row.n_items, row.n_spam, row.n_annotators, row.n_done, row.n_needed) == (10, 2, 2, 6, 24)
    page = response.content.decode()
    assert "6 / 24" in page and "+2 spam" in page


def test_changelist_queries_do_not_grow_with_studies(staff, django_assert_max_num_queries):
    make_study(slug="one", n_items=3)
    with django_assert_max_num_queries(12):
        staff.get(CHANGELIST)
    for k in range(5):
        judge(make_study(slug=f"more{k}", n_items=5), n_annotators=1, n_each=2)
    with django_assert_max_num_queries(12):
        response = staff.get(CHANGELIST)
    assert len(response.context["cl"].result_list) == 6


def test_search_and_filter(staff):
    make_study(slug="alpha", n_items=1)
    make_study(slug="beta", n_items=1, protocol="choice", n_candidates=2)
    assert [s.slug for s in staff.get(CHANGELIST + "?q=alp").context["cl"].result_list] == ["alpha"]
    assert [s.slug for s in staff.get(CHANGELIST + "?protocol__exact=choice").context["cl"].result_list] == ["beta"]


def test_study_change_page_links_items_without_an_inline(staff):
    study = make_study(slug="big", n_items=40)
    response = staff.get(reverse("admin:studies_study_change", args=[study.pk]))
    assert response.status_code == 200
    page = response.content.decode()
    assert f"?study__id__exact={study.pk}" in page and "All 40 items" in page
    assert page.count(reverse("admin:studies_item_change", args=[study.items.first().pk])) <= 1
    assert "What annotators see" in page and "Quality control" in page  # fieldsets


def test_item_change_page_has_candidates(staff):
    study = make_study(slug="it", n_items=2)
    item = study.items.get(external_id="ext-0")
    response = staff.get(reverse("admin:studies_item_change", args=[item.pk]))
    assert response.status_code == 200
    assert len(response.context["inline_admin_formsets"][0].formset.forms) == 3
    items = staff.get(reverse("admin:studies_item_changelist") + f"?study__id__exact={study.pk}")
    assert {i.external_id for i in items.context["cl"].result_list} == {"ext-0", "ext-1"}


def action(staff, name: str, *studies: Study):
    return staff.post(CHANGELIST, {"action": name, "_selected_action": [s.pk for s in studies]})


def test_invite_action_shows_links(staff):
    study = make_study(slug="inv", n_items=1)
    response = action(staff, "invite_annotators", study)
    assert response.status_code == 302
    annotators = list(Annotator.objects.filter(study=study))
    assert len(annotators) == 5
    text = " ".join(str(m) for m in get_messages(response.wsgi_request))
    assert all(f"/a/{a.token}/" in text for a in annotators)


def test_open_and_close_actions(staff):
    study = make_study(slug="oc", n_items=1)
    action(staff, "close_studies", study)
    study.refresh_from_db()
    assert study.status == Status.CLOSED
    action(staff, "open_studies", study)
    study.refresh_from_db()
    assert study.status == Status.OPEN


def test_export_action_streams_csv(staff):
    a, b = make_study(slug="ea", n_items=2), make_study(slug="eb", n_items=2)
    judge(a, 1, 2)
    judge(b, 1, 1)
    response = action(staff, "export_judgments_csv", a, b)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert sorted({r["study"] for r in rows}) == ["ea", "eb"] and len(rows) == (2 + 1) * 3


def test_other_engineers_actions_are_listed(staff):
    from studies.admin import actions as admin_actions
    from studies.admin.studies import StudyAdmin
    assert all(a in StudyAdmin.actions for a in admin_actions.STUDY_ACTIONS)


def test_judgments_are_read_only(staff):
    study = make_study(slug="ro", n_items=2)
    judge(study, 1, 1)
    judgment = Judgment.objects.get()
    change_url = reverse("admin:annotation_judgment_change", args=[judgment.pk])
    page = staff.get(change_url)
    assert page.status_code == 200 and "revision history" in page.content.decode().lower()
    assert page.context["has_change_permission"] is False
    before = judgment.answer
    assert staff.post(change_url, {"answer": '{"ranks": {}}', "revision": 9}).status_code == 403
    assert staff.post(reverse("admin:annotation_judgment_delete", args=[judgment.pk]), {"post": "yes"}).status_code == 403
    assert staff.get(reverse("admin:annotation_judgment_add")).status_code == 403
    changelist = staff.get(reverse("admin:annotation_judgment_changelist"))
    assert changelist.context["action_form"] is None  # no bulk actions at all, so no "delete selected"
    staff.post(reverse("admin:annotation_judgment_changelist"),
               {"action": "delete_selected", "_selected_action": [judgment.pk], "post": "yes"})
    judgment.refresh_from_db()
    assert judgment.answer == before and Judgment.objects.count() == 1
    assert staff.post(reverse("admin:annotation_assignment_delete",
                              args=[Assignment.objects.get().pk]), {"post": "yes"}).status_code == 403


def test_revision_history_lists_every_revision(staff):
    study = make_study(slug="rev", n_items=1, n_candidates=2, settings={"redundancy": 1})
    annotator = annotators_create(study=study, count=1)[0]
    assignment = assignment_next(annotator=annotator)
    a, b = ordered_candidates(assignment)
    judgment_submit(assignment=assignment, payload={"ranks": {a.public_id: 1, b.public_id: 2}})
    latest, _ = judgment_submit(assignment=assignment, payload={"ranks": {a.public_id: 2, b.public_id: 1}})
    page = staff.get(reverse("admin:annotation_judgment_change", args=[latest.pk])).content.decode()
    assert ">r1<" in page and ">r2<" in page and "superseded" in page and "current" in page


def test_study_with_judgments_cannot_be_deleted_from_admin(staff, superuser, login_as):
    """Deleting is for superusers only (docs/access.md), and not even they delete a study with judgments."""
    study = make_study(slug="keep", n_items=1)
    judge(study, 1, 1)
    root = login_as(superuser)
    response = root.post(reverse("admin:studies_study_delete", args=[study.pk]), {"post": "yes"})
    assert response.status_code in (200, 403)  # the confirmation page lists what it may not delete
    assert Study.objects.filter(slug="keep").exists() and Judgment.objects.count() == 1
    empty = make_study(slug="empty", n_items=1)
    assert staff.post(reverse("admin:studies_study_delete", args=[empty.pk]), {"post": "yes"}).status_code == 403
    assert Study.objects.filter(slug="empty").exists()  # its owner may not delete it
    root.post(reverse("admin:studies_study_delete", args=[empty.pk]), {"post": "yes"})
    assert not Study.objects.filter(slug="empty").exists()


def test_annotator_admin_shows_progress_and_link(staff):
    study = make_study(slug="an", n_items=3)
    judge(study, 1, 2)
    annotator = Annotator.objects.get()
    page = staff.get(reverse("admin:annotation_annotator_changelist")).content.decode()
    assert "2 / 2" in page and f"/a/{annotator.token}/" in page and annotator.code in page
    response = staff.post(reverse("admin:annotation_annotator_change", args=[annotator.pk]),
                          {"external_id": "PID1", "excluded": "on", "exclusion_reason": "test"})
    assert response.status_code == 302
    annotator.refresh_from_db()
    assert annotator.excluded and annotator.external_id == "PID1"


def test_non_staff_cannot_use_admin(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("u", password="x"))
    assert client.get(CHANGELIST).status_code == 302


# --- accessibility of the admin pages (issue 12, item 10; the browser test runs axe on them) -----------

def test_every_candidate_input_of_the_item_page_has_a_name(staff):
    """A tabular inline has no <label> per cell: each input names its column and its candidate (axe label)."""
    import re

    study = make_study(slug="lbl", n_items=1, n_candidates=3)
    item = study.items.get()
    page = staff.get(reverse("admin:studies_item_change", args=[item.pk])).content.decode()
    inputs = re.findall(r"<(?:input|textarea|select)\b[^>]*name=\"candidates-(\d+)-(\w+)\"[^>]*>", page)
    visible = [tag for tag in re.findall(r"<(?:input|textarea|select)\b[^>]*name=\"candidates-\d+-\w+\"[^>]*>", page)
               if 'type="hidden"' not in tag]
    assert len(visible) >= 3 * 5 and inputs
    for tag in visible:
        assert 'aria-label="' in tag, tag
    assert 'aria-label="text of candidate 2"' in page and 'aria-label="delete candidate 3"' in page


def test_items_without_a_phenomenon_have_a_named_filter_choice(staff):
    study = make_study(slug="phen", n_items=4, phenomena=("it-sie",))
    study.items.filter(external_id__in=["ext-1", "ext-3"]).update(phenomenon="")
    url = reverse("admin:studies_item_changelist")
    page = staff.get(url).content.decode()
    assert 'href="?phenomenon="' not in page  # the unnamed link axe flagged (link-name)
    assert "(no phenomenon)" in page
    listed = staff.get(url + "?phenomenon=(none)").context["cl"].result_list
    assert sorted(i.external_id for i in listed) == ["ext-1", "ext-3"]
    listed = staff.get(url + "?phenomenon=it-sie").context["cl"].result_list
    assert sorted(i.external_id for i in listed) == ["ext-0", "ext-2"]


def test_admin_pages_load_the_stylesheet_that_underlines_links_in_text(staff):
    study = make_study(slug="css", n_items=1)
    for url in (CHANGELIST, reverse("admin:studies_study_change", args=[study.pk]),
                reverse("admin:studies_item_change", args=[study.items.get().pk]), reverse("admin:index")):
        assert "/static/css/admin.css" in staff.get(url).content.decode(), url
    from django.contrib.staticfiles import finders

    css = open(finders.find("css/admin.css")).read()
    assert "#content .readonly a" in css and "text-decoration: underline" in css
