"""Pre-filled error spans (ESA^AI / MQM^AI): which items an annotator sees with suggestions.

Zouhar, Kocmi & Sachan (NAACL 2025), *AI-Assisted Human Evaluation of Machine
Translation*, show annotators the error spans of a quality-estimation system and
let them keep, edit or delete each. A study shows them on a share of the items,
drawn per annotator and item from the study's seed, so that assisted and
unassisted answers of the same items can be compared (docs/ai-assistance.md).
Items on which the system marks every candidate clean may be left out of the
hand-out (``prefill_skip_clean``), as ESA^AI saved budget on them.
Pure functions: no database.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

#: What an annotator did with a suggestion.
FATES = ("kept", "edited", "deleted")


def draw(seed: int, *parts: object) -> float:
    """A number in [0, 1) fixed by the seed and the parts (SHA-256, the same on every platform and run)."""
    key = ":".join(str(p) for p in (seed, *parts)).encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / 2.0 ** 64


def shows_suggestions(*, seed: int, annotator: int, item: int, share: float) -> bool:
    """Whether this annotator sees this item with suggestions: a draw below ``share`` (per annotator and item)."""
    if share <= 0:
        return False
    if share >= 1:
        return True
    return draw(seed, "prefill", annotator, item) < share


def skips_clean(*, seed: int, item: int, share: float) -> bool:
    """Whether an item the suggestions' source marks clean is left out of the hand-out: a draw below ``share``
    (per item, the same for every annotator; ``prefill_skip_clean``)."""
    if share <= 0:
        return False
    if share >= 1:
        return True
    return draw(seed, "skip-clean", item) < share


@dataclass(frozen=True)
class Shown:
    """What one assignment of a study with suggestions shows: whether it is assisted, and the suggestions
    (``studies.models.Suggestion`` rows of its candidates; [] when unassisted)."""

    assisted: bool
    suggestions: list[Any]
