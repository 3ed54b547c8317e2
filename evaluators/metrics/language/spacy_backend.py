"""The spaCy language backend (``spacy:<pipeline>``): any installed spaCy pipeline, by name.

Optional: spaCy is not a runtime requirement.  A user who wants the metrics
that their papers computed with spaCy (BlonDe uses ``en_core_web_sm``)
installs spaCy and a pipeline with spaCy's own commands::

    pip install spacy
    python -m spacy download en_core_web_sm

and selects it with ``--nlp spacy:en_core_web_sm``.  Selecting it when spaCy
or the pipeline is missing is a :class:`BackendUnavailable` error that says
what to install.

What it does
------------
* One input segment is one spaCy ``Doc`` and one :class:`Sentence` (segments
  are not re-split); texts are batched through ``nlp.pipe``.
* :meth:`SpacyBackend.analyse` takes ``need``, the annotations the caller
  reads (``tag``, ``pos``, ``morph``, ``lemma``, ``entities``); components
  nothing needs (the parser, the lemmatizer, NER, ...) are disabled for that
  call.  Components of unknown kind (custom ones) always run.
* :meth:`SpacyBackend.tagged` is the lean path of a metric that needs only
  token texts, Penn tags and entities (BlonDe): only the components that give
  them run, and they are read from the ``Doc`` arrays without building tokens.
* The signature names the pipeline with its version and spaCy's version, e.g.
  ``nlp:spacy:en_core_web_sm|pipeline:en_core_web_sm@3.8.0|spacy:3.8.7``.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from evaluators.metrics.language.base import SPACY_IMPORT_LOCK, Entity, Sentence, Token

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

#: Every annotation a caller can ask :meth:`SpacyBackend.analyse` for.
ANNOTATIONS = frozenset({"tag", "pos", "morph", "lemma", "entities"})

# Which annotations each standard component contributes to (directly, or as input of one that
# does).  A component of a kind not listed here is never disabled.
_COMPONENT_SERVES: dict[str, frozenset[str]] = {
    "tok2vec": frozenset({"tag", "pos", "morph", "lemma", "entities"}),
    "transformer": frozenset({"tag", "pos", "morph", "lemma", "entities"}),
    "tagger": frozenset({"tag", "pos", "morph", "lemma"}),
    "morphologizer": frozenset({"pos", "morph", "lemma"}),
    # en_core_web_* map Penn tags to UPOS/morphology here; a rule-based pipeline may set TAG.
    "attribute_ruler": frozenset({"tag", "pos", "morph", "lemma"}),
    "lemmatizer": frozenset({"lemma"}),
    "trainable_lemmatizer": frozenset({"lemma"}),
    "ner": frozenset({"entities"}),
    "entity_ruler": frozenset({"entities"}),
    "span_ruler": frozenset({"entities"}),
    "parser": frozenset(),
    "senter": frozenset(),
    "sentencizer": frozenset(),
    "textcat": frozenset(),
    "textcat_multilabel": frozenset(),
    "entity_linker": frozenset(),
    "spancat": frozenset(),
}


class BackendUnavailable(RuntimeError):
    """A selected language backend cannot be used here (not installed, unknown pipeline, ...)."""


def _spacy() -> Any:
    try:  # spaCy is optional and takes ~1 s to import: only a run that selects this backend pays for it
        with SPACY_IMPORT_LOCK:  # not while the lexicon backend imports lemminflect with spaCy hidden
            import spacy
    except ImportError as exc:  # pragma: no cover - exercised only where spaCy is absent
        missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
        why = "spaCy is not installed" if missing in (None, "spacy") else f"spaCy cannot be imported ({exc})"
        raise BackendUnavailable(
            f"the spaCy backend was selected but {why}: "
            "`pip install spacy` and a pipeline (`python -m spacy download en_core_web_sm`), "
            "or use the default lexicon backend") from exc
    return spacy


def load(pipeline: str) -> SpacyBackend:
    """The backend for the installed spaCy pipeline ``pipeline`` (a package name or a path)."""
    if not pipeline:
        raise BackendUnavailable("the spaCy backend needs a pipeline name: spacy:NAME, e.g. spacy:en_core_web_sm")
    spacy = _spacy()
    try:
        nlp = spacy.load(pipeline)
    except OSError as exc:
        raise BackendUnavailable(
            f"spaCy pipeline {pipeline!r} is not installed: install it with "
            f"`python -m spacy download {pipeline}` (or give the path of a pipeline directory)") from exc
    return SpacyBackend(nlp, name=pipeline)


def _language_code(tag: str) -> str:
    return tag.replace("_", "-").split("-")[0].lower()


class SpacyBackend:
    """A :class:`~evaluators.metrics.language.base.Backend` over one spaCy ``Language``."""

    def __init__(self, nlp: Language, *, name: str | None = None, batch_size: int = 256) -> None:
        self.nlp = nlp
        meta = nlp.meta
        self.pipeline = name or f"{meta.get('lang', nlp.lang)}_{meta.get('name', 'pipeline')}"
        self.pipeline_version = str(meta.get("version", "0.0.0"))
        self.name = f"spacy:{self.pipeline}"
        self.batch_size = batch_size
        self._sentencizer: Language | None = None
        self._space_only: dict[str, bool] = {}

    # ---------------------------------------------------------------- signature
    def signature(self) -> str:
        return (f"nlp:{self.name}|pipeline:{self.pipeline}@{self.pipeline_version}"
                f"|spacy:{_spacy().__version__}")

    # ---------------------------------------------------------------- language
    def check_language(self, language: str) -> None:
        """Refuse a corpus in another language than the pipeline's (``""``: not known, accepted)."""
        if not language:
            return
        mine = _language_code(self.nlp.lang or "xx")
        if mine not in ("xx", _language_code(language)):
            raise BackendUnavailable(
                f"spaCy pipeline {self.pipeline!r} is for language {self.nlp.lang!r}, "
                f"not for the target language {language!r}")

    # ---------------------------------------------------------------- analysis
    def disabled_for(self, need: Collection[str]) -> list[str]:
        """The enabled components that none of ``need`` requires (they are switched off for the call)."""
        unknown = set(need) - ANNOTATIONS
        if unknown:
            raise ValueError(f"unknown annotations {sorted(unknown)}; known: {sorted(ANNOTATIONS)}")
        off = []
        for name in self.nlp.pipe_names:
            kind = self.nlp.get_pipe_meta(name).factory
            serves = _COMPONENT_SERVES.get(kind)
            if kind == "attribute_ruler" and self._space_tag_only(name):
                serves = frozenset({"pos", "morph", "lemma"})  # its one TAG rule is redone in to_sentence
            if serves is not None and not (serves & set(need)):
                off.append(name)
        return off

    def _space_tag_only(self, name: str) -> bool:
        """True when an attribute_ruler sets TAG only as ``IS_SPACE -> _SP`` (en_core_web_*'s ruler).

        Such a ruler needs not run for tags alone: :func:`to_sentence` tags whitespace tokens ``_SP``
        itself, which gives the very tags the ruler would have (it is the costliest component after
        the tagger and NER).
        """
        if name not in self._space_only:
            patterns = getattr(self.nlp.get_pipe(name), "patterns", [])
            tag_rules = [p for p in patterns if "TAG" in p.get("attrs", {})]
            self._space_only[name] = bool(tag_rules) and all(
                p["attrs"]["TAG"] == "_SP" and p["patterns"] == [[{"IS_SPACE": True}]] for p in tag_rules)
        return self._space_only[name]

    def docs(self, texts: Sequence[str], need: Collection[str] = ANNOTATIONS) -> list[Doc]:
        """spaCy ``Doc`` objects for ``texts``, batched, with the components ``need`` does not use off."""
        off = self.disabled_for(need)
        with self.nlp.select_pipes(disable=off):
            return list(self.nlp.pipe(texts, batch_size=self.batch_size))

    def analyse(self, segments: Sequence[str], language: str = "", *,
                need: Collection[str] = ANNOTATIONS) -> list[Sentence]:
        """One :class:`Sentence` per segment; annotations outside ``need`` may be left empty."""
        self.check_language(language)
        need = frozenset(need)
        off = self.disabled_for(need)
        space_tag = any(self.nlp.get_pipe_meta(n).factory == "attribute_ruler" and self._space_tag_only(n)
                        for n in off)
        return [to_sentence(doc, need, space_tag=space_tag) for doc in self.docs(segments, need)]

    def tagged(self, segments: Sequence[str], language: str = "", *,
               entities: bool = True) -> list[tuple[str, list[str], list[str], list[tuple[str, str]]]]:
        """Per segment: its text, token texts, Penn tags and ``(text, label)`` entities; nothing else runs.

        The lean path of a metric that needs only these (BlonDe): the pipeline runs with only the
        components that give tags (and entities), and no :class:`Token` is built.  Gives exactly the
        texts, tags and entities of :meth:`analyse` with ``need={"tag", "entities"}``.
        """
        self.check_language(language)
        need = frozenset({"tag", "entities"} if entities else {"tag"})
        off = self.disabled_for(need)
        space_tag = any(self.nlp.get_pipe_meta(n).factory == "attribute_ruler" and self._space_tag_only(n)
                        for n in off)
        return [words_tags_entities(doc, space_tag=space_tag) for doc in self.docs(segments, need)]

    def split_sentences(self, text: str, language: str = "") -> list[str]:
        """``text`` cut into sentences by the pipeline's parser or senter, else by spaCy's rule sentencizer."""
        self.check_language(language)
        if "parser" in self.nlp.pipe_names or "senter" in self.nlp.pipe_names:
            keep = {"parser", "senter", "tok2vec", "transformer"}
            with self.nlp.select_pipes(disable=[n for n in self.nlp.pipe_names if n not in keep]):
                doc = self.nlp(text)
        else:
            if self._sentencizer is None:
                self._sentencizer = _spacy().blank(self.nlp.lang or "xx")
                self._sentencizer.add_pipe("sentencizer")
            doc = self._sentencizer(text)
        return [s.text.strip() for s in doc.sents if s.text.strip()]


