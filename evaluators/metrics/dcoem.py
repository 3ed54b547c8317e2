"""DCoEM, the Discourse Cohesion Evaluation Method (Tan, Zhang and Zhou 2022, §3 and appendix B-C).

Source: X. Tan, L. Zhang, G. Zhou (2022). *Discourse Cohesion Evaluation for Document-Level
Neural Machine Translation.* arXiv:2208.09118.  The authors' code was announced
("https://github.com/anonymous") but is not public; this module follows the paper's text only,
and every point the text leaves open is a documented choice (docs/evaluators.md, "DCoEM").

Definition.  Each sentence ``τ_i`` of the *reference* document gets three sets of cohesive markers
(§3.1), each marker with the forms credited 1 and its "synset", the forms credited 0.5:

* **LexiCoh-WordSub** ``lw_i``: a word of ``τ_i`` tagged NN NNS NNP NNPS FW VB VBD VBG VBN VBP VBZ
  (footnote 1) whose lemma, or one of its WordNet synonyms, hypernyms or hyponyms, occurs in one of
  the ``5`` previous sentences ``τ_{i-1} … τ_{i-5}`` of the document.  Credited 1: the word and
  the related words that tied it to those sentences; 0.5: their WordNet synonyms (``lw'_i``).
* **Reference** ``r_i``: every pronoun of ``τ_i`` from the appendix's Table 5; 0.5: the pronoun's
  synset in that table (``r'_i``).
* **Conjunction** ``c_i``: every word of ``τ_i`` in the appendix's conjunction list (Table 4);
  0.5: its WordNet synonyms (``c'_i``).

A system's translation ``τ_i`` (aligned with reference sentence ``i``) scores, per set (Eqs. 1-2),
the credit of its words (1, 0.5 or 0) over the number of markers of the set; per sentence (Eq. 3)
the three sets' credits over their markers together; per document (Eq. 4) the mean of its sentence
scores.  A marker is credited once at most (clipped, see docs); a sentence without any marker has
no score (0/0) and is left out of the mean, and counted.  The system score is the mean of the
document scores (the paper does not say how its test-set figure pools documents).  Scores are
percentages (0-100), as the paper's Table 3.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from evaluators.metrics.corpus import (
    Corpus,
    EvaluationResult,
    ProgressCallback,
    Segment,
    SegmentScore,
    SystemScore,
    register,
)
from evaluators.metrics.language import get_backend, wordnet
from evaluators.metrics.language.spacy_backend import SpacyBackend

if TYPE_CHECKING:
    from evaluators.metrics.language.base import Backend, Sentence, Token

#: This implementation's version, in every signature (bump it when a score can change).
VERSION = "1.0"

#: The three sets, in the order of the paper's Table 3 (LC-WS, Refere., Conjun.).
SETS = ("lexicoh-wordsub", "reference", "conjunction")

#: Footnote 1: the Penn tags of the words the LexiCoh-WordSub set is built from.
LEXICAL_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS", "FW", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ"})

#: Appendix B, Table 4, as printed: 69 entries ("nor" twice), 68 distinct words (the text says 75).
CONJUNCTIONS: tuple[str, ...] = (
    "and", "also", "too", "furthermore", "moreover", "again", "another",
    "third", "fourth", "now", "then", "before", "after", "immediately", "soon",
    "next", "gradually", "suddenly", "nor", "far", "behind", "beyond", "above",
    "below", "around", "outside", "still", "however", "since", "otherwise",
    "indeed", "surely", "necessarily", "certainly", "truly", "similarly",
    "likewise", "as", "besides", "even", "first", "initially", "second", "earlier",
    "later", "following", "afterwards", "thus", "therefore", "consequently",
    "thereby", "eventually", "nonetheless", "obviously", "plainly",
    "undoubtedly", "if", "unless", "whether", "until", "meanwhile", "lastly",
    "finally", "but", "for", "so", "because", "nor", "yet",
)

#: Appendix C, Table 5, as printed: pronoun -> its "synset" (credited 0.5).  Kept verbatim, including
#: "himself: him, his, her" (probably meant "he") and "both" with an empty synset.
PRONOUN_SYNSETS: dict[str, tuple[str, ...]] = {
    "i": ("me", "my", "mine", "myself"),
    "me": ("i", "my", "mine", "myself"),
    "my": ("i", "me", "mine", "myself"),
    "mine": ("i", "me", "my", "myself"),
    "we": ("us", "our", "ours", "ourselves"),
    "us": ("we", "our", "ours", "ourselves"),
    "our": ("us", "we", "ours", "ourselves"),
    "ours": ("us", "we", "our", "ourselves"),
    "you": ("your", "yours", "yourself", "yourselves"),
    "your": ("you", "yours", "yourself", "yourselves"),
    "yours": ("you", "your", "yourself", "yourselves"),
    "he": ("him", "his", "himself"),
    "him": ("he", "his", "himself"),
    "his": ("he", "him", "himself"),
    "she": ("her", "hers", "herself"),
    "her": ("she", "hers", "herself"),
    "it": ("its", "itself"),
    "its": ("it", "itself"),
    "they": ("them", "their", "theirs", "themselves"),
    "them": ("they", "their", "theirs", "themselves"),
    "their": ("them", "they", "theirs", "themselves"),
    "theirs": ("them", "they", "their", "themselves"),
    "one": ("ones",),
    "ones": ("one",),
    "myself": ("i", "me", "my", "mine"),
    "yourself": ("you", "your", "yours", "yourselves"),
    "yourselves": ("you", "your", "yours", "yourself"),
    "himself": ("him", "his", "her"),
    "herself": ("she", "her", "hers"),
    "itself": ("it", "its"),
    "ourselves": ("we", "us", "our", "ours"),
    "themselves": ("them", "they", "their", "theirs"),
    "this": ("that", "it", "one"),
    "that": ("this", "it", "one"),
    "these": ("those",),
    "those": ("these",),
    "who": ("whom", "whose", "whoever", "whomever", "whosever"),
    "whom": ("who", "whose", "whoever", "whomever", "whosever"),
    "whose": ("who", "whom", "whoever", "whomever", "whosever"),
    "what": ("whatever",),
    "which": ("whichever",),
    "whichever": ("which",),
    "whatever": ("what",),
    "whoever": ("who", "whom", "whomever", "whosever", "whose"),
    "whosever": ("who", "whom", "whomever", "whoever", "whose"),
    "whomever": ("whoever", "who", "whom", "whose", "whosever"),
    "some": ("many", "any"),
    "many": ("some", "any"),
    "any": ("some", "many"),
    "both": (),
}

_CONJUNCTION_SET = frozenset(CONJUNCTIONS)
#: Modal auxiliaries: tagged MD (not in footnote 1) by a Penn tagger; excluded when only UPOS is known.
_MODALS = frozenset({"will", "would", "shall", "should", "can", "could", "may", "might", "must", "'ll", "'d",
                     "ca", "wo", "ought"})
#: UPOS -> WordNet part of speech, for a backend without Penn tags (footnote 1's tags as UPOS).
_UPOS_WORDNET: dict[str, str | None] = {"NOUN": "n", "PROPN": "n", "VERB": "v", "AUX": "v", "X": None}


# --------------------------------------------------------------------------- settings
@dataclass(frozen=True)
class DcoemSettings:
    """What the paper fixes (look-back of 5 sentences) and what it leaves open (hypernym depth)."""

    #: §3.1: the previous sentences a word's cohesive tie is looked for in.
    lookback: int = 5
    #: Hypernym / hyponym steps followed in WordNet (1: the direct ones, NLTK's ``hypernyms()``).
    depth: int = 1

    def __post_init__(self) -> None:
        if self.lookback < 1:
            raise ValueError(f"lookback: must be at least 1 sentence, not {self.lookback}")
        if self.depth < 1:
            raise ValueError(f"depth: must be at least 1 WordNet step, not {self.depth}")

    def signature_fields(self) -> str:
        return f"lookback:{self.lookback}|depth:{self.depth}"


# --------------------------------------------------------------------------- words
def normalise(text: str) -> str:
    """The form words are compared in: lower case, except acronyms (``US``, ``IT`` stay as they are).

    A word of two or more letters written wholly in capitals is taken as an acronym, so that ``US``
    is not the pronoun ``us`` (nor ``IT`` the pronoun ``it``); ``I`` is lower-cased.
    """
    if len(text) > 1 and text.isupper() and sum(c.isalpha() for c in text) > 1:
        return text
    return text.lower()


@lru_cache(maxsize=1 << 18)
def word_key(text: str) -> str | None:
    """:func:`normalise` of a word with a letter in it; None for punctuation, numbers, symbols (cached)."""
    if not any(c.isalpha() for c in text):
        return None
    return normalise(text)


def _has_letter(text: str) -> bool:
    return word_key(text) is not None


def lexical_pos(token: Token) -> tuple[bool, str | None]:
    """(selected for the LexiCoh-WordSub set, its WordNet part of speech) from the Penn tag, else UPOS."""
    if not _has_letter(token.text):
        return False, None
    if token.tag:
        if token.tag not in LEXICAL_TAGS:
            return False, None
        return True, "n" if token.tag.startswith("NN") else "v" if token.tag.startswith("VB") else None
    if token.pos not in _UPOS_WORDNET:
        return False, None
    if token.pos == "AUX" and (token.text.lower() in _MODALS or token.lemma.lower() in _MODALS
                               or "VerbType=Mod" in token.morph):
        return False, None
    return True, _UPOS_WORDNET[token.pos]


def _lemma(token: Token) -> str:
    """The token's lemma as compared (its form when the backend gives no lemma with a letter)."""
    return (word_key(token.lemma) if token.lemma else None) or normalise(token.text)


