"""The lexicon language backend (``lexicon``, the default): installed lexicons, rules and a tagger, nothing downloaded.

Everything it uses ships inside a PyPI package or this repository (the tagger's
weights), so it works on a fresh install with no model download:

* **tokens**: a regular-expression tokenizer (words — with inner hyphens,
  except in English, where a hyphen is a token of its own as in spaCy —,
  numbers, every other non-space character on its own).  English clitics are
  split as spaCy splits them (``don't`` -> ``do`` ``n't``, ``Qiao's`` ->
  ``Qiao`` ``'s``), French and Italian elisions too (``l'homme`` -> ``l'``
  ``homme``).  Chinese (``zh``) is segmented into words by ``jieba.posseg``
  (jieba's own dictionary and HMM).
* **lemmas**: English from ``lemminflect``'s lexicon (the lemma of the part of
  speech chosen below, else ``simplemma``); every other language ``simplemma``
  supports from ``simplemma`` (which keeps a German noun's capital:
  ``Häuser`` -> ``Haus``); Chinese words are their own lemma; a language
  ``simplemma`` does not know keeps the lower-cased word as its lemma.
* **parts of speech**: in English, German, French and Chinese from a small
  tagger trained on Universal Dependencies (:mod:`evaluators.metrics.language.tagger`,
  weights in ``data/tagger/``), which reads the context; the English Penn tag and
  lemma are then those of the part of speech it chose (:func:`_english_as`), and a
  word jieba's dictionary calls a name stays PROPN.  Other languages (and every
  language with ``use_tagger=False``) keep the *context-free* rules below, where
  a word gets the same tag wherever it stands:

  - English: a closed-class table (pronouns, determiners, prepositions,
    conjunctions, auxiliaries and modals, ...) gives UPOS and Penn tag; other
    words take one of the readings ``lemminflect``'s lexicon lists for them, in
    a fixed order (the base form of one of ~150 frequent verbs -> VERB; an
    inflected verb form -> VERB, except a plural noun (``runs`` NNS) or one
    of ~50 listed ``-ing`` nouns (``building``, ``meeting`` NN); a gradable adjective (one with a
    comparative in the lexicon: ``red``, ``old``, ``better``) -> ADJ; else
    NOUN, ADJ, VERB, ADV), and the Penn tag of that form in ``lemminflect``'s inflection
    table (``looked`` VBD rather than VBN, ``look`` VBP rather than VB).  A
    capitalised word the lexicon does not know is PROPN/NNP; another unknown
    word is guessed from its ending (``-ly`` RB, ``-ing`` VBG, ``-ed`` VBD,
    else NN/NNS).
  - French, German, Spanish, Italian: a closed-class table gives PRON, DET,
    ADP, CCONJ, SCONJ, AUX and some ADV; French verbs are also recognised from
    their lemma (an ``-er``/``-ir``/``-re``/``-oir`` lemma of a form that is
    not that lemma, nor its plural or feminine) and infinitives from their
    ending (``-er``/``-ir`` except ``-ier``/``-yer`` and ~60 listed nouns such
    as ``hiver``, ``plaisir``; ~80 listed ``-re``/``-oir`` verbs such as
    ``faire``, ``voir``); the other words are ``X``
    (an open-class word of unknown kind), or PROPN when it is a name by the
    entity heuristic below.  Other languages: only NUM, PUNCT, SYM, PROPN and
    ``X``; languages written without spaces other than Chinese get no word
    segmentation (a run of letters is one token).
  - Chinese: jieba's ICTCLAS tags mapped to UPOS (``n`` NOUN, ``nr``/``ns``/
    ``nt``/``nz`` PROPN, ``a`` ADJ, ``v`` VERB, ``r`` PRON, ...).
  - Penn tags (``tag``) and UD morphology of verbs and nouns (``morph``) only
    for English; ``""`` elsewhere.
* **named entities**, a heuristic (no NER model): a run of capitalised tokens
  (or all-capital acronyms) in which each token is not sentence-initial or is
  not a common word of the lexicon (``lemminflect`` for English,
  ``simplemma`` for other languages; in German, which capitalises its nouns,
  only a word ``simplemma`` does not know); closed-class words and ``I`` are never
  part of one; a sentence where more than half of the words after the first
  are capitalised common words (a title) has none.
  The label is ``MISC``: the heuristic cannot tell a person from a place.
  Chinese: jieba's ``nr`` -> PERSON, ``ns`` -> GPE, ``nt`` -> ORG.
* **sentences**: split after ``.``, ``!``, ``?``, ``…`` (and closing quotes
  or brackets) followed by a space and a capital letter, a digit or an opening
  quote, except after a known abbreviation (``Mr.``, ``Dr.``, ``e.g.``, ``M.``,
  ``Mme``, ...) or a single-letter initial; after ``。！？`` in Chinese; and at
  every line break.

Per-word analyses are cached (``functools.lru_cache``), so a word's lookup is
paid once per process, and so are analysed segments (up to 400,000 per backend
instance), so that the evaluators of one run analyse a text once.  The
signature names every package and its version and the tagger, e.g.
``nlp:lexicon|simplemma:2.0.0|lemminflect:0.2.3|jieba:0.42.1|tagger:ud-ap-1|rules:2``.
"""
from __future__ import annotations

