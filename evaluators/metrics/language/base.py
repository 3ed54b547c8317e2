"""The interface every language backend implements.

A backend turns segments into :class:`Sentence` objects: tokens with lemma,
universal part of speech (``pos``), Penn Treebank tag (``tag``; ``""`` where
the backend has none), morphology, and named entities.  One input segment
gives one ``Sentence`` (segments are not re-split; :meth:`Backend.split_sentences`
does that when a metric needs it).
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

#: Held while spaCy is imported, and while the lexicon backend imports lemminflect with spaCy hidden
#: (``lexicon_backend._lemminflect``), so that no thread imports spaCy while it is hidden.
SPACY_IMPORT_LOCK = threading.Lock()


@dataclass(frozen=True)
class Token:
    text: str
    lemma: str
    pos: str  # Universal Dependencies UPOS (NOUN, ADJ, PRON, VERB, ...)
    tag: str = ""  # Penn Treebank tag for English (NN, VBD, PRP, ...), "" when unknown
    morph: str = ""  # UD features ("Tense=Past|VerbForm=Fin"), "" when unknown
    whitespace: bool = True  # followed by a space in the original text


@dataclass(frozen=True)
class Entity:
    text: str
    label: str  # PERSON, ORG, GPE, ... (spaCy/OntoNotes labels)
    start: int  # token index, inclusive
    end: int  # token index, exclusive


@dataclass(frozen=True)
class Sentence:
    text: str
    tokens: tuple[Token, ...]
    entities: tuple[Entity, ...] = field(default_factory=tuple)


class Backend(Protocol):
    #: "lexicon" or "spacy:<pipeline name>"
    name: str

    def signature(self) -> str:
        """The backend and the versions of everything it used, e.g. ``nlp:lexicon|simplemma:1.1.2|...``."""
        ...

    def analyse(self, segments: Sequence[str], language: str) -> list[Sentence]:
        """One analysed :class:`Sentence` per segment, in order (batched)."""
        ...

    def split_sentences(self, text: str, language: str) -> list[str]:
        """``text`` cut into sentences."""
        ...
