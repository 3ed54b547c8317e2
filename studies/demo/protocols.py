"""Demo studies for the choice and judgment protocols, from the DiaBLa subset in fixtures/diabla/ (CC BY-SA 4.0).

- ``build_mt_preference``: reference vs MT for the next turn of a dialogue, the two
  previous turns as context, A / B / Neither / Invalid (DiP A.4's interface, Fig. 4).
- ``build_mt_correctness``: one MT output with its pronouns marked, judged
  correct / incorrect in context (seed 004, Table 3: "whether the relevant
  phenomena are correctly translated", other errors ignored).

Both mix in spam items (the study's spam rule scrambles the MT). Each builder
returns a study file, like the builders of ``studies.demo.studies``, which lists them in
``DEMO_STUDIES``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from studies.demo import data as diabla
from studies.definition.connectives import first_connective


MIN_WORDS = 5  # long enough for a spam copy to be scrambled (the first and last word stay)


def _metadata(dialogue: dict, utterance: dict, language: str) -> dict[str, Any]:
    return {"dialogue_id": dialogue["dialogue_id"], "turn": utterance["turn"],
            "source_language": utterance["source_language"], "target_language": language,
            "live_judgment": utterance["judgment"], "live_problems": utterance["problems"]}


def connective_metadata(reference: str, language: str) -> dict[str, Any]:
    """``connective`` and ``connective_span`` of the reference's first listed connective (studies/definition/connectives.py), or {}.

    Metadata, not a highlight: a highlight on the reference alone would tell annotators which
    candidate it is. ``make_connective_study diabla-mt-preference --skip-unmarked`` reads it.
    """
    span = first_connective(reference, language)
    if span is None:
        return {}
    return {"connective": reference[span[0]:span[1]], "connective_span": list(span)}


# --- choice: reference vs MT, A / B / Neither / Invalid ---------------------------------------------

def build_mt_preference(data_dir: Path | None = None, per_dialogue: int = 4) -> dict[str, Any]:
    """Reference vs MT of one turn, with the two previous turns (target side) as context.

    A turn qualifies when its reference and MT differ and both have at least
    ``MIN_WORDS`` words; the first ``per_dialogue`` of each dialogue are taken.
    """

    def want(u: dict, language: str) -> bool:
        return diabla.reference_and_mt_differ(u, MIN_WORDS)

    items = []
    for number, dialogue, k, utterance, language in diabla.qualifying_turns(data_dir, per_dialogue, want):
        items.append({
            **diabla.turn_item(number, dialogue, k, utterance, language, "into"),
            "candidates": [
                {"system": "reference", "text": utterance["reference"].strip(), "is_reference": True},
                {"system": dialogue["model"], "text": utterance["mt"].strip()},
            ],
            "metadata": {**_metadata(dialogue, utterance, language),
                         **connective_metadata(utterance["reference"].strip(), language)},
        })
    return {
        "slug": "diabla-mt-preference",
        "title": "Which reply reads better in the conversation? (DiaBLa, reference vs MT)",
        "protocol": "choice",
        "description": (
            "Pairwise preference with the interface of DiP appendix A.4 (Fig. 4): the two previous turns of the "
            "dialogue in the target language, then two versions of the next turn — the human reference (hidden "
            "control) and the live MT ('baseline' or '2to2') — answered A, B, Neither or Invalid. "
            "10% spam items: copies in which the MT is scrambled (all words shuffled but the first and last "
            "10%). Phenomenon: the direction (into-en, into-fr). " + diabla.ATTRIBUTION),
        "settings": {
            "public_title": "Which reply reads better?",  # never "reference vs MT" to annotators
            "show_source": False, "options": ["neither", "invalid"], "redundancy": 3, "spam_rate": 0.1,
            "unit": "sentence", "question": "Which version of the last turn fits the conversation better?",
            "instructions": PREFERENCE_INSTRUCTIONS, "min_seconds": 3.0, "auto_exclude_share": 0.5, "seed": 2021,
        },
        "items": items,
    }


PREFERENCE_INSTRUCTIONS = """\
You will read short extracts of written conversations between an English speaker and a French
speaker. Each extract shows the **two previous turns**, then **two versions of the next turn**,
**A** and **B**.

