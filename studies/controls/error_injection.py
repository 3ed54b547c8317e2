"""Generated errors for the control items of MQM and ESA studies (docs/protocols/mqm-esa.md, "Quality control").

A span study's control item is a copy of a real item in which one candidate
carries one small, deliberate error, the kind WMT's ESA campaigns plant in their
"BAD references" (Kocmi et al. 2024): an annotator who reads the candidate
should mark it as a major error. Four kinds of change, each a word list, not a
parser:

- ``content_word``: a content word (not a function word) replaced by another
  content word drawn from the study's own candidates, so it is in the right
  language and register but wrong in meaning;
- ``negation_dropped`` / ``negation_added``: *is not → is*, *doesn't → does*,
  *nicht* removed, *kein → ein*, *ne … pas* removed; or *is → is not*,
  *ist → ist nicht*, *est → n'est pas*, *always → never* (English, German, French);
- ``pronoun_gender``: *he ↔ she, him ↔ her, his ↔ her; er ↔ sie, sein ↔ ihr;
  il ↔ elle* …;
- ``connective``: a discourse connective replaced by one of opposite relation
  (*but → so, because → although, however → therefore; aber → also, weil → obwohl;
  mais → donc, parce que → bien que* …). English and French connectives are found
  with studies/definition/connectives.py, the list the connective generator uses.

Languages other than English, German and French get content-word replacements
only. Every change is one edit inside one line of the text (so a document
block's sentence list stays aligned), and the result records where the error is
in the degraded text: ``[start, end)`` covers the inserted or replacing words;
for a dropped word, the words on both sides of the gap. Everything is drawn
from the ``random.Random`` the caller passes (the study's seed).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Iterable

from studies.definition.connectives import connective_spans

CONTENT_WORD = "content_word"
NEGATION_DROPPED = "negation_dropped"
NEGATION_ADDED = "negation_added"
PRONOUN_GENDER = "pronoun_gender"
CONNECTIVE = "connective"
KINDS = (CONTENT_WORD, NEGATION_DROPPED, NEGATION_ADDED, PRONOUN_GENDER, CONNECTIVE)

#: Languages with negation, pronoun and connective lists (primary subtag of the BCP 47 tag).
LANGUAGES = ("en", "de", "fr")

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_GAP = r"[ \t]+"  # words of one edit never straddle a line break (a document block's sentence boundary)

# --- word lists ------------------------------------------------------------------

FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset("""a an the and or but so yet for nor of to in on at by with from into onto over under about
        as than then that this these those there here what which who whom whose when where why how if because
        although though while whereas however therefore is are was were be been being am do does did done have has
        had having can could will would shall should may might must not no never always very also just only even
        still too more most less least much many some any all each every both either neither other another such
        own same it its he him his she her hers they them their theirs we us our ours you your yours i me my mine
        himself herself itself themselves ourselves yourself myself one ones up down out off again once""".split()),
    "de": frozenset("""der die das den dem des ein eine einen einem einer eines und oder aber denn sondern also
        doch jedoch weil obwohl dass wenn als wie ob da dort hier was wer wen wem wessen welche welcher welches
        ist sind war waren sein bin bist seid hat haben hatte hatten wird werden wurde wurden kann können konnte
        muss müssen soll sollen will wollen darf dürfen mag nicht nie kein keine keinen keinem keiner keines
        auch nur noch schon sehr mehr viel viele alle jeder jede jedes er sie es ihn ihm ihr ihre ihren ihrem
        ihrer ihres seine seinen seinem seiner seines wir uns unser ich mich mir mein du dich dir dein man sich
        in im an am auf aus bei mit nach von vom zu zum zur für über unter vor hinter neben zwischen durch gegen
        ohne um bis""".split()),
    "fr": frozenset("""le la les l un une des du de d au aux et ou mais donc or ni car que qu qui quoi dont où
        si comme quand lorsque parce puisque bien cependant pourtant est sont était étaient être été a ont avait
        avaient avoir eu peut peuvent doit va vont fait ne n pas plus jamais rien très aussi encore déjà tout
        tous toute toutes même il elle ils elles lui leur leurs eux se s son sa ses ce cet cette ces c je j me
        m moi mon ma mes tu te t toi ton ta tes nous notre nos vous votre vos on y en dans sur sous avec sans
        pour par entre vers chez""".split()),
}

_EN_AUX = ("is", "are", "was", "were", "am", "do", "does", "did", "can", "could", "will", "would", "should",
           "must", "has", "have", "had", "may", "might")
_EN_CONTRACTIONS = {"isn't": "is", "aren't": "are", "wasn't": "was", "weren't": "were", "don't": "do",
                    "doesn't": "does", "didn't": "did", "can't": "can", "cannot": "can", "couldn't": "could",
                    "won't": "will", "wouldn't": "would", "shouldn't": "should", "mustn't": "must",
                    "hasn't": "has", "haven't": "have", "hadn't": "had"}
_CONTRACTION = re.compile(
    r"(?<![\w'’])(?:" + "|".join(re.escape(w).replace("'", "['’]") for w in _EN_CONTRACTIONS) + r")(?![\w'’])",
    re.IGNORECASE)
#: Negative words replaced by their positive counterpart (dropped) and back (added).
_NEGATIVE_WORDS: dict[str, dict[str, str]] = {
    "en": {"never": "always", "nothing": "something", "nobody": "somebody", "no one": "someone"},
    "de": {"nie": "immer", "niemals": "immer", "nichts": "etwas", "niemand": "jemand", "kein": "ein",
           "keine": "eine", "keinen": "einen", "keinem": "einem", "keiner": "einer", "keines": "eines"},
    "fr": {},
}
_POSITIVE_WORDS: dict[str, dict[str, str]] = {
    "en": {"always": "never", "everything": "nothing", "everybody": "nobody", "everyone": "no one"},
    "de": {"immer": "nie", "etwas": "nichts", "jemand": "niemand"},
    "fr": {"toujours": "jamais"},
}
#: Finite verbs a negation is added after (German: "ist nicht") or around (French: "n'est pas").
_NEGATABLE = {
    "en": ("is", "are", "was", "were", "can", "could", "will", "would", "should", "must", "has", "have", "had"),
    "de": ("ist", "sind", "war", "waren", "hat", "haben", "hatte", "hatten", "kann", "können", "konnte",
           "wird", "werden", "wurde", "muss", "soll", "will"),
    "fr": ("est", "sont", "était", "étaient", "a", "ont", "avait", "peut", "peuvent", "doit", "va", "vont",
           "sait", "fait"),
}
_PRONOUNS: dict[str, dict[str, str]] = {
    "en": {"he": "she", "she": "he", "him": "her", "his": "her", "hers": "his", "himself": "herself",
           "herself": "himself"},  # "her": him or his, by what follows (_english_her)
    "de": {"er": "sie", "sie": "er", "ihn": "sie", "ihm": "ihr", "sein": "ihr", "seine": "ihre", "seinen": "ihren",
           "seinem": "ihrem", "seiner": "ihrer", "seines": "ihres", "ihre": "seine", "ihren": "seinen",
           "ihrem": "seinem", "ihrer": "seiner", "ihres": "seines"},
    "fr": {"il": "elle", "elle": "il", "ils": "elles", "elles": "ils", "celui": "celle", "celle": "celui",
           "ceux": "celles", "celles": "ceux"},
}
#: Connectives and one of opposite relation (contrast ↔ consequence or addition, cause ↔ concession).
OPPOSITE_CONNECTIVES: dict[str, dict[str, str]] = {
    "en": {"but": "so", "so": "but", "yet": "so", "and": "but", "because": "although", "although": "because",
           "though": "because", "even though": "because", "whereas": "because", "however": "therefore",
           "therefore": "however", "nevertheless": "therefore", "moreover": "however", "furthermore": "however",
           "still": "so", "unless": "because"},
    "de": {"aber": "also", "also": "aber", "und": "aber", "weil": "obwohl", "obwohl": "weil", "denn": "obwohl",
           "jedoch": "deshalb", "deshalb": "jedoch", "daher": "jedoch", "deswegen": "jedoch", "trotzdem": "deshalb",
           "dennoch": "deshalb", "außerdem": "jedoch"},
    "fr": {"mais": "donc", "donc": "mais", "parce que": "bien que", "bien que": "parce que", "puisque": "bien que",
           "cependant": "donc", "pourtant": "donc", "néanmoins": "donc", "toutefois": "donc", "alors": "pourtant",
           "en revanche": "de plus", "par contre": "de plus", "en effet": "pourtant"},
}
_CONNECTIVE_LANGUAGE = {"en": "english", "fr": "french"}


@dataclass(frozen=True)
class Edit:
    """Replace ``text[a:b]`` by ``replacement``; the error is ``[start, end)`` of the edited text."""
    kind: str
    a: int
    b: int
    replacement: str
    start: int
    end: int


@dataclass(frozen=True)
class InjectedError:
    """One generated error: the degraded text, where the error is in it, and what changed."""
    kind: str
    text: str
    start: int
    end: int
    before: str
    after: str
    edit: Edit

    def as_metadata(self) -> dict[str, object]:
        """What the control item keeps (researcher side only) to score annotators against."""
        return {"kind": self.kind, "start": self.start, "end": self.end, "before": self.before, "after": self.after}


def language_of(tag: str) -> str:
    """The primary subtag of a BCP 47 tag, lower case ("" when unknown)."""
    return (tag or "").split("-")[0].split("_")[0].lower()


def _cased(word: str, like: str) -> str:
    """``word`` capitalised like ``like`` (all caps, initial capital or as it is)."""
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _words(text: str) -> Iterable[re.Match[str]]:
    return _WORD.finditer(text)


def _word_after(text: str, pos: int) -> tuple[int, int] | None:
    """The span of the first word at or after ``pos`` on the same line."""
    m = re.compile(r"[ \t]*(" + _WORD.pattern + ")").match(text, pos)
    return m.span(1) if m else None


def _word_before(text: str, pos: int) -> tuple[int, int] | None:
    """The span of the last word ending at or before ``pos`` on the same line."""
    line_start = text.rfind("\n", 0, pos) + 1
    found = None
    for m in _WORD.finditer(text, line_start, pos):
        found = m.span()
    return found


def _replace(kind: str, a: int, b: int, replacement: str) -> Edit:
    """A replacement whose error span is the replacing words themselves."""
    return Edit(kind, a, b, replacement, a, a + len(replacement))


def _drop(kind: str, text: str, a: int, b: int, replacement: str) -> Edit | None:
    """A deletion (or shortening): the error span runs from the word before the gap to the word after it."""
    new = text[:a] + replacement + text[b:]
    gap = a + len(replacement)
    before = _word_before(new, gap) if replacement.strip() == "" else (a, gap)
    after = _word_after(new, gap)
    start = before[0] if before else gap
    end = after[1] if after else gap
    if start >= end:
        return None
    return Edit(kind, a, b, replacement, start, end)


def _lexicon(words: dict[str, str]) -> re.Pattern[str] | None:
    if not words:
        return None
    alternatives = sorted(words, key=len, reverse=True)
    body = "|".join(re.escape(w).replace(r"\ ", _GAP) for w in alternatives)
    return re.compile(rf"(?<![\w'’])(?:{body})(?![\w'’])", re.IGNORECASE)


def _lexical_swaps(text: str, words: dict[str, str], kind: str) -> list[Edit]:
    pattern = _lexicon(words)
    if pattern is None:
        return []
    edits = []
    for m in pattern.finditer(text):
        key = re.sub(r"\s+", " ", m.group(0).lower())
        edits.append(_replace(kind, m.start(), m.end(), _cased(words[key], m.group(0))))
    return edits


# --- negation ----------------------------------------------------------------------

def _negation_dropped(text: str, language: str) -> list[Edit]:
    edits: list[Edit] = []
    if language == "en":
        aux = "|".join(_EN_AUX)
        for m in re.finditer(rf"(?<![\w'’])({aux}){_GAP}not(?![\w'’])", text, re.IGNORECASE):
            edit = _drop(NEGATION_DROPPED, text, m.start(), m.end(), m.group(1))
            edits += [edit] if edit else []
        for m in _CONTRACTION.finditer(text):
            base = _EN_CONTRACTIONS[m.group(0).lower().replace("’", "'")]
            edit = _drop(NEGATION_DROPPED, text, m.start(), m.end(), _cased(base, m.group(0)))
            edits += [edit] if edit else []
    elif language == "de":
        for m in re.finditer(r"(?<=[ \t])nicht(?![\w'’])", text, re.IGNORECASE):
            edit = _drop(NEGATION_DROPPED, text, m.start() - 1, m.end(), "")
            edits += [edit] if edit else []
    elif language == "fr":
        verb = rf"[^\W\d_]+(?:['’][^\W\d_]+)?(?:{_GAP}[^\W\d_]+)?"  # "mange", "y a", "le fait"
        pattern = rf"(?<![\w'’])(?:ne{_GAP}|n['’])({verb}){_GAP}(?:pas|jamais|rien)(?![\w'’])"
        for m in re.finditer(pattern, text, re.IGNORECASE):
            edit = _drop(NEGATION_DROPPED, text, m.start(), m.end(), _cased(m.group(1), m.group(0)))
            edits += [edit] if edit else []
    return edits + _lexical_swaps(text, _NEGATIVE_WORDS.get(language, {}), NEGATION_DROPPED)


def _negation_added(text: str, language: str) -> list[Edit]:
    edits: list[Edit] = []
    verbs = "|".join(_NEGATABLE.get(language, ()))
    if language in ("en", "de"):
        negator = "not" if language == "en" else "nicht"
        already = r"not|n't|never" if language == "en" else r"nicht|kein\w*|nie\w*"
        for m in re.finditer(rf"(?<![\w'’])(?:{verbs})(?![\w'’])(?!{_GAP}(?:{already})(?![\w'’]))", text,
                             re.IGNORECASE):
            gap = m.end() + 1
            edits.append(Edit(NEGATION_ADDED, m.start(), m.end(), f"{m.group(0)} {negator}", gap, gap + len(negator)))
    elif language == "fr":
        for m in re.finditer(rf"(?<![\w'’])(c['’])?({verbs})(?![\w'’])(?!{_GAP}(?:pas|jamais|rien|plus)\b)", text,
                             re.IGNORECASE):
            before = text[max(0, m.start() - 3):m.start()].lower()
            if before.endswith(("ne ", "n'", "n’")):
                continue
            verb = m.group(2)
            ne = "n'" if verb[:1].lower() in "aeiouéèêh" else "ne "
            negated = f"{ne}{verb.lower()} pas" if m.group(1) is None else f"ce {ne}{verb.lower()} pas"
            replacement = _cased(negated, m.group(0))
            edits.append(_replace(NEGATION_ADDED, m.start(), m.end(), replacement))
    return edits + _lexical_swaps(text, _POSITIVE_WORDS.get(language, {}), NEGATION_ADDED)


# --- pronouns and connectives ----------------------------------------------------------

def _pronoun_swaps(text: str, language: str) -> list[Edit]:
    edits = _lexical_swaps(text, _PRONOUNS.get(language, {}), PRONOUN_GENDER)
    if language == "en":
        for m in re.finditer(r"(?<![\w'’])her(?![\w'’])", text, re.IGNORECASE):
            following = _word_after(text, m.end())
            # "her" before a noun is a possessive (his), before anything else an object (him).
            nxt = text[following[0]:following[1]].lower() if following and following[0] == m.end() + 1 else ""
            swap = "his" if nxt and nxt not in FUNCTION_WORDS["en"] else "him"
            edits.append(_replace(PRONOUN_GENDER, m.start(), m.end(), _cased(swap, m.group(0))))
    return sorted(edits, key=lambda e: e.a)


def _connective_swaps(text: str, language: str) -> list[Edit]:
    opposites = OPPOSITE_CONNECTIVES.get(language, {})
    if not opposites:
        return []
    if language in _CONNECTIVE_LANGUAGE:
        spans = set(connective_spans(text, _CONNECTIVE_LANGUAGE[language]))
        if language == "en":  # "and" opens a clause after a comma or a sentence: not in the connective list
            spans |= {m.span(1) for m in re.finditer(r"(?:^|(?<=[.!?,;:]\s))(and)(?![\w'’])", text,
                                                      re.IGNORECASE | re.MULTILINE)}
    else:
        pattern = _lexicon(opposites)
        spans = {m.span() for m in pattern.finditer(text)} if pattern else set()
    edits = []
    for a, b in sorted(spans):
        key = re.sub(r"\s+", " ", text[a:b].lower()).replace("’", "'")
        if key in opposites and "\n" not in text[a:b]:
            edits.append(_replace(CONNECTIVE, a, b, _cased(opposites[key], text[a:b])))
    return edits


# --- content words ---------------------------------------------------------------------

def is_content_word(word: str, language: str) -> bool:
    """A word worth replacing: letters only, three or more, not a function word of a listed language."""
    lowered = word.lower()
    if len(word) < 3 or "'" in word or "’" in word:
        return False
    stop = FUNCTION_WORDS.get(language) or FUNCTION_WORDS["en"] | FUNCTION_WORDS["de"] | FUNCTION_WORDS["fr"]
    return lowered not in stop


def content_vocabulary(texts: Iterable[str], language: str) -> list[str]:
    """The distinct content words of ``texts``, sorted (a seeded draw from it is then reproducible)."""
    return sorted({m.group(0) for text in texts for m in _words(text) if is_content_word(m.group(0), language)})


def _content_word_edit(text: str, language: str, vocabulary: list[str], rng: random.Random) -> Edit | None:
    words = [m for m in _words(text) if is_content_word(m.group(0), language)]
    if not words:
        return None
    m = rng.choice(words)
    original = m.group(0)
    others = [w for w in vocabulary if w.lower() != original.lower()]
    same_case = [w for w in others if w[:1].isupper() == original[:1].isupper()]
    pool = same_case or others
    if not pool:
        return None
    return _replace(CONTENT_WORD, m.start(), m.end(), _cased(rng.choice(pool), original))


# --- the draw ----------------------------------------------------------------------------

def options(text: str, language: str) -> dict[str, list[Edit]]:
    """Every listed negation, pronoun and connective change possible in ``text`` (content words aside)."""
    language = language_of(language)
    found = {
        NEGATION_DROPPED: _negation_dropped(text, language),
        NEGATION_ADDED: _negation_added(text, language),
        PRONOUN_GENDER: _pronoun_swaps(text, language),
        CONNECTIVE: _connective_swaps(text, language),
    }
    return {kind: [e for e in edits if "\n" not in text[e.a:e.b]] for kind, edits in found.items() if edits}


def apply(text: str, edit: Edit) -> InjectedError:
    """The degraded text and the record of its error."""
    new = text[:edit.a] + edit.replacement + text[edit.b:]
    return InjectedError(kind=edit.kind, text=new, start=edit.start, end=edit.end, before=text[edit.a:edit.b],
                         after=edit.replacement, edit=edit)


def inject_error(text: str, language: str, vocabulary: list[str], rng: random.Random,
                 kinds: tuple[str, ...] = KINDS) -> InjectedError | None:
    """One error in ``text``: a kind drawn among those possible here, then one place for it (None: nothing fits).

    A content-word replacement is always among the kinds when the text has a
    content word and the vocabulary another one; it is the only kind for
    languages without lists.
    """
    possible = {kind: edits for kind, edits in options(text, language).items() if kind in kinds}
    content = _content_word_edit(text, language_of(language), vocabulary, rng) if CONTENT_WORD in kinds else None
    if content is not None:
        possible[CONTENT_WORD] = [content]
    if not possible:
        return None
    kind = rng.choice(sorted(possible))
    return apply(text, rng.choice(possible[kind]))


def shift_spans(spans: list[list[int]], edit: Edit) -> list[list[int]]:
    """Highlight spans of the original text moved onto the edited text (a span touching the edit covers it)."""
    delta = len(edit.replacement) - (edit.b - edit.a)
    moved = []
    for start, end in spans or []:
        if end <= edit.a:
            moved.append([start, end])
        elif start >= edit.b:
            moved.append([start + delta, end + delta])
        else:
            new_start = min(start, edit.a)
            new_end = end + delta if end >= edit.b else edit.a + len(edit.replacement)
            if new_end > new_start:
                moved.append([new_start, new_end])
    return moved
