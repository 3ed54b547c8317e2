"""The language of the annotator interface, chosen per request.

Only the annotator's pages are translated (researcher and admin pages stay in
English, so the project has no LocaleMiddleware): each annotator view renders
inside ``interface_language(...)``, which activates the study's
``interface_language`` when it has one, else the best match of the browser's
``Accept-Language`` among settings.LANGUAGES, else English.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext
from django.utils.translation.trans_real import parse_accept_lang_header

from studies.definition.languages import html_lang, interface_languages, text_direction
from studies.models import Study

DEFAULT_LANGUAGE = "en"


def language_from_accept(header: str) -> str:
    """The supported interface language the browser prefers most ('' when none matches).

    ``fr-CA`` matches ``fr``; ``zh-CN``/``zh-SG`` (and ``zh``) match ``zh-hans``.
    """
    supported = interface_languages()
    for tag, _q in parse_accept_lang_header(header[:500]):
        tag = tag.lower()
        if tag == "*":
            continue
        try:
            # Django's variant matching knows the zh-* fallbacks (zh-cn → zh-hans, …).
            code = translation.get_supported_language_variant(tag)
        except LookupError:
            primary = tag.split("-")[0]
            code = "zh-hans" if primary == "zh" and not tag.startswith(("zh-hant", "zh-tw", "zh-hk", "zh-mo")) else primary
        if code in supported:
            return code
    return ""


def choose_language(request: HttpRequest, study: Study | None) -> str:
    """The interface language for this request: the study's setting, else the browser's, else English."""
    if study is not None and study.interface_language in interface_languages():
        return study.interface_language
    return language_from_accept(request.headers.get("Accept-Language", "")) or DEFAULT_LANGUAGE


@contextmanager
def interface_language(request: HttpRequest, study: Study | None) -> Iterator[str]:
    """Render inside this: the chosen language is active (and restored afterwards, the thread is shared)."""
    code = choose_language(request, study)
    with translation.override(code):
        yield code


def vary_on_language(response: HttpResponse, study: Study | None) -> HttpResponse:
    """Caches must key the page on Accept-Language unless the study fixes the language."""
    if study is None or not study.interface_language:
        patch_vary_headers(response, ["Accept-Language"])
    return response


def page_context(study: Study | None) -> dict[str, Any]:
    """What every annotator page needs from the study: its public title and the text languages.

    Call inside ``interface_language`` (the default title is translated).
    """
    code = translation.get_language() or DEFAULT_LANGUAGE
    source = study.source_language if study else ""
    target = study.target_language if study else ""
    return {
        "ui_lang": html_lang(code),
        "ui_dir": "rtl" if translation.get_language_bidi() else "ltr",
        "public_title": public_title(study),
        "source_lang": source, "source_dir": text_direction(source),
        "target_lang": target, "target_dir": text_direction(target),
        **wording_languages(study),
    }


def wording_languages(study: Study | None) -> dict[str, str]:
    """``lang``/``dir`` of the study's own wording (instructions, question, labels, public title).

    That wording is not translated with the interface: under a French interface an
    English instruction text keeps ``lang="en"`` (Study.wording_language).
    ``title_lang`` is '' when the page shows the translated default title.
    """
    if study is None:
        return {"study_lang": "", "study_dir": "", "title_lang": ""}
    tag = study.wording_language()
    return {"study_lang": tag, "study_dir": text_direction(tag),
            "title_lang": tag if study.public_title.strip() else ""}


def public_title(study: Study | None) -> str:
    """The annotator-facing title: the study's ``public_title``, else a neutral "Translation study"."""
    if study is not None and study.public_title.strip():
        return study.public_title
    return gettext("Translation study")
