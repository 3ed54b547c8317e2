"""The annotator's pages (annotation/pages/views.py), driven through Django's test client."""
from __future__ import annotations

import re

import pytest
from django.test import Client, RequestFactory
from django.urls import reverse

from annotation.items import selectors
from annotation.pages.links import ANNOTATOR_COOKIE, cookie_token
from annotation.models import Annotator, Assignment, AssignmentStatus, Judgment
from annotation.handout.services import annotators_create
from studies.models import Item, Status
from tests.factories import make_study

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


# --- personas and helpers ---------------------------------------------------------

def ranking_study(**settings):
    base = {"redundancy": 2}
    base.update(settings)
    return make_study(slug="rank", n_items=4, n_candidates=3, settings=base)


def choice_study(**settings):
    base = {"options": ["neither", "tie", "invalid"], "question": "Which one reads better?"}
    base.update(settings)
    return make_study(slug="choice", protocol="choice", n_items=3, n_candidates=2, settings=base)


def judgment_study(**settings):
    base = {"labels": ["correct", "incorrect", "unsure"]}
    base.update(settings)
    return make_study(slug="judge", protocol="judgment", n_items=3, n_candidates=1, settings=base)


def one_annotator(study, **fields) -> Annotator:
    annotator = annotators_create(study=study)[0]
    if fields:
        Annotator.objects.filter(pk=annotator.pk).update(**fields)
        annotator.refresh_from_db()
    return annotator


def url(name: str, annotator: Annotator, *extra: str) -> str:
    return reverse(f"annotation:{name}", args=[annotator.token, *extra])


def free(name: str, *extra: str) -> str:
    """The token-free address of an annotator page (the annotator is in the browser's cookie)."""
    return reverse(f"annotation:cookie-{name}", args=list(extra))


def cookie_of(client: Client) -> str:
    """The token the client's annotator cookie names ("" without a valid one)."""
    request = RequestFactory().get("/a/")
    if ANNOTATOR_COOKIE in client.cookies:
        request.COOKIES[ANNOTATOR_COOKIE] = client.cookies[ANNOTATOR_COOKIE].value
    return cookie_token(request)


def open_current(client: Client, annotator: Annotator) -> tuple[Assignment, str]:
    """Follow the Start button: returns the assignment on screen and its page's HTML."""
    resp = client.get(url("item-current", annotator))
    assert resp.status_code == 302
    match = re.fullmatch(r"/a(?:/[^/]+)?/item/([^/]+)/", resp["Location"])
    assert match, resp["Location"]
    page = client.get(resp["Location"])
    assert page.status_code == 200
    return Assignment.objects.get(public_id=match.group(1)), page.content.decode()


def on_screen(assignment: Assignment):
    return selectors.ordered_candidates(assignment)


def rank_data(assignment: Assignment, order: list[int] | None = None) -> dict[str, str]:
    cands = on_screen(assignment)
    order = order or list(range(1, len(cands) + 1))
    return {f"rank-{c.public_id}": str(r) for c, r in zip(cands, order)}


# --- instructions page ---------------------------------------------------------------

def test_start_page_renders_markdown_escapes_html_and_records_the_visit():
    study = ranking_study(instructions="# How to rank\n\nRank **every** candidate.\n\n<script>alert('x')</script>\n\n"
                                       "[bad](javascript:alert(1)) and [good](https://example.org/guide)")
    annotator = one_annotator(study)
    resp = Client().get(url("start", annotator), follow=True)
    assert resp.status_code == 200
    body = resp.content.decode()
    assert "<h1>How to rank</h1>" in body
    assert "<strong>every</strong>" in body
    assert "<script>alert" not in body and "&lt;script&gt;alert" in body
    assert "javascript:" not in body
    assert 'href="https://example.org/guide"' in body
    assert "Keyboard shortcuts" in body and "<kbd>Enter</kbd>" in body
    assert f'href="{free("item-current")}"' in body and ">Start<" in body
    assert '<html lang="en">' in body
    annotator.refresh_from_db()
    first_seen = annotator.instructions_seen_at
    assert first_seen is not None
    Client().get(url("start", annotator), follow=True)
    annotator.refresh_from_db()
    assert annotator.instructions_seen_at == first_seen  # the first visit is kept


def test_start_says_continue_once_work_is_done():
    study = ranking_study()
    annotator = one_annotator(study)
    client = Client()
    assignment, _ = open_current(client, annotator)
    client.post(url("item-detail", annotator, assignment.public_id), rank_data(assignment))
    body = client.get(url("start", annotator), follow=True).content.decode()
    assert ">Continue<" in body and "answered 1 item so far" in body


