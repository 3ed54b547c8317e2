"""``/help/<path>.md``: the project's own documentation (docs/), rendered from Markdown for staff.

The researcher pages name docs pages (the blinding warnings, the import page, the exports);
this serves them from the checkout the application runs from, so a link always shows the
version of the docs that matches the running code. Only ``.md`` files under docs/ are served
(no other file, no path out of docs/); relative links between pages keep working because
the URL mirrors the file's path. (Under /help/, not /docs/: Django's test live server
serves files of the working directory by their path, so /docs/… would bypass this view there.)
"""
from __future__ import annotations

from pathlib import Path

import markdown
from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

DOCS_DIR: Path = Path(settings.BASE_DIR) / "docs"
EXTENSIONS = ["tables", "fenced_code", "toc", "sane_lists"]


def doc_path(name: str) -> Path:
    """The file of docs page ``name`` (e.g. ``protocols/blinding.md``); Http404 outside docs/ or not Markdown."""
    root = DOCS_DIR.resolve()
    if "\x00" in name:
        raise Http404(f"No documentation page {name!r}.")
    path = (root / name).resolve()
    if path.suffix != ".md" or not path.is_relative_to(root) or not path.is_file():
        raise Http404(f"No documentation page {name!r}.")
    return path


def doc_html(text: str) -> tuple[str, str]:
    """(title, HTML) of a Markdown page: the title is its first ``# `` heading."""
    title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), "")
    return title, markdown.markdown(text, extensions=EXTENSIONS, output_format="html")


@require_GET
@staff_member_required
def doc_page(request: HttpRequest, name: str) -> HttpResponse:
    title, html = doc_html(doc_path(name).read_text(encoding="utf-8"))
    # The HTML comes from our own docs/ (committed Markdown), never from a user.
    return render(request, "studies/doc.html", {"title": title or name, "name": name, "html": mark_safe(html)})
