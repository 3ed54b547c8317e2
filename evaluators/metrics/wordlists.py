"""Pronoun and connective evaluators over closed word lists: ``pronoun-p/r/f``, ``connective-acc``, ``connective-any``.

These are the *deterministic* parts of DiP's evaluation (Jwalapuram et al.
2021, §3.1 and §3.4), approximated with closed word lists: no alignment, no
parser, no PDTB connective classifier, no pronoun-ranking model.  Each gives
a score per segment and a corpus-level (pooled) system score, with a
signature and notes.

Lists, per target language (docs/evaluators.md, "Built-in evaluators"):

* **English, French**: personal, possessive, reflexive pronouns; English
  connectives: DiP Table 13 (one word each);
* **Chinese** (En→Zh, seed 004: Jiang et al. 2022's test suite): personal
  pronouns, including the suite's 你/你们 and 他们/她们/它们; connectives:
  the Chinese renderings of the suite's ambiguous connectives (while, as,
  since, though, or: 而, 却, 当…时候, 因为, 由于, 既然, 自从, 虽然, 尽管,
  或者, 还是, 否则 …) and of DiP's list.  Words are jieba's segmentation
  (``jieba`` 0.42.1, default dictionary); 当…时候 / 当…时 is one connective
  when 当 is followed by 时候 or 时 later in the segment.

Matching: casefolded whole words, except where case decides: ``US`` in a
text that also has lower-case letters is the country, not the pronoun ``us``
(:data:`ACRONYMS`).

Scores, per (segment, system), 0–1: pronoun precision = matched / the
hypothesis's pronouns, recall = matched / the reference's, F1 = 2·matched /
(both counts) (= 2PR/(P+R), 0 when one side has none); matched = Σ_p
min(count_hyp(p), count_ref(p)).  A precision or recall whose denominator is 0
is **undefined** (``None``): not stored, left out of every mean, counted in a
note (scoring it 0 would pull every mean towards 0).  The system score
pools the counts over the corpus (matched / pronouns of all hypotheses, ...).
Connective accuracy = Σ_c min(count_hyp(c), count_ref(c)) / Σ_c count_ref(c)
on segments whose reference has a listed connective; ``connective-any`` = 1
when the hypothesis has any listed connective there, else 0.
"""
from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from evaluators.metrics.corpus import (
    Corpus,
    EvaluationResult,
    ProgressCallback,
    SegmentScore,
    SystemScore,
    register,
)

if TYPE_CHECKING:
    from evaluators.metrics.language.base import Backend

#: This implementation's version, in every signature (bump it when a score can change).
VERSION = "2.0"

#: English personal, possessive and reflexive pronouns (closed class).
PRONOUNS_EN = frozenset("""
i me my mine myself you your yours yourself yourselves he him his himself she her hers herself
it its itself we us our ours ourselves they them their theirs themselves
""".split())
#: French subject/object/disjunctive/reflexive pronouns, possessive determiners and demonstrative
#: pronouns.  Deliberately left out: le, la, les, l' (mostly articles), en, y (mostly preposition /
#: adverb); this trades recall for precision without a part-of-speech tagger.
PRONOUNS_FR = frozenset("""
je j' me m' moi tu te t' toi il elle on lui nous vous ils elles eux leur leurs se s' soi
mon ma mes ton ta tes son sa ses notre nos votre vos ça cela ceci celui celle ceux celles
""".split())
#: Chinese personal pronouns (jieba words); 你/你们 and 他们/她们/它们 are seed 004's pronoun test set.
#: Possessives are pronoun + 的 (你的 → 你, 的), reflexives pronoun + 自己: the pronoun counts.
PRONOUNS_ZH = frozenset("我 我们 你 你们 您 他 他们 她 她们 它 它们 咱 咱们".split())
PRONOUNS = {"en": PRONOUNS_EN, "fr": PRONOUNS_FR, "zh": PRONOUNS_ZH}