def test_unknown_token_is_a_helpful_404_everywhere():
    client = Client()
    for path in ("/a/nope/", "/a/nope/item/", "/a/nope/item/xyz/", "/a/nope/done/", "/a/" + "x" * 80 + "/"):
        resp = client.get(path)
        assert resp.status_code == 404, path
        assert "could not find a study for this link" in resp.content.decode()


def test_wrong_methods_are_refused():
    study = ranking_study()
    annotator = one_annotator(study)
    client = Client()
    assignment, _ = open_current(client, annotator)
    assert client.post(url("start", annotator)).status_code == 405
    assert client.post(url("item-current", annotator)).status_code == 405
    assert client.put(url("item-detail", annotator, assignment.public_id)).status_code == 405
    assert client.delete(url("item-detail", annotator, assignment.public_id)).status_code == 405
    assert client.post(url("done", annotator)).status_code == 405
    assert client.post(reverse("annotation:prolific", args=[study.slug]) + "?PROLIFIC_PID=abc").status_code == 405
    assert not Judgment.objects.exists()


# --- item pages per protocol ---------------------------------------------------------

def test_ranking_happy_path_shows_context_cards_and_stores_ranks():
    study = ranking_study(question="Rank the translations of the last sentence.")
    annotator = one_annotator(study)
    client = Client()
    assignment, body = open_current(client, annotator)
    item = assignment.item
    assert "Preceding text" in body
    for sentence in item.target_context:
        assert sentence in body
    assert item.source not in body  # monolingual: no source
    assert "Rank the translations of the last sentence." in body
    cands = on_screen(assignment)
    for k, cand in enumerate(cands):
        letter = "ABC"[k]
        assert f"Candidate {letter}" in body
        assert f"Rank 1 for candidate {letter}" in body and f"Rank 3 for candidate {letter}" in body
        assert f'name="rank-{cand.public_id}"' in body
        assert f"<mark>{cand.text[:4]}</mark>{cand.text[4:]}" in body  # highlights [[0, 4]]
    # Candidates appear in the assignment's screen order.
    positions = [body.index(c.text[4:]) for c in cands]
    assert positions == sorted(positions)
    assert '<progress id="item-progress" max="4" value="0">' in body and "0 of 4" in body
    assert 'method="post"' in body and f'hx-post="{url("item-detail", annotator, assignment.public_id)}"' in body
    assignment.refresh_from_db()
    assert assignment.opened_at is not None

    resp = client.post(url("item-detail", annotator, assignment.public_id), rank_data(assignment, [2, 3, 1]))
    assert resp.status_code == 303
    nxt = Assignment.objects.get(annotator=annotator, sequence=2)
    assert resp["Location"] == url("item-detail", annotator, nxt.public_id)
    judgment = Judgment.objects.get(assignment=assignment)
    assert judgment.answer == {"ranks": {str(c.pk): r for c, r in sorted(zip(cands, [2, 3, 1]), key=lambda cr: cr[0].pk)}}
    assert judgment.is_current and judgment.revision == 1


def test_bilingual_ranking_shows_source_context_and_bold_source():
    study = ranking_study(show_source=True)
    annotator = one_annotator(study)
    assignment, body = open_current(Client(), annotator)
    item = assignment.item
    assert "Source text" in body
    for sentence in item.source_context:
        assert f'<p class="context-sentence">{sentence}</p>' in body
    assert f"<strong>{item.source}</strong>" in body
    for sentence in item.target_context:
        assert sentence not in body


def test_ranking_with_ties_accepts_shared_ranks():
    study = ranking_study(allow_ties=True)
    annotator = one_annotator(study)
    client = Client()
    assignment, _ = open_current(client, annotator)
    resp = client.post(url("item-detail", annotator, assignment.public_id), rank_data(assignment, [1, 1, 2]))
    assert resp.status_code == 303
    assert sorted(Judgment.objects.get().answer["ranks"].values()) == [1, 1, 2]


def test_choice_happy_path_candidate_and_option():
    study = choice_study()
    annotator = one_annotator(study)
    client = Client()
    assignment, body = open_current(client, annotator)
    cands = on_screen(assignment)
    assert "Which one reads better?" in body
    assert "Choose A" in body and "Choose B" in body
    for option in ("Neither", "Tie", "Invalid"):
        assert f"</span>{option}</label>" in body
    assert f'value="{cands[1].public_id}"' in body
    resp = client.post(url("item-detail", annotator, assignment.public_id), {"choice": cands[1].public_id})
    assert resp.status_code == 303
    assert Judgment.objects.get(assignment=assignment).answer == {"choice": {"candidate": cands[1].pk}}
    second, _ = open_current(client, annotator)
    client.post(url("item-detail", annotator, second.public_id), {"choice": "neither"})
    assert Judgment.objects.get(assignment=second).answer == {"choice": {"option": "neither"}}