import importlib
import importlib.abc
import logging
import re
import sys
from collections.abc import Collection, Sequence
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import simplemma
from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES

from evaluators.metrics.language import tagger
from evaluators.metrics.language.base import SPACY_IMPORT_LOCK, Entity, Sentence, Token

#: Version of this backend's own rules and tables (bump it when an analysis can change).
RULES_VERSION = "2"

#: The entity label of the capitalisation heuristic (its type is not known).
HEURISTIC_ENTITY_LABEL = "MISC"


def normalise_language(language: str) -> str:
    """``en-GB`` -> ``en``, ``zh_Hans`` -> ``zh``; ``""`` stays ``""``."""
    return language.strip().replace("_", "-").split("-")[0].lower()


def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:  # pragma: no cover - the requirements install all three
        return "missing"


# --------------------------------------------------------------------------- tokenizer
_EN_CLITIC = r"(?:[Nn]['’][Tt]|['’](?:[Ss]|[Rr][Ee]|[Vv][Ee]|[Ll][Ll]|[Dd]|[Mm]))(?![\w])"
_ELISION = {
    "fr": r"(?:[cdjlmnstCDJLMNST]|[Qq]u|[Jj]usqu|[Ll]orsqu|[Pp]uisqu|[Qq]uoiqu|[Pp]resqu)['’](?=\w)",
    "it": r"(?:[lLcCdD]|[Dd]ell|[Aa]ll|[Dd]all|[Nn]ell|[Ss]ull|[Uu]n|[Qq]uest|[Qq]uell)['’](?=\w)",
    "ca": r"(?:[lLdDmMnNsStT])['’](?=\w)",
}
_FR_CLITIC = (r"-(?:t-)?(?i:ce|je|tu|il|elle|on|nous|vous|ils|elles|moi|toi|le|la|les|lui|leur|y|en|ci|là"
              r"|même|mêmes)(?![\w-])")
_NUMBER = r"\d+(?:[.,:]\d+)*"
_WORD = r"\w+(?:[-‐]\w+)*"
#: English words are cut at hyphens, as spaCy's English tokenizer does (well-known -> well - known).
_EN_WORD = r"\w+"


@lru_cache(maxsize=None)
def _token_pattern(language: str) -> re.Pattern[str]:
    parts = []
    if language == "en":
        parts += [r"\w+(?=[Nn]['’][Tt](?!\w))", _EN_CLITIC, r"\d+(?:st|nd|rd|th)(?!\w)"]
    if language in _ELISION:
        parts.append(_ELISION[language])
    if language == "fr":
        # whole words despite their apostrophe or hyphen; then a verb's hyphenated clitic pronoun on its own
        # (est-ce -> est -ce, a-t-il -> a -t-il, dis-moi -> dis -moi), as spaCy's French tokenizer splits them
        parts += [r"[Aa]ujourd['’]hui|[Qq]uelqu['’]une?|[Pp]resqu['’]île|[Rr]endez-vous|[Pp]eut-être",
                  rf"\w+(?={_FR_CLITIC})", _FR_CLITIC]
    parts += [_NUMBER, _EN_WORD if language == "en" else _WORD, r"\.\.\.|…|--|\S"]
    return re.compile("|".join(parts))


def tokenize(text: str, language: str) -> list[tuple[str, bool]]:
    """``text``'s tokens with whether each is followed by whitespace (non-Chinese languages)."""
    out = []
    for m in _token_pattern(language).finditer(text):
        end = m.end()
        out.append((m.group(), end < len(text) and text[end].isspace()))
    return out


# --------------------------------------------------------------------------- sentences
_ABBREVIATIONS = frozenset("""
mr mrs ms dr prof st jr sr vs etc e.g i.e cf no nos fig vol ch ed eds approx dept est inc ltd co corp mt ft
jan feb mar apr jun jul aug sep sept oct nov dec
m mme mmes mlle mlles mm av bd ex p pp env
""".split())
_SENT_END = re.compile(r"[.!?…]+[\"'”’»)\]]*\s+|\n\s*")
_CJK_SENT_END = re.compile(r"[。！？!?…]+[”’」』）)]*\s*|\n\s*")
_OPENERS = "\"'“‘«([¿¡"


def split_sentences(text: str, language: str) -> list[str]:
    """``text`` cut into sentences by the rules of the module docstring."""
    language = normalise_language(language)
    if language in ("zh", "ja"):
        pieces, start = [], 0
        for m in _CJK_SENT_END.finditer(text):
            pieces.append(text[start:m.end()])
            start = m.end()
        pieces.append(text[start:])
        return [p.strip() for p in pieces if p.strip()]
    pieces, start = [], 0
    for m in _SENT_END.finditer(text):
        if "\n" not in m.group() and not _ends_sentence(text, m.start(), m.end()):
            continue
        pieces.append(text[start:m.end()])
        start = m.end()
    pieces.append(text[start:])
    return [p.strip() for p in pieces if p.strip()]