def _single(names: Iterable[str]) -> frozenset[str]:
    """WordNet names that are one word (multi-word names, ``domestic_animal``, never match a token)."""
    return frozenset(n for n in names if "_" not in n)


@lru_cache(maxsize=200_000)
def _lexical_entry(lemma: str, pos: str | None, depth: int) -> tuple[frozenset[str], frozenset[str]]:
    """(single-word synonyms ∪ hypernyms ∪ hyponyms, single-word synonyms) of a lemma, cached."""
    rel = wordnet.relations(lemma.lower(), pos, depth)
    return _single(rel.related), _single(rel.synonyms)


@lru_cache(maxsize=4096)
def _conjunction_synset(word: str) -> frozenset[str]:
    return _single(wordnet.synonyms(word, None)) - {word}


@lru_cache(maxsize=1)
def listed_forms() -> frozenset[str]:
    """Every form a Reference or Conjunction marker or its synset holds (read from WordNet on first use)."""
    forms = set(PRONOUN_SYNSETS) | {w for syn in PRONOUN_SYNSETS.values() for w in syn} | _CONJUNCTION_SET
    for word in _CONJUNCTION_SET:
        forms |= _conjunction_synset(word)
    return frozenset(forms)


# --------------------------------------------------------------------------- the sets (§3.1)
@dataclass(frozen=True)
class Marker:
    """One cohesive marker of a reference sentence: the forms credited 1 and those credited 0.5."""

    word: str
    exact: frozenset[str]
    half: frozenset[str]