#: English explicit discourse connectives studied by DiP (Table 13, one word each).
CONNECTIVES_EN = (
    "and", "also", "when", "after", "by", "or", "as", "while", "so", "because", "then", "with", "if",
    "thus", "indeed", "still", "without", "unless", "until", "therefore", "subsequently", "ultimately",
    "before", "previously", "once", "however", "in",
)
#: Chinese connectives (jieba words): renderings of seed 004's ambiguous connectives — while (而, 却,
#: 当…时候, 同时, 虽然), as (因为, 由于, 随着, 当…时候, 正如), since (因为, 既然, 由于, 自从), though (虽然,
#: 尽管, 不过, 但是), or (或者, 或, 还是, 否则, 要不然) — and of DiP's English list (和, 也, 所以, 然后, 如果,
#: 因此, 但, 可是, 然而, 而且, 并且, 之后, 以前, 之前, 直到, 除非, 一旦, 于是, 最终).
CONNECTIVES_ZH = (
    "而", "却", "当…时候", "同时", "虽然", "因为", "由于", "随着", "正如", "既然", "自从", "尽管", "不过",
    "但是", "或者", "或", "还是", "否则", "要不然", "和", "也", "所以", "然后", "如果", "因此", "但", "可是",
    "然而", "而且", "并且", "之后", "以前", "之前", "直到", "除非", "一旦", "于是", "最终",
)
CONNECTIVES = {"en": frozenset(CONNECTIVES_EN), "zh": frozenset(CONNECTIVES_ZH)}
_WHEN_ZH = "当…时候"

_ELIDED = re.compile(r"(?<!\w)([jmts])'(?=\w)")
_WORD = re.compile(r"(?<!\w)(\w+)(?!\w)")


def language_code(language: str) -> str:
    """The primary subtag, lower case (``zh-Hans`` → ``zh``, ``en_GB`` → ``en``)."""
    return language.replace("_", "-").split("-")[0].strip().lower()


def _normalise(text: str) -> str:
    return text.replace("\u2019", "'").replace("\u02bc", "'")


@lru_cache(maxsize=1)
def _jieba() -> Any:
    # jieba takes ~0.3 s to import and builds its dictionary on first use: only Chinese targets need it.
    import jieba  # type: ignore[import-untyped]

    jieba.setLogLevel(logging.WARNING)  # no "Building prefix dict" chatter on stderr
    return jieba


def jieba_version() -> str:
    return str(getattr(_jieba(), "__version__", "?"))


def words(text: str, language: str) -> list[str]:
    """The text's words as matched against the lists: jieba for Chinese, word-boundary regex otherwise."""
    if language == "zh":
        return [w for w in _jieba().lcut(text) if w.strip()]
    return _WORD.findall(_normalise(text))


#: Capitalised forms that are another word, not the pronoun, where case decides: ``US`` (the United States)
#: is not ``us``.  Counted as that word only in a text that also has lower-case letters (in an all-capitals
#: text case says nothing).
ACRONYMS = frozenset({"US"})


def _acronym(word: str, text_has_lower: bool) -> bool:
    return text_has_lower and word in ACRONYMS


def pronoun_tokens(text: str, language: str = "en") -> Counter[str]:
    """Pronoun occurrences in ``text`` (casefolded whole words; capitals decide: ``US`` is no pronoun).

    French elided forms (j', m', t', s') count when followed by a letter ("j'ai",
    "s'il"); "qu'il" counts "il".  English contractions keep their pronoun
    ("it's" counts "it").  Chinese: jieba words.
    """
    language = language_code(language)
    vocabulary = PRONOUNS.get(language)
    if vocabulary is None:
        raise ValueError(f"no pronoun list for target language {language!r} (lists: {', '.join(sorted(PRONOUNS))})")
    if language == "zh":
        return Counter(w for w in words(text, "zh") if w in vocabulary)
    norm = _normalise(text)
    has_lower = any(ch.islower() for ch in norm)
    found: Counter[str] = Counter(w.casefold() for w in _WORD.findall(norm)
                                  if w.casefold() in vocabulary and not _acronym(w, has_lower))
    if language == "fr":
        found.update(f"{m.casefold()}'" for m in _ELIDED.findall(norm))
    return found


