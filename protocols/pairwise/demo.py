"""The pairwise demo study, from the DiaBLa subset in fixtures/diabla/ (CC BY-SA 4.0).

DiaBLa: Bawden, Bilinski, Lavergne, Rosset (2021), LRE 55:635–660, doi:10.1007/s10579-020-09514-4.
Each item is one dialogue turn with its two translations side by side, the live MT and the human
reference (hidden as such, in a random order per annotator like every candidate list).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from studies.demo import data as diabla
from studies.demo.span import reference_and_mt_turns

SLUG = "diabla-pairwise"

INSTRUCTIONS = """\
You will read the **two previous turns** of a written conversation, the **turn to translate**, and
**two translations** of it, side by side.

1. Give **each** translation a **score from 0 to 100**: 0 = no meaning kept, 33 = some meaning kept,
   66 = most of the meaning kept, few grammar mistakes, 100 = perfect. Compare them: if one is better,
   its score should be higher.
2. Mark the **errors** you see (a word or a few words; minor or major) if you want: they help to
   explain your scores.
3. Say which translation is **better**, or that they are **as good as each other**.

Some extracts are in English, others in French.
"""


def build_pairwise_sentences(data_dir: Path | None = None, per_dialogue: int = 3) -> dict[str, Any]:
    """One turn an item (from the third turn on, MT and reference differ, at least 5 words), both directions."""
    items = reference_and_mt_turns(data_dir, per_dialogue)
    return {
        "slug": SLUG,
        "title": "Pairwise: two translations of a dialogue turn side by side (DiaBLa, sentence level)",
        "protocol": "pairwise",
        "description": (
            "Pairwise assessment as in Appraise's pairwise task and Pearmut's contrastive ESA: the two "
            "translations of one dialogue turn side by side, each scored from 0 to 100 (anchors 0, 33, 66, 100), "
            "optional ESA error spans, then which one is better or a tie. Context: the two previous turns; the "
            "source is shown. Candidates: the live MT and the human reference (hidden as such). Both directions "
            "(into-en, into-fr). " + diabla.ATTRIBUTION),
        "settings": {
            "public_title": "Compare two translations",
            "show_source": True, "redundancy": 2, "spam_rate": 0.1, "unit": "sentence",
            "question": "Score both translations from 0 to 100, then say which one is better.",
            "instructions": INSTRUCTIONS, "min_seconds": 3.0, "seed": 2023,
            "spans": "esa", "preference": "required", "ties": True,
        },
        "items": items,
    }