def test_judgment_single_label():
    study = judgment_study()
    annotator = one_annotator(study)
    client = Client()
    assignment, body = open_current(client, annotator)
    assert 'type="radio"' in body and 'name="label"' in body and "Choose one label" in body
    for label in study.labels:
        assert f'value="{label}"' in body
    resp = client.post(url("item-detail", annotator, assignment.public_id), {"label": "incorrect"})
    assert resp.status_code == 303
    assert Judgment.objects.get().answer == {"labels": ["incorrect"]}


def test_judgment_multi_label_uses_checkboxes_and_stores_all():
    study = judgment_study(multi_label=True)
    annotator = one_annotator(study)
    client = Client()
    assignment, body = open_current(client, annotator)
    assert 'type="checkbox"' in body and 'name="labels"' in body and "every label that applies" in body
    resp = client.post(url("item-detail", annotator, assignment.public_id), {"labels": ["unsure", "correct"]})
    assert resp.status_code == 303
    assert Judgment.objects.get().answer == {"labels": ["correct", "unsure"]}


def test_document_unit_candidates_render_one_sentence_per_line():
    study = make_study(slug="docs", n_items=2, settings={"unit": "document"})
    item = study.items.first()
    cand = item.candidates.first()
    cand.text = "First <b>sentence</b>.\nSecond sentence.\nThird one."
    cand.highlights = [[0, 5], [17, 29]]
    cand.save()
    annotator = one_annotator(study)
    client = Client()
    body = ""
    while True:
        assignment, body = open_current(client, annotator)
        if assignment.item_id == item.pk:
            break
        client.post(url("item-detail", annotator, assignment.public_id), rank_data(assignment))
    assert ('<p class="line"><mark>First</mark> &lt;b&gt;sentence<mark>&lt;/b&gt;.</mark></p>'
            '<p class="line"><mark>Second</mark> sentence.</p><p class="line">Third one.</p>') in body


# --- refused submissions -----------------------------------------------------------------

@pytest.mark.parametrize("case, expected", [
    ("incomplete", "Every candidate needs a rank; 1 missing."),
    ("duplicate", "Two candidates share a rank, but this study does not allow ties."),
    ("nothing", "Every candidate needs a rank; 3 missing."),
    ("out of range", "must be a whole number from 1 to 3"),
])
def test_refused_ranking_explains_keeps_partial_answer_and_stores_nothing(case, expected):
    study = ranking_study()
    annotator = one_annotator(study)
    client = Client()
    assignment, _ = open_current(client, annotator)
    cands = on_screen(assignment)
    data = {
        "incomplete": {f"rank-{cands[0].public_id}": "2", f"rank-{cands[1].public_id}": "1"},
        "duplicate": rank_data(assignment, [1, 1, 2]),
        "nothing": {},
        "out of range": rank_data(assignment, [1, 2, 9]),
    }[case]
    resp = client.post(url("item-detail", annotator, assignment.public_id), data)
    assert resp.status_code == 422
    body = resp.content.decode()
    assert 'role="alert"' in body and expected in body
    assert cands[0].public_id not in body.split('role="alert"')[1].split("</div>")[0]  # ids worded as letters
    if case == "incomplete":
        assert 'id="rank-A-2" name="rank-' in body
        assert re.search(r'id="rank-A-2" name="rank-[^"]+" value="2" checked', body)
        assert re.search(r'id="rank-B-1" name="rank-[^"]+" value="1" checked', body)
        assert not re.search(r'id="rank-C-\d" name="rank-[^"]+" value="\d" checked', body)
    assert not Judgment.objects.exists()
    assert Assignment.objects.get(pk=assignment.pk).status == AssignmentStatus.PENDING


def test_refused_choice_and_label_explain_and_store_nothing():
    study = choice_study()
    annotator = one_annotator(study)
    client = Client()
    assignment, _ = open_current(client, annotator)
    resp = client.post(url("item-detail", annotator, assignment.public_id), {})
    assert resp.status_code == 422 and "Choose one answer before going on." in resp.content.decode()
    resp = client.post(url("item-detail", annotator, assignment.public_id), {"choice": "maybe"})
    assert resp.status_code == 422 and "neither a candidate of this item nor an option" in resp.content.decode()

    jstudy = judgment_study()
    jannotator = one_annotator(jstudy)
    jassignment, _ = open_current(client, jannotator)
    resp = client.post(url("item-detail", jannotator, jassignment.public_id), {"label": "great"})
    assert resp.status_code == 422 and "Not a label of this study: great" in resp.content.decode()
    assert not Judgment.objects.exists()


