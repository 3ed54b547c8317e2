"""BlonDe, dBlonDe and BlonDe+ (Jiang et al. 2022, §4 and appendix), as the authors' ``BLONDE()`` computes them.

Source: Y. E. Jiang, T. Liu, S. Ma, D. Zhang, J. Yang, H. Huang, R. Sennrich,
R. Cotterell, M. Sachan, M. Zhou (2022). *BlonDe: An Automatic Evaluation
Metric for Document-level Machine Translation.* NAACL.  Checked against the
authors' released implementation (package ``blonde`` 0.1.4, MIT), whose Python
API defaults this module reproduces (see docs/evaluators.md, "BlonDe"): with the
spaCy backend and the same pipeline the corpus and document scores equal theirs
(``python bench/blonde_equality.py [--documents] [--lowercase]``, which needs the
scratch environment of bench/blonde_upstream.py).

Definition, per aligned (hypothesis, reference) sentence pair ``i``:

* **categories** and their features (§4.1, footnotes 8-10, Table 6):
  ``tense`` = the Penn tags VBD VBN VBP VBZ VBG VB MD (weights 1/7 each);
  ``pronoun`` = masculine / feminine / neuter / epicene pronoun forms (weights
  0.5 0.5 0 0); ``entity`` = PERSON entities / other named entities (NORP GPE
  FAC ORG WORK_OF_ART), counted by their text (weights 1 0); ``dm`` =
  discourse markers of five PDTB senses (weights 0.2 each); and (§4.2) every
  ``n``-gram order 1..4 as its own category (weight 0.25 each);
* **similarity** (Eq. 1): per category, ``sum_l w_l * min(count_l(hyp), count_l(ref))``
  where an entity or n-gram feature's count is per distinct span; summed over
  the sentence pairs (Eq. 2), as are ``sim(hyp, hyp)`` and ``sim(ref, ref)``;
* per category precision = sim / sim(hyp, hyp), recall = sim / sim(ref, ref)
  (Eqs. 5-6); n-gram orders use BLEU's exponential smoothing (a zero match
  count at order n counts as 1 / (2^k * total)); F = 2PR / (P + R) (Eq. 7);
* **BlonDe** P and R = the geometric means over the categories (Eqs. 8-9,
  uniform category weights), BlonDe = 2PR / (P + R) (Eq. 10) with the n-gram
  categories; **dBlonDe** the same over tense, pronoun, entity and dm only;
  **BlonDe+** (§4.3) adds human-annotated categories (phrases of the reference
  marked as ambiguous or omitted; the hypothesis is credited where its aligned
  sentence contains the same phrase).

Behaviours of the authors' code kept on purpose (each listed in the docs): a
value of 0 enters a geometric mean as log(1e-5); a category whose value is
0/0 is left out of the mean (NaN); an F of a category where only one of P and
R is defined is R; the n-gram orders are always averaged (a missing order is
0 after smoothing); sBlonDe (reported with BlonDe+) is averaged over the
categories *and* dBlonDe.  Corpus scores pool the counts of all sentences of
all documents; document scores pool one document's.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluators.metrics.corpus import (
    Corpus,
    EvaluationResult,
    ProgressCallback,
    SegmentScore,
    SystemScore,
    register,
)
from evaluators.metrics.language import get_backend
from evaluators.metrics.language.spacy_backend import SpacyBackend

if TYPE_CHECKING:
    from evaluators.metrics.language.base import Backend, Sentence

#: This implementation's version, in every signature (bump it when a score can change).
VERSION = "1.0"

TENSE_TAGS = ("VBD", "VBN", "VBP", "VBZ", "VBG", "VB", "MD")
PRONOUN_TYPES = ("masculine", "feminine", "neuter", "epicene")
#: Case-sensitive, as the authors' lists: lower case and capitalised forms only.
PRONOUN_FORMS: dict[str, tuple[str, ...]] = {
    "masculine": ("he", "his", "him", "himself"),
    "feminine": ("she", "her", "hers", "herself"),
    "neuter": ("it", "its", "itself"),
    "epicene": ("they", "their", "them", "themselves"),
}
DM_TYPES = ("comparison", "cause", "conjunction", "asynchronous", "synchronous")
#: Table 6 of the paper as the authors' code has it (``"else,"`` included: a token never has the comma).
DM_MARKERS: dict[str, tuple[str, ...]] = {
    "comparison": ("but", "while", "however", "although", "though", "still", "yet", "whereas",
                   "on the other hand", "in contrast", "by contrast", "by comparison", "conversely"),
    "cause": ("if", "because", "so", "since", "thus", "hence", "as a result", "therefore", "thereby",
              "accordingly", "consequently", "in consequence", "for this reason"),
    "conjunction": ("also", "in addition", "moreover", "additionally", "besides", "else,", "plus"),
    "asynchronous": ("when", "after", "then", "before", "until", "later", "once", "afterward", "next"),
    "synchronous": ("meantime", "meanwhile", "simultaneously"),
}
PERSON_LABELS = frozenset({"PERSON"})
NON_PERSON_LABELS = frozenset({"NORP", "GPE", "FAC", "ORG", "WORK_OF_ART"})
DISCOURSE = ("tense", "pronoun", "entity", "dm")
#: BlonDe+ categories of the authors' annotation (§4.3, appendix B).
PLUS_CATEGORIES = ("ambiguity", "ellipsis")

#: The authors' default feature weights (``blonde.WEIGHTS``).
DEFAULT_WEIGHTS: dict[str, tuple[float, ...]] = {
    "tense": (1 / 7,) * 7,
    "pronoun": (0.5, 0.5, 0.0, 0.0),
    "entity": (1.0, 0.0),
    "dm": (0.2,) * 5,
    "n-gram": (0.25,) * 4,
}
SMOOTHING = ("exp", "floor", "add-k", "none")
_SMOOTH_DEFAULT_VALUE = {"floor": 0.1, "add-k": 1.0}
EPSILON = 1e-5  # the authors' floor of a value inside the geometric mean's logarithm

_PRONOUN_OF = {form: kind for kind, forms in PRONOUN_FORMS.items()
               for word in forms for form in (word, word.capitalize())}
_TENSE_SET = frozenset(TENSE_TAGS)
_DM_SINGLE: dict[str, str] = {}
_DM_MULTI: dict[str, list[tuple[tuple[str, ...], str]]] = {}
for _kind, _markers in DM_MARKERS.items():
    for _marker in _markers:
        _words = tuple(_marker.split(" "))
        if len(_words) == 1:
            assert _words[0] not in _DM_SINGLE, _marker
            _DM_SINGLE[_words[0]] = _kind
        else:
            _DM_MULTI.setdefault(_words[0], []).append((_words, _kind))

_MODALS = frozenset({"will", "would", "shall", "should", "can", "could", "may", "might", "must", "'ll", "'d",
                     "ca", "wo", "ought"})


def penn_verb_tag(token: Any) -> str:
    """A token's Penn tag: the backend's, else one derived from UPOS + morphology (the lexicon backend's case).

    Used only when a backend gives no Penn tag: VERB/AUX with ``VerbForm=Inf`` -> VB, ``Ger`` or
    ``Part``+``Tense=Pres`` -> VBG, ``Part``+``Tense=Past`` -> VBN, ``Tense=Past`` -> VBD,
    ``Tense=Pres`` with ``Person=3|Number=Sing`` -> VBZ, other ``Tense=Pres`` -> VBP, a modal -> MD.
    """
    if token.tag:
        return str(token.tag)
    if token.pos not in ("VERB", "AUX"):
        return ""
    if token.lemma.lower() in _MODALS or token.text.lower() in _MODALS:
        return "MD"
    feats = dict(f.split("=", 1) for f in token.morph.split("|") if "=" in f)
    form, tense = feats.get("VerbForm", ""), feats.get("Tense", "")
    if form == "Inf":
        return "VB"
    if form == "Ger" or (form == "Part" and tense == "Pres"):
        return "VBG"
    if form == "Part":
        return "VBN"
    if tense == "Past":
        return "VBD"
    if tense == "Pres":
        return "VBZ" if feats.get("Person") == "3" and feats.get("Number") == "Sing" else "VBP"
    return ""


# --------------------------------------------------------------------------- settings
@dataclass(frozen=True)
class BlondeSettings:
    """The authors' ``BLONDE()`` settings; the defaults are its defaults (its CLI lowercases by default)."""

    lowercase: bool = False
    average: str = "geometric"  # or "arithmetic"
    smooth: str = "exp"  # "exp", "floor", "add-k", "none"
    smooth_value: float | None = None  # for floor / add-k; None: 0.1 / 1
    weights: Mapping[str, tuple[float, ...]] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    plus_weight: float = 1.0  # BlonDe+: the weight of every annotated phrase

    def __post_init__(self) -> None:
        if self.average not in ("geometric", "arithmetic"):
            raise ValueError(f"average: {self.average!r} is not 'geometric' or 'arithmetic'")
        if self.smooth not in SMOOTHING:
            raise ValueError(f"smooth: {self.smooth!r} is not one of {', '.join(SMOOTHING)}")
        sizes = {"tense": 7, "pronoun": 4, "entity": 2, "dm": 5}
        for cat, ws in self.weights.items():
            if cat not in (*sizes, "n-gram"):
                raise ValueError(f"weights: unknown category {cat!r}")
            if cat in sizes and len(ws) != sizes[cat]:
                raise ValueError(f"weights: {cat} needs {sizes[cat]} weights, got {len(ws)}")
        if "n-gram" in self.weights and not self.weights["n-gram"]:
            raise ValueError("weights: n-gram needs at least one order")

    def weight_table(self) -> dict[str, Sequence[float]]:
        """Feature weights by category key (``tense``, ..., ``1-gram``, ...), computed once."""
        table: dict[str, Sequence[float]] | None = self.__dict__.get("_table")
        if table is None:
            table = {k: tuple(v) for k, v in self.weights.items() if k != "n-gram"}
            for n, w in enumerate(self.weights.get("n-gram", ()), start=1):
                table[f"{n}-gram"] = (w,)
            object.__setattr__(self, "_table", table)
        return table

    @property
    def max_order(self) -> int:
        return len(self.weights.get("n-gram", ()))

    def signature_fields(self) -> str:
        default = dict(self.weights) == DEFAULT_WEIGHTS
        weights = "default" if default else ";".join(
            f"{c}=" + ",".join(f"{w:g}" for w in ws) for c, ws in self.weights.items())
        sv = "" if self.smooth in ("exp", "none") else f"|sv:{self._smooth_value():g}"
        return (f"case:{'lc' if self.lowercase else 'mixed'}|avg:{self.average}|smooth:{self.smooth}{sv}"
                f"|n:{self.max_order}|w:{weights}")

    def _smooth_value(self) -> float:
        if self.smooth_value is not None:
            return self.smooth_value
        return _SMOOTH_DEFAULT_VALUE.get(self.smooth, 0.0)


# --------------------------------------------------------------------------- features
#: A sentence's discourse representation C(S): category key -> the counts of its features.  Fixed-feature
#: categories (tense, pronoun, dm) have one count per feature (a tuple, features in the order of
#: TENSE_TAGS, PRONOUN_TYPES, DM_TYPES); entity, n-gram and BlonDe+ categories one Counter of distinct
#: spans per feature.
Features = dict[str, Any]
#: Categories present in every sentence's representation (the authors' fixed-feature ones).
FIXED = ("tense", "pronoun", "dm")


def ngram_key(n: int) -> str:
    return f"{n}-gram"


def sentence_features(sentence: Sentence, settings: BlondeSettings,
                      plus: Mapping[str, Sequence[str]] | None = None) -> Features:
    """C(S) for one analysed sentence (the authors' ``process_corpus`` counts, plus BlonDe+ phrases)."""
    return features(sentence.text, [t.text for t in sentence.tokens],
                    [t.tag or penn_verb_tag(t) for t in sentence.tokens] if "tense" in settings.weights else (),
                    [(e.text, e.label) for e in sentence.entities], settings, plus)


def features(text: str, words: Sequence[str], tags: Iterable[str], entities: Iterable[tuple[str, str]],
             settings: BlondeSettings, plus: Mapping[str, Sequence[str]] | None = None) -> Features:
    """C(S) from a sentence's text, token texts, Penn tags and (text, label) entities."""
    feats: Features = {}
    cats = settings.weights
    if "tense" in cats:
        tagged = Counter(tags)
        feats["tense"] = tuple(tagged[tag] for tag in TENSE_TAGS)
    if "pronoun" in cats:
        kinds = Counter(_PRONOUN_OF[w] for w in words if w in _PRONOUN_OF)
        feats["pronoun"] = tuple(kinds[k] for k in PRONOUN_TYPES)
    if "entity" in cats:
        person: Counter[str] = Counter()
        other: Counter[str] = Counter()
        for ent_text, label in entities:
            ent_text = ent_text[:-2] if ent_text.endswith("’s") else ent_text
            if label in PERSON_LABELS:
                person[ent_text] += 1
            elif label in NON_PERSON_LABELS:
                other[ent_text] += 1
        feats["entity"] = [person, other]
    if "dm" in cats:
        dms: Counter[str] = Counter()
        lower: list[str] | None = None
        for i, w in enumerate(words):
            w = w.lower()
            kind = _DM_SINGLE.get(w)
            if kind is not None:
                dms[kind] += 1
            spans = _DM_MULTI.get(w)
            if spans:
                if lower is None:
                    lower = [x.lower() for x in words]
                for span, kind in spans:
                    if tuple(lower[i:i + len(span)]) == span:
                        dms[kind] += 1
        feats["dm"] = tuple(dms[k] for k in DM_TYPES)
    for n in range(1, settings.max_order + 1):
        if n == 1:
            feats[ngram_key(1)] = [Counter(words)]
        else:
            feats[ngram_key(n)] = [Counter(zip(*(words[k:] for k in range(n))))]
    if plus:
        feats.update(plus_features(text, plus))
    return feats


def plus_features(text: str, plus: Mapping[str, Sequence[str]]) -> Features:
    """BlonDe+ categories of one sentence: how often each annotated phrase occurs in it (whole words, any case)."""
    feats: Features = {}
    ordered = [c for c in PLUS_CATEGORIES if c in plus] + sorted(c for c in plus if c not in PLUS_CATEGORIES)
    for category in ordered:
        found: Counter[str] = Counter()
        for phrase in plus[category]:
            found[phrase] = len(re.findall(r"\b" + re.escape(phrase) + r"\b", text, re.IGNORECASE))
        feats[f"plus:{category}"] = [found]
    return feats


def _weights_of(key: str, settings: BlondeSettings) -> Sequence[float]:
    if key.startswith("plus:"):
        return (settings.plus_weight,)
    if key.endswith("-gram"):
        return (settings.weights["n-gram"][int(key.split("-")[0]) - 1],)
    return settings.weights[key]


# --------------------------------------------------------------------------- statistics
@dataclass
class Totals:
    """Weighted sums of Eq. 2 over sentence pairs: matched, hypothesis and reference span counts per category.

    Categories are kept in the order they were first met (it decides the order of the terms of a mean,
    as in the authors' code, so that sums of floats agree to the last bit).
    """

    matched: dict[str, float] = field(default_factory=dict)
    hypothesis: dict[str, float] = field(default_factory=dict)
    reference: dict[str, float] = field(default_factory=dict)

    def add_pair(self, hyp: Features, ref: Features, settings: BlondeSettings) -> None:
        """Add one aligned sentence pair: sim(hyp, ref), sim(hyp, hyp), sim(ref, ref) per category (Eqs. 1-2)."""
        self.add(pair_similarity(hyp, ref, settings))

    def add(self, pair: PairSimilarity) -> None:
        """Add the per-category sums of one sentence pair (:func:`pair_similarity`)."""
        matched, hypothesis, reference = self.matched, self.hypothesis, self.reference
        for key, m, h, r in pair:
            matched[key] = matched.get(key, 0.0) + m
            hypothesis[key] = hypothesis.get(key, 0.0) + h
            reference[key] = reference.get(key, 0.0) + r


#: (category, sim(hyp, ref), sim(hyp, hyp), sim(ref, ref)) for each category taking part in a sentence pair.
PairSimilarity = list[tuple[str, float, float, float]]


def pair_similarity(hyp: Features, ref: Features, settings: BlondeSettings) -> PairSimilarity:
    """Eq. 1 for one aligned sentence pair, per category, in the order the authors' code meets them."""
    out: PairSimilarity = []
    table = settings.weight_table()
    for key in _ordered_keys(hyp, ref):
        weights = table.get(key) or _weights_of(key, settings)
        m = h = r = 0.0
        if key in FIXED:  # always takes part; one term per feature, in feature order, as the authors add them
            hv = hyp.get(key) or _ZEROS
            rv = ref.get(key) or _ZEROS
            for i, w in enumerate(weights):
                a, b = hv[i], rv[i]
                m += w * (a if a < b else b)
                h += w * a
                r += w * b
            out.append((key, m, h, r))
            continue
        hfeats, rfeats = hyp.get(key, ()), ref.get(key, ())
        touched = False  # takes part once a span is seen on either side
        for i, w in enumerate(weights):
            hc = hfeats[i] if i < len(hfeats) else _EMPTY
            rc = rfeats[i] if i < len(rfeats) else _EMPTY
            if not hc and not rc:
                continue
            touched = True
            if len(hc) > len(rc):
                small, large = rc, hc
            else:
                small, large = hc, rc
            for span, v in small.items():
                other = large.get(span, 0)
                if other:
                    m += w * min(v, other)
            h += w * sum(hc.values())
            r += w * sum(rc.values())
        if touched:
            out.append((key, m, h, r))
    return out


_ZEROS = (0,) * 8
_EMPTY: Counter[Any] = Counter()


def _ordered_keys(hyp: Features, ref: Features) -> list[str]:
    keys = list(hyp)
    keys.extend(k for k in ref if k not in hyp)
    return keys


def _smoothed(correct: Sequence[float], total: Sequence[float], method: str, value: float) -> list[float]:
    """BLEU's smoothing of per-order n-gram ratios (Chen & Cherry 2014), as the authors apply it."""
    out = [0.0 for _ in correct]
    mteval = 1.0
    for n in range(1, len(correct) + 1):
        c, t = correct[n - 1], total[n - 1]
        if method == "add-k" and n > 1:
            c, t = c + value, t + value
        if t == 0:
            break
        if c == 0:
            if method == "exp":
                mteval *= 2
                out[n - 1] = 1.0 / (mteval * t)
            elif method == "floor":
                out[n - 1] = value / t
        else:
            out[n - 1] = c / t
    return out


def _divide(a: float, b: float) -> float:
    return a / b if b else math.nan


def _f1(r: float, p: float) -> float:
    """The authors' ``compute_F1``: 2RP / (R + P); where one of them is undefined, R (so NaN when R is)."""
    if not math.isnan(r) and not math.isnan(p):
        return _divide(2 * r * p, r + p)
    return r


def _mean(values: Sequence[float], method: str) -> float:
    arr = np.array(values, dtype=float)
    defined = int(np.sum(~np.isnan(arr)))
    if method == "arithmetic":
        return float(np.nanmean(arr)) if defined else math.nan
    if not defined:
        return math.nan
    logs = [math.log(max(v, EPSILON)) if not math.isnan(v) else math.nan for v in values]
    return float(np.exp(np.nansum(logs) / defined))


@dataclass
class BlondeScores:
    """What one pooled set of sentence pairs scores: BlonDe P/R/F, dBlonDe, per category, (BlonDe+: sBlonDe)."""

    precision: float
    recall: float
    f1: float
    categories: dict[str, tuple[float, float, float]]  # key -> (precision, recall, f1); dblonde / sblonde too
    totals: Totals


def score_totals(totals: Totals, settings: BlondeSettings) -> BlondeScores:
    """Eqs. 5-10 on pooled counts (the authors' ``scoring``)."""
    matched = dict(totals.matched)
    order = settings.max_order
    ngram_keys = [ngram_key(n) for n in range(1, order + 1)]
    recalls: dict[str, float] = {}
    precisions: dict[str, float] = {}
    if order:
        for key in ngram_keys:  # every order takes part, as in the authors' code (absent ones added last)
            matched.setdefault(key, 0.0)
        sv = settings._smooth_value()
        correct = [matched[k] for k in ngram_keys]
        ngram_r = _smoothed(correct, [totals.reference.get(k, 0.0) for k in ngram_keys], settings.smooth, sv)
        ngram_p = _smoothed(correct, [totals.hypothesis.get(k, 0.0) for k in ngram_keys], settings.smooth, sv)
    f1s: dict[str, float] = {}
    for key in matched:
        if key in ngram_keys:
            i = ngram_keys.index(key)
            recalls[key], precisions[key] = ngram_r[i], ngram_p[i]
        else:
            recalls[key] = _divide(matched[key], totals.reference[key])
            precisions[key] = _divide(matched[key], totals.hypothesis[key])
        f1s[key] = _f1(recalls[key], precisions[key])

    def summary(keys: Iterable[str]) -> tuple[float, float, float]:
        keys = list(keys)
        r = _mean([recalls[k] for k in keys], settings.average)
        p = _mean([precisions[k] for k in keys], settings.average)
        return p, r, _f1(r, p)

    precision, recall, f1 = summary(matched)
    if order and not (totals.hypothesis.get(ngram_key(1)) and totals.reference.get(ngram_key(1))):
        # No token on one side: the authors' code raises here; the score is undefined.
        precision = recall = f1 = math.nan
    categories = {k: (precisions[k], recalls[k], f1s[k]) for k in matched}
    discourse = [k for k in matched if k in DISCOURSE]
    categories["dblonde"] = summary(discourse) if discourse else (math.nan, math.nan, math.nan)
    recalls["dblonde"], precisions["dblonde"] = categories["dblonde"][1], categories["dblonde"][0]
    if any(k.startswith("plus:") for k in matched):
        categories["sblonde"] = summary(k for k in recalls if not k.startswith("plus:"))
    return BlondeScores(precision, recall, f1, categories, totals)


# --------------------------------------------------------------------------- evaluator
def _nan_to_none(value: float, scale: float = 100.0) -> float | None:
    return None if math.isnan(value) else value * scale



def read_annotation_line(line: str) -> dict[str, list[str]]:
    """BlonDe+ phrases of one reference sentence in the authors' annotation format (README of ``blonde``).

    Tab-separated fields; a field ``1,<ref phrase>,<correction> <pos/a,b>;...`` marks ambiguity,
    ``3,...`` ellipsis; other fields are ignored.
    """
    out: dict[str, list[str]] = {"ambiguity": [], "ellipsis": []}
    for part in line.rstrip("\n").split("\t"):
        if not part or not part[0].isdigit() or part[0] not in "13":
            continue
        target = out["ambiguity" if part[0] == "1" else "ellipsis"]
        for span in part[2:].split(";"):
            pair = span.split("<pos/")[0]
            if len(pair) < 2:
                continue
            target.append(pair.split(",")[0].strip())
    return out


@dataclass
class BlondeEvaluator:
    """A registered BlonDe-family evaluator: ``blonde``, ``dblonde``, ``blonde-plus``, ``blonde-lex`` or ``dblonde-lex``.

    BlonDe proper needs a spaCy backend and refuses any other (saying how to install one); the ``-lex``
    evaluators run on the lexicon backend only and say in a note which categories they computed.
    """

    name: str
    description: str
    settings: BlondeSettings = field(default_factory=BlondeSettings)
    #: Which score is the system score: "blonde", "dblonde" or "blonde-plus".
    variant: str = "blonde"
    #: blonde-lex, dblonde-lex: refuse a spaCy backend (BlonDe's approximation on the lexicon backend).
    lexicon_only: bool = False
    higher_is_better: bool = True
    level: str = "document"
    needs_source: bool = False
    needs_documents: bool = True
    #: BlonDe+ phrases: segment key -> kind -> phrases of that segment's reference (else ``Corpus.annotations``).
    annotations: Mapping[str, Mapping[str, Sequence[str]]] | None = None

    @property
    def needs_spacy(self) -> bool:
        """True for BlonDe proper (``blonde``, ``dblonde``, ``blonde-plus``): it runs on a spaCy pipeline only."""
        return not self.lexicon_only

    def _backend(self, nlp: Backend | None) -> Backend:
        if nlp is None and self.lexicon_only:
            return get_backend("lexicon")
        if nlp is not None and self.lexicon_only and nlp.name.startswith("spacy:"):
            raise ValueError(f"{self.name} is BlonDe on the lexicon backend; with {nlp.name} use "
                             f"{self.name.removesuffix('-lex')!r}")
        if nlp is None or (self.needs_spacy and not nlp.name.startswith("spacy:")):
            raise ValueError(spacy_needed_message(self.name, None if nlp is None else nlp.name))
        return nlp

    def signature(self, backend: Backend) -> str:
        spacy = backend.name.startswith("spacy:")
        label = {"blonde": "blonde", "dblonde": "dblonde", "blonde-plus": "blonde-plus"}[self.variant]
        if not spacy:
            label += "-lex"
        return f"{label}|nrefs:1|{self.settings.signature_fields()}|{backend.signature()}|version:{VERSION}"

    def evaluate(self, corpus: Corpus, *, nlp: Backend | None = None,
                 progress: ProgressCallback | None = None) -> EvaluationResult:
        language = corpus.target_language.replace("_", "-").split("-")[0].lower()
        if language and language != "en":
            raise ValueError(f"{self.name} is defined for English targets (its pronoun and discourse-marker lists "
                             f"and tag set are English); the target language is {corpus.target_language!r}")
        backend = self._backend(nlp)
        annotations = self.annotations if self.annotations is not None else corpus.annotations
        if self.variant == "blonde-plus" and not annotations:
            raise ValueError("blonde-plus needs human annotations of the reference (BlonDe §4.3): phrases "
                             "marked as ambiguous or omitted, per segment; none were given (a study holds none: "
                             "score files with manage.py score --evaluator blonde-plus --annotations FILE)")
        systems = corpus.systems
        total_steps = len(systems) + 1
        featurize = _featurizer(backend, corpus.target_language, self.settings)
        lowercase = self.settings.lowercase
        segments = corpus.segments
        ref_feats = [_with_plus(f, seg.reference, (annotations or {}).get(seg.key), lowercase)
                     for seg, f in zip(segments, featurize([seg.reference for seg in segments]))]
        if progress:
            progress(1, total_steps)
        result = EvaluationResult(evaluator=self.name, higher_is_better=True, systems=[])
        signature = self.signature(backend)
        for step, system in enumerate(systems, start=2):
            idx = [i for i, seg in enumerate(segments) if seg.hypotheses.get(system) is not None]
            texts = [segments[i].hypotheses[system] for i in idx]
            hyps = featurize(texts)
            docs: dict[str, Totals] = {}
            doc_keys: dict[str, list[str]] = {}
            corpus_totals = Totals()
            for i, text, hyp in zip(idx, texts, hyps):
                seg = segments[i]
                hf = _with_plus(hyp, text, (annotations or {}).get(seg.key), lowercase)
                doc = seg.document or f"segment:{seg.key}"
                pair = pair_similarity(hf, ref_feats[i], self.settings)
                corpus_totals.add(pair)
                docs.setdefault(doc, Totals()).add(pair)
                doc_keys.setdefault(doc, []).append(seg.key)
            result.systems.append(self._system_score(system, corpus_totals, docs, signature))
            if self.lexicon_only:
                result.systems[-1].notes.append(self._categories_note(backend, result.systems[-1].categories or {}))
            if not language:
                result.systems[-1].notes.append("target language not given: scored as English (BlonDe's lists are)")
            elif corpus.target_language_guessed:
                result.systems[-1].notes.append(f"target language {corpus.target_language!r} was guessed")
            for doc, totals in docs.items():
                value = self._headline(score_totals(totals, self.settings))
                for key in doc_keys[doc]:
                    result.segments.append(SegmentScore(key=key, system=system, score=value, document=doc))
            if progress:
                progress(step, total_steps)
        return result

    def _categories_note(self, backend: Backend, categories: Mapping[str, Any]) -> str:
        """Which of BlonDe's categories a lexicon-backend run computed, and which it could not (entity, no NER)."""
        wanted = [k for k in DISCOURSE if k in self.settings.weights]
        if self.variant != "dblonde":
            wanted += [ngram_key(n) for n in range(1, self.settings.max_order + 1)]
        computed = [k for k in wanted if k in categories]
        missing = [k for k in wanted if k not in categories]
        text = (f"{self.name} is an approximation of BlonDe on the {backend.name} backend, not BlonDe: categories "
                f"computed: {', '.join(computed) or 'none'}")
        if missing:
            why = {"entity": "entity (the backend recognises no PERSON or other named entities)"}
            text += ("; not computed, left out of the means: "
                     + ", ".join(why.get(k, f"{k} (no feature found)") for k in missing))
        return text

    def _headline(self, scores: BlondeScores) -> float | None:
        if self.variant == "dblonde":
            return _nan_to_none(scores.categories["dblonde"][2])
        return _nan_to_none(scores.f1)

    def _system_score(self, system: str, totals: Totals, docs: Mapping[str, Totals], signature: str) -> SystemScore:
        scores = score_totals(totals, self.settings)
        categories: dict[str, Any] = {
            key: {"precision": _nan_to_none(p), "recall": _nan_to_none(r), "f1": _nan_to_none(f)}
            for key, (p, r, f) in scores.categories.items()}
        categories["blonde"] = {"precision": _nan_to_none(scores.precision), "recall": _nan_to_none(scores.recall),
                                "f1": _nan_to_none(scores.f1)}
        undefined = sorted(k for k, (p, r, _f) in scores.categories.items() if math.isnan(p) or math.isnan(r))
        notes = []
        if math.isnan(scores.f1):
            notes.append("undefined: no token in the hypotheses or the references")
        if undefined:
            notes.append("undefined (0/0) and left out of the means: "
                         + ", ".join(f"{k} {'P' if math.isnan(scores.categories[k][0]) else ''}"
                                     f"{'R' if math.isnan(scores.categories[k][1]) else ''}" for k in undefined))
        zero = sorted(k for k, (p, r, _f) in scores.categories.items() if p == 0 or r == 0)
        if zero:
            notes.append(f"a zero P or R enters the geometric mean as log({EPSILON:g}): " + ", ".join(zero))
        return SystemScore(
            system=system, score=self._headline(scores), signature=signature, categories=categories,
            counts={"matched": dict(totals.matched), "hypothesis": dict(totals.hypothesis),
                    "reference": dict(totals.reference)},
            documents={doc: self._headline(score_totals(t, self.settings)) for doc, t in docs.items()},
            notes=notes)


def spacy_needed_message(name: str, backend: str | None) -> str:
    """Why BlonDe refuses to run without a spaCy pipeline, and how to get one (or the ``-lex`` name to ask for)."""
    lex = f"{name}-lex"
    given = f" (the language backend here is {backend})" if backend else " (no language backend was given)"
    instead = (f"; without one, ask for {lex} by that name: BlonDe's approximation on the lexicon backend, "
               f"without the entity category, signed {lex}" if lex in LEXICON_VARIANTS
               else f"; {name} has no lexicon-backend variant")
    return (f"{name} needs a spaCy pipeline{given}: BlonDe's tense tags and named entities come from spaCy's "
            "tagger and NER. Install spaCy and an English pipeline (pip install spacy; python -m spacy download "
            "en_core_web_sm) and give it as the language backend, --nlp spacy:en_core_web_sm (see "
            "docs/evaluators.md, 'The BlonDe family', and evaluators/metrics/language/)" + instead)


def _featurizer(backend: Backend, language: str, settings: BlondeSettings) -> Callable[[list[str]], list[Features]]:
    """C(S) of texts, each distinct text analysed once (identical texts share one analysis): tags and entities only.

    With the spaCy backend, the pipeline runs with only its tagging and NER components, batched
    through ``nlp.pipe``, and features are read from the ``Doc`` arrays (:meth:`SpacyBackend.tagged`).
    """
    cache: dict[str, Features] = {}
    need_entities = "entity" in settings.weights

    def featurize(texts: list[str]) -> list[Features]:
        if settings.lowercase:
            texts = [t.lower() for t in texts]
        todo = list(dict.fromkeys(t for t in texts if t not in cache))
        if todo:
            if isinstance(backend, SpacyBackend):
                for text, (_text, words, tags, ents) in zip(
                        todo, backend.tagged(todo, language, entities=need_entities)):
                    cache[text] = features(text, words, tags, ents, settings)
            else:
                for text, sentence in zip(todo, backend.analyse(todo, language)):
                    cache[text] = sentence_features(sentence, settings)
        return [cache[t] for t in texts]

    return featurize


def _with_plus(feats: Features, text: str, plus: Mapping[str, Sequence[str]] | None, lowercase: bool) -> Features:
    """A sentence's features with its BlonDe+ categories (annotations belong to a segment, not to a text)."""
    if not plus:
        return feats
    return {**feats, **plus_features(text.lower() if lowercase else text, plus)}


_NEEDS_SPACY = "Needs a spaCy pipeline (--nlp spacy:NAME)."
_SOURCE = "Jiang et al. 2022 (NAACL), BlonDe §4 and appendix; the authors' `blonde` 0.1.4 BLONDE() defaults"
BLONDE = register(BlondeEvaluator(
    name="blonde", variant="blonde",
    description=("BlonDe F1, 0-100: geometric mean of per-category P and R over tense, pronoun, named entity, "
                 f"discourse-marker and 1-4-gram categories, pooled over sentence pairs. {_NEEDS_SPACY} {_SOURCE}")))
DBLONDE = register(BlondeEvaluator(
    name="dblonde", variant="dblonde",
    description=(f"dBlonDe F1, 0-100: BlonDe over the discourse categories only (no n-grams). {_NEEDS_SPACY} "
                 f"{_SOURCE}")))
BLONDE_PLUS = register(BlondeEvaluator(
    name="blonde-plus", variant="blonde-plus",
    description=("BlonDe+ F1, 0-100: BlonDe with human-annotated categories (reference phrases marked as "
                 f"ambiguous or omitted) as more categories, §4.3. {_NEEDS_SPACY} Needs the human annotations "
                 f"(score --annotations FILE). {_SOURCE}")))
BLONDE_LEX = register(BlondeEvaluator(
    name="blonde-lex", variant="blonde", lexicon_only=True,
    description=("BlonDe computed on the lexicon backend (no NER model, context-free tags, no entity category): an "
                 f"approximation of BlonDe, never to be reported as BlonDe. {_SOURCE}")))
DBLONDE_LEX = register(BlondeEvaluator(
    name="dblonde-lex", variant="dblonde", lexicon_only=True,
    description=("dBlonDe computed on the lexicon backend (no NER model, context-free tags, no entity category): an "
                 f"approximation of dBlonDe, never to be reported as dBlonDe. {_SOURCE}")))
#: The lexicon-backend approximations, by name (asked for by these names only; BlonDe proper needs spaCy).
LEXICON_VARIANTS = ("blonde-lex", "dblonde-lex")
