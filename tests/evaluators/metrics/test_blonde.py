"""BlonDe, dBlonDe, BlonDe+ (Jiang et al. 2022 §4): hand-computed examples over every branch of the definition."""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import pytest

from evaluators.metrics.blonde import (
    BLONDE,
    BLONDE_LEX,
    BLONDE_PLUS,
    DBLONDE,
    DBLONDE_LEX,
    EPSILON,
    BlondeEvaluator,
    BlondeSettings,
    Features,
    Totals,
    penn_verb_tag,
    read_annotation_line,
    score_totals,
    sentence_features,
)
from evaluators.metrics.corpus import Corpus, Segment
from evaluators.metrics.language.base import Sentence, Token
from evaluators.metrics.language.spacy_backend import SpacyBackend
from tests.evaluators.metrics.spacy_pipelines import rule_pipeline

def figure3_features(entity: list[str], vbd: int, vbz: int, pronouns: Sequence[int], dm: Sequence[int]) -> Features:
    """One sentence of the paper's Figure 3 as its count vectors (features in the paper's order)."""
    tense = (vbd, 0, 0, vbz, 0, 0, 0)  # TENSE order: VBD VBN VBP VBZ VBG VB MD
    kinds = ("masculine", "feminine", "epicene", "neuter")  # Figure 3's column order
    order = ("masculine", "feminine", "neuter", "epicene")  # the implementation's
    by_kind = dict(zip(kinds, pronouns))
    dm_kinds = ("cause", "asynchronous", "conjunction", "comparison")  # contingency, temporal, expansion, comparison
    dm_by = dict(zip(dm_kinds, dm))
    return {
        "tense": tense,
        "pronoun": tuple(by_kind[k] for k in order),
        "entity": [Counter(entity), Counter()],
        "dm": tuple(dm_by.get(k, 0) for k in ("comparison", "cause", "conjunction", "asynchronous", "synchronous")),
    }


# Figure 3: REF and MTA, sentences a-d, as the figure counts them.  Counts, not text through a tagger: the figure
# counts only its coloured verbs (not "saw", nor "meeting"), and its MTA d) row has one feminine pronoun that the
# printed sentence lacks ("Joe's heart is squeaky as soon as he saw him, and he quickly stands up." -> [3, 1, 0, 0]),
# which footnotes 11-13's (1, 2, 4, 0), (1, 7, 6, 0) and (2, 7, 5, 2) need.
REF = [figure3_features(["Qiao"], 2, 0, (0, 0, 0, 0), (0, 0, 0, 0)),
       figure3_features([], 1, 0, (0, 1, 0, 0), (0, 0, 0, 0)),
       figure3_features([], 2, 0, (0, 0, 1, 0), (0, 0, 0, 1)),
       figure3_features(["Qiao"], 2, 0, (1, 2, 0, 0), (1, 0, 0, 0))]
MTA = [figure3_features(["Qiao"], 2, 0, (0, 0, 0, 0), (0, 0, 0, 0)),
       figure3_features([], 0, 1, (0, 1, 0, 0), (0, 0, 0, 0)),
       figure3_features([], 0, 2, (0, 0, 1, 0), (0, 0, 0, 0)),
       figure3_features([], 0, 2, (3, 1, 0, 0), (0, 0, 0, 0))]  # E = [[Qiao]]: "Joe" is no feature: [0]
UNIFORM = BlondeSettings(weights={"tense": (1.0,) * 7, "pronoun": (1.0,) * 4, "entity": (1.0, 1.0),
                                  "dm": (1.0,) * 5})


def totals(hyp: list[Features], ref: list[Features], settings: BlondeSettings) -> Totals:
    t = Totals()
    for h, r in zip(hyp, ref):
        t.add_pair(h, r, settings)
    return t


def test_figure_3_similarity_vector_is_1_2_4_0() -> None:
    t = totals(MTA, REF, UNIFORM)
    cats = ("entity", "tense", "pronoun", "dm")
    assert [t.matched[c] for c in cats] == [1, 2, 4, 0]  # footnote 11
    assert [t.hypothesis[c] for c in cats] == [1, 7, 6, 0]  # footnote 13: sim(MTA, MTA)
    assert [t.reference[c] for c in cats] == [2, 7, 5, 2]  # sim(REF, REF)


