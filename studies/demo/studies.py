"""Demo studies built from the DiaBLa subset in fixtures/diabla/ (CC BY-SA 4.0).

Each builder returns a study file (the dict ``import_study`` reads), so the
demo exercises exactly the path a researcher's own file takes. ``load_demo``
imports every builder in ``DEMO_STUDIES`` and those of the registered protocol
plug-ins (``ProtocolSpec.demo_studies``); adding a demo study is writing a
builder and appending it there (or returning it from the plug-in's spec). ``write_study_files`` writes the same dicts to
fixtures/studies/*.json as readable examples (a test keeps them in sync).

DiaBLa: Bawden, Bilinski, Lavergne, Rosset (2021), LRE 55:635–660,
doi:10.1007/s10579-020-09514-4. Licence CC BY-SA 4.0.
"""
from __future__ import annotations

import functools

import json
from pathlib import Path
from typing import Any, Callable

from django.conf import settings

from protocols import registry
from studies.demo.data import (
    ATTRIBUTION, DATA_DIR, LANGUAGE_CODE, OTHER_LANGUAGE, differs, item_languages, load_dialogues, pronoun_spans,
    target_side, turn_languages)
from studies.demo.connectives import build_connective_preference
from studies.demo.protocols import build_mt_correctness, build_mt_preference
from studies.demo.span import build_esa_sentences, build_mqm_document

STUDIES_DIR = Path(settings.BASE_DIR) / "fixtures" / "studies"


# --- (a) pronoun ranking, monolingual (DiP A.1, Fig. 2) -----------------------------------------

def build_pronoun_mono(data_dir: Path = DATA_DIR, per_dialogue: int = 5) -> dict[str, Any]:
    """One item per utterance: the two previous turns (target side) as context, reference vs MT.

    Utterances qualify from the third turn on when the reference and the MT differ, the
    reference contains a listed pronoun and has at least four words (so a spam copy can be
    scrambled); the first ``per_dialogue`` qualifying utterances of each dialogue are taken.
    """
    items = []
    for number, dialogue in enumerate(load_dialogues(data_dir), start=1):
        turns = dialogue["utterances"]
        taken = 0
        for k, utterance in enumerate(turns):
            if taken == per_dialogue:
                break
            language = OTHER_LANGUAGE[utterance["source_language"]]
            reference, mt = utterance["reference"].strip(), utterance["mt"].strip()
            if k < 2 or not differs(reference, mt) or len(reference.split()) < 4:
                continue
            if not pronoun_spans(reference, language):
                continue
            taken += 1
            items.append({
                "id": f"d{number:02d}-t{utterance['turn']:02d}",
                "document_id": dialogue["dialogue_id"],
                "position": utterance["turn"],
                "phenomenon": f"pronoun-{LANGUAGE_CODE[language]}",
                **item_languages(utterance["source_language"], language),
                "source_context": [t["source"] for t in turns[k - 2:k]],
                "source_context_languages": turn_languages(turns[k - 2:k]),
                "source": utterance["source"],
                "target_context": [target_side(t, language) for t in turns[k - 2:k]],
                "candidates": [
                    {"system": "reference", "text": reference, "is_reference": True,
                     "highlights": pronoun_spans(reference, language)},
                    {"system": dialogue["model"], "text": mt, "highlights": pronoun_spans(mt, language)},
                ],
                "metadata": {"dialogue_id": dialogue["dialogue_id"], "turn": utterance["turn"],
                             "source_language": utterance["source_language"], "target_language": language,
                             "live_judgment": utterance["judgment"], "live_problems": utterance["problems"]},
            })
    return {
        "slug": "diabla-pronoun-mono",
        "title": "Pronouns in dialogue: which translation reads better? (DiaBLa, monolingual)",
        "protocol": "ranking",
        "description": (
            "Monolingual pronoun ranking after DiP appendix A.1 (Fig. 2): two previous turns of the dialogue "
            "in the target language, then candidate translations of the next turn, pronouns highlighted. "
            "DiaBLa has only one MT output per utterance (each dialogue was translated live by one model, "
            "'baseline' or '2to2'), so an item has 2 candidates — the human reference (the hidden "
            "control) and the MT — instead of DiP's 3. Spam items (15%) are copies of real items in which the "
            "MT is replaced by a scrambled version of itself (the study's spam rule replaces a candidate, it "
            "does not add one), so they also have 2 candidates. "
            "Items go both ways (into English and into French): the phenomenon is pronoun-en or pronoun-fr. "
            "Pronouns are found by a small word list, so a few highlighted words are articles. " + ATTRIBUTION),
        "settings": {
            "public_title": "Which translation reads better?",  # the title above names the design
            "show_source": False, "allow_ties": False, "redundancy": 3, "spam_rate": 0.15, "unit": "sentence",
            "question": "Rank the translations of the last turn, best first.",
            "instructions": PRONOUN_INSTRUCTIONS, "min_seconds": 3.0, "seed": 2021,
        },
        "items": items,
    }


PRONOUN_INSTRUCTIONS = """\
You will read short extracts of written conversations between an English speaker and a French
speaker. Each extract shows the **two previous turns** of the conversation, then several
**translations of the next turn**.

Rank the translations from **best (1)** to **worst**, paying particular attention to the
**highlighted pronouns** (*it, she, they, this… / il, elle, on, ça…*): does each pronoun fit
what came before? Then consider the translation as a whole.

- Some extracts are in English, others in French.
- Two translations may look very similar; look carefully at the highlighted words.
- There are no ties: give every translation a different rank.
"""