def pronoun_prf(hypothesis: str, reference: str,
                language: str = "en") -> tuple[float | None, float | None, float | None] | None:
    """Reference-based pronoun precision, recall and F1 (multiset overlap); ``None`` where undefined.

    ``matched = Σ_p min(count_hyp(p), count_ref(p))``; precision = matched / #hyp
    pronouns (``None`` when the hypothesis has none: 0/0), recall = matched /
    #ref pronouns (``None`` when the reference has none), F1 = 2·matched /
    (#hyp + #ref) (their harmonic mean; 0 when only one side has pronouns).
    Returns ``None`` when neither text has a pronoun (nothing to evaluate).
    """
    hyp, ref = pronoun_tokens(hypothesis, language), pronoun_tokens(reference, language)
    n_hyp, n_ref = sum(hyp.values()), sum(ref.values())
    if n_hyp == 0 and n_ref == 0:
        return None
    matched = sum((hyp & ref).values())
    return (matched / n_hyp if n_hyp else None, matched / n_ref if n_ref else None,
            2 * matched / (n_hyp + n_ref))


def connective_tokens(text: str, language: str = "en") -> Counter[str]:
    """Occurrences of the listed connectives in ``text`` (casefolded whole words; Chinese: jieba words).

    Every occurrence counts, whether or not the word acts as a discourse
    connective there ("in", "by", "with", "as" very often do not): DiP used a
    PDTB-trained classifier on the reference, which is not available here.
    """
    language = language_code(language)
    vocabulary = CONNECTIVES.get(language)
    if vocabulary is None:
        raise ValueError(f"no connective list for target language {language!r} "
                         f"(lists: {', '.join(sorted(CONNECTIVES))})")
    if language != "zh":
        return Counter(w for w in (x.casefold() for x in _WORD.findall(_normalise(text))) if w in vocabulary)
    tokens = words(text, "zh")
    found: Counter[str] = Counter(w for w in tokens if w in vocabulary)
    for i, w in enumerate(tokens):
        if w == "当" and any(t in ("时候", "时") for t in tokens[i + 1:]):
            found[_WHEN_ZH] += 1
    return found


@lru_cache(maxsize=1 << 16)
def _counted(kind: str, text: str, language: str) -> Counter[str]:
    """:func:`pronoun_tokens` or :func:`connective_tokens` of a text, counted once for every evaluator and system
    (a reference is compared with every system's hypothesis; pronoun-f, -p and -r count the same texts).
    The counter is shared: callers must not change it."""
    return (pronoun_tokens if kind == "pronoun" else connective_tokens)(text, language)


def connective_accuracy(hypothesis: str, reference: str, language: str = "en") -> float | None:
    """Share of the reference's connective occurrences also in the hypothesis; ``None`` if the reference has none."""
    ref = connective_tokens(reference, language)
    n_ref = sum(ref.values())
    if n_ref == 0:
        return None
    return sum((connective_tokens(hypothesis, language) & ref).values()) / n_ref


def connective_any(hypothesis: str, reference: str, language: str = "en") -> float | None:
    """DiP §3.4 "ANY": 1 when the hypothesis has any listed connective, 0 otherwise; ``None`` if the reference has none."""
    if not connective_tokens(reference, language):
        return None
    return 1.0 if connective_tokens(hypothesis, language) else 0.0


# --------------------------------------------------------------------------- evaluators
@dataclass
class _Tally:
    matched: int = 0
    hypothesis: int = 0
    reference: int = 0
    segments: int = 0  # segments with something to evaluate
    undefined: int = 0  # of those, segments whose score is undefined (0/0)
    hits: int = 0  # connective-any: segments where the hypothesis has a connective