@dataclass(frozen=True)
class SentenceSets:
    """``lw_i``, ``r_i`` and ``c_i`` of one reference sentence (with their synsets inside each marker)."""

    lexical: tuple[Marker, ...]
    reference: tuple[Marker, ...]
    conjunction: tuple[Marker, ...]

    def of(self, name: str) -> tuple[Marker, ...]:
        return {"lexicoh-wordsub": self.lexical, "reference": self.reference,
                "conjunction": self.conjunction}[name]


def _sentence_keys(sentence: Sentence) -> frozenset[str]:
    """Every word form and lemma of a sentence (what "appears in the sentence" is checked against)."""
    keys: set[str] = set()
    for t in sentence.tokens:
        form = word_key(t.text)
        if form is not None:
            keys.add(form)
            lemma = word_key(t.lemma) if t.lemma else None
            if lemma is not None:
                keys.add(lemma)
    return frozenset(keys)


def reference_sets(sentences: Sequence[Sentence], settings: DcoemSettings = DcoemSettings()) -> list[SentenceSets]:
    """The three sets of every sentence of one reference document, in order (§3.1)."""
    keys = [_sentence_keys(s) for s in sentences]
    out: list[SentenceSets] = []
    for i, sentence in enumerate(sentences):
        lookback: frozenset[str] = frozenset().union(*keys[max(0, i - settings.lookback):i])
        lexical: list[Marker] = []
        reference: list[Marker] = []
        conjunction: list[Marker] = []
        for token in sentence.tokens:
            form = word_key(token.text)
            if form is None:  # no letter: punctuation, a number, a symbol
                continue
            if form in PRONOUN_SYNSETS:
                reference.append(Marker(form, frozenset({form}), frozenset(PRONOUN_SYNSETS[form]) - {form}))
            if form in _CONJUNCTION_SET:
                conjunction.append(Marker(form, frozenset({form}), _conjunction_synset(form)))
            if not lookback:
                continue
            selected, pos = lexical_pos(token)
            if not selected:
                continue
            lemma = _lemma(token)
            own = frozenset({lemma, form})
            related, synonyms = _lexical_entry(lemma, pos, settings.depth)
            tied = (related & lookback) - own
            if not (own & lookback) and not tied:
                continue
            exact = own | tied
            half = set(synonyms)
            for word in tied:
                half |= _lexical_entry(word, pos, settings.depth)[1]
            lexical.append(Marker(lemma, exact, frozenset(half - exact)))
        out.append(SentenceSets(tuple(lexical), tuple(reference), tuple(conjunction)))
    return out


