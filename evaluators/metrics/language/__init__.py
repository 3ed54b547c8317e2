"""The language layer the automatic evaluators share: tokens, lemmas, tags, entities, WordNet, Chinese words.

Two backends behind one interface (:mod:`evaluators.metrics.language.base`):
``lexicon`` (the default: pip-installed lexicons, no download at run time) and
``spacy:<pipeline>`` (when the user installs spaCy and a pipeline).  Every score
records which backend produced it; the two are never mixed within one run.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evaluators.metrics.language.base import Backend

#: Backend kinds by the part of a spec before ":" (``spacy:en_core_web_sm`` -> ``spacy``); each
#: factory gets the part after it (``""`` when there is none) and returns a ready backend.
BACKEND_FACTORIES: dict[str, Callable[[str], Backend]] = {}
_LOADED: dict[str, Backend] = {}


def register_backend(kind: str, factory: Callable[[str], Backend]) -> None:
    """Make ``get_backend("<kind>[:ARG]")`` call ``factory(ARG)``."""
    BACKEND_FACTORIES[kind] = factory


def get_backend(spec: str) -> Backend:
    """The backend a spec names (``lexicon``, ``spacy:NAME``), loaded once per process.

    An unknown kind is a ``ValueError``; a known one that cannot be used here (spaCy or the
    pipeline not installed) raises the backend's own error, which says what to install.
    """
    spec = spec.strip()
    if spec not in _LOADED:
        kind, _, arg = spec.partition(":")
        if kind not in BACKEND_FACTORIES:
            known = ", ".join(f"{k}:NAME" if k == "spacy" else k for k in sorted(BACKEND_FACTORIES))
            raise ValueError(f"unknown language backend {spec!r}; known: {known}")
        _LOADED[spec] = BACKEND_FACTORIES[kind](arg)
    return _LOADED[spec]


def _spacy(pipeline: str) -> Backend:
    from evaluators.metrics.language.spacy_backend import load  # spaCy is optional (and ~1 s): imported on use

    return load(pipeline)


def _lexicon(arg: str) -> Backend:
    # Each backend is imported on first use: the lexicon one loads its tagger data and simplemma (~0.25 s),
    # which bleu, chrf, ter and the web pages never need.
    from evaluators.metrics.language.lexicon_backend import LexiconBackend

    if arg:
        raise ValueError(f"the lexicon backend takes no argument (got 'lexicon:{arg}'); use 'lexicon'")
    return LexiconBackend()


register_backend("spacy", _spacy)
register_backend("lexicon", _lexicon)
