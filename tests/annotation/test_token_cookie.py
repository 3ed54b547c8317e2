"""The token leaves the address after the invitation link's first request (annotation/pages/links.py): the link sets
the annotator cookie and redirects to the token-free pages ``/a/…``, so access logs carry the token at most once."""
from __future__ import annotations

import pytest
from django.test import Client, override_settings
from django.urls import reverse

from annotation.pages.links import ANNOTATOR_COOKIE
from annotation.models import Annotator, Assignment, Judgment
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create
from tests.factories import make_study

pytestmark = pytest.mark.django_db


class Browser:
    """A client that follows redirects one hop at a time, as a browser does, and keeps every address it asks for."""

    def __init__(self) -> None:
        self.client = Client()
        self.requested: list[str] = []

    def _go(self, method: str, path: str, data: dict[str, str] | None = None) -> str:
        response = getattr(self.client, method)(path, data) if data else getattr(self.client, method)(path)
        self.requested.append(path)
        while response.status_code in (301, 302, 303):
            path = response["Location"]
            response = self.client.get(path)
            self.requested.append(path)
        assert response.status_code == 200, (path, response.status_code)
        return response.content.decode()

    def get(self, path: str) -> str:
        return self._go("get", path)

    def post(self, path: str, data: dict[str, str]) -> str:
        return self._go("post", path, data)


def ranks(assignment: Assignment) -> dict[str, str]:
    return {f"rank-{c.public_id}": str(r) for r, c in enumerate(ordered_candidates(assignment), start=1)}


def test_a_browser_sends_the_token_in_one_request_from_the_link_to_the_completion_page() -> None:
    study = make_study(n_items=2, n_candidates=2, settings={"redundancy": 1})
    annotator = annotators_create(study=study)[0]
    browser = Browser()
    start = browser.get(f"/a/{annotator.token}/")
    assert browser.requested[-1] == "/a/" and ">Start<" in start
    item = browser.get(reverse("annotation:cookie-item-current"))
    for _ in range(2):
        assignment = Assignment.objects.get(public_id=browser.requested[-1].split("/")[-2])
        assert browser.requested[-1] == reverse("annotation:cookie-item-detail", args=[assignment.public_id])
        item = browser.post(browser.requested[-1], ranks(assignment))
    done = browser.requested[-1]
    assert done == reverse("annotation:cookie-done") and study.completion_code in item
    assert Judgment.objects.filter(assignment__annotator=annotator).count() == 2
    assert [path for path in browser.requested if annotator.token in path] == [f"/a/{annotator.token}/"]
    # No page served through the cookie names the token: links, forms, hx-* attributes, scripts.
    for path in ("/a/", reverse("annotation:cookie-item-detail", args=[assignment.public_id]), done):
        html = browser.client.get(path).content.decode()
        assert annotator.token not in html, path
    assert annotator.token not in start


def test_the_cookie_is_signed_http_only_lax_and_secure_behind_https() -> None:
    annotator = annotators_create(study=make_study(n_items=1))[0]
    client = Client()
    entered = client.get(f"/a/{annotator.token}/")
    assert "no-store" in entered["Cache-Control"]  # a cached redirect would skip the cookie
    page = client.get("/a/")  # one address for every annotator: no shared cache may keep it
    assert "Cookie" in page["Vary"] and "private" in page["Cache-Control"]
    cookie = entered.cookies[ANNOTATOR_COOKIE]
    assert cookie["httponly"] and cookie["samesite"] == "Lax" and cookie["path"] == "/a/" and not cookie["secure"]
    assert cookie.value != annotator.token and cookie.value.startswith(annotator.token + ":")  # signed
    with override_settings(HTTPS=True):
        assert Client().get(f"/a/{annotator.token}/").cookies[ANNOTATOR_COOKIE]["secure"]
    forger = Client()
    forger.cookies[ANNOTATOR_COOKIE] = annotator.token  # a hand-made cookie is not the signed one
    assert forger.get("/a/").status_code == 404 and forger.get("/a/item/").status_code == 404
    assert Client().get("/a/done/").status_code == 404  # no cookie: the polite unknown-link page


def test_a_token_in_the_address_wins_over_the_cookie_and_the_latest_link_names_the_browser() -> None:
    study = make_study(n_items=4, n_candidates=2, settings={"redundancy": 2})
    first, second = annotators_create(study=study, count=2)
    client = Client()
    client.get(f"/a/{first.token}/")
    # An older tab of the second annotator (token address): served as theirs, with their token in its links.
    old_tab = client.get(reverse("annotation:item-current", args=[second.token]))
    assert old_tab["Location"].startswith(f"/a/{second.token}/item/")
    assert Assignment.objects.filter(annotator=second).count() == 1
    assert not Assignment.objects.filter(annotator=first).exists()
    # The first annotator's cookie: an old tab of theirs links token-free.
    old_own = client.get(reverse("annotation:item-current", args=[first.token]))
    assert old_own["Location"].startswith("/a/item/")
    # The latest invitation opened in the browser is the one the token-free pages serve.
    assert client.get(f"/a/{second.token}/", follow=True).redirect_chain == [("/a/", 302)]
    client.get(reverse("annotation:cookie-item-current"))
    assert Assignment.objects.filter(annotator=second).count() == 1  # the same open item, not a new one
    assert Annotator.objects.get(pk=second.pk).instructions_seen_at is not None


def test_an_answer_posted_to_an_old_token_address_is_still_taken() -> None:
    study = make_study(n_items=2, n_candidates=2, settings={"redundancy": 1})
    annotator = annotators_create(study=study)[0]
    client = Client()
    client.get(reverse("annotation:item-current", args=[annotator.token]))
    assignment = Assignment.objects.get(annotator=annotator)
    posted = client.post(reverse("annotation:item-detail", args=[annotator.token, assignment.public_id]),
                         ranks(assignment))
    assert posted.status_code == 303 and Judgment.objects.filter(assignment=assignment).exists()
