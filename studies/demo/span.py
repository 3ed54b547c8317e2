"""Demo studies for the span protocols (MQM, ESA) from the DiaBLa subset in fixtures/diabla/ (CC BY-SA 4.0).

- ``build_mqm_document``: document-level MQM — a block of consecutive turns of one
  speaker (written in French) with its English MT and its English reference, both
  annotated with error spans, categories from the default taxonomy (the MQM core
  typology plus the Discourse branch: pronoun reference, connective, lexical and
  named-entity consistency, tense, ellipsis) and severities.
- ``build_esa_sentences``: sentence-level ESA — one turn at a time, its MT and its
  reference, error spans (minor/major) then a 0–100 score.

Both start empty: they are there to try the annotator side. The reference is a
candidate like the MT (WMT's MQM rates human references too, as the system
``ref``), hidden as such from the annotators. Control items (the study's
``spam_rate``; ``studies/controls/error_injection.py``) are copies with one generated error.
The WMT21 TED MQM study of the demo is imported from a TSV instead (``load_demo``,
``studies.demo.span.WMT_MQM_FIXTURE``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings

from studies.demo import data as diabla

#: Google's expert MQM ratings of the WMT21 TED talks, English→German (subset; Apache-2.0;
#: fixtures/wmt-mqm/README.md has the attribution, licence and how the subset was taken).
WMT_MQM_FIXTURE = Path(settings.BASE_DIR) / "fixtures" / "wmt-mqm" / "mqm_ted_ende.subset.tsv"
WMT_MQM_SLUG = "wmt21-ted-ende-mqm"
#: The evaluators ``load_demo`` runs on the imported study so that its compare page has figures.
WMT_MQM_EVALUATORS = ("bleu", "chrf", "ter")
#: Where the demo's MQM file came from (recorded with the import; the methods paragraph quotes it).
WMT_MQM_SOURCE = ("a subset of Google's WMT21 MQM human evaluation release (github.com/google/wmt-mqm-human-evaluation, "
                  "ted/ende/mqm_ted_ende.tsv)")
WMT_MQM_ATTRIBUTION = (
    "Data: a subset of Google's expert MQM annotations of the WMT 2021 TED talks test suite, English→German "
    "(github.com/google/wmt-mqm-human-evaluation, ted/ende/mqm_ted_ende.tsv; not an official Google product), "
    "licensed Apache-2.0 (fixtures/wmt-mqm/LICENSE and README.md). Cite Freitag, Foster, Grangier, Ratnakar, "
    "Tan & Macherey (2021), 'Experts, Errors, and Context: A Large-Scale Study of Human Evaluation for Machine "
    "Translation', TACL 9:1460–1474."
)


def _one_line(text: str) -> str:
    """A turn as one sentence-list entry (entries may not contain line breaks)."""
    return " ".join(text.split())


def _french_blocks(data_dir: Path, block: int, per_dialogue: int):
    """(dialogue number, dialogue, turns before the block, block of ``block`` French-written turns)."""
    for number, dialogue in enumerate(diabla.load_dialogues(data_dir), start=1):
        turns = dialogue["utterances"]
        french = [k for k, u in enumerate(turns) if u["source_language"] == "french"]
        taken = 0
        for start in range(0, len(french) - block + 1, block):
            if taken == per_dialogue:
                break
            chosen = [turns[k] for k in french[start:start + block]]
            if not diabla.differs(" ".join(u["reference"] for u in chosen), " ".join(u["mt"] for u in chosen)):
                continue
            taken += 1
            yield number, dialogue, turns[max(0, french[start] - 2):french[start]], chosen, taken


# --- MQM, document level ---------------------------------------------------------------------------

def build_mqm_document(data_dir: Path | None = None, block: int = 4, per_dialogue: int = 2) -> dict[str, Any]:
    """Blocks of ``block`` consecutive French-written turns, English MT and reference, one turn a line."""
    items = []
    for number, dialogue, before, turns, taken in _french_blocks(data_dir or diabla.DATA_DIR, block, per_dialogue):
        source = [_one_line(u["source"]) for u in turns]
        reference = [_one_line(u["reference"]) for u in turns]
        mt = [_one_line(u["mt"]) for u in turns]
        items.append({
            "id": f"d{number:02d}-m{taken}",
            "document_id": dialogue["dialogue_id"], "position": taken,
            "source_language": "fr", "target_language": "en",
            "source_context": [_one_line(diabla.target_side(t, "french")) for t in before],
            "target_context": [_one_line(diabla.target_side(t, "english")) for t in before],
            "source": "\n".join(source), "source_sentences": source,
            "candidates": [
                {"system": "reference", "text": "\n".join(reference), "sentences": reference, "is_reference": True},
                {"system": dialogue["model"], "text": "\n".join(mt), "sentences": mt},
            ],
            "metadata": {"dialogue_id": dialogue["dialogue_id"], "turns": [u["turn"] for u in turns]},
        })
    return {
        "slug": "diabla-mqm-document",
        "title": "MQM error annotation of dialogue translations, document level (DiaBLa, fr→en)",
        "protocol": "mqm",
        "description": (
            "Document-level MQM (Freitag et al. 2021; Lommel et al. 2014) with the default taxonomy: the MQM core "
            "typology as WMT uses it plus the Discourse branch (pronoun/reference, connective, lexical "
            "consistency, named-entity consistency, tense consistency, ellipsis). Each item is a block of "
            f"{block} consecutive turns written in French by one speaker of a DiaBLa dialogue, one turn a line, "
            "with the two turns before it as context; its candidates are the live MT ('baseline' or '2to2') and "
            "the human reference, both annotated (the reference hidden as such, as WMT rates its references). "
            "Scores: WMT/Google weights (major 5, minor 1, minor Fluency/Punctuation 0.1, Non-translation 25). "
            "10% control items carry one generated error. " + diabla.ATTRIBUTION),
        "settings": {
            "public_title": "Mark the errors in these translations",
            "source_language": "fr", "target_language": "en",
            "show_source": True, "redundancy": 2, "spam_rate": 0.1, "unit": "document",
            "question": "Mark every error in the translation (span, category, severity), or confirm there is none.",
            "instructions": MQM_INSTRUCTIONS, "min_seconds": 10.0, "seed": 2021,
        },
        "items": items,
    }


MQM_INSTRUCTIONS = """\
Each screen shows a short stretch of a written conversation: the **French turns** one below the
other, the two turns before them as context, and **English translations** of the stretch.

