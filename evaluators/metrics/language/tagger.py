"""A small part-of-speech tagger trained on Universal Dependencies: averaged perceptron, greedy left to right.

The lexicon backend asks it for the universal part of speech (UPOS) of each
token of a segment in English, German, French and Chinese.  The model is
Collins' (2002) averaged perceptron as Honnibal's "A good part-of-speech tagger
in about 200 lines of Python" (2013) describes it: one weight vector per
feature, the tag with the highest summed weight wins, tags are chosen left to
right and the two chosen before are features of the next; a word seen often
enough in training with (almost) always the same tag takes it from a table
without scoring.

Features of the word at ``i`` (:func:`features`): the lower-cased word (digits
folded to ``0``), its last 1-3 characters, its first character, its shape
(``Xxx``, ``dd``, ``X.X.``), whether it is capitalised and first in the
segment, the previous two and next two words, the previous and next words'
last three characters, the previous tag, the previous two tags, and the
previous tag with the word; for Chinese also the tags jieba's dictionary gives
the word and its neighbours (``n``, ``v``, ``nr``, ... or none).

The weights of each language are a file ``data/tagger/<lang>.npz`` beside this
module, trained by ``bench/ud_tagger.py`` (which also measures them) from UD
treebanks whose licence and attribution are in ``data/tagger/README.md``.  A
file holds the feature strings, their weights quantised to 8 bits with one
scale, the classes and the table of unambiguous words; it is loaded on first
use, once per process.  Nothing is downloaded.
"""
from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

#: Where the trained weights are, one ``<lang>.npz`` per language.
DATA_DIR = Path(__file__).resolve().parent / "data" / "tagger"
#: Languages with a trained model.
LANGUAGES = ("en", "de", "fr", "zh")
#: The version of the features and of the shipped weights (bump it when a tag can change); in the
#: backend's signature as ``tagger:ud-ap-<version>``.
MODEL_VERSION = "1"
#: Languages whose multi-word tokens the backend's tokenizer splits into UD's words (English clitics).
SPLIT_MULTIWORD = frozenset({"en"})
#: The tag before the first word (and before it).
START = ("-START-", "-START2-")

_DIGIT = re.compile(r"\d")


def normalise(word: str) -> str:
    """The word as a feature: lower-cased, digits folded to ``0`` (``1984`` -> ``0000``)."""
    return _DIGIT.sub("0", word.lower())


def shape(word: str) -> str:
    """``Friday`` -> ``Xx``, ``U.S.`` -> ``X.X.``, ``1984`` -> ``d``: character classes, runs collapsed."""
    out = []
    last = ""
    for c in word[:12]:
        k = "X" if c.isupper() else "x" if c.isalpha() else "d" if c.isdigit() else c
        if k != last:
            out.append(k)
            last = k
    return "".join(out)


def lexicon_tags(language: str, words: Sequence[str]) -> list[str] | None:
    """Each word's tag in an installed lexicon (Chinese: jieba's dictionary, ``?`` when absent), else None."""
    if language != "zh":
        return None
    table = _jieba_tags()
    return [table.get(w, "?") for w in words]


@lru_cache(maxsize=1)
def _jieba_tags() -> dict[str, str]:
    jieba = importlib.import_module("jieba")  # untyped: imported by name, used as Any
    jieba.setLogLevel(logging.WARNING)
    return dict(importlib.import_module("jieba.posseg").dt.word_tag_tab)


def word_features(word: str, w: str, first: bool) -> list[str]:
    """The features of a word itself (``w``: normalised; ``first``: first in the segment)."""
    return ["b", "w=" + w, "s1=" + w[-1:], "s2=" + w[-2:], "s3=" + w[-3:], "p1=" + w[:1], "sh=" + shape(word),
            "cap0=" + ("1" if first else "0") + ("X" if word[:1].isupper() else "x")]