# --------------------------------------------------------------------------- scoring (§3.2)
@dataclass
class SetMatch:
    """A set's markers and how many of them a translation sentence matched exactly (1) or by synset (0.5)."""

    markers: int = 0
    exact: int = 0
    half: int = 0

    @property
    def credit(self) -> float:
        """Eq. 1's numerator: the sum of j(τ_{i,k}) over the translation's words (clipped per marker)."""
        return self.exact + 0.5 * self.half

    @property
    def score(self) -> float | None:
        """Eq. 1 (0-1); None for an empty set (0/0)."""
        return self.credit / self.markers if self.markers else None

    def add(self, other: SetMatch) -> None:
        self.markers += other.markers
        self.exact += other.exact
        self.half += other.half


def _free(forms: frozenset[str], index: Mapping[str, list[int]], keys: frozenset[str], used: set[int]) -> int | None:
    """The earliest translation token not yet used whose form is one of ``forms`` (None: there is none)."""
    hits = forms & keys  # C-level, iterates the smaller set
    if not hits:
        return None
    free = [i for f in hits for i in index[f] if i not in used]
    return min(free) if free else None


def match_markers(markers: Sequence[Marker], index: Mapping[str, list[int]],
                  keys: frozenset[str] | None = None) -> SetMatch:
    """Credit each marker once: first every exact match (1), then synset matches (0.5) of the rest.

    ``index`` maps a word form of the translation sentence to its token positions (``keys``: its
    keys as a set, computed when not given); a translation token is used by one marker of the set
    at most.  Markers take the earliest free token, in the reference's order.
    """
    result = SetMatch(markers=len(markers))
    if not markers:
        return result
    if keys is None:
        keys = frozenset(index)
    used: set[int] = set()
    unmatched: list[Marker] = []
    for marker in markers:
        i = _free(marker.exact, index, keys, used)
        if i is None:
            unmatched.append(marker)
        else:
            used.add(i)
            result.exact += 1
    for marker in unmatched:
        i = _free(marker.half, index, keys, used)
        if i is not None:
            used.add(i)
            result.half += 1
    return result


@dataclass(frozen=True)
class TranslationIndex:
    """A translation sentence's words as the sets compare them: surface forms, and forms + lemmas."""

    forms: dict[str, list[int]]  # pronouns, conjunctions and their synsets' words only
    lexical: dict[str, list[int]]
    form_keys: frozenset[str]
    lexical_keys: frozenset[str]


@lru_cache(maxsize=1 << 18)
def _token_keys(text: str, lemma: str) -> tuple[str, ...]:
    """A token's comparison keys: () without a letter, else its form, then its lemma when that differs."""
    form = word_key(text)
    if form is None:
        return ()
    key = word_key(lemma) if lemma else None
    return (form,) if key is None or key == form else (form, key)


def translation_index(sentence: Sentence) -> TranslationIndex:
    forms: dict[str, list[int]] = {}
    lexical: dict[str, list[int]] = {}
    listed = listed_forms()
    for i, t in enumerate(sentence.tokens):
        keys = _token_keys(t.text, t.lemma)
        if not keys:
            continue
        if keys[0] in listed:
            forms.setdefault(keys[0], []).append(i)
        for key in keys:
            lexical.setdefault(key, []).append(i)
    return TranslationIndex(forms, lexical, frozenset(forms), frozenset(lexical))


@dataclass
class SentenceScore:
    """One translation sentence against its reference sentence's sets."""

    sets: dict[str, SetMatch]
    #: The markers of the three sets together (Eq. 3's denominator).
    markers: int = field(init=False)
    #: Eq. 3 (0-1): the three sets' credits over their markers; None when there is no marker.
    score: float | None = field(init=False)

    def __post_init__(self) -> None:
        self.markers = sum(m.markers for m in self.sets.values())
        self.score = sum(m.credit for m in self.sets.values()) / self.markers if self.markers else None