def _ends_sentence(text: str, punct_at: int, next_at: int) -> bool:
    rest = text[next_at:].lstrip(_OPENERS)
    if not rest or not (rest[0].isupper() or rest[0].isdigit()):
        return False
    if text[punct_at] != ".":
        return True
    before = re.search(r"(\S+)$", text[:punct_at])
    if before is None:
        return True
    word = before.group(1).lstrip(_OPENERS).lower()
    if word in _ABBREVIATIONS:
        return False
    return not (len(word) == 1 and word.isalpha())  # an initial: "J. Smith"


# --------------------------------------------------------------------------- English tables
def _table(spec: str) -> dict[str, tuple[str, str, str]]:
    """``"UPOS TAG word[:lemma] ..."`` lines -> word -> (UPOS, tag, lemma)."""
    out: dict[str, tuple[str, str, str]] = {}
    for line in spec.strip().splitlines():
        pos, tag, *words = line.split()
        for item in words:
            word, _, lemma = item.partition(":")
            out.setdefault(word, (pos, tag, lemma or word))
    return out


_EN_CLOSED = _table("""
PRON PRP i:I me:I you he him:he she it we us:we they them:they myself yourself himself herself itself ourselves yourselves themselves mine yours hers ours theirs one's
PRON PRP$ my your his her its our their
PRON WP who whom what whoever whatever
PRON WP$ whose
PRON EX there
PRON NN something anything nothing everything someone anyone everyone somebody anybody nobody everybody
DET WDT which
DET DT the a an this these those that each every some any no all both either neither another such
CCONJ CC and or but nor
ADV RB so yet also too very just only even still then now here never always often already again however much well back away ahead together anyway maybe perhaps really actually ever almost quite rather instead soon inside outside alone nearby
PART RB n't:not not
NOUN NN bit
PART TO to
ADV RBR more less
ADV RBS most least
ADJ JJ many few
PART POS 's:'s '
SCONJ IN because although though while if unless since whether until than as whereas once
ADP IN of in on onto at by for with about against between into through during before after above below from up down out off over under without within along across behind beyond toward towards upon among around near per via despite like
ADV WRB when where why how whenever wherever
AUX MD will would shall should can could may might must ought 'll:will 'd:would ca:can wo:will
AUX VBP am:be are:be 're:be 'm:be have:have 've:have do:do
AUX VBZ is:be has:have does:do
AUX VBD was:be were:be had:have did:do
AUX VB be
AUX VBN been:be
AUX VBG being:be
INTJ UH oh ah ha hello hi yes yeah ok okay please thanks wow hey
NUM CD zero one two three four five six seven eight nine ten eleven twelve twenty thirty hundred thousand million billion
""")
for _w in ("’s", "n’t", "’ll", "’d", "’re", "’m", "’ve"):
    _EN_CLOSED[_w] = _EN_CLOSED[_w.replace("’", "'")]
#: After these words "'s" is "is" (it's, there's, ...), not the possessive.
_S_IS_AFTER = frozenset("he she it that there what who here where how this".split())

_PUNCT_TAGS = {
    ".": ".", "!": ".", "?": ".", ",": ",", ";": ":", ":": ":", "...": ":", "…": ":", "-": "HYPH", "‐": "HYPH",
    "–": ":", "—": ":", "--": ":", "(": "-LRB-", "[": "-LRB-", "{": "-LRB-", ")": "-RRB-", "]": "-RRB-",
    "}": "-RRB-", '"': "''", "“": "``", "”": "''", "‘": "``", "'": "''", "’": "''", "«": "``", "»": "''",
    "`": "``", "$": "$", "€": "$", "£": "$", "#": "NFP", "%": "NN", "&": "CC", "/": "SYM",
}
_SYMBOLS = frozenset("$€£#%&/+=<>*@^~|\\")

_VERB_TAG_ORDER = ("VBD", "VBN", "VBZ", "VBG", "VBP", "VB")
_NOUN_TAG_ORDER = ("NN", "NNS")
_ADJ_TAG_ORDER = ("JJ", "JJR", "JJS")
_ADV_TAG_ORDER = ("RB", "RBR", "RBS")
_MORPH = {
    "VBD": "Tense=Past|VerbForm=Fin", "VBN": "Aspect=Perf|Tense=Past|VerbForm=Part",
    "VBG": "Aspect=Prog|Tense=Pres|VerbForm=Part", "VBZ": "Number=Sing|Person=3|Tense=Pres|VerbForm=Fin",
    "VBP": "Tense=Pres|VerbForm=Fin", "VB": "VerbForm=Inf", "MD": "VerbType=Mod",
    "NN": "Number=Sing", "NNS": "Number=Plur", "NNP": "Number=Sing", "NNPS": "Number=Plur",
    "JJR": "Degree=Cmp", "JJS": "Degree=Sup", "RBR": "Degree=Cmp", "RBS": "Degree=Sup",
}


