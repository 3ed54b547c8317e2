"""An explicit list of English and French discourse connectives, and where they are in a text.

Used by the demo to mark connectives in the DiaBLa subset (``metadata.connective_span``,
read by the connective generator, studies/generators/choice.py) and usable on any data.
Deliberately a word list, not a parser (docs/protocols/generators.md):

- ``ANYWHERE``: connectives that are connectives wherever they stand
  (*because, however, parce que, cependant…*);
- ``CLAUSE_INITIAL``: words that are connectives only when they open a sentence or
  a clause — at the start of the text or right after ``. ! ? , ; : …`` or a dash —
  because elsewhere they are mostly something else (*so* in "so much", *then* in
  "by then", *alors* in "alors que", *aussi* in "moi aussi").

Matching is case-insensitive, on whole words; the apostrophe of *d'ailleurs*
may be straight or curly. Where several connectives match at one position the
longest wins (*parce que* before *que*-less words, *even though* before *though*).
"""
from __future__ import annotations

import re

ANYWHERE: dict[str, tuple[str, ...]] = {
    "english": ("because", "however", "therefore", "although", "though", "even though", "nevertheless",
                "moreover", "furthermore", "otherwise", "meanwhile", "whereas", "unless", "besides",
                "in fact", "of course", "after all", "instead", "anyway", "actually"),
    "french": ("parce que", "cependant", "pourtant", "néanmoins", "toutefois", "donc", "puisque", "bien que",
               "en fait", "d'ailleurs", "par contre", "en revanche", "sinon", "quand même", "de toute façon",
               "en effet", "du coup", "au fait", "au moins", "mais"),
}
CLAUSE_INITIAL: dict[str, tuple[str, ...]] = {
    "english": ("but", "so", "then", "also", "and then", "still", "yet", "well", "at least", "by the way"),
    "french": ("alors", "aussi", "puis", "ensuite", "enfin", "bon", "et puis", "or"),
}
LANGUAGES = tuple(ANYWHERE)


def _pattern(words: tuple[str, ...]) -> str:
    alternatives = sorted(words, key=len, reverse=True)  # longest first: "even though" before "though"
    return "|".join(re.escape(w).replace("'", "['’]").replace(r"\ ", r"\s+") for w in alternatives)


_RE = {
    language: re.compile(
        rf"(?<![\w'’])(?:{_pattern(ANYWHERE[language])})(?![\w'’])"
        rf"|(?:^|(?<=[.!?,;:…–—-])|(?<=[.!?,;:…–—-]\s))(?:{_pattern(CLAUSE_INITIAL[language])})(?![\w'’])",
        re.IGNORECASE | re.MULTILINE)
    for language in LANGUAGES
}


def connective_spans(text: str, language: str) -> list[tuple[int, int]]:
    """Character spans ``[start, end)`` of the listed connectives of ``language`` in ``text``, in order."""
    if language not in _RE:
        raise ValueError(f"language: {language!r} is not one of {', '.join(LANGUAGES)}")
    return [m.span() for m in _RE[language].finditer(text)]


def first_connective(text: str, language: str) -> tuple[int, int] | None:
    """The first listed connective of ``text`` (the one a demo item marks), or None."""
    spans = connective_spans(text, language)
    return spans[0] if spans else None