def test_figure_3_from_text_through_the_in_code_spacy_pipeline() -> None:
    # The figure's sentences through the spaCy backend (rule pipeline): the tagger tags the figure's coloured verbs
    # only, and "Qiao" is the one entity (the figure does not count "Joe").
    lexicon = {"looked": ("VBD", "VERB", "look"), "recalled": ("VBD", "VERB", "recall"),
               "was": ("VBD", "AUX", "be"), "were": ("VBD", "AUX", "be"), "jolted": ("VBD", "VERB", "jolt"),
               "stood": ("VBD", "VERB", "stand"), "is": ("VBZ", "AUX", "be"), "meet": ("VBP", "VERB", "meet"),
               "stands": ("VBZ", "VERB", "stand")}
    ref = ["Qiao looked at the photo and recalled twenty years ago.",
           "This bearded man was her newlywed husband.",
           "yet this was the first time they were meeting with each other.",
           "So Qiao's heart jolted as soon as she saw him, and she quickly stood up."]
    mta = ["Qiao looked at the photo and recalled twenty years ago.",
           "This bearded man is her newlywed husband.",
           "This is the first time they meet with each other.",
           "Joe's heart is squeaky as soon as he saw him, and he quickly stands up."]
    c = corpus(("fig3", [(r, {"MTA": h}) for r, h in zip(ref, mta)]))
    ev = BlondeEvaluator(name="blonde", description="", settings=UNIFORM)
    (a,) = ev.evaluate(c, nlp=SpacyBackend(rule_pipeline(lexicon, {"Qiao": "PERSON"}))).systems
    assert a.counts is not None
    cats = ("entity", "tense", "pronoun", "dm")
    # (1, 2, 4, 0) in the figure: its MTA d) row counts a feminine pronoun ([3, 1, 0, 0]) that the printed
    # sentence lacks; from the text, d) matches one masculine pronoun only.
    assert [a.counts["matched"][k] for k in cats] == [1, 2, 3, 0]
    assert [a.counts["hypothesis"][k] for k in cats] == [1, 7, 5, 0]
    assert [a.counts["reference"][k] for k in cats] == [2, 7, 5, 2]  # footnote 13's sim(REF, REF)


def test_figure_3_precision_recall_f_and_the_authors_means() -> None:
    s = score_totals(totals(MTA, REF, UNIFORM), UNIFORM)
    p = {k: v[0] for k, v in s.categories.items()}
    r = {k: v[1] for k, v in s.categories.items()}
    f = {k: v[2] for k, v in s.categories.items()}
    assert (p["entity"], p["tense"], p["pronoun"]) == pytest.approx((1, 2 / 7, 2 / 3))
    assert math.isnan(p["dm"])  # 0/0: "NA" in footnote 14
    assert (r["entity"], r["tense"], r["pronoun"], r["dm"]) == pytest.approx((1 / 2, 2 / 7, 4 / 5, 0))
    assert (f["entity"], f["tense"], f["pronoun"]) == pytest.approx((2 / 3, 2 / 7, 8 / 11))
    # Footnote 14 has F = NA for DM; the authors' code gives F = R when only P is undefined (here 0).
    assert f["dm"] == 0
    # The 0/0 precision is left out of the mean; the 0 recall enters it as log(1e-5).
    assert s.precision == pytest.approx((1 * 2 / 7 * 2 / 3) ** (1 / 3))
    assert s.recall == pytest.approx((1 / 2 * 2 / 7 * 4 / 5 * EPSILON) ** (1 / 4))
    assert s.f1 == pytest.approx(2 * s.precision * s.recall / (s.precision + s.recall))
    # No n-gram category: dBlonDe is BlonDe.
    assert s.categories["dblonde"] == pytest.approx((s.precision, s.recall, s.f1))