For each translation, **select every error** (a word or a few words; for something left out,
select the place in the French source) and give it a **category** and a **severity**:

- **major**: the meaning is changed or the reader would be misled or confused;
- **minor**: the meaning is kept but the text is less fluent, less natural or slightly off;
- **critical**: offensive, dangerous or completely unusable.

Read the turns as a conversation: a pronoun that points to the wrong person, a connective that
says the opposite, a name or a term translated two ways, a tense that changes for no reason —
use the **Discourse** categories for these. If a translation has no error, confirm "no error".
"""


# --- ESA, sentence level ---------------------------------------------------------------------------

def reference_and_mt_turns(data_dir: Path | None = None, per_dialogue: int = 3) -> list[dict[str, Any]]:
    """One turn an item (from the third turn on, MT and reference differ, at least 5 words), both directions:
    the human reference (flagged, hidden as such) and the live MT as its two candidates."""
    items = []
    for number, dialogue, k, utterance, language in diabla.qualifying_turns(
            data_dir, per_dialogue, lambda u, language: diabla.reference_and_mt_differ(u, 5)):
        items.append({
            **diabla.turn_item(number, dialogue, k, utterance, language, "into"),
            "candidates": [
                {"system": "reference", "text": utterance["reference"].strip(), "is_reference": True},
                {"system": dialogue["model"], "text": utterance["mt"].strip()},
            ],
            "metadata": {"dialogue_id": dialogue["dialogue_id"], "turn": utterance["turn"]},
        })
    return items


def build_esa_sentences(data_dir: Path | None = None, per_dialogue: int = 3) -> dict[str, Any]:
    """ESA on dialogue turns: :func:`reference_and_mt_turns`."""
    items = reference_and_mt_turns(data_dir, per_dialogue)
    return {
        "slug": "diabla-esa",
        "title": "ESA: error spans and a 0–100 score for dialogue turns (DiaBLa, sentence level)",
        "protocol": "esa",
        "description": (
            "Error Span Annotation as in WMT24 (Kocmi et al. 2024): the annotator marks error spans (minor or "
            "major, no categories) in each translation of one dialogue turn, then gives it a score from 0 to 100 "
            "(anchors 0, 33, 66, 100). Context: the two previous turns; the source is shown. Candidates: the live "
            "MT and the human reference (hidden as such). Both directions (into-en, into-fr). 10% control items "
            "carry one generated error; the score of a control should drop. " + diabla.ATTRIBUTION),
        "settings": {
            "public_title": "Mark the errors and score these translations",
            "show_source": True, "redundancy": 2, "spam_rate": 0.1, "unit": "sentence",
            "question": "Mark the errors in each translation, then score it from 0 (nonsense) to 100 (perfect).",
            "instructions": ESA_INSTRUCTIONS, "min_seconds": 3.0, "seed": 2021,
        },
        "items": items,
    }


ESA_INSTRUCTIONS = """\
You will read the **two previous turns** of a written conversation, the **turn to translate**, and
translations of it.

For each translation:

1. **select every error** — a word or a few words — and say whether it is **minor** (the meaning is
   kept, the text is a little off) or **major** (the meaning is changed or lost);
2. then give the translation a **score from 0 to 100**: 0 = no meaning kept, 33 = some meaning
   kept, 66 = most of the meaning kept, few grammar mistakes, 100 = perfect.

Some extracts are in English, others in French.
"""