def score_sentence(sets: SentenceSets, translation: Sentence | TranslationIndex) -> SentenceScore:
    """Eqs. 1-3 for one translation sentence."""
    index = translation if isinstance(translation, TranslationIndex) else translation_index(translation)
    return SentenceScore({
        "lexicoh-wordsub": match_markers(sets.lexical, index.lexical, index.lexical_keys),
        "reference": match_markers(sets.reference, index.forms, index.form_keys),
        "conjunction": match_markers(sets.conjunction, index.forms, index.form_keys),
    })


def _mean(values: Iterable[float | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


@dataclass
class DocumentScore:
    """Eq. 4 for one document (and the same mean per set), over its scored sentences."""

    sentences: list[SentenceScore | None]  # None: the system has no translation of that sentence
    #: Eq. 4 (0-1): the mean of the sentences' Eq. 3 scores (sentences without a marker left out).
    score: float | None = field(init=False)

    def __post_init__(self) -> None:
        self.score = _mean(s.score for s in self.sentences if s is not None)

    def set_score(self, name: str) -> float | None:
        """The mean of the sentences' Eq. 1 scores for one set (sentences where it is empty left out)."""
        return _mean(s.sets[name].score for s in self.sentences if s is not None)


def score_document(sets: Sequence[SentenceSets], translations: Sequence[Sentence | TranslationIndex | None]
                   ) -> DocumentScore:
    """Every sentence of one document (None: not translated by the system, left out)."""
    if len(sets) != len(translations):
        raise ValueError(f"{len(translations)} translation sentences for {len(sets)} reference sentences")
    return DocumentScore([None if t is None else score_sentence(s, t) for s, t in zip(sets, translations)])


# --------------------------------------------------------------------------- evaluator
def _percent(value: float | None) -> float | None:
    return None if value is None else 100.0 * value


@dataclass
class DcoemEvaluator:
    """The registered ``dcoem`` evaluator (document level: its segment scores are Eq. 4's).

    ``level="sentence"`` makes the segment scores Eq. 3's, one per sentence (the system score is
    the same); the registered instance is document-level.
    """

    name: str = "dcoem"
    description: str = ""
    settings: DcoemSettings = field(default_factory=DcoemSettings)
    level: str = "document"
    higher_is_better: bool = True
    needs_source: bool = False
    needs_documents: bool = True

    def __post_init__(self) -> None:
        if self.level not in ("document", "sentence"):
            raise ValueError(f"level: {self.level!r} is not 'document' or 'sentence'")

    def signature(self, backend: Backend) -> str:
        return (f"dcoem|nrefs:1|{self.settings.signature_fields()}|case:lc-keep-acronyms"
                f"|{backend.signature()}|{wordnet.signature()}|version:{VERSION}")

    def _backend(self, nlp: Backend | None) -> Backend:
        if nlp is not None:
            return nlp
        return get_backend("lexicon")

    def evaluate(self, corpus: Corpus, *, nlp: Backend | None = None,
                 progress: ProgressCallback | None = None) -> EvaluationResult:
        language = corpus.target_language.replace("_", "-").split("-")[0].lower()
        if language and language != "en":
            raise ValueError(
                f"{self.name} is defined for English targets (its pronoun and conjunction lists, Penn tags "
                f"and WordNet are English); the target language is {corpus.target_language!r}")
        backend = self._backend(nlp)
        systems = corpus.systems
        documents = corpus.documents()
        total = 2 + len(systems)
        analyse = _analyser(backend, corpus.target_language)

        ref_sentences = analyse([seg.reference for seg in corpus.segments])
        by_segment = {id(seg): s for seg, s in zip(corpus.segments, ref_sentences)}
        doc_sets: dict[str, list[SentenceSets]] = {
            doc: reference_sets([by_segment[id(seg)] for seg in segs], self.settings)
            for doc, segs in documents.items()}
        if progress:
            progress(1, total)
        # each distinct text once (a third of a release's hypotheses repeat another system's)
        hyp_texts = list(dict.fromkeys(h for seg in corpus.segments for h in seg.hypotheses.values() if h is not None))
        indexes = {text: translation_index(s) for text, s in zip(hyp_texts, analyse(hyp_texts))}
        if progress:
            progress(2, total)

        signature = self.signature(backend)
        result = EvaluationResult(evaluator=self.name, higher_is_better=True, systems=[])
        for step, system in enumerate(systems, start=3):
            doc_scores: dict[str, DocumentScore] = {}
            for doc, segs in documents.items():
                translations: list[TranslationIndex | None] = [
                    None if seg.hypotheses.get(system) is None else indexes[seg.hypotheses[system]]
                    for seg in segs]
                doc_scores[doc] = score_document(doc_sets[doc], translations)
            result.systems.append(self._system_score(system, doc_scores, signature, corpus, language))
            result.segments.extend(self._segment_scores(system, documents, doc_scores))
            if progress:
                progress(step, total)
        return result

    def _segment_scores(self, system: str, documents: Mapping[str, list[Segment]],
                        doc_scores: Mapping[str, DocumentScore]) -> list[SegmentScore]:
        out: list[SegmentScore] = []
        for doc, segs in documents.items():
            scores = doc_scores[doc]
            value = _percent(scores.score)
            for seg, sentence in zip(segs, scores.sentences):
                if sentence is None:
                    continue
                if self.level == "document":
                    out.append(SegmentScore(key=seg.key, system=system, score=value, document=doc))
                else:
                    out.append(SegmentScore(key=seg.key, system=system, score=_percent(sentence.score)))
        return out

    def _system_score(self, system: str, doc_scores: Mapping[str, DocumentScore], signature: str,
                      corpus: Corpus, language: str) -> SystemScore:
        totals = {name: SetMatch() for name in SETS}
        sentences = undefined = missing = 0
        for scores in doc_scores.values():
            for sentence in scores.sentences:
                if sentence is None:
                    missing += 1
                    continue
                sentences += 1
                if sentence.score is None:
                    undefined += 1
                for name in SETS:
                    totals[name].add(sentence.sets[name])
        documents = {doc: _percent(s.score) for doc, s in doc_scores.items()}
        undefined_docs = sum(1 for v in documents.values() if v is None)
        categories: dict[str, Any] = {}
        for name in SETS:
            categories[name] = {
                "score": _percent(_mean(s.set_score(name) for s in doc_scores.values())),
                "markers": totals[name].markers, "exact": totals[name].exact, "synset": totals[name].half}
        counts: dict[str, Any] = {
            "documents": len(doc_scores), "documents_undefined": undefined_docs,
            "sentences": sentences, "sentences_undefined": undefined, "sentences_missing": missing,
            **{name: {"markers": t.markers, "exact": t.exact, "synset": t.half} for name, t in totals.items()}}
        notes: list[str] = []
        if undefined:
            notes.append(f"{undefined} sentence(s) without any cohesive marker in the reference (0/0) left out of "
                         "their document's mean")
        if undefined_docs:
            notes.append(f"{undefined_docs} document(s) without any cohesive marker left out of the system mean")
        if missing:
            notes.append(f"{missing} sentence(s) not translated by this system left out")
        if doc_scores and all(len(d.sentences) < 2 for d in doc_scores.values()):
            notes.append("no document has more than one segment: nothing to look back to, so the LexiCoh-WordSub "
                         "set is empty (DCoEM needs documents: give document ids)")
        if not language:
            notes.append("target language not given: scored as English (DCoEM's lists and WordNet are)")
        elif corpus.target_language_guessed:
            notes.append(f"target language {corpus.target_language!r} was guessed")
        score = _percent(_mean(s.score for s in doc_scores.values()))
        return SystemScore(system=system, score=score, signature=signature, categories=categories,
                           counts=counts, documents=documents, notes=notes)


def _analyser(backend: Backend, language: str) -> Callable[[list[str]], list[Sentence]]:
    """Analyse each distinct text once (lemmas and tags; no named entities)."""
    cache: dict[str, Sentence] = {}

    def analyse(texts: list[str]) -> list[Sentence]:
        todo = list(dict.fromkeys(t for t in texts if t not in cache))
        if todo:
            if isinstance(backend, SpacyBackend):
                out = backend.analyse(todo, language, need={"tag", "pos", "lemma"})
            else:
                out = backend.analyse(todo, language)
            cache.update(zip(todo, out))
        return [cache[t] for t in texts]

    return analyse


DCOEM = register(DcoemEvaluator(
    name="dcoem",
    description=("DCoEM, 0-100: per reference sentence, pronouns (appendix C), conjunctions (appendix B) and "
                 "nouns/verbs tied by repetition or WordNet synonymy/hypernymy/hyponymy to the 5 previous "
                 "sentences; a translation word matching a marker scores 1, one in its synset 0.5; per-sentence "
                 "score Eq. 3, document score Eq. 4, system score the mean of the documents. Tan, Zhang and Zhou "
                 "2022 (arXiv:2208.09118) §3 and appendix; the authors' code is not public.")))
