"""spaCy pipelines built in code for the tests: a blank English pipeline with rule-based components.

No model is downloaded: an ``attribute_ruler`` gives Penn tags, UPOS and lemmas from a small word
list, an ``entity_ruler`` gives named entities from phrases.  Words outside the list get no tag.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import spacy
from spacy.language import Language

#: word (lower case) -> (Penn tag, UPOS, lemma)
LEXICON: dict[str, tuple[str, str, str]] = {
    "looked": ("VBD", "VERB", "look"), "recalled": ("VBD", "VERB", "recall"), "was": ("VBD", "AUX", "be"),
    "were": ("VBD", "AUX", "be"), "is": ("VBZ", "AUX", "be"), "meet": ("VBP", "VERB", "meet"),
    "meeting": ("VBG", "VERB", "meet"), "jolted": ("VBD", "VERB", "jolt"), "saw": ("VBD", "VERB", "see"),
    "stood": ("VBD", "VERB", "stand"), "stands": ("VBZ", "VERB", "stand"), "met": ("VBD", "VERB", "meet"),
    "became": ("VBD", "VERB", "become"), "will": ("MD", "AUX", "will"), "go": ("VB", "VERB", "go"),
    "gone": ("VBN", "VERB", "go"), "has": ("VBZ", "AUX", "have"),
    "he": ("PRP", "PRON", "he"), "him": ("PRP", "PRON", "he"), "his": ("PRP$", "PRON", "his"),
    "she": ("PRP", "PRON", "she"), "her": ("PRP$", "PRON", "her"), "they": ("PRP", "PRON", "they"),
    "it": ("PRP", "PRON", "it"), "photo": ("NN", "NOUN", "photo"), "man": ("NN", "NOUN", "man"),
    "husband": ("NN", "NOUN", "husband"), "heart": ("NN", "NOUN", "heart"), "bearded": ("JJ", "ADJ", "bearded"),
    "the": ("DT", "DET", "the"), "and": ("CC", "CCONJ", "and"), "but": ("CC", "CCONJ", "but"),
    "so": ("RB", "ADV", "so"), "yet": ("RB", "ADV", "yet"), ".": (".", "PUNCT", "."), ",": (",", "PUNCT", ","),
}

#: phrase -> entity label
ENTITIES: dict[str, str] = {"Qiao": "PERSON", "Joe": "PERSON", "Paris": "GPE", "Acme": "ORG", "Monday": "DATE"}


def rule_pipeline(lexicon: Mapping[str, tuple[str, str, str]] = LEXICON,
                  entities: Mapping[str, str] = ENTITIES, *, extra: Iterable[str] = ()) -> Language:
    """A blank English pipeline tagging ``lexicon``'s words and finding ``entities``' phrases."""
    nlp = spacy.blank("en")
    ruler: Any = nlp.add_pipe("attribute_ruler")
    for word, (tag, pos, lemma) in lexicon.items():
        ruler.add([[{"LOWER": word}]], {"TAG": tag, "POS": pos, "LEMMA": lemma})
    ents: Any = nlp.add_pipe("entity_ruler")
    ents.add_patterns([{"label": label, "pattern": phrase} for phrase, label in entities.items()])
    for name in extra:
        nlp.add_pipe(name)
    nlp.meta["name"] = "rules_test"
    nlp.meta["version"] = "0.1.0"
    return nlp


#: A small multi-document test set for the rule pipeline: (document, reference, {system: hypothesis}).
#: tests/evaluators/metrics/test_blonde.py holds the authors' BlonDe scores of it (bench/blonde_rule_reference.py).
EXAMPLE: list[tuple[str, str, dict[str, str]]] = [
    ("d1", "Qiao looked at the photo and recalled the man.",
     {"A": "Qiao looked at the photo and recalled the man.", "B": "Joe looked at the photo."}),
    ("d1", "This bearded man was her husband.",
     {"A": "This bearded man is her husband.", "B": "The man was her husband, but he has gone."}),
    ("d1", "But it was the first time they were meeting.",
     {"A": "It is the first time they meet.", "B": "Yet it was the first time they met."}),
    ("d1", "So Qiao's heart jolted when she saw him, and she stood up.",
     {"A": "Joe's heart stands when he saw him, and he stands up.",
      "B": "So when Qiao saw him, her heart jolted and she stood up."}),
    ("d2", "Acme will go to Paris on Monday.",
     {"A": "Acme will go to Paris on Monday.", "B": "Acme has gone to Paris."}),
    ("d2", "On the other hand, they met him in Paris.",
     {"A": "They met him in Paris.", "B": "On the other hand they met her in Paris."}),
    ("d3", "He saw her.", {"A": "She saw him.", "B": "He saw her."}),
]


def example_documents() -> dict[str, tuple[list[list[str]], list[list[str]]]]:
    """EXAMPLE per system as (hypothesis documents, reference documents), documents in order."""
    docs: dict[str, list[int]] = {}
    for i, (doc, _, _) in enumerate(EXAMPLE):
        docs.setdefault(doc, []).append(i)
    out = {}
    for system in ("A", "B"):
        out[system] = ([[EXAMPLE[i][2][system] for i in idx] for idx in docs.values()],
                       [[EXAMPLE[i][1] for i in idx] for idx in docs.values()])
    return out
