"""Sentence lists of document blocks: checking them in a study file, reading them back.

A document-unit item may give its source block as ``source_sentences`` and each
candidate as ``sentences``; the document view aligns source sentence *i* with
every candidate's sentence *i*. The rules (docs/study-file.md):

- a sentence list is a non-empty list of strings (a candidate's sentence may be
  empty: a system that dropped a sentence);
- ``text`` (``source``) may be omitted when the list is given: it is then the
  sentences joined by line breaks. When both are given, the text must be the
  sentences joined by line breaks or by single spaces, so highlight spans (which
  index the text) fall on known sentences;
- the lists of one item are aligned: every candidate's ``sentences`` has as many
  sentences as ``source_sentences`` (or, without it, as the other candidates').

Items without lists are shown with their texts split at line breaks.
"""
from __future__ import annotations

from typing import Any

from studies.definition.typography import normalise_text

JOINERS = ("\n", " ")


def joiner_of(text: str, sentences: list[str]) -> str | None:
    """The one-character separator that joins ``sentences`` into ``text`` (None when none does)."""
    for joiner in JOINERS:
        if joiner.join(sentences) == text:
            return joiner
    return None


def _first_difference(text: str, sentences: list[str]) -> int:
    """1-based number of the first sentence that is not where the text has it."""
    pos = 0
    for k, sentence in enumerate(sentences, start=1):
        if k > 1:
            if pos >= len(text) or text[pos] not in JOINERS:
                return k
            pos += 1
        if text[pos:pos + len(sentence)] != sentence:
            return k
        pos += len(sentence)
    return len(sentences)


def check_sentences(value: Any, text: Any, where: str, text_field: str, errors: list[str]) -> list[str] | None:
    """A valid sentence list (or None, with the problems appended to ``errors``).

    ``text`` is the item's source or the candidate's text as given (None or ""
    when omitted); ``text_field`` names it in messages.
    """
    if not isinstance(value, list) or not value or not all(isinstance(s, str) for s in value):
        errors.append(f"{where}: must be a non-empty list of strings")
        return None
    if not any(s.strip() for s in value):
        errors.append(f"{where}: every sentence is empty")
        return None
    bad = [k for k, s in enumerate(value, start=1) if "\n" in s]
    if bad:
        errors.append(f"{where}: sentence {bad[0]} contains a line break (one sentence a list entry)")
        return None
    if isinstance(text, str) and text and joiner_of(text, value) is None:
        errors.append(f"{where}: does not match {text_field} (sentence {_first_difference(text, value)} differs); "
                      f"{text_field} must be the sentences joined by line breaks or single spaces, or be omitted")
        return None
    return value


def check_alignment(source_sentences: list[str] | None, candidate_sentences: list[tuple[int, list[str] | None]],
                    where: str, errors: list[str]) -> None:
    """Every candidate's list as long as the source's (or, without one, as the first candidate's)."""
    lists = [(k, s) for k, s in candidate_sentences if s is not None]
    if source_sentences is not None:
        expected, against = len(source_sentences), "source_sentences has"
    elif lists:
        first, first_list = lists[0]
        expected, against = len(first_list), f"candidates[{first}].sentences has"
    else:
        return
    for k, sentences in lists:
        if len(sentences) != expected:
            errors.append(f"{where}.candidates[{k}].sentences: {len(sentences)} sentences, but {against} {expected} "
                          "(sentence i is shown beside sentence i)")


def lines_of(text: str, sentences: list[str] | None) -> list[str]:
    """The rows of a text in the document view: its sentence list, else its lines."""
    if sentences:
        return list(sentences)
    return text.split("\n") if text else []


def sentence_spans(text: str, sentences: list[str]) -> list[tuple[int, int]] | None:
    """Character span of each sentence in ``text`` (None when the text is not the sentences joined)."""
    if joiner_of(text, sentences) is None:
        return None
    spans, pos = [], 0
    for sentence in sentences:
        spans.append((pos, pos + len(sentence)))
        pos += len(sentence) + 1
    return spans


def shown_sentences(sentences: list[str], *, normalise: bool) -> list[str]:
    """A sentence list as annotators see it: in the study's one typographic form when it asks for it.

    The mapping works character by character and leaves line breaks and spaces
    alone, so the shown text is still the shown sentences joined.
    """
    return [normalise_text(s)[0] for s in sentences] if normalise else list(sentences)
