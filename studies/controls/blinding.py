"""Blinding lint: can an annotator tell the reference from the systems by its surface alone?

A pure function over a study's items (the parsed study file, or the stored
items in the same shape): for every item with a reference and at least one
system candidate, each surface feature below is computed for every candidate;
the item is *separated* by the feature when the reference's value differs from
the value of **every** system candidate. A finding is reported when the share
of such items reaches ``MIN_SHARE`` (5%): below that an annotator sees the cue
too rarely to learn it, above it a careful annotator can. Definitions, the
demo's measured shares and what to do: docs/protocols/blinding.md.

The lint reads what annotators will see: with ``normalise=True`` (the study's
``normalise_typography``) candidates are normalised first (studies/definition/typography.py),
so the typographic features can no longer separate anything.

It also warns when instructions tell annotators to judge only the highlighted
words (or to ignore every other error) while spam items are on: a spam item
scrambles the whole sentence, so an annotator who follows such instructions
may rightly call it correct, and fails the check.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from studies.definition.typography import shown_candidate

MIN_SHARE = 0.05
#: The reference is "the longest" or "the shortest" when its length in characters is at
#: least LENGTH_MARGIN times every system's, or every system's is at least LENGTH_MARGIN times its.
LENGTH_MARGIN = 1.25
MAX_EXAMPLES = 3
SNIPPET = 70

_QUOTES = "‘’‚‛“”„‟«»"
_ELLIPSIS = "…"
_DASHES = "‐‑‒–—―−"
_SPACES = "\u00a0\u202f\u2007\u2009"
_TRAILING = ".!?…,;:\"'’”»)]"


def _first_of(chars: str) -> Callable[[str], int]:
    def find(text: str) -> int:
        return next((k for k, c in enumerate(text) if c in chars), -1)
    return find


def _trailing(text: str) -> str:
    tail = text.rstrip()[-1:]
    return tail if tail and tail in _TRAILING else "(none)"


def _first_letter(text: str) -> str:
    letter = next((c for c in text if c.isalpha()), "")
    return "upper" if letter.isupper() else "lower" if letter else "(none)"


@dataclass(frozen=True)
class Feature:
    name: str
    label: str
    value: Callable[[str, Any], Any]  # (text, highlights) → a comparable value
    typographic: bool  # made uniform by normalise_typography
    locate: Callable[[str], int] | None = None  # where to cut the example snippet


def _has(chars: str) -> Callable[[str, Any], bool]:
    return lambda text, highlights: any(c in chars for c in text)


FEATURES: tuple[Feature, ...] = (
    Feature("typographic_quotes", "typographic quotes or apostrophes (‘ ’ “ ” « »)", _has(_QUOTES), True,
            _first_of(_QUOTES)),
    Feature("ellipsis", "the ellipsis character (…)", _has(_ELLIPSIS), True, _first_of(_ELLIPSIS)),
    Feature("dashes", "dash characters (– — ‒ ‐ −)", _has(_DASHES), True, _first_of(_DASHES)),
    Feature("nbsp", "non-breaking or thin spaces", _has(_SPACES), True, _first_of(_SPACES)),
    Feature("trailing_punctuation", "the final punctuation mark", lambda t, h: _trailing(t), False),
    Feature("first_letter_case", "the case of the first letter", lambda t, h: _first_letter(t), False),
    Feature("highlights", "having highlighted spans", lambda t, h: bool(h), False),
)
LENGTH_LABEL = f"length (the reference longest or shortest by a factor of {LENGTH_MARGIN} or more)"
FEATURE_NAMES = tuple(f.name for f in FEATURES) + ("length",)


@dataclass
class Example:
    item: str
    reference: str
    system: str


@dataclass
class Finding:
    feature: str
    label: str
    n_separated: int
    n_items: int
    typographic: bool
    examples: list[Example] = field(default_factory=list)
    reference_values: dict[str, int] = field(default_factory=dict)  # the reference's value in separated items

    @property
    def share(self) -> float:
        return self.n_separated / self.n_items if self.n_items else 0.0

    @property
    def percent(self) -> int:
        return round(100 * self.share)

    @property
    def item_ids(self) -> list[str]:
        return [e.item for e in self.examples]

    def message(self) -> str:
        values = ", ".join(f"{v} in {n}" for v, n in sorted(self.reference_values.items(), key=lambda x: -x[1]))
        ids = ", ".join(self.item_ids)
        return (f"blinding: {self.label} separates the reference from every system in {self.n_separated} of "
                f"{self.n_items} items ({self.share:.0%}); the reference has: {values}; e.g. items {ids}")


@dataclass
class BlindingReport:
    n_items: int  # items with a reference and at least one system candidate
    findings: list[Finding]
    normalised: bool
    instructions_warning: str = ""

    def messages(self) -> list[str]:
        lines = [f.message() for f in self.findings]
        if self.instructions_warning:
            lines.append(self.instructions_warning)
        return lines

    @property
    def share_of(self) -> dict[str, float]:
        return {f.feature: f.share for f in self.findings}


def _snippet(text: str, at: int) -> str:
    text = text.replace("\n", " / ")
    if len(text) <= SNIPPET:
        return text
    start = max(0, min(at - SNIPPET // 3, len(text) - SNIPPET)) if at >= 0 else 0
    return ("…" if start else "") + text[start:start + SNIPPET] + ("…" if start + SNIPPET < len(text) else "")


def _length_value(ref: int, systems: list[int]) -> str | None:
    if all(ref >= LENGTH_MARGIN * s for s in systems):
        return "longest"
    if all(s >= LENGTH_MARGIN * ref for s in systems):
        return "shortest"
    return None


#: Instructions that restrict judging to the marked words (English and French); see the module docstring.
ONLY_HIGHLIGHTED = re.compile(
    r"\bonly\b[^.\n]{0,40}\b(?:highlighted|marked|underlined|bold)\b"
    r"|\b(?:highlighted|marked)\s+(?:words?|spans?|parts?|phrases?)\s+only\b"
    r"|\b(?:ignore|disregard)\b[^.\n]{0,30}\b(?:every|all|any)\s+other\s+(?:errors?|mistakes?|problems?)"
    r"|\b(?:uniquement|seulement)\b[^.\n]{0,40}(?:surlign|marqu|soulign|en gras)"
    r"|\bne\s+(?:jugez|évaluez|notez)\s+que\b"
    r"|\bignorez\b[^.\n]{0,30}\bautres\s+(?:erreurs|fautes|problèmes)",
    re.IGNORECASE)


def instructions_warning(*, instructions: str, question: str = "", spam_rate: float) -> str:
    """A warning when the wording restricts judging to the highlighted words while spam items are on, else ''."""
    if not spam_rate:
        return ""
    for name, text in (("instructions", instructions), ("question", question)):
        match = ONLY_HIGHLIGHTED.search((text or "").replace("*", "").replace("_", " "))
        if match:
            return (f"blinding: the {name} say {match.group(0)!r} while spam items are on (spam rate {spam_rate}): a "
                    "spam item scrambles the whole sentence, so an annotator who follows them may call it correct "
                    "and fail the check. Say that a sentence that makes no sense at all is wrong, or set spam_rate 0.")
    return ""


def blinding_lint(*, items: Iterable[dict[str, Any]], normalise: bool = False, instructions: str = "",
                  question: str = "", spam_rate: float = 0.0, min_share: float = MIN_SHARE) -> BlindingReport:
    """Lint items in parsed shape (``external_id`` or ``id``; ``candidates`` with text, is_reference, highlights)."""
    counts: dict[str, list[Any]] = {name: [0, [], {}] for name in FEATURE_NAMES}  # separated, examples, values
    n_items = 0
    for item in items:
        cands = [c for c in item.get("candidates") or [] if isinstance(c, dict)]
        refs = [c for c in cands if c.get("is_reference") is True]
        systems = [c for c in cands if c.get("is_reference") is not True]
        if len(refs) != 1 or not systems:
            continue
        n_items += 1
        shown = [shown_candidate(text=str(c.get("text") or ""), highlights=c.get("highlights") or [],
                                 normalise=normalise) for c in [refs[0], *systems]]
        ref_text, ref_hl = shown[0]
        item_id = str(item.get("external_id", item.get("id", "?")))
        found: list[tuple[str, Any, int]] = []
        for feature in FEATURES:
            ref_value = feature.value(ref_text, ref_hl)
            if all(feature.value(t, h) != ref_value for t, h in shown[1:]):
                at = feature.locate(ref_text) if feature.locate else -1
                found.append((feature.name, ref_value, at))
        length = _length_value(len(ref_text), [len(t) for t, _ in shown[1:]])
        if length:
            found.append(("length", length, -1))
        for name, value, at in found:
            entry = counts[name]
            entry[0] += 1
            key = "yes" if value is True else "no" if value is False else str(value)
            entry[2][key] = entry[2].get(key, 0) + 1
            if len(entry[1]) < MAX_EXAMPLES:
                entry[1].append(Example(item=item_id, reference=_snippet(ref_text, at),
                                        system=_snippet(shown[1][0], at)))
    labels = {f.name: (f.label, f.typographic) for f in FEATURES} | {"length": (LENGTH_LABEL, False)}
    findings = [Finding(feature=name, label=labels[name][0], n_separated=entry[0], n_items=n_items,
                        typographic=labels[name][1], examples=entry[1], reference_values=entry[2])
                for name, entry in counts.items() if n_items and entry[0] and entry[0] / n_items >= min_share]
    return BlindingReport(n_items=n_items, findings=findings, normalised=normalise,
                          instructions_warning=instructions_warning(instructions=instructions, question=question,
                                                                    spam_rate=spam_rate))


def parsed_study_lint(*, fields: dict[str, Any], items: Iterable[dict[str, Any]]) -> BlindingReport:
    """The lint of a parsed study file (``ParsedStudy.fields`` and ``.items``), as annotators will see it."""
    return blinding_lint(items=items, normalise=bool(fields.get("normalise_typography")),
                         instructions=fields.get("instructions") or "", question=fields.get("question") or "",
                         spam_rate=float(fields.get("spam_rate") or 0.0))