def test_mtb_of_figure_3_scores_higher_than_mta() -> None:
    mtb = [figure3_features(["Qiao"], 2, 0, (0, 0, 0, 0), (0, 0, 0, 0)),
           figure3_features([], 1, 0, (0, 1, 1, 0), (0, 0, 0, 0)),
           figure3_features([], 2, 0, (0, 0, 1, 0), (0, 0, 0, 1)),
           figure3_features(["Qiao"], 2, 0, (1, 2, 0, 0), (1, 0, 0, 0))]
    a = score_totals(totals(MTA, REF, UNIFORM), UNIFORM)
    b = score_totals(totals(mtb, REF, UNIFORM), UNIFORM)
    assert b.f1 > 0.9 > 0.1 > a.f1


def sentence(words: list[tuple[str, str]], entities: Sequence[tuple[str, str]] = ()) -> Sentence:
    from evaluators.metrics.language.base import Entity

    return Sentence(text=" ".join(w for w, _ in words), tokens=tuple(Token(w, w.lower(), "X", t) for w, t in words),
                    entities=tuple(Entity(text=e, label=lab, start=0, end=1) for e, lab in entities))


def test_sentence_features_count_each_category_as_the_authors() -> None:
    s = sentence([("He", "PRP"), ("saw", "VBD"), ("HIM", "PRP"), ("and", "CC"), ("will", "MD"), ("go", "VB"),
                  ("On", "IN"), ("the", "DT"), ("other", "JJ"), ("hand", "NN"), ("so", "RB"), ("else,", "RB"),
                  ("theirs", "PRP")],
                 [("Qiao’s", "PERSON"), ("Acme", "ORG"), ("Monday", "DATE")])
    f = sentence_features(s, BlondeSettings())
    assert f["tense"] == (1, 0, 0, 0, 0, 1, 1)
    # Case-sensitive lists: "He" counts, "HIM" does not; "theirs" is not in the authors' list.
    assert f["pronoun"] == (1, 0, 0, 0)
    assert f["entity"] == [Counter({"Qiao": 1}), Counter({"Acme": 1})]  # "’s" dropped; DATE is no feature
    # comparison (on the other hand, matched lower-cased), cause (so), conjunction: the authors' marker
    # "else," matches only a token "else," -- which spaCy's tokenizer never makes (below).
    assert f["dm"] == (1, 1, 1, 0, 0)
    (spacy_sent,) = SpacyBackend(rule_pipeline()).analyse(["Or else, he will go."])
    assert sentence_features(spacy_sent, BlondeSettings())["dm"] == (0, 0, 0, 0, 0)
    assert f["1-gram"][0]["He"] == 1 and f["2-gram"][0][("He", "saw")] == 1
    assert sum(f["4-gram"][0].values()) == len(s.tokens) - 3


def test_penn_tags_from_morphology_when_a_backend_has_none() -> None:
    def tok(text: str, pos: str, morph: str, lemma: str = "") -> Token:
        return Token(text, lemma or text, pos, "", morph)

    assert penn_verb_tag(tok("went", "VERB", "Mood=Ind|Tense=Past|VerbForm=Fin")) == "VBD"
    assert penn_verb_tag(tok("gone", "VERB", "Tense=Past|VerbForm=Part")) == "VBN"
    assert penn_verb_tag(tok("going", "VERB", "Aspect=Prog|Tense=Pres|VerbForm=Part")) == "VBG"
    assert penn_verb_tag(tok("goes", "VERB", "Number=Sing|Person=3|Tense=Pres|VerbForm=Fin")) == "VBZ"
    assert penn_verb_tag(tok("go", "VERB", "Tense=Pres|VerbForm=Fin")) == "VBP"
    assert penn_verb_tag(tok("go", "VERB", "VerbForm=Inf")) == "VB"
    assert penn_verb_tag(tok("would", "AUX", "VerbForm=Fin")) == "MD"
    assert penn_verb_tag(tok("dog", "NOUN", "Number=Sing")) == ""
    assert penn_verb_tag(Token("saw", "see", "VERB", "VBD")) == "VBD"