# --- (b) coherence ranking, document blocks (DiP A.2, Fig. 3) -----------------------------------

def build_coherence_blocks(data_dir: Path = DATA_DIR, block: int = 4, per_dialogue: int = 3) -> dict[str, Any]:
    """Items are blocks of ``block`` consecutive turns translated into English: reference block vs MT block.

    Only turns written in French are used (so both candidates are English); a block is
    ``block`` consecutive such turns of one dialogue, blocks do not overlap, and a block
    whose MT equals its reference is skipped. At most ``per_dialogue`` blocks a dialogue.
    """
    items = []
    for number, dialogue in enumerate(load_dialogues(data_dir), start=1):
        french = [u for u in dialogue["utterances"] if u["source_language"] == "french"]
        taken = 0
        for start in range(0, len(french) - block + 1, block):
            if taken == per_dialogue:
                break
            turns = french[start:start + block]
            # One turn a sentence of the document view (turn i of the reference beside turn i of the MT).
            source_turns = [_one_line(u["source"]) for u in turns]
            reference_turns = [_one_line(u["reference"]) for u in turns]
            mt_turns = [_one_line(u["mt"]) for u in turns]
            reference, mt = "\n".join(reference_turns), "\n".join(mt_turns)
            if not differs(reference, mt):
                continue
            taken += 1
            items.append({
                "id": f"d{number:02d}-b{taken}",
                "document_id": dialogue["dialogue_id"],
                "position": taken,
                "phenomenon": "coherence",
                "source": "\n".join(source_turns),
                "source_sentences": source_turns,
                "candidates": [
                    {"system": "reference", "text": reference, "sentences": reference_turns, "is_reference": True},
                    {"system": dialogue["model"], "text": mt, "sentences": mt_turns},
                ],
                "metadata": {"dialogue_id": dialogue["dialogue_id"], "turns": [u["turn"] for u in turns]},
            })
    return {
        "slug": "diabla-coherence-blocks",
        "title": "Coherence and readability of dialogue translations (DiaBLa, document blocks)",
        "protocol": "ranking",
        "description": (
            "Document-level coherence ranking after DiP appendix A.2 (Fig. 3): each candidate is a block of "
            f"{block} consecutive turns of one speaker (written in French) translated into English, one turn "
            "a line. DiaBLa has one MT output per dialogue, so a real item compares the human reference "
            "block (hidden control) with the MT block ('baseline' or '2to2') — 2 candidates instead of "
            "DiP's 3; in spam items the MT block's middle turns are shuffled. " + ATTRIBUTION),
        "settings": {
            "public_title": "Reading dialogue translations", "source_language": "fr", "target_language": "en",
            "show_source": False, "allow_ties": False, "redundancy": 3, "spam_rate": 0.2, "unit": "document",
            "question": "Which text is more coherent and readable? Rank them, best first.",
            "instructions": COHERENCE_INSTRUCTIONS, "min_seconds": 5.0, "seed": 2021,
        },
        "items": items,
    }


def _one_line(text: str) -> str:
    """A turn as one sentence-list entry (entries may not contain line breaks)."""
    return " ".join(text.split())


COHERENCE_INSTRUCTIONS = """\
Each screen shows short texts: several English versions of **four consecutive turns** written
by one person in a conversation, one turn a line.

Rank the versions from **most coherent and readable (1)** to **least**: does each turn follow
from the previous ones, do the references (*it, this, they…*) and connectives make sense, and
does it read as natural English?

There are no ties: give every version a different rank.
"""


def _blinded(builder: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    """A demo builder whose study normalises typography (docs/protocols/blinding.md).

    DiaBLa's human references are typeset (curly quotes, "…", no-break spaces) and its MT outputs
    are not: left as they are, these cues single out the hidden reference in up to 44% of items.
    """
    @functools.wraps(builder)
    def build() -> dict[str, Any]:
        data = builder()
        data["settings"] = {**data["settings"], "normalise_typography": True}
        return data
    return build


#: The demo, in load order. Another builder is one more line here.
DEMO_STUDIES: list[Callable[[], dict[str, Any]]] = [_blinded(b) for b in (
    build_pronoun_mono,
    build_coherence_blocks,
    build_mt_preference,  # choice: reference vs MT, A / B / Neither / Invalid (studies/demo/protocols.py)
    build_mt_correctness,  # judgment: correct / incorrect of the marked pronouns (studies/demo/protocols.py)
    build_connective_preference,  # choice: connective kept vs deleted, DiP A.4 (studies/demo/connectives.py)
    build_mqm_document,  # mqm: document blocks, default taxonomy with the Discourse branch (studies/demo/span.py)
    build_esa_sentences,  # esa: one turn, spans then a 0-100 score (studies/demo/span.py)
)]


def plug_in_demo_studies() -> list[Callable[[], dict[str, Any]]]:
    """The demo study builders of the registered protocol plug-ins (``ProtocolSpec.demo_studies``)."""
    return [_blinded(builder) for spec in registry.registered() for builder in spec.demo_studies()]


def write_study_files(directory: Path = STUDIES_DIR) -> list[Path]:
    """Write every demo study file to ``directory``/<slug>.json (readable examples of the format)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for builder in [*DEMO_STUDIES, *plug_in_demo_studies()]:
        data = builder()
        path = directory / f"{data['slug']}.json"
        path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        paths.append(path)
    return paths
