"""The DiaBLa subset in fixtures/diabla/ (CC BY-SA 4.0) as the demo builders read it.

Shared by studies/demo/studies.py and studies/demo/protocols.py (neither imports the other's
builders through it, so there is no import circle).

DiaBLa: Bawden, Bilinski, Lavergne, Rosset (2021), LRE 55:635–660,
doi:10.1007/s10579-020-09514-4. Licence CC BY-SA 4.0.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from collections.abc import Callable, Iterator
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


def qualifying_turns(data_dir: Path | None, per_dialogue: int,
                     want: Callable[[dict[str, Any], str], bool],
                     offset: int = 0) -> Iterator[tuple[int, dict[str, Any], int, dict[str, Any], str]]:
    """(dialogue number, dialogue, turn index, utterance, target language) of qualifying turns from the third on.

    The first ``per_dialogue`` turns of each dialogue that ``want(utterance, target language)`` accepts;
    ``offset`` skips that many qualifying turns per dialogue first, so two demos can use different turns.
    """
    for number, dialogue in enumerate(load_dialogues(data_dir or DATA_DIR), start=1):
        turns = dialogue["utterances"]
        taken = skipped = 0
        for k, utterance in enumerate(turns):
            if taken == per_dialogue:
                break
            language = OTHER_LANGUAGE[utterance["source_language"]]
            if k < 2 or not want(utterance, language):
                continue
            if skipped < offset:
                skipped += 1
                continue
            taken += 1
            yield number, dialogue, k, utterance, language


def turn_languages(turns: list[dict[str, Any]]) -> list[str]:
    """The language tag each turn was written in: a source context of raw turns mixes both (docs/study-file.md)."""
    return [LANGUAGE_CODE[t["source_language"]] for t in turns]


def turn_item(number: int, dialogue: dict[str, Any], k: int, utterance: dict[str, Any], language: str,
              phenomenon: str) -> dict[str, Any]:
    """A demo item of one turn: its id, place, languages, the two previous turns as context, and the source;
    the caller adds candidates and metadata."""
    turns = dialogue["utterances"]
    return {
        "id": f"d{number:02d}-t{utterance['turn']:02d}",
        "document_id": dialogue["dialogue_id"], "position": utterance["turn"],
        **item_languages(utterance["source_language"], language),
        "phenomenon": f"{phenomenon}-{LANGUAGE_CODE[language]}",
        "source_context": [t["source"] for t in turns[k - 2:k]], "source": utterance["source"],
        # The turns alternate languages: each context sentence says its own (its lang on the page).
        "source_context_languages": turn_languages(turns[k - 2:k]),
        "target_context": [target_side(t, language) for t in turns[k - 2:k]],
    }


def reference_and_mt_differ(utterance: dict[str, Any], min_words: int) -> bool:
    """The turn's reference and MT differ, and both have at least ``min_words`` words."""
    reference, mt = utterance["reference"].strip(), utterance["mt"].strip()
    return differs(reference, mt) and min(len(reference.split()), len(mt.split())) >= min_words