def corpus(*docs: tuple[str, list[tuple[str, dict[str, str]]]]) -> Corpus:
    segs = [Segment(key=f"{doc}-{i}", document=doc, reference=ref, hypotheses=hyps)
            for doc, rows in docs for i, (ref, hyps) in enumerate(rows)]
    return Corpus(segments=segs, target_language="en")


def test_hand_computed_blonde_with_smoothing_and_a_0_over_0_category() -> None:
    # hyp "He saw her ." vs ref "She saw him .": tense 1/1, pronoun (0.5+0.5)/1, dm 0/0 (left out),
    # no entity; 1-grams 2 of 4 match; 2-, 3-, 4-grams none: exp smoothing 1/(2*3), 1/(4*2), 1/(8*1)
    # of the weighted totals 0.75, 0.5, 0.25 -> 2/3, 1/2, 1/2.
    c = corpus(("d1", [("She saw him.", {"A": "He saw her."})]))
    res = BLONDE.evaluate(c, nlp=SpacyBackend(rule_pipeline()))
    (a,) = res.systems
    expected = (1 * 1 * 0.5 * (2 / 3) * 0.5 * 0.5) ** (1 / 6)
    assert a.score == pytest.approx(100 * expected)
    assert a.categories is not None
    assert a.categories["dm"] == {"precision": None, "recall": None, "f1": None}
    assert "entity" not in a.categories
    assert a.categories["2-gram"]["precision"] == pytest.approx(100 * 2 / 3)
    assert a.categories["dblonde"]["f1"] == pytest.approx(100)
    assert any("dm PR" in n for n in a.notes)
    assert a.counts is not None and a.counts["matched"]["pronoun"] == 1.0
    d = DBLONDE.evaluate(c, nlp=SpacyBackend(rule_pipeline())).systems[0]
    assert d.score == pytest.approx(100)
    assert res.higher_is_better and res.segments[0].document == "d1"


def test_zero_matches_collapse_a_document_as_log_1e_5() -> None:
    # One document where the only person differs: entity P = R = 0 -> log(1e-5) in the geometric mean.
    c = corpus(("d1", [("Qiao saw him.", {"A": "Joe saw him."})]),
               ("d2", [("Qiao saw him.", {"A": "Qiao saw him."})]))
    (a,) = BLONDE.evaluate(c, nlp=SpacyBackend(rule_pipeline())).systems
    assert a.documents is not None and a.documents["d2"] == pytest.approx(100)
    d1 = a.documents["d1"]
    # tense 1, pronoun 1 (masculine), entity 0 -> 1e-5; 1-grams 3/4; 2-grams 2/3; 3-grams 1/2; 4-grams: no
    # match -> exp smoothing 1 / (2 * 0.25), where 0.25 is the *weighted* 4-gram total (1 x weight 0.25): 2.0,
    # more than 1, as in the authors' code.
    p = (1 * 1 * EPSILON * 0.75 * (2 / 3) * 0.5 * 2.0) ** (1 / 7)
    assert d1 == pytest.approx(100 * p)
    assert d1 < 25  # the collapse the docs warn about
    # Corpus level pools both documents: entity 1 of 2.
    assert a.categories is not None and a.categories["entity"]["f1"] == pytest.approx(50)


def test_identical_output_scores_100_and_systems_share_the_reference_analysis() -> None:
    nlp = rule_pipeline()
    backend = SpacyBackend(nlp)
    seen: list[str] = []
    real = backend.tagged

    def counting(segments, language="", **kw):
        seen.extend(segments)
        return real(segments, language, **kw)

    backend.tagged = counting  # type: ignore[method-assign]
    refs = ["Qiao looked at the photo.", "She saw him, but he met her in Paris."]
    c = corpus(("d1", [(refs[0], {"same": refs[0], "other": "Joe looked."}),
                       (refs[1], {"same": refs[1], "other": "He saw her."})]))
    res = BLONDE.evaluate(c, nlp=backend)
    scores = {s.system: s.score for s in res.systems}
    assert scores["same"] == pytest.approx(100)
    assert scores["other"] is not None and scores["other"] < 50
    # Each distinct text analysed once: the references (also "same"'s output), then "other"'s two.
    assert sorted(seen) == sorted(refs + ["Joe looked.", "He saw her."])
    assert [r.key for r in res.segments if r.system == "same"] == ["d1-0", "d1-1"]