def to_sentence(doc: Doc, need: Collection[str] = ANNOTATIONS, *, space_tag: bool = False) -> Sentence:
    """A spaCy ``Doc`` as a backend :class:`Sentence` (lemma and morphology only when needed: they cost).

    ``space_tag``: tag whitespace tokens ``_SP`` (the rule of a skipped en_core_web_* attribute_ruler).
    """
    lemma, morph = "lemma" in need, "morph" in need
    tokens = tuple(
        Token(text=t.text, lemma=t.lemma_ if lemma else "", pos=t.pos_,
              tag="_SP" if space_tag and t.is_space else t.tag_,
              morph=str(t.morph) if morph else "", whitespace=bool(t.whitespace_))
        for t in doc)
    entities = tuple(Entity(text=e.text, label=e.label_, start=e.start, end=e.end) for e in doc.ents)
    return Sentence(text=doc.text, tokens=tokens, entities=entities)


def words_tags_entities(doc: Doc, *, space_tag: bool = False) -> tuple[str, list[str], list[str], list[tuple[str, str]]]:
    """A ``Doc``'s text, token texts, Penn tags and ``(text, label)`` entities, read from its arrays.

    ``space_tag``: tag whitespace tokens ``_SP`` (as :func:`to_sentence`).
    """
    strings = doc.vocab.strings
    rows = doc.to_array(["ORTH", "TAG", "IS_SPACE"]).tolist() if len(doc) else []
    words = [strings[orth] for orth, _tag, _space in rows]
    if space_tag:
        tags = ["_SP" if space else strings[tag] for _orth, tag, space in rows]
    else:
        tags = [strings[tag] for _orth, tag, _space in rows]
    return doc.text, words, tags, [(e.text, e.label_) for e in doc.ents]