def test_garbled_client_times_do_not_block_an_answer():
    study = judgment_study()
    annotator = one_annotator(study)
    client = Client()
    assignment, _ = open_current(client, annotator)
    resp = client.post(url("item-detail", annotator, assignment.public_id),
                       {"label": "correct", "client_started_at": "yesterday",
                        "client_submitted_at": "2026-11-22T10:15:03.250Z"})
    assert resp.status_code == 303
    judgment = Judgment.objects.get()
    assert judgment.client_started_at is None and judgment.client_submitted_at is not None


def test_impossible_client_times_are_dropped_and_the_answer_kept():
    study = judgment_study()
    annotator = one_annotator(study)
    client = Client()
    assignment, _ = open_current(client, annotator)
    resp = client.post(url("item-detail", annotator, assignment.public_id),
                       {"label": "correct", "client_started_at": "2026-02-30T10:15:00.000Z",
                        "client_submitted_at": "2026-11-22T25:15:03.250Z"})
    assert resp.status_code == 303
    judgment = Judgment.objects.get()
    assert judgment.client_started_at is None and judgment.client_submitted_at is None


def test_the_duration_is_the_servers_and_the_clients_is_kept_beside_it():
    """duration_ms runs from when the server showed the item to when the answer arrived (issue 14): a
    client's own times, however far apart, only give client_duration_ms."""
    from datetime import timedelta

    from django.utils import timezone

    study = judgment_study()
    annotator = one_annotator(study)
    client = Client()
    assignment, _ = open_current(client, annotator)
    Assignment.objects.filter(pk=assignment.pk).update(opened_at=timezone.now() - timedelta(seconds=8))
    client.post(url("item-detail", annotator, assignment.public_id),
                {"label": "correct", "client_started_at": "2026-11-22T10:15:00.000Z",
                 "client_submitted_at": "2026-11-22T10:45:03.250Z"})
    judgment = Judgment.objects.get()
    assert judgment.client_duration_ms == 30 * 60_000 + 3250
    assert judgment.duration_ms is not None and 8000 <= judgment.duration_ms < 13000
    assert judgment.duration_ms == pytest.approx(
        (judgment.submitted_at - judgment.started_at).total_seconds() * 1000, abs=1000)


# --- htmx -----------------------------------------------------------------------------------

def test_htmx_get_returns_the_fragment_and_history_restore_the_page():
    study = ranking_study()
    annotator = one_annotator(study)
    client = Client()
    assignment, page = open_current(client, annotator)
    assert page.lstrip().startswith("<!doctype html>")
    fragment = client.get(url("item-detail", annotator, assignment.public_id), headers=HTMX).content.decode()
    assert fragment.lstrip().startswith("<div id=\"item\"") and "<html" not in fragment
    restore = client.get(url("item-detail", annotator, assignment.public_id),
                         headers={**HTMX, "HX-History-Restore-Request": "true"}).content.decode()
    assert "<html" in restore


def test_htmx_submit_pushes_next_url_and_renders_next_fragment():
    study = ranking_study()
    annotator = one_annotator(study)
    client = Client()
    assignment, _ = open_current(client, annotator)
    resp = client.post(url("item-detail", annotator, assignment.public_id), rank_data(assignment), headers=HTMX)
    assert resp.status_code == 200
    nxt = Assignment.objects.get(annotator=annotator, sequence=2)
    assert resp["HX-Push-Url"] == url("item-detail", annotator, nxt.public_id)
    body = resp.content.decode()
    assert "<html" not in body and f'hx-post="{url("item-detail", annotator, nxt.public_id)}"' in body
    assert "1 of 4" in body
    assert f'href="{url("item-detail", annotator, assignment.public_id)}"' in body  # back link


def test_htmx_refused_submit_swaps_the_error_fragment():
    study = ranking_study()
    annotator = one_annotator(study)
    client = Client()
    assignment, _ = open_current(client, annotator)
    resp = client.post(url("item-detail", annotator, assignment.public_id), {}, headers=HTMX)
    assert resp.status_code == 200  # htmx swaps only 2xx
    body = resp.content.decode()
    assert "<html" not in body and 'role="alert"' in body and "Every candidate needs a rank" in body
    assert "HX-Push-Url" not in resp
    assert not Judgment.objects.exists()