Choose the version that fits the conversation better — meaning, pronouns, connectives, tone:

- press **a** or **b** to choose a version;
- press **n** (**Neither**) when both are equally good or equally bad;
- press **i** (**Invalid**) when the extract cannot be judged (garbled text, wrong language);
- then press **Enter**. Press **u** to go back and change an answer.

Some extracts are in English, others in French.
"""


# --- judgment: is the marked phenomenon correct? ------------------------------------------------------

def build_mt_correctness(data_dir: Path | None = None, per_dialogue: int = 4) -> dict[str, Any]:
    """One MT output per item, its pronouns highlighted, judged correct / incorrect in context.

    A turn qualifies when its MT has a listed pronoun and at least ``MIN_WORDS``
    words. The bilingual set-up of seed 004: source context and source shown, the
    phenomenon marked, other errors to be ignored. Turns already used by the
    preference demo are skipped where the dialogue has enough others.
    """

    def want(u: dict, language: str) -> bool:
        mt = u["mt"].strip()
        return len(mt.split()) >= MIN_WORDS and bool(diabla.pronoun_spans(mt, language))

    items = []
    for number, dialogue, k, utterance, language in diabla.qualifying_turns(data_dir, per_dialogue, want, offset=2):
        mt = utterance["mt"].strip()
        items.append({
            **diabla.turn_item(number, dialogue, k, utterance, language, "pronoun"),
            "candidates": [{"system": dialogue["model"], "text": mt, "highlights": diabla.pronoun_spans(mt, language)}],
            "metadata": {**_metadata(dialogue, utterance, language), "reference": utterance["reference"].strip()},
        })
    return {
        "slug": "diabla-pronoun-correctness",
        "title": "Are the marked pronouns translated correctly? (DiaBLa, MT only)",
        "protocol": "judgment",
        "description": (
            "Phenomenon correctness after seed 004 (Table 3: accuracy of the marked phenomenon, small errors "
            "elsewhere ignored, a sentence that makes no sense judged incorrect): the two previous source turns and the source turn, then the live MT with its pronouns "
            "highlighted, judged correct or incorrect. The first label is the 'good' one: a spam item (the MT "
            "scrambled) judged 'correct' fails the spam check. The reference is kept in each item's metadata, "
            "never shown. Pronouns come from a small word list, so a few highlighted words are articles. "
            + diabla.ATTRIBUTION),
        "settings": {
            "public_title": "Are the marked pronouns translated correctly?",
            "show_source": True, "labels": ["correct", "incorrect"], "multi_label": False, "redundancy": 3,
            "spam_rate": 0.1, "unit": "sentence",
            "question": "Are the highlighted pronouns translated correctly in this context?",
            "instructions": CORRECTNESS_INSTRUCTIONS, "min_seconds": 3.0, "seed": 2021,
        },
        "items": items,
    }


CORRECTNESS_INSTRUCTIONS = """\
You will read the **two previous turns** of a written conversation and the **turn in bold**, then a
**machine translation** of that turn with some words **highlighted** (pronouns such as *it, she,
they / il, elle, on, ça*).

Judge the **highlighted words**: are they the right translation in this context? Small errors
elsewhere in the sentence do not count.

But a translation that **makes no sense at all** (words in a jumbled order) is **incorrect**,
whatever its highlighted words: the study contains a few such checks.

- press **1** for **correct**, **2** for **incorrect**, then **Enter**;
- press **u** to go back and change an answer.

A highlighted word that is not a pronoun (e.g. the article *le*) counts as correct when it is right.
"""