class _NoSpacy(importlib.abc.MetaPathFinder):
    """A finder that answers ``import spacy`` with ModuleNotFoundError (installed first while lemminflect loads)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname == "spacy" or fullname.startswith("spacy."):
            raise ModuleNotFoundError(f"No module named {fullname!r} (hidden while lemminflect loads)", name=fullname)
        return None


def _lemminflect() -> Any:
    """lemminflect (untyped: imported by name, used as Any), imported without importing spaCy.

    lemminflect's ``__init__`` imports spaCy, when it is installed, only to register ``Token._.lemma`` and
    ``Token._.inflect``, which nothing here uses; spaCy's import costs ~0.6 s of CPU (docs/evaluators.md,
    "Speed at release scale"). While lemminflect is imported, a finder placed first on ``sys.meta_path`` makes its ``import spacy``
    fail (it catches that); when spaCy is already loaded, lemminflect hooks into it as usual.
    """
    module = sys.modules.get("lemminflect")
    if module is not None:
        return module
    with SPACY_IMPORT_LOCK:
        if "spacy" in sys.modules:
            return importlib.import_module("lemminflect")
        finder = _NoSpacy()
        sys.meta_path.insert(0, finder)
        try:
            return importlib.import_module("lemminflect")
        finally:
            sys.meta_path.remove(finder)


@lru_cache(maxsize=None)
def _en_readings(word: str) -> dict[str, tuple[str, ...]]:
    return dict(_lemminflect().getAllLemmas(word))


@lru_cache(maxsize=None)
def _en_inflections(lemma: str, upos: str) -> dict[str, tuple[str, ...]]:
    return dict(_lemminflect().getAllInflections(lemma, upos=upos))


def _penn_tag(form: str, lemma: str, upos: str) -> str:
    order = {"VERB": _VERB_TAG_ORDER, "AUX": _VERB_TAG_ORDER, "NOUN": _NOUN_TAG_ORDER,
             "ADJ": _ADJ_TAG_ORDER, "ADV": _ADV_TAG_ORDER}[upos]
    table = _en_inflections(lemma, "VERB" if upos == "AUX" else upos)
    for tag in order:
        if form in table.get(tag, ()):
            return tag
    if upos in ("VERB", "AUX"):
        if form == lemma:
            return "VBP"
        return "VBN" if form.endswith("en") else _suffix_tag(form)[1] or "VBD"
    if upos == "NOUN":
        return "NN" if form == lemma else "NNS"
    return order[0]


def _suffix_tag(word: str) -> tuple[str, str]:
    """UPOS and Penn tag of an English word no lexicon knows, from its ending."""
    if word.endswith("ly") and len(word) > 4:
        return "ADV", "RB"
    if word.endswith("ing") and len(word) > 5:
        return "VERB", "VBG"
    if word.endswith("ed") and len(word) > 4:
        return "VERB", "VBD"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return "NOUN", "NNS"
    return "NOUN", "NN"


#: -ing forms read as nouns (any other -ing form of a verb is VBG).
_EN_ING_NOUNS = frozenset("""
building meeting evening morning wedding ceiling clothing painting beginning feeling training setting ending
opening warning shopping parking housing funding hearing marketing savings being thing spring string king ring
wing sibling darling pudding stuffing filling offering recording drawing crossing landing booking heading
""".split())
#: Frequent verbs whose base form is read as a verb although lemminflect lists a noun reading too.
_EN_VERB_FIRST = frozenset("""
go come get make take see know think say want look give use find tell ask seem feel try leave call need keep
let begin help show hear move live believe bring happen write sit stand lose pay meet include continue learn
lead understand watch follow stop create speak read allow add spend grow open walk win offer remember love
consider appear buy wait serve die send expect build stay fall cut reach kill remain suggest raise pass sell
require report decide pull eat drink sleep like put mean become hope run turn start talk play work refuse jump worry wish stare
""".split())


def _choose_reading(form: str, readings: dict[str, tuple[str, ...]]) -> tuple[str, str]:
    """(UPOS, lemma) among lemminflect's readings of ``form``, in the fixed order of the docstring."""
    verb = readings.get("VERB")
    noun = readings.get("NOUN")
    if verb and form in _EN_VERB_FIRST:
        return "VERB", verb[0]
    if verb and verb[0] != form:  # an inflected verb form
        if noun and (noun[0] != form and form.endswith("s") or form in _EN_ING_NOUNS):
            return "NOUN", noun[0]
        return "VERB", verb[0]
    adj = readings.get("ADJ")
    if adj and _en_inflections(adj[0], "ADJ").get("JJR"):  # a gradable adjective: red, old, good, better
        return "ADJ", adj[0]
    for upos in ("NOUN", "ADJ", "VERB", "ADV", "AUX", "PROPN"):
        if readings.get(upos):
            return upos, readings[upos][0]
    upos = next(iter(readings))
    return upos, readings[upos][0]