def test_htmx_last_submit_redirects_the_browser_to_the_completion_page():
    study = judgment_study(completion_code="C0DE42")
    annotator = one_annotator(study)
    client = Client()
    for _ in range(3):
        assignment, _ = open_current(client, annotator)
        resp = client.post(url("item-detail", annotator, assignment.public_id), {"label": "correct"}, headers=HTMX)
    assert resp["HX-Redirect"] == url("done", annotator)


# --- ownership -------------------------------------------------------------------------------

def test_someone_elses_assignment_is_404_and_untouched():
    study = ranking_study()
    mine, theirs = annotators_create(study=study, count=2)
    client = Client()
    their_assignment, _ = open_current(client, theirs)
    for method in (client.get, client.post):
        resp = method(url("item-detail", mine, their_assignment.public_id), rank_data(their_assignment))
        assert resp.status_code == 404
        assert "not one of yours" in resp.content.decode()
    assert client.get(url("item-detail", mine, "no-such-assignment")).status_code == 404
    assert not Judgment.objects.exists()


# --- going back and revising -------------------------------------------------------------

def test_back_link_revision_keeps_history_and_continues_forward():
    study = ranking_study()
    annotator = one_annotator(study)
    client = Client()
    first, body = open_current(client, annotator)
    assert "data-back" not in body  # nothing to go back to yet
    client.post(url("item-detail", annotator, first.public_id), rank_data(first, [1, 2, 3]))
    second, _ = open_current(client, annotator)
    client.post(url("item-detail", annotator, second.public_id), rank_data(second, [3, 2, 1]))
    third, body = open_current(client, annotator)
    back = re.search(r'<a class="button secondary" href="([^"]+)"[^>]*data-back>', body)
    assert back and back.group(1) == url("item-detail", annotator, second.public_id)

    revise = client.get(back.group(1)).content.decode()
    assert "Changing an earlier answer" in revise
    assert re.search(r'id="rank-A-3" name="rank-[^"]+" value="3" checked', revise)  # pre-filled
    assert re.search(r'id="rank-C-1" name="rank-[^"]+" value="1" checked', revise)

    same = client.post(back.group(1), rank_data(second, [3, 2, 1]))  # unchanged: no new revision
    assert same.status_code == 303 and Judgment.objects.filter(assignment=second).count() == 1
    resp = client.post(back.group(1), rank_data(second, [1, 3, 2]))
    assert resp.status_code == 303 and resp["Location"] == url("item-detail", annotator, third.public_id)
    history = list(Judgment.objects.filter(assignment=second).order_by("revision"))
    assert [(j.revision, j.is_current) for j in history] == [(1, False), (2, True)]
    assert history[0].answer != history[1].answer
    assert Judgment.objects.filter(assignment=first).count() == 1


# --- completion --------------------------------------------------------------------------------

def finish_all(client: Client, annotator: Annotator) -> None:
    while True:
        resp = client.get(url("item-current", annotator))
        if resp["Location"] in (url("done", annotator), free("done")):
            return
        assignment = Assignment.objects.get(public_id=resp["Location"].rstrip("/").rsplit("/", 1)[1])
        client.post(resp["Location"], {"label": "correct"})


def test_done_page_shows_code_and_sets_finished_at():
    study = judgment_study(completion_code="C0DE42")
    annotator = one_annotator(study)
    client = Client()
    finish_all(client, annotator)
    resp = client.get(url("done", annotator))
    body = resp.content.decode()
    assert resp.status_code == 200 and "Thank you" in body and "C0DE42" in body
    assert "prolific.com" not in body  # not a Prolific participant
    assert "Change your last answer" in body
    annotator.refresh_from_db()
    assert annotator.finished_at is not None


def test_done_page_gives_prolific_participants_the_return_link():
    study = judgment_study(completion_code="C0DE42")
    annotator = one_annotator(study, external_id="5f0c1a2b3c4d5e6f7a8b9c0d")
    client = Client()
    finish_all(client, annotator)
    body = client.get(url("done", annotator)).content.decode()
    assert 'href="https://app.prolific.com/submissions/complete?cc=C0DE42"' in body


def test_done_page_without_code_and_with_work_left():
    study = judgment_study()
    annotator = one_annotator(study)
    client = Client()
    resp = client.get(url("done", annotator))  # work left: back to it, no code, not finished
    assert resp.status_code == 302 and "/item/" in resp["Location"]
    annotator.refresh_from_db()
    assert annotator.finished_at is None
    finish_all(client, annotator)
    body = client.get(url("done", annotator)).content.decode()
    assert "Thank you" in body and "completion code" not in body


def test_items_per_annotator_caps_the_work():
    study = ranking_study(items_per_annotator=2)
    annotator = one_annotator(study)
    client = Client()
    for _ in range(2):
        assignment, body = open_current(client, annotator)
        assert f"of 2" in body
        client.post(url("item-detail", annotator, assignment.public_id), rank_data(assignment))
    assert client.get(url("item-current", annotator))["Location"] == url("done", annotator)


