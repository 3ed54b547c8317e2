"""Demo connective-preference study (DiP A.4, Fig. 4) from the DiaBLa subset in fixtures/diabla/ (CC BY-SA 4.0).

Turns whose human reference contains a listed discourse connective
(studies/definition/connectives.py) are marked (``metadata.connective_span``) and handed
to the connective generator (studies/generators/choice.py, ``connective_study``): the
reference with its connective highlighted against the same reference with the
connective deleted, after the two previous turns, answered A / B / Neither /
Invalid. The demo is built by the very generator a researcher runs, so it
shows that the generator works on this data.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from studies.demo import data as diabla
from studies.definition.connectives import first_connective
from studies.generators.choice import CONNECTIVE_INSTRUCTIONS, SourceItem, connective_study

MIN_WORDS = 5  # the connective-deleted version keeps enough words for its spam copy to be scrambled


def connective_source_items(data_dir: Path | None = None, per_dialogue: int = 3) -> list[SourceItem]:
    """Turns (from the third on) whose reference has a listed connective, marked, up to ``per_dialogue`` a dialogue."""
    items = []
    for number, dialogue in enumerate(diabla.load_dialogues(data_dir or diabla.DATA_DIR), start=1):
        turns = dialogue["utterances"]
        taken = 0
        for k, utterance in enumerate(turns):
            if taken == per_dialogue:
                break
            language = diabla.OTHER_LANGUAGE[utterance["source_language"]]
            reference = utterance["reference"].strip()
            span = first_connective(reference, language) if k >= 2 else None
            if span is None or len(reference.split()) - len(reference[span[0]:span[1]].split()) < MIN_WORDS:
                continue
            taken += 1
            ext = f"d{number:02d}-t{utterance['turn']:02d}"
            items.append(SourceItem(where=f"item {ext}", data={
                "id": ext, "document_id": dialogue["dialogue_id"], "position": utterance["turn"],
                **diabla.item_languages(utterance["source_language"], language),
                "source_context": [t["source"] for t in turns[k - 2:k]], "source": utterance["source"],
                "source_context_languages": diabla.turn_languages(turns[k - 2:k]),
                "target_context": [diabla.target_side(t, language) for t in turns[k - 2:k]],
                "candidates": [{"system": "reference", "text": reference, "is_reference": True}],
                "metadata": {"dialogue_id": dialogue["dialogue_id"], "turn": utterance["turn"],
                             "source_language": utterance["source_language"], "target_language": language,
                             "connective_span": list(span)},
            }))
    return items


def build_connective_preference(data_dir: Path | None = None, per_dialogue: int = 3) -> dict[str, Any]:
    """DiP A.4 study 1 on DiaBLa: reference (connective highlighted) vs the reference without it."""
    data = connective_study(items=connective_source_items(data_dir, per_dialogue),
                            slug="diabla-connective-preference", redundancy=3, spam_rate=0.1, seed=2021).data
    data["title"] = "Which version of the reply reads better: with or without the connective? (DiaBLa)"
    data["description"] = (
        "Connective preference after DiP appendix A.4 (Fig. 4), study 1: the two previous turns of the dialogue "
        "in the target language, then the human reference of the next turn with its discourse connective "
        "highlighted, against the same reference with the connective deleted (spacing and capitals repaired), "
        "answered A, B, Neither or Invalid. Connectives come from the explicit English/French list in "
        "studies/definition/connectives.py (the first listed connective of the reference); the phenomenon is the connective. "
        "By design the reference is the longer candidate and the only one with a highlight (the blinding lint says "
        "so): the question is whether the connective helps, not which version is human. 10% spam items: the "
        "connective-deleted version scrambled. " + diabla.ATTRIBUTION)
    data["settings"]["instructions"] = CONNECTIVE_INSTRUCTIONS + (
        "\n\nSome extracts are in English, others in French. The highlighted word is the only difference "
        "between the two versions; read it in context.")
    data["settings"]["min_seconds"] = 3.0
    return data