@lru_cache(maxsize=None)
def _english_word(word: str, initial: bool) -> tuple[str, str, str, bool]:
    """(UPOS, Penn tag, lemma, is-a-name) of one English word; ``initial``: first word of the segment."""
    lower = word.lower()
    closed = _EN_CLOSED.get(lower)
    if closed is not None and not (lower == "us" and word == "US"):
        pos, tag, lemma = closed
        return pos, tag, lemma, False
    if word in _PUNCT_TAGS and not word.isalnum():
        return ("SYM" if word in _SYMBOLS else "PUNCT"), _PUNCT_TAGS[word], word, False
    if re.fullmatch(_NUMBER, word):
        return "NUM", "CD", word, False
    if word[0].isdigit():  # an ordinal, 45th: an adjective, as spaCy tags it
        return "ADJ", "JJ", lower, False
    if not any(c.isalpha() for c in word):
        return ("SYM" if word in _SYMBOLS else "PUNCT"), "NFP", word, False
    common = _en_readings(lower)
    if word[0].isupper():
        acronym = word.isupper() and len(word) > 1
        # a name: unknown as a common word, an acronym, or capitalised where a sentence does not start
        if not common or acronym or not initial or _en_readings(word).get("PROPN"):
            return "PROPN", "NNP", word, True
    if not common:
        pos, tag = _suffix_tag(lower)
        lemma = _simplemma_lemma(lower, "en")
        return pos, tag, lemma, False
    pos, lemma = _choose_reading(lower, common)
    if pos == "PROPN":
        return "PROPN", "NNP", word, True
    return pos, _penn_tag(lower, lemma, pos), lemma, False


#: The Penn tag of an English word whose tagger UPOS the tables do not give (open classes: :func:`_penn_tag`).
_UPOS_PENN = {"DET": "DT", "PRON": "PRP", "ADP": "IN", "PART": "RP", "CCONJ": "CC", "SCONJ": "IN", "INTJ": "UH",
              "NUM": "CD", "PUNCT": "NFP", "SYM": "SYM", "X": "FW", "PROPN": "NNP"}


@lru_cache(maxsize=None)
def _english_as(word: str, upos: str) -> tuple[str, str]:
    """(Penn tag, lemma) of an English word read as ``upos`` (the tagger's choice where the tables chose another)."""
    lower = word.lower()
    if upos == "PROPN":
        return "NNP", word
    closed = _EN_CLOSED.get(lower)
    if closed is not None and closed[0] == upos:
        return closed[1], closed[2]
    if upos in ("NOUN", "VERB", "ADJ", "ADV", "AUX"):
        readings = _en_readings(lower).get("VERB" if upos == "AUX" else upos)
        lemma = readings[0] if readings else (closed[2] if closed else _simplemma_lemma(lower, "en"))
        return _penn_tag(lower, lemma, upos), lemma
    if upos == "PUNCT":
        return _PUNCT_TAGS.get(word, "NFP"), word
    return _UPOS_PENN.get(upos, "XX"), closed[2] if closed else lower


# --------------------------------------------------------------------------- other languages
def _words(spec: str) -> dict[str, str]:
    """``"UPOS word word ..."`` lines -> word -> UPOS."""
    out: dict[str, str] = {}
    for line in spec.strip().splitlines():
        pos, *words = line.split()
        for w in words:
            out.setdefault(w, pos)
    return out