def test_lowercase_is_a_setting_in_the_signature_and_lowercases_before_tagging() -> None:
    c = corpus(("d1", [("Qiao saw him.", {"A": "Qiao saw him."})]))
    backend = SpacyBackend(rule_pipeline())
    mixed = BLONDE.evaluate(c, nlp=backend).systems[0]
    lower = BlondeEvaluator(name="blonde", description="", settings=BlondeSettings(lowercase=True)).evaluate(
        c, nlp=backend).systems[0]
    assert "|case:mixed|avg:geometric|smooth:exp|n:4|w:default|" in mixed.signature
    assert "|case:lc|" in lower.signature
    assert mixed.categories is not None and lower.categories is not None
    assert "entity" in mixed.categories and "entity" not in lower.categories  # "qiao" is no entity for the rules


class _FakeLexicon:
    """A non-spaCy backend (named lexicon) that analyses with the tests' rule pipeline."""

    name = "lexicon"

    def __init__(self) -> None:
        self.inner = SpacyBackend(rule_pipeline())

    def signature(self) -> str:
        return "nlp:lexicon|test:1"

    def analyse(self, segments: Sequence[str], language: str) -> list[Sentence]:
        return self.inner.analyse(segments, language)

    def split_sentences(self, text: str, language: str) -> list[str]:
        return [text]


def test_blonde_proper_refuses_any_backend_but_spacy_and_says_how_to_install_one() -> None:
    c = corpus(("d1", [("Qiao saw him.", {"A": "Qiao saw her."})]))
    for evaluator, instead in ((BLONDE, "ask for blonde-lex by that name"), (DBLONDE, "ask for dblonde-lex"),
                               (BLONDE_PLUS, "blonde-plus has no lexicon-backend variant")):
        for nlp in (_FakeLexicon(), None):
            with pytest.raises(ValueError) as exc:
                evaluator.evaluate(c, nlp=nlp)
            message = str(exc.value)
            assert message.startswith(f"{evaluator.name} needs a spaCy pipeline")
            for hint in ("pip install spacy", "--nlp spacy:en_core_web_sm", "docs/evaluators.md",
                         "evaluators/metrics/language/", instead):
                assert hint in message, (evaluator.name, hint)
    assert "the language backend here is lexicon" in str(pytest.raises(ValueError, BLONDE.evaluate, c,
                                                                          nlp=_FakeLexicon()).value)
    spacy_sig = BLONDE.evaluate(c, nlp=SpacyBackend(rule_pipeline())).systems[0].signature
    assert spacy_sig.startswith("blonde|") and "pipeline:en_rules_test@0.1.0" in spacy_sig


def test_lex_variants_carry_their_own_name_everywhere_and_refuse_spacy() -> None:
    c = corpus(("d1", [("Qiao saw him.", {"A": "Qiao saw her."})]))
    for evaluator, name in ((BLONDE_LEX, "blonde-lex"), (DBLONDE_LEX, "dblonde-lex")):
        result = evaluator.evaluate(c, nlp=_FakeLexicon())
        assert result.evaluator == name
        assert result.systems[0].signature.startswith(f"{name}|nrefs:1|case:mixed|")
        assert "|nlp:lexicon|test:1|" in result.systems[0].signature
        with pytest.raises(ValueError, match=f"{name} is BlonDe on the lexicon backend"):
            evaluator.evaluate(c, nlp=SpacyBackend(rule_pipeline()))


