"""HTML built from study data for the annotator's pages.

Everything that comes from a study file (candidate texts, highlights,
instructions) is escaped here, piece by piece, before being marked safe:
no raw HTML from data ever reaches an annotator's browser.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit
from xml.etree.ElementTree import Element

import markdown
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

from studies.definition.sentences import sentence_spans

SAFE_URL_SCHEMES = {"", "http", "https", "mailto"}


def highlight_spans(text: str, spans: Any) -> list[bool]:
    """A per-character mask of the marked characters.

    Spans are ``[start, end)``; anything malformed (not a pair of integers,
    empty, reversed) is ignored, out-of-range ends are clipped and overlapping
    spans simply merge, so bad data can never break the page.
    """
    mask = [False] * len(text)
    if not isinstance(spans, (list, tuple)):
        return mask
    for span in spans:
        if not isinstance(span, (list, tuple)) or len(span) != 2:
            continue
        start, end = span
        if isinstance(start, bool) or isinstance(end, bool) or not isinstance(start, int) or not isinstance(end, int):
            continue
        start, end = max(0, start), min(len(text), end)
        for k in range(start, end):
            mask[k] = True
    return mask


def highlighted_lines(text: str, spans: Any) -> list[SafeString]:
    """The text as escaped HTML lines (split at "\\n"), marked spans wrapped in ``<mark>``.

    Document-unit candidates are blocks of sentences separated by newlines;
    each becomes its own line. A span crossing a line break is closed at the
    end of the line and reopened on the next one, so the markup stays valid.
    """
    mask = highlight_spans(text, spans)
    lines: list[SafeString] = []
    pos = 0
    for line in text.split("\n"):
        lines.append(_marked(line, mask[pos:pos + len(line)]))
        pos += len(line) + 1
    return lines


def highlighted_sentences(text: str, spans: Any, sentences: list[str] | None) -> list[SafeString]:
    """A candidate's rows in the document view: its sentence list (else its lines), spans marked.

    Highlight spans index ``text``; the import makes ``text`` the sentences
    joined by one character, so each sentence's part of the mask is known.
    """
    if not sentences:
        return highlighted_lines(text, spans)
    ranges = sentence_spans(text, sentences)
    if ranges is None:  # not stored by the import (e.g. edited in the admin): the sentences, unmarked
        return [mark_safe(escape(s)) for s in sentences]  # noqa: S308 - escaped
    mask = highlight_spans(text, spans)
    return [_marked(text[a:b], mask[a:b]) for a, b in ranges]


def _marked(line: str, mask: list[bool]) -> SafeString:
    """``line`` escaped, the runs of characters whose mask is set wrapped in ``<mark>``."""
    pieces: list[str] = []
    k = 0
    while k < len(line):
        marked = mask[k]
        j = k
        while j < len(line) and mask[j] == marked:
            j += 1
        segment = escape(line[k:j])
        pieces.append(f"<mark>{segment}</mark>" if marked else str(segment))
        k = j
    return mark_safe("".join(pieces))  # noqa: S308 - every piece escaped above


class _SafeLinks(Treeprocessor):
    """Drop link and image URLs with a scheme other than http(s)/mailto (e.g. ``javascript:``)."""

    def run(self, root: Element) -> None:
        for element in root.iter():
            for attr in ("href", "src"):
                value = element.get(attr)
                if value is None:
                    continue
                scheme = urlsplit(value.strip()).scheme.lower()
                if scheme not in SAFE_URL_SCHEMES:
                    element.set(attr, "#")
            if element.tag == "a" and element.get("href", "").startswith(("http://", "https://")):
                element.set("rel", "noopener noreferrer")
                element.set("target", "_blank")


class _EscapeHtml(Extension):
    """Python-Markdown without raw HTML: block and inline HTML are shown as text, links sanitised."""

    def extendMarkdown(self, md: markdown.Markdown) -> None:  # noqa: N802 - Markdown's API name
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.treeprocessors.register(_SafeLinks(md), "safe_links", 0)


def instructions_html(text: str) -> SafeString:
    """A study's Markdown instructions as HTML, with any raw HTML in them escaped."""
    if not text.strip():
        return mark_safe("")
    html = markdown.markdown(text, extensions=[_EscapeHtml(), "sane_lists"], output_format="html")
    return mark_safe(html)  # noqa: S308 - raw HTML disabled, URLs sanitised


def candidate_letter(index: int) -> str:
    """A, B, …, Z, then AA, AB, … (screen labels for candidates)."""
    letters = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters
