"""The DiaBLa subset in fixtures/diabla/ (CC BY-SA 4.0) as the demo builders read it.

Shared by studies/demo.py and studies/demo_protocols.py (neither imports the other's
builders through it, so there is no import circle).

DiaBLa: Bawden, Bilinski, Lavergne, Rosset (2021), LRE 55:635–660,
doi:10.1007/s10579-020-09514-4. Licence CC BY-SA 4.0.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from django.conf import settings

DATA_DIR = Path(settings.BASE_DIR) / "fixtures" / "diabla"

ATTRIBUTION = (
    "Data: a subset of DiaBLa (Bawden, Bilinski, Lavergne & Rosset 2021, 'DiaBLa: A Corpus of Bilingual "
    "Spontaneous Written Dialogues for Machine Translation', Language Resources and Evaluation 55:635–660, "
    "doi:10.1007/s10579-020-09514-4), licensed CC BY-SA 4.0; this study file is a derivative under the same "
    "licence (see fixtures/diabla/README.md)."
)

#: Pronouns highlighted in the demo, by the language they are written in. Deliberately a small
#: word list (no tagger): French le/la/les are also articles, English that/her are also
#: determiners, so some highlights are not pronouns. It marks where to look, nothing more.
PRONOUNS = {
    "french": ["il", "elle", "ils", "elles", "le", "la", "les", "lui", "leur", "on", "ce", "ça", "cela",
               "celui", "celle"],
    "english": ["it", "he", "she", "they", "them", "him", "her", "this", "that"],
}
_PRONOUN_RE = {lang: re.compile(r"(?<![\w'’])(?:" + "|".join(words) + r")(?![\w'’])", re.IGNORECASE)
               for lang, words in PRONOUNS.items()}
OTHER_LANGUAGE = {"english": "french", "french": "english"}
LANGUAGE_CODE = {"english": "en", "french": "fr"}


def item_languages(source_language: str, target_language: str) -> dict[str, str]:
    """An item's own ``source_language``/``target_language`` (BCP 47): DiaBLa dialogues go both ways."""
    return {"source_language": LANGUAGE_CODE[source_language], "target_language": LANGUAGE_CODE[target_language]}


def pronoun_spans(text: str, language: str) -> list[list[int]]:
    """Character spans [start, end) of the listed pronouns of ``language`` in ``text``."""
    return [[m.start(), m.end()] for m in _PRONOUN_RE[language].finditer(text)]


def load_dialogues(data_dir: Path = DATA_DIR) -> list[dict[str, Any]]:
    """Dialogues in file order, each with its ``utterances`` in turn order."""
    dialogues = [json.loads(line) for line in (data_dir / "dialogues.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    by_id = {d["dialogue_id"]: {**d, "utterances": []} for d in dialogues}
    for line in (data_dir / "utterances.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            utterance = json.loads(line)
            by_id[utterance["dialogue_id"]]["utterances"].append(utterance)
    for dialogue in by_id.values():
        dialogue["utterances"].sort(key=lambda u: u["turn"])
    return list(by_id.values())


def target_side(utterance: dict[str, Any], language: str) -> str:
    """The turn as a reader of ``language`` has it: what the speaker wrote if they wrote in it, else the reference.

    Turns alternate languages, so context must be read this way to stay in one language.
    """
    return utterance["source"] if utterance["source_language"] == language else utterance["reference"]


def differs(a: str, b: str) -> bool:
    return " ".join(a.split()).lower() != " ".join(b.split()).lower()
