"""Which language a text is in, when nobody said: by script, then by function words.

Used only when the target language is not given (``score --target-language``,
a study's ``target_language``); the result is always reported *as a guess*,
with the evidence, and an undecidable text is an error, never English by
default.  Pure Python, no Django, no model.

Method
------
1. **Script.**  Letters are counted by Unicode block.  Hangul dominant -> ``ko``;
   Han ideographs or kana dominant -> ``ja`` when kana (hiragana/katakana) make
   up at least 10% of the CJK characters (Japanese prose mixes kanji and kana;
   Chinese has no kana), else ``zh``; Arabic -> ``ar``; Cyrillic -> ``ru``
   (Ukrainian when its letters ``і ї є ґ`` are frequent); Greek -> ``el``;
   Hebrew -> ``he``; Devanagari -> ``hi``; Thai -> ``th``.  A script is
   dominant when it has more letters than every other script.
2. **Latin script: function words.**  Words (lower-cased, split at
   apostrophes: ``c'est`` -> ``c``, ``est``) are looked up in short lists of
   function words, each *exclusive* to one language among en, fr, de, es, it,
   pt, nl (a word common to two of them, such as ``de``, ``la``, ``que``,
   ``in``, ``was``, counts for neither).  The language with the most hits wins
   if it has at least 3 hits and at least twice as many as the runner-up;
   otherwise the text is undecidable (``None``).

The whole text (all reference lines together) is judged at once, which is far
more reliable than deciding line by line.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

#: ISO 639-1 codes: the primary subtag a language code must have to be accepted.
ISO_639_1 = frozenset("""
aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee
el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it
iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my
na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn
so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu
""".split())

_CODE = re.compile(r"^([A-Za-z]{2})(?:[-_][A-Za-z0-9]{1,8})*$")


def normalise_code(code: str) -> str:
    """``"ZH_cn"`` -> ``"zh-cn"``: the code lower-cased with ``-`` separators (no validation)."""
    return code.strip().replace("_", "-").lower()


def primary_subtag(code: str) -> str:
    """``"zh-Hans"`` -> ``"zh"``; ``""`` for an empty code."""
    return normalise_code(code).split("-")[0]


def validate_code(code: str) -> str:
    """The normalised code, or ``ValueError`` when its primary subtag is not an ISO 639-1 code."""
    match = _CODE.match(code.strip())
    if match is None or match.group(1).lower() not in ISO_639_1:
        raise ValueError(f"unknown language code {code!r} (expected an ISO 639-1 code such as en, fr, zh, "
                         "optionally with a script or region: zh-Hans, pt-BR)")
    return normalise_code(code)


# Exclusive function-word lists (see the module docstring); checked for overlaps at import time.
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset("the and is of to that this are with for not have be you it what but they he she we "
                    "would there their will can do your my me been has had were just".split()),
    "fr": frozenset("le les et est des du une qui pas pour dans avec sont je vous nous il ce mais sur au aux "
                    "c qu j ça cette très ils elle être avez suis ai".split()),
    "de": frozenset("der die das und ist nicht ein eine ich zu den mit sich auf für dem auch wir sie nicht "
                    "hat ist sind haben wie noch nur aber oder wenn kann".split()),
    "es": frozenset("el los las y del por una con lo para como pero está muy yo su también estoy tengo "
                    "usted hay eso esto".split()),
    "it": frozenset("il di che è per non sono della gli anche questo mi ci ho hai molto questa sei".split()),
    "pt": frozenset("o os não são com você eu ele isso uma muito também está estou tenho ao às".split()),
    "nl": frozenset("het een van niet dat ik met zijn voor op er wat ook maar bij naar hebben".split()),
}
# Words listed for two languages count for neither.
_shared = Counter(w for words in FUNCTION_WORDS.values() for w in words)
_EXCLUSIVE: dict[str, str] = {w: lang for lang, words in FUNCTION_WORDS.items() for w in words
                              if _shared[w] == 1}
del _shared

_WORD = re.compile(r"[^\W\d_]+")
MIN_HITS = 3
MARGIN = 2.0
KANA_SHARE = 0.10


@dataclass(frozen=True)
class Guess:
    """A guessed language (``None``: undecidable) and the evidence, in words, for the report."""

    language: str | None
    evidence: str


def _script(ch: str) -> str | None:
    cp = ord(ch)
    if 0x3040 <= cp <= 0x30FF or 0x31F0 <= cp <= 0x31FF or 0xFF66 <= cp <= 0xFF9F:
        return "kana"
    if 0xAC00 <= cp <= 0xD7AF or 0x1100 <= cp <= 0x11FF or 0x3130 <= cp <= 0x318F:
        return "hangul"
    if 0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0xF900 <= cp <= 0xFAFF or 0x20000 <= cp <= 0x2FA1F:
        return "han"
    if not ch.isalpha():
        return None
    try:
        name = unicodedata.name(ch)
    except ValueError:
        return None
    for script in ("LATIN", "CYRILLIC", "ARABIC", "GREEK", "HEBREW", "DEVANAGARI", "THAI"):
        if name.startswith(script):
            return script.lower()
    return "other"


_SCRIPT_LANGUAGE = {"arabic": "ar", "greek": "el", "hebrew": "he", "devanagari": "hi", "thai": "th"}


def guess_language(texts: Iterable[str]) -> Guess:
    """Guess the language of ``texts`` taken together (see the module docstring for the method)."""
    scripts: Counter[str] = Counter()
    text = "\n".join(texts)
    for ch in text:
        script = _script(ch)
        if script is not None:
            scripts[script] += 1
    if not scripts:
        return Guess(None, "no letters in the text")
    cjk = scripts["han"] + scripts["kana"]
    by_block = Counter({"cjk": cjk, **{k: v for k, v in scripts.items() if k not in ("han", "kana")}})
    (top, n_top), *rest = by_block.most_common()
    if rest and rest[0][1] == n_top:
        return Guess(None, f"no dominant script ({top} and {rest[0][0]}: {n_top} letters each)")
    total = sum(scripts.values())
    share = f"{n_top / total:.0%} of {total} letters"
    if top == "cjk":
        kana = scripts["kana"] / cjk
        if kana >= KANA_SHARE:
            return Guess("ja", f"Han/kana script ({share}), {kana:.0%} kana")
        return Guess("zh", f"Han script ({share}), no kana")
    if top == "hangul":
        return Guess("ko", f"Hangul script ({share})")
    if top == "cyrillic":
        ukr = sum(text.count(c) for c in "іїєґІЇЄҐ")
        if ukr > 0.01 * n_top:
            return Guess("uk", f"Cyrillic script ({share}) with Ukrainian letters і ї є ґ ({ukr})")
        return Guess("ru", f"Cyrillic script ({share}); other Cyrillic languages are not told apart")
    if top in _SCRIPT_LANGUAGE:
        return Guess(_SCRIPT_LANGUAGE[top], f"{top.capitalize()} script ({share})")
    if top != "latin":
        return Guess(None, f"a script the guesser does not know ({share})")
    hits: Counter[str] = Counter()
    for word in _WORD.findall(text.casefold().replace("\u2019", "'")):
        lang = _EXCLUSIVE.get(word)
        if lang is not None:
            hits[lang] += 1
    ranked = hits.most_common()
    described = ", ".join(f"{lang} {n}" for lang, n in ranked[:3]) or "none"
    if not ranked or ranked[0][1] < MIN_HITS:
        return Guess(None, f"Latin script, too few function words to decide ({described})")
    best, n_best = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else 0
    if n_best < MARGIN * second:
        return Guess(None, f"Latin script, function words too close to decide ({described})")
    return Guess(best, f"Latin script, function words: {described}")