_CLOSED: dict[str, dict[str, str]] = {
    "fr": _words("""
DET le la les l' un une des du au aux ce cet cette ces quelque mon ma mes ton ta tes son sa ses notre nos votre vos leurs quel quelle quels quelles chaque plusieurs quelques aucun aucune tout toute tous toutes certains certaines
PRON je j' tu il elle on nous vous ils elles me m' te t' se s' lui leur eux moi toi soi y en ce c' ça cela ceci celui celle ceux celles qui quoi dont lequel laquelle lesquels lesquelles chacun chacune rien quelqu'un quelqu'une
ADP à de d' dans par pour sur sous avec sans chez vers entre contre depuis pendant avant après devant derrière selon malgré parmi jusqu' jusque hors
CCONJ et ou mais donc or ni car
SCONJ que qu' quand lorsque lorsqu' si puisque puisqu' comme quoique
ADV ne n' pas plus moins très trop aussi encore déjà toujours jamais ici là ci alors puis ensuite oui non beaucoup peu tellement bien assez souvent même mêmes pourquoi où comment combien vraiment seulement simplement exactement complètement évidemment absolument justement surtout peut-être aujourd'hui demain hier maintenant bientôt parfois ensemble presque plutôt vite tard tôt partout ailleurs dedans dehors longtemps environ certainement probablement sûrement rapidement également notamment ainsi cependant pourtant toutefois enfin voilà voici
AUX suis es est sommes êtes sont étais était étions étiez étaient serai seras sera serons serez seront serais serait serions seriez seraient été être ai as a avons avez ont avais avait avions aviez avaient aurai auras aura aurons aurez auront aurais aurait aurions auriez auraient eu avoir fut furent fût soit soient sois ait aient
INTJ ah oh bonjour merci salut euh ok okay ouais hein bah
NUM deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize vingt trente quarante cinquante soixante cent cents mille million millions milliard
"""),
    "de": _words("""
DET der die das den dem des ein eine einen einem einer eines kein keine keinen keinem keiner mein meine dein deine sein seine ihr ihre unser unsere euer eure dieser diese dieses diesen diesem jeder jede jedes alle
PRON ich du er sie es wir ihr mich dich sich uns euch mir dir ihm ihnen man wer was jemand niemand nichts etwas
ADP in an auf aus bei mit nach von zu über unter vor hinter neben zwischen durch für gegen ohne um seit bis während wegen im am zum zur vom beim ins
CCONJ und oder aber denn sondern
SCONJ dass weil wenn als ob obwohl damit bevor nachdem während
ADV nicht auch noch schon sehr nur hier dort dann jetzt immer nie ja nein so
AUX bin bist ist sind seid war waren warst wart gewesen sein habe hast hat haben habt hatte hatten gehabt werde wirst wird werden werdet wurde wurden geworden kann kannst können konnte muss musst müssen musste soll sollen sollte will wollen wollte darf dürfen mag möchte
"""),
    "es": _words("""
DET el la los las un una unos unas lo este esta estos estas ese esa esos esas mi mis tu tus su sus nuestro nuestra nuestros nuestras cada todo toda todos todas algún alguna algunos algunas ningún ninguna
PRON yo tú él ella nosotros nosotras vosotros ellos ellas me te se nos os le les usted ustedes que quien quienes qué algo nada alguien nadie
ADP a de en con por para sin sobre entre hacia hasta desde durante según contra al del
CCONJ y e o u pero sino ni
SCONJ que porque cuando si aunque como mientras
ADV no sí muy más menos también ya aquí allí entonces siempre nunca bien
AUX soy eres es somos sois son era eras éramos eran fui fue fueron sido ser estoy estás está estamos están estaba estado estar he has ha hemos han había habían haber
"""),
    "it": _words("""
DET il lo la i gli le un uno una l' un' questo questa questi queste quel quello quella quei quelle mio mia miei mie tuo tua suo sua suoi sue nostro nostra ogni tutto tutta tutti tutte del della dei degli delle al alla ai agli alle dal dalla nel nella sul sulla
PRON io tu lui lei noi voi loro mi ti si ci vi ne gli che chi cosa qualcosa niente nessuno
ADP a di da in con su per tra fra verso senza
CCONJ e ed o ma né
SCONJ che perché quando se mentre come
ADV non sì molto più meno anche già qui lì allora sempre mai bene
AUX sono sei è siamo siete era erano stato stata essere ho hai ha abbiamo avete hanno aveva avevano avuto avere
"""),
}
#: French verbs are recognised from their lemma (see the module docstring).
_FR_VERB_LEMMA = re.compile(r".+(?:er|ir|re|oir)$")
_CJK = {"zh"}
#: Languages that capitalise every noun: capitalisation alone does not make a name.
_NOUNS_CAPITALISED = frozenset({"de", "lb"})


def _simplemma_lemma(word: str, language: str) -> str:
    return _lemma_cached(word, language)


@lru_cache(maxsize=None)
def _lemma_cached(word: str, language: str) -> str:
    if language not in SUPPORTED_LANGUAGES:
        return word.lower()
    return str(simplemma.lemmatize(word, lang=language))


@lru_cache(maxsize=None)
def _known(word: str, language: str) -> bool:
    if language not in SUPPORTED_LANGUAGES:
        return False
    return bool(simplemma.is_known(word, lang=language))


#: French infinitives in -re/-oir (the common ones; an -re/-oir word is otherwise no verb: père, soir).
_FR_INFINITIVES = frozenset("""
faire dire prendre mettre croire boire vivre lire écrire suivre attendre entendre rendre vendre perdre répondre
descendre comprendre apprendre surprendre reprendre connaître reconnaître paraître apparaître naître plaire
conduire construire produire traduire détruire cuire rire sourire battre combattre permettre promettre
admettre remettre craindre peindre éteindre joindre rejoindre atteindre plaindre vaincre coudre moudre
résoudre conclure exclure inclure interrompre rompre voir revoir prévoir savoir pouvoir vouloir devoir
recevoir apercevoir décevoir concevoir falloir valoir pleuvoir asseoir émouvoir
""".split())
#: French words in -er/-ir that are no infinitives (nouns and adjectives; -ier/-yer words are never taken
#: for infinitives: papier, premier, quartier ...).
_FR_NOT_INFINITIVES = frozenset("""
hiver mer fer cher hier amer super cancer laser poster hamster bunker boucher boulanger léger danger étranger
berger verger rocher clocher plancher oranger enfer ver vers univers revers cuiller gangster leader manager
reporter scooter container hamburger corner poker blazer joker
plaisir désir avenir loisir soupir martyr saphir zéphyr élixir émir menhir
""".split())


def _french_infinitive(lower: str) -> bool:
    """A French infinitive, context-free: the listed -re/-oir verbs; -er/-ir words but -ier/-yer and exceptions."""
    if lower in _FR_INFINITIVES:
        return True
    if len(lower) < 5 or lower in _FR_NOT_INFINITIVES or lower.endswith(("ier", "yer", "oir")):
        return False
    return lower.endswith(("er", "ir"))