# --- unavailable ---------------------------------------------------------------------------------

def test_excluded_annotator_gets_a_polite_page_and_cannot_submit():
    study = ranking_study()
    annotator = one_annotator(study)
    client = Client()
    assignment, _ = open_current(client, annotator)
    Annotator.objects.filter(pk=annotator.pk).update(excluded=True, exclusion_reason="failed 4 of 5 spam checks")
    for path in (url("start", annotator), url("item-current", annotator), url("done", annotator),
                 url("item-detail", annotator, assignment.public_id)):
        resp = client.get(path, follow=True)
        body = resp.content.decode()
        assert resp.status_code == 200 and "no longer needs answers from you" in body, path
        assert "spam" not in body
    # An answer to an item already on their screen is kept (as the API keeps it), then the polite page.
    resp = client.post(url("item-detail", annotator, assignment.public_id), rank_data(assignment), follow=True)
    assert "no longer needs answers from you" in resp.content.decode()
    assert Judgment.objects.filter(assignment=assignment).count() == 1


@pytest.mark.parametrize("status, words", [(Status.CLOSED, "This study is closed"),
                                           (Status.DRAFT, "has not started yet")])
def test_closed_or_draft_study_gets_a_polite_page(status, words):
    study = ranking_study()
    annotator = one_annotator(study)
    study.status = status
    study.save()
    for path in (url("start", annotator), url("item-current", annotator), url("done", annotator)):
        resp = Client().get(path, follow=True)
        assert resp.status_code == 200 and words in resp.content.decode(), path
    assert not Assignment.objects.exists()


def test_an_answer_in_progress_is_kept_when_the_study_closes_meanwhile():
    study = ranking_study(completion_code="CODE7")
    annotator = one_annotator(study)
    client = Client()
    assignment, _ = open_current(client, annotator)
    study.status = Status.CLOSED
    study.save()
    resp = client.post(url("item-detail", annotator, assignment.public_id), rank_data(assignment), follow=True)
    assert Judgment.objects.filter(assignment=assignment, is_current=True).count() == 1
    assert "CODE7" in resp.content.decode()  # they did their part: the completion page with its code
    assert Assignment.objects.count() == 1  # and no new work was handed out


def test_no_completion_code_for_an_annotator_who_judged_nothing():
    study = ranking_study(redundancy=1, completion_code="CODE7")
    first = one_annotator(study)
    for item in Item.objects.filter(study=study):
        Item.objects.filter(pk=item.pk).update(n_assigned=1)  # every slot taken by others
    resp = Client().get(url("item-current", first), follow=True)
    body = resp.content.decode()
    assert "No items are left for you" in body and "CODE7" not in body


# --- Prolific ----------------------------------------------------------------------------------------

PROLIFIC_STUDY = "5f0a1b2c3d4e5f6a7b8c9d0e"


def prolific_url(study, **params) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return reverse("annotation:prolific", args=[study.slug]) + (f"?{query}" if query else "")


def entry(study, pid: str, session: str = "x1", study_id: str = PROLIFIC_STUDY) -> str:
    return prolific_url(study, PROLIFIC_PID=pid, STUDY_ID=study_id, SESSION_ID=session)


def prolific_study(**settings):
    study = ranking_study(**settings)
    study.prolific_study_id = PROLIFIC_STUDY
    study.save(update_fields=["prolific_study_id"])
    return study


def test_prolific_entry_creates_one_annotator_per_pid_and_reuses_it():
    study = prolific_study()
    client = Client()
    resp = client.get(entry(study, "abc123DEF", "x1"))
    assert resp.status_code == 302
    annotator = Annotator.objects.get(study=study, external_id="abc123DEF")
    # Straight to the token-free start page, the annotator in the browser's cookie: the token is in no address.
    assert resp["Location"] == free("start") and cookie_of(client) == annotator.token
    again = client.get(entry(study, "abc123DEF", "x1"))  # the same participant comes back: same browser, session
    assert again.status_code == 302 and again["Location"] == free("start") and cookie_of(client) == annotator.token
    stranger = Client()
    other = stranger.get(entry(study, "zzz999", "x2"))
    assert other.status_code == 302 and cookie_of(stranger) not in ("", annotator.token)
    assert Annotator.objects.filter(study=study).count() == 2
    annotator.refresh_from_db()
    assert annotator.entry_session == "x1"
    sessions = [{k: v for k, v in e.items() if k != "at"} for e in annotator.external_sessions]
    assert sessions == [{"prolific_study_id": PROLIFIC_STUDY, "prolific_session_id": "x1"}]
    assert all(e["at"] for e in annotator.external_sessions)