def neighbour_features(w: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """The features a normalised word gives the word 2 after it, 1 after it, 1 before it and 2 before it."""
    return ["w-2=" + w], ["w-1=" + w, "s3-1=" + w[-3:]], ["w+1=" + w, "s3+1=" + w[-3:]], ["w+2=" + w]


def lexicon_features(lex: Sequence[str], i: int) -> list[str]:
    """The lexicon tags of word ``i`` and its neighbours as features."""
    return ["lx=" + lex[i], "lx+1=" + (lex[i + 1] if i + 1 < len(lex) else "-E-"),
            "lx-1=" + (lex[i - 1] if i > 0 else "-S-")]


def _padded(norm: Sequence[str]) -> list[str]:
    return ["-S-", "-S-", *norm, "-E-", "-E-"]


def static_features(words: Sequence[str], i: int, norm: Sequence[str],
                    lex: Sequence[str] | None = None) -> list[str]:
    """The features of word ``i`` that do not depend on the tags chosen before it (``lex``: lexicon tags)."""
    padded = _padded(norm)
    out = word_features(words[i], norm[i], i == 0)
    out += neighbour_features(padded[i])[0] + neighbour_features(padded[i + 1])[1]
    out += neighbour_features(padded[i + 3])[2] + neighbour_features(padded[i + 4])[3]
    return out if lex is None else out + lexicon_features(lex, i)


def tag_features(w: str, p1: str, p2: str) -> list[str]:
    """The features of a word that depend on the two tags chosen before it."""
    return ["t-1=" + p1, "t-2=" + p2 + "|" + p1, "t-1w=" + p1 + "|" + w]


def features(words: Sequence[str], i: int, norm: Sequence[str], p1: str, p2: str,
             lex: Sequence[str] | None = None) -> list[str]:
    """Every feature of word ``i`` given the previous two tags (``p1`` the nearer)."""
    return static_features(words, i, norm, lex) + tag_features(norm[i], p1, p2)


#: Words whose feature rows a model keeps (cleared when full).
ROW_CACHE_SIZE = 200_000


@dataclass(frozen=True)
class Model:
    """A trained tagger: ``weights[index[feature]]`` is a row of class scores."""

    language: str
    version: str
    classes: tuple[str, ...]
    index: dict[str, int]
    weights: np.ndarray  # int8, features x classes (multiplied by ``scale``: the scores' order needs no scale)
    tagdict: dict[str, str]  # normalised word -> its only tag
    #: (word, first) -> rows of its own features; normalised word -> rows it gives its neighbours
    _own: dict[tuple[str, bool], list[int]] = field(default_factory=dict, compare=False, repr=False)
    _around: dict[str, tuple[list[int], ...]] = field(default_factory=dict, compare=False, repr=False)

    def rows(self, names: Sequence[str]) -> list[int]:
        """The weight rows of the features the model knows among ``names``."""
        index = self.index
        return [r for f in names if (r := index.get(f)) is not None]

    def _own_rows(self, word: str, w: str, first: bool) -> list[int]:
        rows = self._own.get((word, first))
        if rows is None:
            if len(self._own) >= ROW_CACHE_SIZE:
                self._own.clear()
            rows = self._own[(word, first)] = self.rows(word_features(word, w, first))
        return rows

    def _around_rows(self, w: str) -> tuple[list[int], ...]:
        rows = self._around.get(w)
        if rows is None:
            if len(self._around) >= ROW_CACHE_SIZE:
                self._around.clear()
            rows = self._around[w] = tuple(self.rows(names) for names in neighbour_features(w))
        return rows

    def tag(self, words: Sequence[str]) -> list[str]:
        """One UPOS per word, greedy left to right (the same features as :func:`features`)."""
        norm = [normalise(w) for w in words]
        lex = lexicon_tags(self.language, words)
        padded = _padded(norm)
        weights, classes, tagdict = self.weights, self.classes, self.tagdict
        p1, p2 = START
        out = []
        for i, w in enumerate(norm):
            tag = tagdict.get(w)
            if tag is None:
                rows = (self._own_rows(words[i], w, i == 0) + self._around_rows(padded[i])[0]
                        + self._around_rows(padded[i + 1])[1] + self._around_rows(padded[i + 3])[2]
                        + self._around_rows(padded[i + 4])[3] + self.rows(tag_features(w, p1, p2)))
                if lex is not None:
                    rows += self.rows(lexicon_features(lex, i))
                tag = classes[int(weights[rows].sum(axis=0, dtype=np.int32).argmax())] if rows else classes[0]
            out.append(tag)
            p2, p1 = p1, tag
        return out


def read_conllu(path: Path, language: str) -> Iterator[tuple[list[str], list[str]]]:
    """(tokens, UPOS tags) of each sentence of a CoNLL-U file, tokens as the backend's tokenizer cuts them.

    A multi-word token is its words in English (``didn't`` = ``did`` + ``n't``, split as the tokenizer
    splits it), else one token with its first word's tag (French ``du`` = ``de`` + ``le``, German
    ``am`` = ``an`` + ``dem``: ADP), which the tokenizer keeps whole; empty nodes are left out.
    """
    split = language in SPLIT_MULTIWORD
    words: list[str] = []
    tags: list[str] = []
    inside = 0  # the last word id of the multi-word token being read
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line:
                if words:
                    yield words, tags
                words, tags, inside = [], [], 0
                continue
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) < 4:
                continue
            first, dash, last = cols[0].partition("-")
            if dash and split:
                continue
            if dash:
                words.append(cols[1])
                tags.append("")
                inside = int(last)
            elif cols[0].isdigit():
                if int(cols[0]) <= inside:
                    if not tags[-1]:
                        tags[-1] = cols[3]
                    continue
                words.append(cols[1])
                tags.append(cols[3])
    if words:
        yield words, tags


def save(path: Path, *, language: str, version: str, classes: Sequence[str], features_: Sequence[str],
         weights: np.ndarray, tagdict: dict[str, str]) -> None:
    """Write a model file (``weights``: float, features x classes; quantised here to int8)."""
    scale = float(np.abs(weights).max()) / 127 or 1.0
    q = np.clip(np.rint(weights / scale), -127, 127).astype(np.int8)
    words = sorted(tagdict)
    np.savez_compressed(
        path, language=np.array(language), version=np.array(version), classes=np.array(list(classes)),
        features=np.frombuffer("\n".join(features_).encode("utf-8"), dtype=np.uint8), weights=q,
        scale=np.array(scale), tagdict_words=np.frombuffer("\n".join(words).encode("utf-8"), dtype=np.uint8),
        tagdict_tags=np.array([tagdict[w] for w in words]))


def read(path: Path) -> Model:
    """Read a model file written by :func:`save`."""
    with np.load(path, allow_pickle=False) as z:
        feats = bytes(z["features"]).decode("utf-8").split("\n")
        words = bytes(z["tagdict_words"]).decode("utf-8").split("\n") if z["tagdict_words"].size else []
        return Model(language=str(z["language"]), version=str(z["version"]),
                     classes=tuple(str(c) for c in z["classes"]), index={f: i for i, f in enumerate(feats)},
                     weights=z["weights"], tagdict=dict(zip(words, (str(t) for t in z["tagdict_tags"]))))


@lru_cache(maxsize=None)
def model(language: str) -> Model | None:
    """The shipped model of ``language`` (loaded once per process), None when there is none."""
    path = DATA_DIR / f"{language}.npz"
    return read(path) if language in LANGUAGES and path.exists() else None


def signature() -> str:
    """``tagger:ud-ap-<version>``: the tagger and the version of its features and shipped weights."""
    return f"tagger:ud-ap-{MODEL_VERSION}"