def _french_verb(lower: str, lemma: str) -> bool:
    if lower == lemma or not _FR_VERB_LEMMA.fullmatch(lemma):
        return False
    if lower in (lemma + "s", lemma + "x", lemma + "e", lemma + "es"):
        return False  # a plural or feminine of a noun or adjective in -er/-ir/-re (pères, noire)
    return not (lemma.endswith("er") and lower in (lemma[:-2] + "ère", lemma[:-2] + "ères"))


@lru_cache(maxsize=None)
def _other_word(word: str, language: str, initial: bool) -> tuple[str, str, bool]:
    """(UPOS, lemma, is-a-name) of one word of a language other than English and Chinese."""
    lower = word.lower()
    norm = lower.replace("’", "'")
    if language == "fr" and norm.startswith("-"):  # a verb's clitic pronoun: -ce, -t-il, -moi
        norm = norm[3:] if norm.startswith("-t-") else norm[1:]
    closed = _CLOSED.get(language, {}).get(norm)
    if closed is not None:
        return closed, _simplemma_lemma(norm, language), False
    if re.fullmatch(_NUMBER, word):
        return "NUM", word, False
    if not any(c.isalnum() for c in word):
        return ("SYM" if word in _SYMBOLS else "PUNCT"), word, False
    if word[0].isupper() and not word.isdigit():
        if language in _NOUNS_CAPITALISED:  # German nouns: a name only when the lexicon knows no such word
            if not (_known(word, language) or _known(lower, language)):
                return "PROPN", word, True
        elif not initial or not _known(lower, language):
            return "PROPN", word, True
    lemma = _simplemma_lemma(word, language)
    if language == "fr" and (_french_verb(lower, lemma.lower()) or _french_infinitive(lower)):
        return "VERB", lemma, False
    return "X", lemma, False


# --------------------------------------------------------------------------- Chinese
_JIEBA_POS = {
    "n": "NOUN", "nr": "PROPN", "nrfg": "PROPN", "nrt": "PROPN", "ns": "PROPN", "nt": "PROPN", "nz": "PROPN",
    "ng": "NOUN", "nd": "NOUN", "t": "NOUN", "tg": "NOUN", "s": "NOUN", "f": "NOUN", "vn": "NOUN", "an": "NOUN",
    "a": "ADJ", "ad": "ADJ", "ag": "ADJ", "b": "ADJ", "z": "ADJ", "v": "VERB", "vd": "VERB", "vg": "VERB",
    "vi": "VERB", "vq": "VERB", "d": "ADV", "dg": "ADV", "r": "PRON", "rr": "PRON", "rz": "PRON", "m": "NUM",
    "mq": "NUM", "q": "NOUN", "p": "ADP", "c": "CCONJ", "u": "PART", "uj": "PART", "ul": "PART", "uz": "PART",
    "ug": "PART", "uv": "PART", "ud": "PART", "y": "PART", "e": "INTJ", "o": "INTJ", "h": "X", "k": "X",
    "x": "PUNCT", "w": "PUNCT", "eng": "X", "l": "X", "i": "X", "j": "PROPN", "g": "X",
}
_JIEBA_ENTITY = {"nr": "PERSON", "nrfg": "PERSON", "nrt": "PERSON", "ns": "GPE", "nt": "ORG"}
_JIEBA: Any = None


def _jieba_posseg() -> Any:
    global _JIEBA
    if _JIEBA is None:
        jieba = importlib.import_module("jieba")  # untyped: imported by name, used as Any
        jieba.setLogLevel(logging.WARNING)  # no "Building prefix dict" chatter on stderr
        _JIEBA = importlib.import_module("jieba.posseg")
    return _JIEBA


def _chinese_sentence(text: str, model: tagger.Model | None) -> Sentence:
    tokens: list[Token] = []
    entities: list[Entity] = []
    pairs = [(p.word, p.flag) for p in _jieba_posseg().cut(text)]
    words = [w for w, _ in pairs if not w.isspace()]
    untagged: list[str | None] = [None] * len(words)
    tagged = iter(model.tag(words) if model else untagged)
    for word, flag in pairs:
        if word.isspace():
            if tokens:
                tokens[-1] = Token(tokens[-1].text, tokens[-1].lemma, tokens[-1].pos, whitespace=True)
            continue
        pos = next(tagged) or _JIEBA_POS.get(flag, _JIEBA_POS.get(flag[:1], "X"))
        if flag in _JIEBA_ENTITY:  # jieba's names (a person, a place, an organisation) stay proper nouns
            pos = "PROPN"
        if flag == "x" and word.isalnum() and model is None:
            pos = "NUM" if word.isdigit() else "X"
        label = _JIEBA_ENTITY.get(flag)
        if label:
            entities.append(Entity(text=word, label=label, start=len(tokens), end=len(tokens) + 1))
        tokens.append(Token(text=word, lemma=word, pos=pos, whitespace=False))
    return Sentence(text=text, tokens=tuple(tokens), entities=tuple(entities))