def test_prolific_entry_is_off_until_a_manager_turns_it_on():
    """The join of a study without opt-in: any open study used to take anyone with any id."""
    study = ranking_study()
    assert study.prolific_study_id == ""
    resp = Client().get(entry(study, "abc123"))
    assert resp.status_code == 404 and "Location" not in resp
    assert not Annotator.objects.filter(study=study).exists()


def test_prolific_entry_refuses_another_prolific_study_id():
    study = prolific_study()
    resp = Client().get(entry(study, "abc123", study_id="someotherstudy"))
    assert resp.status_code == 403 and "another study" in resp.content.decode()
    assert not Annotator.objects.filter(study=study).exists()


def test_a_participant_id_in_use_is_not_a_key_to_its_session():
    """The takeover: whoever knows a participant id used to be redirected to that annotator's secret link."""
    study = prolific_study()
    participant = Client()
    assert participant.get(entry(study, "victim1", "sVictim")).status_code == 302
    annotator = Annotator.objects.get(study=study, external_id="victim1")
    for stranger, session in ((Client(), "sVictim"), (Client(), "sOther"), (participant, "sOther")):
        resp = stranger.get(entry(study, "victim1", session))
        body = resp.content.decode()
        assert resp.status_code == 403 and "Location" not in resp
        assert "already in use" in body and annotator.token not in body
    # A hand-made cookie naming the id is not the signed one the entry set.
    forger = Client()
    forger.cookies[f"prolific-{study.pk}"] = "victim1"
    assert forger.get(entry(study, "victim1", "sVictim")).status_code == 403
    annotator.refresh_from_db()
    assert [e["prolific_session_id"] for e in annotator.external_sessions] == ["sVictim"]  # refusals store nothing
    assert participant.get(entry(study, "victim1", "sVictim"))["Location"] == free("start")
    assert cookie_of(participant) == annotator.token


def test_invited_ids_enter_the_same_way(tmp_path):
    """``invite --ids``: an invited id is bound on its first use; a new client with it then gets no link."""
    from django.core.management import call_command

    study = prolific_study()
    ids = tmp_path / "ids.txt"
    ids.write_text("invited1\ninvited2\n", encoding="utf-8")
    call_command("invite", study.slug, "--ids", str(ids), stdout=open(tmp_path / "out", "w"))
    invited = Annotator.objects.get(study=study, external_id="invited1")
    participant = Client()
    assert participant.get(entry(study, "invited1", "s1"))["Location"] == free("start")
    assert cookie_of(participant) == invited.token
    resp = Client().get(entry(study, "invited1", "s1"))
    assert resp.status_code == 403 and invited.token not in resp.content.decode()
    # An invited id already at work through its own link cannot be entered through p/<slug>/ at all.
    other = Annotator.objects.get(study=study, external_id="invited2")
    Client().get(url("start", other), follow=True)
    resp = Client().get(entry(study, "invited2", "s2"))
    assert resp.status_code == 403 and other.token not in resp.content.decode()


@pytest.mark.parametrize("missing", ["STUDY_ID", "SESSION_ID"])
def test_prolific_entry_needs_every_parameter(missing):
    study = prolific_study()
    params = {"PROLIFIC_PID": "abc123", "STUDY_ID": PROLIFIC_STUDY, "SESSION_ID": "x1"}
    del params[missing]
    resp = Client().get(prolific_url(study, **params))
    assert resp.status_code == 400 and missing in resp.content.decode()
    assert not Annotator.objects.filter(study=study).exists()


def test_prolific_entry_refuses_a_malformed_session_id_and_stores_nothing():
    study = prolific_study()
    resp = Client().get(prolific_url(study, PROLIFIC_PID="abc123", STUDY_ID=PROLIFIC_STUDY, SESSION_ID="x y<"))
    assert resp.status_code == 400 and "SESSION_ID" in resp.content.decode()
    assert not Annotator.objects.filter(study=study).exists()


@pytest.mark.parametrize("pid, problem", [(None, "is missing"), ("", "is missing"),
                                          ("abc-123", "letters and digits"), ("a" * 201, "letters and digits"),
                                          ("%3Cscript%3E", "letters and digits")])
def test_prolific_entry_refuses_bad_pids_with_400(pid, problem):
    study = prolific_study()
    params = {} if pid is None else {"PROLIFIC_PID": pid}
    resp = Client().get(prolific_url(study, **params, STUDY_ID=PROLIFIC_STUDY, SESSION_ID="x1"))
    assert resp.status_code == 400
    body = resp.content.decode()
    assert "PROLIFIC_PID" in body and problem in body and "<script>" not in body
    assert not Annotator.objects.exists()