def test_blonde_plus_adds_annotated_categories_and_sblonde_averages_over_dblonde() -> None:
    c = corpus(("d1", [("Qiao saw him.", {"A": "Qiao met him."}), ("She was bearded.", {"A": "She was bearded."})]))
    backend = SpacyBackend(rule_pipeline())
    with pytest.raises(ValueError, match="blonde-plus needs human annotations"):
        BLONDE_PLUS.evaluate(c, nlp=backend)
    plus = BlondeEvaluator(name="blonde-plus", description="", variant="blonde-plus",
                           annotations={"d1-0": {"ambiguity": ["saw"]}, "d1-1": {"ellipsis": ["bearded"]}})
    (a,) = plus.evaluate(c, nlp=backend).systems
    cats = a.categories
    assert cats is not None
    assert cats["plus:ambiguity"]["recall"] == 0  # "saw" missing from the hypothesis
    assert cats["plus:ellipsis"]["recall"] == pytest.approx(100)
    assert a.signature.startswith("blonde-plus|")
    # The same annotations carried by the corpus (Corpus.annotations) give the same scores.
    c.annotations = {"d1-0": {"ambiguity": ["saw"]}, "d1-1": {"ellipsis": ["bearded"]}}
    assert BLONDE_PLUS.evaluate(c, nlp=backend).systems[0].categories == cats
    # BlonDe+ = means over every category (annotated ones included).
    keys = [k for k in cats if k not in ("dblonde", "sblonde", "blonde")]
    recalls = [cats[k]["recall"] / 100 for k in keys if cats[k]["recall"] is not None]
    assert cats["blonde"]["recall"] == pytest.approx(
        100 * math.exp(sum(math.log(max(r, EPSILON)) for r in recalls) / len(recalls)))
    # sBlonDe: over the automatic categories AND dBlonDe (the authors' code does so).
    auto = [cats[k]["recall"] / 100 for k in keys if not k.startswith("plus:") and cats[k]["recall"] is not None]
    auto.append(cats["dblonde"]["recall"] / 100)
    assert cats["sblonde"]["recall"] == pytest.approx(
        100 * math.exp(sum(math.log(max(r, EPSILON)) for r in auto) / len(auto)))


def test_authors_annotation_lines_are_read() -> None:
    line = "Qiao was cold.\t1,indifferent, cold <pos/266,269>;distant,far <pos/1,2>\t3,she <pos/3,4>\t5"
    assert read_annotation_line(line) == {"ambiguity": ["indifferent", "distant"], "ellipsis": ["she"]}


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="average"):
        BlondeSettings(average="harmonic")
    with pytest.raises(ValueError, match="smooth"):
        BlondeSettings(smooth="magic")
    with pytest.raises(ValueError, match="tense needs 7 weights"):
        BlondeSettings(weights={"tense": (1.0,)})
    assert "|smooth:floor|sv:0.1|" in BlondeSettings(smooth="floor").signature_fields()
    assert "|avg:arithmetic|" in BlondeSettings(average="arithmetic").signature_fields()


def test_registered_with_orientation_and_level() -> None:
    from evaluators.metrics.registry import evaluators

    reg = evaluators()
    for name in ("blonde", "dblonde", "blonde-plus", "blonde-lex", "dblonde-lex"):
        ev = reg[name]
        assert ev.higher_is_better and ev.level == "document" and ev.needs_documents
        assert "Jiang et al. 2022" in ev.description


def test_empty_output_is_undefined_not_an_error_and_progress_is_reported() -> None:
    c = corpus(("d1", [("Qiao saw him.", {"A": "", "B": "Qiao saw him."})]))
    steps: list[tuple[int, int]] = []
    res = BLONDE.evaluate(c, nlp=SpacyBackend(rule_pipeline()), progress=lambda d, t: steps.append((d, t)))
    scores = {s.system: s for s in res.systems}
    assert scores["A"].score is None and any("no token" in n for n in scores["A"].notes)
    assert scores["A"].documents == {"d1": None}
    assert scores["B"].score == pytest.approx(100)
    assert steps == [(1, 3), (2, 3), (3, 3)]


