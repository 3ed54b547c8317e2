"""The browsable API docs page: Swagger UI from drf-spectacular-sidecar's static files, no CDN."""
from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_docs_page_uses_local_swagger_ui(client):
    response = client.get(reverse("api-docs"))
    assert response.status_code == 200
    page = response.content.decode()
    assert reverse("api-schema") in page
    urls = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert any(u.endswith("swagger-ui-bundle.js") for u in urls)
    for url in urls:
        assert url.startswith("/static/"), url  # nothing from a CDN
        assert finders.find(url.removeprefix("/static/")), url
    assert '"validatorUrl": null' in page


def test_docs_page_as_readable_as_the_schema(client, django_user_model):
    """The schema is public today (SERVE_PERMISSIONS AllowAny); its docs page is too, for every user."""
    assert client.get(reverse("api-schema")).status_code == client.get(reverse("api-docs")).status_code == 200
    client.force_login(django_user_model.objects.create_user("someone", password="x"))
    assert client.get(reverse("api-docs")).status_code == 200


def test_docs_page_wrong_method(client):
    assert client.post(reverse("api-docs")).status_code == 405


def test_researcher_nav_links_the_docs(client, admin_user):
    client.force_login(admin_user)
    assert reverse("api-docs") in client.get(reverse("studies:list")).content.decode()


def test_docs_page_has_a_language_our_colours_and_no_links_inside_buttons(client):
    """Issue 12: axe's html-has-lang, color-contrast and nested-interactive (the browser test runs axe on it)."""
    page = client.get(reverse("api-docs")).content.decode()
    assert '<html lang="en">' in page
    css = re.findall(r'<link rel="stylesheet" href="([^"]+)"', page)
    assert css[-1].endswith("/css/api-docs.css") and css[0].endswith("swagger-ui.css")  # ours after Swagger UI's
    assert finders.find("css/api-docs.css")
    assert '"deepLinking": false' in page  # a path link inside the expand button is nested-interactive
    assert 'setAttribute("aria-label", "Close")' in page
