"""Invitation links, the annotator cookie, the addresses of the annotator's pages, and the Prolific entry URL.

The invitation link ``/a/<token>/`` is the only address that carries the token: its GET sets the annotator
cookie (:data:`ANNOTATOR_COOKIE`, signed, HTTP-only, SameSite=Lax) and redirects to the token-free start page
``/a/``, whose pages (``/a/item/…``, ``/a/done/``, ``/a/tutorial/…``) find the annotator in the cookie. So a
browser sends the token in one request's address, and access logs carry it at most once (docs/deploy.md).
The older token addresses of the other pages (``/a/<token>/item/…``: open tabs, bookmarks) still work; a page
served for a request that carries the cookie of the same annotator links to the token-free addresses.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from annotation.pages.cookies import signed_value
from annotation.models import Annotator

#: The URL parameters Prolific fills in (its ``{{%NAME%}}`` placeholders); ``prolific`` reads these names.
PROLIFIC_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")

#: The cookie naming the annotator of this browser: the latest invitation (or Prolific entry) opened in it.
ANNOTATOR_COOKIE = "annotator"
ANNOTATOR_COOKIE_MAX_AGE = 60 * 60 * 24 * 180
_SALT = "annotation.pages.links.annotator"

#: True while an annotator page is built for a browser that has the annotator cookie of that annotator.
_token_free: ContextVar[bool] = ContextVar("annotator_links_token_free", default=False)


def invitation_url(annotator: Annotator, base_url: str | None = None) -> str:
    base = (base_url or settings.SITE_URL).rstrip("/")
    return base + reverse("annotation:start", args=[annotator.token])


def prolific_url(*, slug: str, base_url: str | None = None) -> str:
    """The study URL to paste into Prolific, with Prolific's placeholders left for Prolific to fill."""
    base = (base_url or settings.SITE_URL).rstrip("/")
    query = "&".join(f"{name}={{{{%{name}%}}}}" for name in PROLIFIC_PARAMS)
    return f"{base}{reverse('annotation:prolific', args=[slug])}?{query}"


def cookie_token(request: HttpRequest) -> str:
    """The token in the request's annotator cookie; "" without one (or with a forged or expired one)."""
    return signed_value(request, ANNOTATOR_COOKIE, salt=_SALT, max_age=ANNOTATOR_COOKIE_MAX_AGE)


def annotator_cookie_set(request: HttpRequest, response: HttpResponse, annotator: Annotator) -> None:
    """Name ``annotator`` in this browser's annotator cookie (replacing any other annotator in it)."""
    response.set_signed_cookie(ANNOTATOR_COOKIE, annotator.token, salt=_SALT, max_age=ANNOTATOR_COOKIE_MAX_AGE,
                               path=reverse("annotation:cookie-start"), httponly=True, samesite="Lax",
                               secure=request.is_secure() or settings.HTTPS)


@contextmanager
def token_free_links(on: bool) -> Iterator[None]:
    """Build the annotator pages' addresses without the token (``on``) or with it, inside the block."""
    reset = _token_free.set(on)
    try:
        yield
    finally:
        _token_free.reset(reset)


def page_url(annotator: Annotator, name: str, *args: Any) -> str:
    """The address of one of ``annotator``'s pages (``start``, ``item-current``, ``item-detail``, ``item-skip``,
    ``done``, ``tutorial``, ``tutorial-step``): token-free when the page is built for a browser with their
    cookie (:func:`token_free_links`), else with the token as in the invitation link."""
    if _token_free.get():
        return reverse(f"annotation:cookie-{name}", args=args)
    return reverse(f"annotation:{name}", args=[annotator.token, *args])