def test_english_targets_only_and_an_unknown_language_is_noted() -> None:
    rows = [("Il l'a vu.", {"A": "Il l'a vu."})]
    fr = Corpus(segments=[Segment(key="1", document="d", reference=r, hypotheses=h) for r, h in rows],
                target_language="fr")
    with pytest.raises(ValueError, match="English targets.*'fr'"):
        BLONDE.evaluate(fr, nlp=SpacyBackend(rule_pipeline()))
    unknown = Corpus(segments=[Segment(key="1", document="d", reference="He saw.", hypotheses={"A": "He saw."})])
    (a,) = BLONDE.evaluate(unknown, nlp=SpacyBackend(rule_pipeline())).systems
    assert any("target language not given" in n for n in a.notes)
    guessed = Corpus(segments=unknown.segments, target_language="en-US", target_language_guessed=True)
    (g,) = BLONDE.evaluate(guessed, nlp=SpacyBackend(rule_pipeline())).systems
    assert any("'en-US' was guessed" in n for n in g.notes)


# The authors' BLONDE() (PyPI blonde 0.1.4) on EXAMPLE with this very rule pipeline, printed by
# `python bench/blonde_rule_reference.py` (needs their code in a scratch environment; this test does not):
# (lowercase, system) -> (F1, P, R, {category: F1} including dBlonDe).
AUTHORS_ON_EXAMPLE = {
    (False, "A"): (0.5476828513002493, 0.6306583600309763, 0.4840027693997249, {
        "tense": 0.5599999999999998, "pronoun": 0.7142857142857143, "entity": 0.5, "dm": 0.4,
        "1": 0.7377049180327868, "2": 0.5925925925925927, "3": 0.48936170212765956, "4": 0.39999999999999997,
        "dBlonDe": 0.5531362675498847}),
    (False, "B"): (0.5396662973123926, 0.5409283852343671, 0.5384100850595848, {
        "tense": 0.6923076923076924, "pronoun": 0.7999999999999999, "entity": 0.5, "dm": 0.888888888888889,
        "1": 0.752, "2": 0.5045045045045045, "3": 0.35051546391752575, "4": 0.2168674698795181,
        "dBlonDe": 0.7051578630883603}),
    (True, "A"): (0.56829595811454, 0.668661648505795, 0.4941277025821301, {
        "tense": 0.5599999999999998, "pronoun": 0.7142857142857143, "dm": 0.4, "1": 0.7704918032786885,
        "2": 0.6111111111111112, "3": 0.5106382978723404, "4": 0.425, "dBlonDe": 0.567915339028668}),
    (True, "B"): (0.5455839354284343, 0.5470426244409679, 0.5441330049155911, {
        "tense": 0.6923076923076924, "pronoun": 0.7999999999999999, "dm": 0.888888888888889, "1": 0.752,
        "2": 0.5045045045045045, "3": 0.35051546391752575, "4": 0.2168674698795181,
        "dBlonDe": 0.7904363264980013}),
}


@pytest.mark.parametrize("lowercase", [False, True])
def test_equal_to_the_authors_implementation_on_the_rule_pipeline_example(lowercase: bool) -> None:
    from tests.evaluators.metrics.spacy_pipelines import EXAMPLE

    c = Corpus(segments=[Segment(key=str(i), document=doc, reference=ref, hypotheses=hyps)
                         for i, (doc, ref, hyps) in enumerate(EXAMPLE)], target_language="en")
    ev = BlondeEvaluator(name="blonde", description="", settings=BlondeSettings(lowercase=lowercase))
    for s in ev.evaluate(c, nlp=SpacyBackend(rule_pipeline())).systems:
        f1, p, r, cats = AUTHORS_ON_EXAMPLE[(lowercase, s.system)]
        assert s.categories is not None
        assert s.score == pytest.approx(100 * f1, abs=1e-12)
        assert s.categories["blonde"]["precision"] == pytest.approx(100 * p, abs=1e-12)
        assert s.categories["blonde"]["recall"] == pytest.approx(100 * r, abs=1e-12)
        ours = {k: v["f1"] for k, v in s.categories.items() if k not in ("blonde",)}
        names = {"1": "1-gram", "2": "2-gram", "3": "3-gram", "4": "4-gram", "dBlonDe": "dblonde"}
        assert {names.get(k, k): pytest.approx(100 * v, abs=1e-12) for k, v in cats.items()} == ours
