"""One typographic form for every candidate on screen (``Study.normalise_typography``).

A human reference typed by a translator often carries typography no MT system
produces (curly quotes, the ellipsis character, dashes, non-breaking spaces),
so an annotator can pick it out without reading it. With the setting on, every
candidate text shown to annotators (item page and annotation API) goes through
``normalise_typography``; stored texts, exports and metrics are unchanged.

The mapping (and nothing else; spacing and casing are left alone):

- quotes and apostrophes ‘ ’ ‚ ‛ ′ → ``'``; “ ” „ ‟ ″ « » → ``"``;
- the ellipsis character … → ``...``;
- dashes ‐ ‑ ‒ – — ― − → ``-``;
- non-breaking and thin spaces (U+00A0, U+202F narrow NBSP, U+2007, U+2009) → a space.

Highlights are character offsets, and "…" becomes three characters, so the
normaliser keeps an offset map and returns the highlight spans moved with it.
"""
from __future__ import annotations

from typing import Any

TYPOGRAPHY_MAP: dict[str, str] = {
    **{c: "'" for c in "‘’‚‛′"},
    **{c: '"' for c in "“”„‟″«»"},
    "…": "...",
    **{c: "-" for c in "‐‑‒–—―−"},
    **{c: " " for c in "\u00a0\u202f\u2007\u2009"},
}


def normalise_text(text: str) -> tuple[str, list[int]]:
    """The normalised text and the offset map: ``offsets[k]`` is where old character k starts in the new text.

    ``offsets`` has ``len(text) + 1`` entries (the last is the new length), so an
    old span ``[start, end)`` becomes ``[offsets[start], offsets[end])``.
    """
    pieces: list[str] = []
    offsets: list[int] = []
    position = 0
    for char in text:
        offsets.append(position)
        piece = TYPOGRAPHY_MAP.get(char, char)
        pieces.append(piece)
        position += len(piece)
    offsets.append(position)
    return "".join(pieces), offsets


def normalise_typography(text: str, highlights: Any) -> tuple[str, Any]:
    """``text`` in the one typographic form, with its highlight spans moved to the new offsets.

    Malformed spans are passed on unchanged (the renderer ignores them); spans
    reaching past the text are clipped first, as the renderer would.
    """
    new_text, offsets = normalise_text(text)
    if new_text == text or not isinstance(highlights, list):
        return new_text, highlights
    moved: list[Any] = []
    for span in highlights:
        if (isinstance(span, (list, tuple)) and len(span) == 2
                and all(isinstance(x, int) and not isinstance(x, bool) for x in span)):
            start, end = (min(max(0, x), len(text)) for x in span)
            moved.append([offsets[start], offsets[end]])
        else:
            moved.append(span)
    return new_text, moved


def shown_candidate(*, text: str, highlights: Any, normalise: bool) -> tuple[str, Any]:
    """What an annotator is shown of a candidate: its text and highlights, normalised when the study asks."""
    return normalise_typography(text, highlights) if normalise else (text, highlights)
