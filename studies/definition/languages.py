"""Languages of a study: BCP 47 tags, writing direction, the annotator interface's language.

A study names the language of its source and target texts (``source_language``,
``target_language``: BCP 47 tags such as ``fr``, ``ar``, ``zh-Hans``, ``pa-Arab``)
so that pages can mark every text with ``lang`` and ``dir``; and may fix the
language of the annotator interface (``interface_language``), one of the
translations shipped in ``locale/`` (settings.LANGUAGES).
"""
from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import ValidationError

# Well-formed BCP 47 (RFC 5646) language tags, without the irregular grandfathered ones:
# language[-extlang][-script][-region](-variant)*(-extension)*[-x-private].
_BCP47 = re.compile(
    r"[a-z]{2,3}(?:-[a-z]{3}){0,3}"
    r"(?:-[a-z]{4})?"
    r"(?:-(?:[a-z]{2}|[0-9]{3}))?"
    r"(?:-(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3}))*"
    r"(?:-[0-9a-wyz](?:-[a-z0-9]{2,8})+)*"
    r"(?:-x(?:-[a-z0-9]{1,8})+)?",
    re.IGNORECASE)

#: Scripts written right to left (ISO 15924), and languages whose default script is.
RTL_SCRIPTS = {"arab", "hebr", "syrc", "thaa", "nkoo", "adlm", "rohg", "samr", "mand", "mend", "yezi", "aran"}
RTL_LANGUAGES = {"ar", "arc", "ckb", "dv", "fa", "he", "iw", "ji", "ks", "ku-arab", "lrc", "mzn", "nqo", "pnb",
                 "ps", "sd", "syr", "ug", "ur", "yi", "prs", "azb", "glk", "bal", "bqi", "sdh", "uz-arab"}


def language_tag_error(tag: str) -> str:
    """Why ``tag`` is not a well-formed BCP 47 language tag ('' when it is, or when blank)."""
    if not tag:
        return ""
    if len(tag) > 35 or not _BCP47.fullmatch(tag):
        return f"{tag!r} is not a BCP 47 language tag (e.g. en, fr-CA, zh-Hans, ar)"
    return ""


def validate_language_tag(tag: str) -> None:
    """Model-field validator: a blank or well-formed BCP 47 tag (the item's per-item languages)."""
    problem = language_tag_error(tag)
    if problem:
        raise ValidationError(problem)


def text_direction(tag: str) -> str:
    """``rtl`` or ``ltr`` for a known language tag; ``auto`` (let the browser decide) when blank.

    The script subtag wins (``pa-Arab`` is right to left, ``az-Latn`` left to right);
    otherwise the primary language's usual script decides.
    """
    if not tag or language_tag_error(tag):
        return "auto"
    parts = tag.lower().split("-")
    script = next((p for p in parts[1:] if len(p) == 4 and p.isalpha()), "")
    if script:
        return "rtl" if script in RTL_SCRIPTS else "ltr"
    return "rtl" if parts[0] in RTL_LANGUAGES else "ltr"


#: Scripts written without spaces between words: a "word" there is a run of many words, so span
#: selections are not snapped to words by default (``Study.snap_to_words``; docs/protocols/mqm-esa.md).
UNSPACED_SCRIPTS = {"hani", "hans", "hant", "jpan", "hira", "kana", "thai", "laoo", "khmr", "mymr", "tibt"}
UNSPACED_LANGUAGES = {"zh", "ja", "th", "lo", "km", "my", "bo", "yue", "wuu", "cmn"}


def writes_words_with_spaces(tag: str) -> bool:
    """False for a language (or script subtag) written without spaces between words (Chinese, Japanese, Thai…);
    True otherwise, and for a blank or unknown tag."""
    if not tag or language_tag_error(tag):
        return True
    parts = tag.lower().split("-")
    script = next((p for p in parts[1:] if len(p) == 4 and p.isalpha()), "")
    if script:
        return script not in UNSPACED_SCRIPTS
    return parts[0] not in UNSPACED_LANGUAGES


def interface_languages() -> list[str]:
    """Codes of the interface translations (settings.LANGUAGES), e.g. ``["en", "fr", …, "zh-hans", "ar"]``."""
    return [code for code, _name in settings.LANGUAGES]


def interface_language_error(code: str) -> str:
    """Why ``code`` cannot be an interface language ('' when it can, or when blank)."""
    if not code or code in interface_languages():
        return ""
    return f"{code!r} is not an interface language; available: {', '.join(interface_languages())}"


def html_lang(code: str) -> str:
    """The BCP 47 spelling of a Django language code, for ``<html lang>`` (``zh-hans`` → ``zh-Hans``)."""
    parts = code.split("-")
    return "-".join([parts[0]] + [p.title() if len(p) == 4 else p.upper() if len(p) == 2 else p for p in parts[1:]])