@dataclass
class WordListEvaluator:
    """A registered word-list evaluator (``kind`` "pronoun" or "connective"; ``measure`` what it scores)."""

    name: str
    kind: str
    measure: str  # pronoun: "p", "r", "f"; connective: "acc", "any"
    description: str
    higher_is_better: bool = True
    level: str = "sentence"
    needs_source: bool = False
    needs_documents: bool = False

    @property
    def lists(self) -> dict[str, frozenset[str]]:
        return PRONOUNS if self.kind == "pronoun" else CONNECTIVES

    def signature(self, languages: list[str]) -> str:
        tok = "words" + (f"+jieba:{jieba_version()}" if "zh" in languages else "")
        case = "|case:acronyms-excluded" if self.kind == "pronoun" else "|case:folded"
        return (f"{self.name}|lang:{','.join(languages)}|tok:{tok}{case}|system:pooled|undefined:excluded"
                f"|version:{VERSION}")

    def _languages(self, corpus: Corpus) -> tuple[dict[str, str], list[str]]:
        """Each segment's list language ('' when no list) and the notes about segments left out."""
        default = language_code(corpus.target_language)
        out: dict[str, str] = {}
        unlisted: Counter[str] = Counter()
        for seg in corpus.segments:
            lang = language_code(corpus.segment_languages.get(seg.key, "")) or default
            if lang in self.lists:
                out[seg.key] = lang
            else:
                out[seg.key] = ""
                unlisted[lang or "unknown"] += 1
        notes = []
        if unlisted:
            notes.append(f"{sum(unlisted.values())} segment(s) not scored: no {self.kind} list for their target "
                         f"language ({', '.join(f'{n} × {lang}' for lang, n in unlisted.most_common())}; lists: "
                         f"{', '.join(sorted(self.lists))})")
        if not any(out.values()):
            if not default:
                raise ValueError(f"{self.name}: the target language is unknown; set the study's target language "
                                 f"(lists exist for {', '.join(sorted(self.lists))})")
            raise ValueError(f"{self.name}: no {self.kind} list for target language {corpus.target_language!r} "
                             f"(lists exist for {', '.join(sorted(self.lists))})")
        return out, notes

    def _segment(self, hyp: str, ref: str, lang: str, tally: _Tally,
                 categories: dict[str, Counter[str]]) -> float | None | bool:
        """The segment's score (None: undefined), or False when there is nothing to evaluate."""
        h, r = _counted(self.kind, hyp, lang), _counted(self.kind, ref, lang)  # read only: shared by the cache
        n_h, n_r = sum(h.values()), sum(r.values())
        matched = h & r
        m = sum(matched.values())
        if self.kind == "connective" and n_r == 0:
            return False
        if self.kind == "pronoun" and n_h == 0 and n_r == 0:
            return False
        tally.segments += 1
        tally.matched += m
        tally.hypothesis += n_h
        tally.reference += n_r
        categories["hypothesis"].update(h)
        categories["reference"].update(r)
        categories["matched"].update(matched)
        if self.kind == "connective":
            if self.measure == "any":
                tally.hits += 1 if n_h else 0
                return 1.0 if n_h else 0.0
            return m / n_r
        if self.measure == "p":
            value = m / n_h if n_h else None
        elif self.measure == "r":
            value = m / n_r if n_r else None
        else:
            value = 2 * m / (n_h + n_r)
        if value is None:
            tally.undefined += 1
        return value

    def _system_value(self, t: _Tally) -> float | None:
        if self.kind == "connective":
            if not t.segments:
                return None
            return t.hits / t.segments if self.measure == "any" else t.matched / t.reference
        if self.measure == "p":
            return t.matched / t.hypothesis if t.hypothesis else None
        if self.measure == "r":
            return t.matched / t.reference if t.reference else None
        return 2 * t.matched / (t.hypothesis + t.reference) if t.hypothesis + t.reference else None

    def evaluate(self, corpus: Corpus, *, nlp: Backend | None = None,
                 progress: ProgressCallback | None = None) -> EvaluationResult:
        languages, lang_notes = self._languages(corpus)
        used = sorted({lang for lang in languages.values() if lang})
        signature = self.signature(used)
        result = EvaluationResult(evaluator=self.name, higher_is_better=True, systems=[])
        systems = corpus.systems
        for step, system in enumerate(systems, start=1):
            tally = _Tally()
            categories: dict[str, Counter[str]] = {"hypothesis": Counter(), "reference": Counter(),
                                                   "matched": Counter()}
            for seg in corpus.segments:
                hyp = seg.hypotheses.get(system)
                lang = languages[seg.key]
                if hyp is None or not lang:
                    continue
                value = self._segment(hyp, seg.reference, lang, tally, categories)
                if value is False:
                    continue
                if value is not None:
                    result.segments.append(SegmentScore(key=seg.key, system=system, score=float(value)))
            notes = list(lang_notes)
            if not tally.segments:
                notes.append("nothing to score: no segment's reference has a listed connective" if self.kind ==
                             "connective" else "nothing to score: no segment has a pronoun on either side")
            if tally.undefined:
                side = "hypothesis" if self.measure == "p" else "reference"
                what = "precision" if self.measure == "p" else "recall"
                notes.append(f"{tally.undefined} of {tally.segments} segment(s) have no pronoun in the {side}: "
                             f"their {what} is undefined (0/0), not stored and left out of the means")
            if corpus.target_language_guessed:
                notes.append(f"target language {corpus.target_language!r} was guessed from the references")
            counts = {"matched": tally.matched, "hypothesis": tally.hypothesis, "reference": tally.reference,
                      "segments": tally.segments, "undefined": tally.undefined}
            if self.measure == "any":
                counts["with_connective"] = tally.hits
            by_word = {w: {"hypothesis": categories["hypothesis"][w], "reference": categories["reference"][w],
                           "matched": categories["matched"][w]}
                       for w in sorted(set(categories["hypothesis"]) | set(categories["reference"]))}
            result.systems.append(SystemScore(system=system, score=self._system_value(tally), signature=signature,
                                              categories=by_word, counts=counts, notes=notes))
            if progress:
                progress(step, len(systems))
        return result