# --------------------------------------------------------------------------- the backend
class LexiconBackend:
    """The default :class:`~evaluators.metrics.language.base.Backend`: lexicons, rules and a UD-trained tagger."""

    name = "lexicon"
    #: Analysed segments kept for the next call (evaluators of one run share them); cleared when full.
    cache_size = 400_000

    def __init__(self, *, use_tagger: bool = True) -> None:
        """``use_tagger=False``: the context-free rules alone (the benchmarks' "before" figures)."""
        self._cache: dict[tuple[str, str], Sentence] = {}
        self.use_tagger = use_tagger

    def signature(self) -> str:
        versions = "|".join(f"{p}:{_package_version(p)}" for p in ("simplemma", "lemminflect", "jieba"))
        tagged = tagger.signature() if self.use_tagger else "tagger:none"
        return f"nlp:lexicon|{versions}|{tagged}|rules:{RULES_VERSION}"

    def analyse(self, segments: Sequence[str], language: str = "", *,
                need: Collection[str] | None = None) -> list[Sentence]:
        """One :class:`Sentence` per segment.  ``language`` ``""``: analysed as English (the caller says so).

        ``need`` is accepted for the spaCy backend's interface; every annotation is always given.
        """
        lang = normalise_language(language) or "en"
        cache = self._cache
        if len(cache) + len(segments) > self.cache_size:
            cache.clear()
        out = []
        for text in segments:
            sentence = cache.get((text, lang))
            if sentence is None:
                sentence = cache[(text, lang)] = self.analyse_one(text, lang)
            out.append(sentence)
        return out

    def analyse_one(self, text: str, lang: str) -> Sentence:
        """One segment in language ``lang`` (normalised) as a :class:`Sentence`."""
        model = tagger.model(lang) if self.use_tagger else None
        if lang in _CJK:
            return _chinese_sentence(text, model)
        tokens: list[Token] = []
        names: list[bool] = []
        initial = True
        previous = ""
        pairs = tokenize(text, lang)
        untagged: list[str | None] = [None] * len(pairs)
        tags: Sequence[str | None] = model.tag([w for w, _ in pairs]) if model else untagged
        for (word, space), upos in zip(pairs, tags):
            token, name, initial = _token(word, space, lang, initial, previous in _S_IS_AFTER, upos)
            tokens.append(token)
            names.append(name)
            previous = word.lower()
        entities = _entities(tokens, names, lang) if any(names) else []
        return Sentence(text=text, tokens=tuple(tokens), entities=tuple(entities))

    def split_sentences(self, text: str, language: str = "") -> list[str]:
        return split_sentences(text, language)


@lru_cache(maxsize=500_000)
def _token(word: str, space: bool, lang: str, initial: bool, after_pronoun: bool,
           upos: str | None = None) -> tuple[Token, bool, bool]:
    """(token, is-a-name, does-the-next-word-start-a-sentence) of one word (tokens are immutable: shared).

    ``upos``: the tagger's part of speech for the word where it stands (None: no tagger for ``lang``).
    """
    if lang == "en":
        pos, tag, lemma, name = _english_word(word, initial)
        if after_pronoun and word.lower() in ("'s", "’s"):
            pos, tag, lemma = "AUX", "VBZ", "be"  # it's, there's: "is", not the possessive
        if upos is not None and upos != pos:
            pos, tag, lemma = upos, *_english_as(word, upos)
        morph = _MORPH.get(tag, "") if pos in ("VERB", "AUX", "NOUN", "PROPN", "ADJ", "ADV") else ""
    else:
        pos, lemma, name = _other_word(word, lang, initial)
        if upos is not None:
            pos = upos
        tag, morph = "", ""
    token = Token(text=word, lemma=lemma, pos=pos, tag=tag, morph=morph, whitespace=space)
    # the next word starts a sentence after final punctuation, or after an opening quote at a start
    return token, name, pos == "PUNCT" and (word in ".!?…" or (initial and word in _OPENERS))


@lru_cache(maxsize=None)
def _common_word(lower: str, lang: str) -> bool:
    """Whether a lower-cased word is a common word of ``lang``'s lexicon (or a closed-class word)."""
    if lang == "en":
        return lower in _EN_CLOSED or bool(_en_readings(lower))
    return lower in _CLOSED.get(lang, {}) or _known(lower, lang)


def _entities(tokens: Sequence[Token], names: Sequence[bool], lang: str) -> list[Entity]:
    """Maximal runs of name tokens (the capitalisation heuristic), none in a title-cased sentence.

    A title: more than half of the words after the first are capitalised common words.
    """
    words = [t.text for t in tokens[1:] if any(c.isalpha() for c in t.text)]
    titled = sum(1 for w in words if w[0].isupper() and not w.isupper() and _common_word(w.lower(), lang))
    if len(words) >= 3 and titled * 2 > len(words):
        return []
    out: list[Entity] = []
    i = 0
    while i < len(tokens):
        if not names[i]:
            i += 1
            continue
        j = i
        while j < len(tokens) and names[j]:
            j += 1
        text = "".join(t.text + (" " if t.whitespace and k < j - 1 else "") for k, t in enumerate(tokens[i:j], i))
        out.append(Entity(text=text, label=HEURISTIC_ENTITY_LABEL, start=i, end=j))
        i = j
    return out
