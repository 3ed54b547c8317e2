"""Built-in automatic evaluators: deterministic, reference-based, no model.

Each evaluator is a :class:`BuiltinEvaluator`: a name, its orientation
(``higher_is_better``), a description with its source, and a function
``study -> iterable of (item, system, score)``.  The ``evaluate`` command
stores what the function yields (``evaluators.metrics.scores.evaluator_run``).

What every evaluator scores
---------------------------
* Only *real* items (``Item.is_spam`` False) that have a reference candidate
  (``Candidate.is_reference``); each non-reference, non-spam candidate is
  scored against that reference.  The reference itself is never scored (a
  reference-based metric of the reference against itself says nothing), so
  the comparison treats reference pairs as "not scored".
* Sentence level (``bleu``, ``chrf``, ``ter``, ``pronoun-*``, ``connective-*``):
  one score per (item, system).
* Document level (``doc-bleu``, ``doc-chrf``, ``doc-ter``): a document's items
  (same ``document_id``; an item without one is its own document) are joined
  in ``position`` order with a space, per system, on the items where both the
  system and the reference have a candidate; the document's score is stored on
  each of those items with ``document`` set, and the comparison averages such
  scores per document first.

Honesty about approximations
----------------------------
``pronoun-*`` and ``connective-*`` are the *deterministic* parts of DiP's
evaluation (Jwalapuram et al. 2021, §3.1 and §3.4), approximated with closed
word lists and word-boundary regular expressions: no alignment, no parser,
no PDTB connective classifier, no pronoun-ranking model.  BlonDe (Jiang et al.
2022) needs an NLP pipeline (spaCy NER/POS) that is not installed here, and
DiP's lexical consistency (§3.3) needs lemmatised word alignment; neither is
offered as a built-in.  Model-based evaluators (DiP's pronoun and coherence
models, BlonDe, COMET, …) come in as imported scores (``import_scores``).
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from studies.models import Item, Study

if TYPE_CHECKING:  # sacrebleu is imported on first use
    from sacrebleu.metrics.base import Metric

ScoreRow = tuple[Item, str, float]


@dataclass(frozen=True)
class BuiltinEvaluator:
    name: str
    higher_is_better: bool
    level: str  # "sentence" or "document"
    description: str
    func: Callable[[Study], Iterable[ScoreRow]]


# --------------------------------------------------------------------------- sacrebleu
@lru_cache(maxsize=None)
def _metric(kind: str) -> Metric:
    from sacrebleu.metrics import BLEU, CHRF, TER

    # effective_order: sentence BLEU without it is 0 for any sentence lacking a 4-gram match
    # (sacrebleu's own recommendation for sentence-level use; Post 2018).
    makers: dict[str, Callable[[], Metric]] = {"bleu": lambda: BLEU(effective_order=True), "chrf": CHRF, "ter": TER}
    return makers[kind]()


def sentence_bleu(hypothesis: str, reference: str) -> float:
    """sacrebleu sentence BLEU (Papineni et al. 2002; Post 2018), 0–100, exp smoothing, 13a tokens."""
    return float(_metric("bleu").sentence_score(hypothesis, [reference]).score)


def sentence_chrf(hypothesis: str, reference: str) -> float:
    """sacrebleu chrF (Popović 2015), character 6-grams, beta 2, 0–100."""
    return float(_metric("chrf").sentence_score(hypothesis, [reference]).score)


def sentence_ter(hypothesis: str, reference: str) -> float:
    """sacrebleu TER (Snover et al. 2006): edits per reference word ×100, LOWER is better."""
    return float(_metric("ter").sentence_score(hypothesis, [reference]).score)


def sacrebleu_signatures() -> dict[str, str]:
    """The sacrebleu signatures (Post 2018) of the three metrics, for reports and docs."""
    out = {}
    for kind, fn in (("bleu", sentence_bleu), ("chrf", sentence_chrf), ("ter", sentence_ter)):
        fn("a b c d", "a b c d")  # sacrebleu only knows nrefs after one evaluation
        out[kind] = str(_metric(kind).get_signature())
    return out


# --------------------------------------------------------------------------- pronouns
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
_ELIDED = re.compile(r"(?<!\w)([jmts])'(?=\w)")
_WORD = re.compile(r"(?<!\w)(\w+)(?!\w)")
# Function words that tell English from French when an item does not say its target language.
_EN_MARKERS = frozenset("the and is of to that this was are with for not have be".split())
_FR_MARKERS = frozenset("le la les et est de des du un une que qui pas pour dans avec sont".split())


def _normalise(text: str) -> str:
    return text.casefold().replace("\u2019", "'").replace("\u02bc", "'")


def guess_language(text: str) -> str:
    """'fr' when French function words outnumber English ones in ``text``, else 'en'.

    Only used when an item's metadata does not give ``target_lang`` (or ``tgt_lang``,
    ``target_language``); documented in docs/evaluators.md.
    """
    words = _WORD.findall(_normalise(text))
    fr = sum(w in _FR_MARKERS for w in words)
    en = sum(w in _EN_MARKERS for w in words)
    return "fr" if fr > en else "en"


def pronoun_tokens(text: str, language: str = "en") -> Counter[str]:
    """Pronoun occurrences in ``text`` (casefolded, word boundaries), as a multiset.

    French elided forms (j', m', t', s') count when followed by a letter ("j'ai",
    "s'il"); "qu'il" counts "il".  English contractions keep their pronoun
    ("it's" counts "it").
    """
    norm = _normalise(text)
    vocabulary = PRONOUNS_FR if language == "fr" else PRONOUNS_EN
    found: Counter[str] = Counter(w for w in _WORD.findall(norm) if w in vocabulary)
    if language == "fr":
        found.update(f"{m}'" for m in _ELIDED.findall(norm))
    return found


def pronoun_prf(hypothesis: str, reference: str, language: str = "en") -> tuple[float, float, float] | None:
    """Reference-based pronoun precision, recall and F1 (multiset overlap).

    ``matched = Σ_p min(count_hyp(p), count_ref(p))``; precision = matched / #hyp
    pronouns, recall = matched / #ref pronouns, F1 their harmonic mean (0 when
    either is 0).  In the spirit of reference-based pronoun evaluation (Hardmeier
    & Federico 2010; Guillou & Hardmeier 2018) without word alignment.  Returns
    ``None`` when neither text has a pronoun (nothing to evaluate: the item is
    left unscored).  A side with no pronoun gives precision (or recall) 0.
    """
    hyp, ref = pronoun_tokens(hypothesis, language), pronoun_tokens(reference, language)
    n_hyp, n_ref = sum(hyp.values()), sum(ref.values())
    if n_hyp == 0 and n_ref == 0:
        return None
    matched = sum((hyp & ref).values())
    precision = matched / n_hyp if n_hyp else 0.0
    recall = matched / n_ref if n_ref else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


# --------------------------------------------------------------------------- connectives
#: English explicit discourse connectives studied by DiP (Table 13, one word each).
CONNECTIVES_EN = (
    "and", "also", "when", "after", "by", "or", "as", "while", "so", "because", "then", "with", "if",
    "thus", "indeed", "still", "without", "unless", "until", "therefore", "subsequently", "ultimately",
    "before", "previously", "once", "however", "in",
)
_CONNECTIVE_SET = frozenset(CONNECTIVES_EN)


def connective_tokens(text: str) -> Counter[str]:
    """Occurrences of the DiP connectives in ``text`` (casefolded, word boundaries).

    Every occurrence counts, whether or not the word acts as a discourse
    connective there ("in", "by", "with", "as" very often do not): DiP used a
    PDTB-trained classifier on the reference, which is not available here.
    """
    return Counter(w for w in _WORD.findall(_normalise(text)) if w in _CONNECTIVE_SET)


def connective_accuracy(hypothesis: str, reference: str) -> float | None:
    """Share of the reference's connective occurrences also present in the candidate.

    ``Σ_c min(count_hyp(c), count_ref(c)) / Σ_c count_ref(c)`` — DiP §3.4 expects
    "the same connective as the reference".  ``None`` (unscored) when the
    reference has no connective from the list.
    """
    ref = connective_tokens(reference)
    n_ref = sum(ref.values())
    if n_ref == 0:
        return None
    return sum((connective_tokens(hypothesis) & ref).values()) / n_ref


def connective_any(hypothesis: str, reference: str) -> float | None:
    """DiP §3.4 "ANY": 1 when the candidate contains any listed connective, 0 otherwise.

    Only items whose reference has a connective are scored (``None`` otherwise).
    """
    if not connective_tokens(reference):
        return None
    return 1.0 if connective_tokens(hypothesis) else 0.0


# --------------------------------------------------------------------------- study adapters
@dataclass(frozen=True)
class _Pair:
    item: Item
    system: str
    hypothesis: str
    reference: str


def scorable_pairs(study: Study) -> Iterator[_Pair]:
    """(item, system, candidate text, reference text) for every real item with a reference.

    Spam items, spam candidates and the reference candidate itself are skipped;
    items are fetched with their candidates in two queries.
    """
    items = (Item.objects.filter(study=study, is_spam=False)
             .prefetch_related("candidates").order_by("document_id", "position", "pk"))
    for item in items:
        candidates = list(item.candidates.all())
        reference = next((c for c in candidates if c.is_reference), None)
        if reference is None:
            continue
        for cand in candidates:
            if cand.is_reference or cand.is_spam:
                continue
            yield _Pair(item, cand.system, cand.text, reference.text)


def _item_language(item: Item, reference: str) -> str:
    meta = item.metadata if isinstance(item.metadata, dict) else {}
    for key in ("target_lang", "tgt_lang", "target_language"):
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            return "fr" if value.strip().lower().startswith("fr") else "en"
    return guess_language(reference)


def _sentence(fn: Callable[[str, str], float | None]) -> Callable[[Study], Iterator[ScoreRow]]:
    def run(study: Study) -> Iterator[ScoreRow]:
        for pair in scorable_pairs(study):
            score = fn(pair.hypothesis, pair.reference)
            if score is not None:
                yield pair.item, pair.system, float(score)
    return run


def _pronoun(component: int) -> Callable[[Study], Iterator[ScoreRow]]:
    def run(study: Study) -> Iterator[ScoreRow]:
        for pair in scorable_pairs(study):
            prf = pronoun_prf(pair.hypothesis, pair.reference, _item_language(pair.item, pair.reference))
            if prf is not None:
                yield pair.item, pair.system, float(prf[component])
    return run


def _document(fn: Callable[[str, str], float]) -> Callable[[Study], Iterator[ScoreRow]]:
    def run(study: Study) -> Iterator[ScoreRow]:
        groups: dict[tuple[str, str], list[_Pair]] = {}
        for pair in scorable_pairs(study):  # ordered by document, position
            doc = pair.item.document_id or f"item:{pair.item.external_id}"
            groups.setdefault((doc, pair.system), []).append(pair)
        for pairs in groups.values():
            score = fn(" ".join(p.hypothesis for p in pairs), " ".join(p.reference for p in pairs))
            for p in pairs:
                yield p.item, p.system, float(score)
    return run


_SB = "sacrebleu 2.x (Post 2018); signature in docs/evaluators.md"
BUILTIN_EVALUATORS: dict[str, BuiltinEvaluator] = {e.name: e for e in (
    BuiltinEvaluator("bleu", True, "sentence", f"Sentence BLEU (Papineni et al. 2002), {_SB}.", _sentence(sentence_bleu)),
    BuiltinEvaluator("chrf", True, "sentence", f"Sentence chrF (Popović 2015), {_SB}.", _sentence(sentence_chrf)),
    BuiltinEvaluator("ter", False, "sentence", f"Sentence TER (Snover et al. 2006), lower is better, {_SB}.", _sentence(sentence_ter)),
    BuiltinEvaluator("doc-bleu", True, "document", f"BLEU of each document's concatenated items, {_SB}.", _document(sentence_bleu)),
    BuiltinEvaluator("doc-chrf", True, "document", f"chrF of each document's concatenated items, {_SB}.", _document(sentence_chrf)),
    BuiltinEvaluator("doc-ter", False, "document", f"TER of each document's concatenated items, lower is better, {_SB}.", _document(sentence_ter)),
    BuiltinEvaluator("pronoun-f", True, "sentence",
                     "Reference-based pronoun F1 over a closed English/French pronoun list (word-boundary regex, "
                     "casefolded, no alignment); approximates DiP §3.1's reference-based view without its model.",
                     _pronoun(2)),
    BuiltinEvaluator("pronoun-p", True, "sentence", "Pronoun precision (see pronoun-f).", _pronoun(0)),
    BuiltinEvaluator("pronoun-r", True, "sentence", "Pronoun recall (see pronoun-f).", _pronoun(1)),
    BuiltinEvaluator("connective-acc", True, "sentence",
                     "Share of the reference's DiP connectives (Table 13 list) present in the candidate; DiP §3.4 "
                     "accuracy without the PDTB classifier (every occurrence of a listed word counts).",
                     _sentence(connective_accuracy)),
    BuiltinEvaluator("connective-any", True, "sentence",
                     "DiP §3.4 ANY: 1 if the candidate has any listed connective, on items whose reference has one.",
                     _sentence(connective_any)),
)}


def builtin_names() -> list[str]:
    return list(BUILTIN_EVALUATORS)