_DIP = "Jwalapuram et al. 2021 (DiP)"
_PRONOUN = ("over closed pronoun lists (English, French, Chinese; casefolded whole words, US the country excluded; "
            "Chinese: jieba words), no alignment; approximates DiP §3.1's reference-based view without "
            f"its model ({_DIP}). Segment: this item's value (undefined 0/0 left out); system: pooled counts.")
PRONOUN_F = register(WordListEvaluator("pronoun-f", "pronoun", "f", f"Pronoun F1 = 2·matched/(hyp+ref pronouns) {_PRONOUN}"))
PRONOUN_P = register(WordListEvaluator("pronoun-p", "pronoun", "p", f"Pronoun precision = matched/hyp pronouns {_PRONOUN}"))
PRONOUN_R = register(WordListEvaluator("pronoun-r", "pronoun", "r", f"Pronoun recall = matched/ref pronouns {_PRONOUN}"))
CONNECTIVE_ACC = register(WordListEvaluator(
    "connective-acc", "connective", "acc",
    "Share of the reference's listed connectives present in the candidate (English: DiP Table 13; Chinese: seed 004's "
    f"ambiguous connectives' renderings, jieba words); DiP §3.4 accuracy without the PDTB classifier ({_DIP}). "
    "System: pooled counts."))
CONNECTIVE_ANY = register(WordListEvaluator(
    "connective-any", "connective", "any",
    f"DiP §3.4 ANY: 1 if the candidate has any listed connective, on items whose reference has one ({_DIP})."))
