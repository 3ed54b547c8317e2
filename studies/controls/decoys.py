"""Decoy suggestions: automatic-looking error spans placed on text the data marks clean (docs/ai-assistance.md).

An annotator who keeps a decoy accepted an error that the automatic system did not
find and that the data gives no reason to believe in: the share of decoys kept
estimates automation bias (accepting suggestions without checking them). A decoy
looks like any other suggestion: one to three words, a severity (and category)
drawn from the real suggestions' own, an opaque id; only the stored row knows.

Where: first the candidates the file marks clean (no error span), one decoy a
candidate in a seeded order; once those are used, words outside every span of the
other candidates. Everything is drawn from the ``random.Random`` the caller passes.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
#: Decoys are one to three words long, like most suggested spans.
MAX_WORDS = 3


@dataclass(frozen=True)
class Decoy:
    candidate: int
    start: int
    end: int
    severity: str
    category: str


def decoy_count(n_real: int, share: float) -> int:
    """How many decoys make ``share`` of all suggestions (real + decoys): ``round(share · n_real / (1 − share))``."""
    if n_real <= 0 or share <= 0:
        return 0
    share = min(share, 0.9)
    return int(round(share * n_real / (1.0 - share)))


def _free_runs(text: str, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Runs of 1..MAX_WORDS consecutive words of ``text`` that touch no taken span."""
    words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    free = [w for w in words if not any(w[0] < b and a < w[1] for a, b in taken)]
    runs = []
    for k, (a, _) in enumerate(free):
        for n in range(1, MAX_WORDS + 1):
            if k + n > len(free):
                break
            end = free[k + n - 1][1]
            if n > 1 and any(a < y and x < end for x, y in taken):
                break  # the run would jump over a taken span
            runs.append((a, end))
    return runs


def place_decoys(*, texts: dict[int, str], taken: dict[int, list[tuple[int, int]]], clean: list[int], n: int,
                 styles: list[tuple[str, str]], rng: random.Random) -> list[Decoy]:
    """``n`` decoys (fewer when the texts run out of free words) on ``texts`` (candidate key → text).

    ``taken``: the real suggestions' spans per candidate; ``clean``: the candidates the data marks clean,
    used first; ``styles``: (severity, category) of the real suggestions, one drawn per decoy.
    """
    if n <= 0 or not styles:
        return []
    taken = {k: list(v) for k, v in taken.items()}
    first = sorted(clean)
    rng.shuffle(first)
    rest = sorted(k for k in texts if k not in set(clean))
    rng.shuffle(rest)
    placed: list[Decoy] = []
    order = first + rest
    while len(placed) < n:
        progressed = False
        for key in order:
            if len(placed) >= n:
                break
            runs = _free_runs(texts[key], taken.get(key, []))
            if not runs:
                continue
            a, b = rng.choice(runs)
            severity, category = rng.choice(styles)
            placed.append(Decoy(candidate=key, start=a, end=b, severity=severity, category=category))
            taken.setdefault(key, []).append((a, b))
            progressed = True
        if not progressed:
            break
    return placed