def test_prolific_entry_for_unknown_or_closed_study():
    assert Client().get("/p/no-such-study/?PROLIFIC_PID=abc").status_code == 404
    study = prolific_study()
    study.status = Status.CLOSED
    study.save()
    resp = Client().get(entry(study, "abc"))
    assert resp.status_code == 200 and "This study is closed" in resp.content.decode()
    assert not Annotator.objects.exists()


# --- blindness: nothing that identifies candidates or items leaks ----------------------------

OPAQUE_RUN = re.compile(r"[a-z0-9_-]{16,}")
FORBIDDEN = ("reference", "sys1", "sys2", "sys3", "spam", "is_reference", "is_spam")


@pytest.mark.parametrize("protocol", ["ranking", "choice", "judgment"])
def test_no_system_names_flags_or_item_ids_in_any_page(protocol):
    settings = {"spam_rate": 0.5, "redundancy": 1, "completion_code": "DONE1",
                "instructions": "Judge each *candidate* carefully."}
    if protocol == "choice":
        settings["options"] = ["neither", "tie", "invalid"]
    if protocol == "judgment":
        settings.update(labels=["correct", "incorrect"], multi_label=True)
    n_candidates = {"ranking": 4, "choice": 2, "judgment": 1}[protocol]
    study = make_study(slug=f"blind-{protocol}", protocol=protocol, n_items=6, n_candidates=n_candidates,
                       settings=settings)
    spam_items = Item.objects.filter(study=study, is_spam=True)
    assert spam_items.count() == 3
    external_ids = list(Item.objects.filter(study=study).values_list("external_id", flat=True))
    annotator = one_annotator(study, external_id="PID123")
    client = Client()
    bodies = [client.get(url("start", annotator), follow=True).content.decode()]
    seen_spam = 0
    while True:
        resp = client.get(url("item-current", annotator))
        if resp["Location"] in (url("done", annotator), free("done")):
            break
        assignment = Assignment.objects.get(public_id=resp["Location"].rstrip("/").rsplit("/", 1)[1])
        seen_spam += assignment.item.is_spam
        bodies.append(client.get(resp["Location"]).content.decode())
        bodies.append(client.get(resp["Location"], headers=HTMX).content.decode())
        cands = on_screen(assignment)
        refused = {"ranking": {}, "choice": {"choice": "bogus"}, "judgment": {"labels": ["nope"]}}[protocol]
        bodies.append(client.post(resp["Location"], refused).content.decode())
        answer = {"ranking": rank_data(assignment), "choice": {"choice": cands[0].public_id},
                  "judgment": {"labels": ["correct"]}}[protocol]
        posted = client.post(resp["Location"], answer, headers=HTMX)
        bodies.append(posted.content.decode())
        assert Judgment.objects.filter(assignment=assignment).exists()
    bodies.append(client.get(url("done", annotator)).content.decode())
    assert seen_spam == 3
    assert len(bodies) > 20
    for body in bodies:
        # Opaque ids and signed values are random base64url: one may spell "spam" by chance. Those runs (16 or
        # more characters with a digit) are left out; flags and names are words, which stay in.
        lowered = OPAQUE_RUN.sub(lambda m: "" if re.search(r"[0-9]", m.group()) else m.group(), body.lower())
        for word in FORBIDDEN:
            assert word not in lowered, word
        for ext in external_ids:
            assert ext not in body, ext
        assert annotator.token not in body  # the browser has the cookie: every link is token-free


def test_a_participant_from_before_binding_is_bound_by_their_own_session():
    """An annotator an earlier version's entry created (sessions recorded, nothing bound) goes on with the same
    SESSION_ID; another session is refused."""
    study = prolific_study()
    legacy = annotators_create(study=study, external_ids=["old1"])[0]
    legacy.external_sessions = [{"prolific_study_id": PROLIFIC_STUDY, "prolific_session_id": "sOld", "at": "x"}]
    legacy.save(update_fields=["external_sessions"])
    Client().get(url("start", legacy), follow=True)  # at work already
    assert Client().get(entry(study, "old1", "sNew")).status_code == 403
    participant = Client()
    assert participant.get(entry(study, "old1", "sOld"))["Location"] == free("start")
    assert cookie_of(participant) == legacy.token
    legacy.refresh_from_db()
    assert legacy.entry_session == "sOld"
    assert Client().get(entry(study, "old1", "sOld")).status_code == 403  # bound now: another browser is refused
