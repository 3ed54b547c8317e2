"""Error taxonomies and severities of the span protocols (MQM, ESA): defaults and study-file checks.

The default MQM taxonomy is the MQM core typology as WMT's expert MQM uses it
(Freitag et al. 2021, Table 10: the categories of Google's WMT MQM release),
plus a **Discourse** branch for errors that only show across sentences
(pronoun reference, connectives, lexical and named-entity consistency, tense,
ellipsis; BlonDe's human study, seed 002 §3 and appendix B). A category's
``name`` is its path, branch and leaf separated by "/" as in the TSV files
("Accuracy/Mistranslation"); a branch without leaves ("Non-translation",
"Other") is a category itself.
"""
from __future__ import annotations

from typing import Any

from protocols import registry
from protocols.registry import protocol_named

#: (name, description, examples): what annotators see next to each category.
_MQM_CORE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Accuracy/Mistranslation", "The target does not accurately represent the source.",
     ("'Bank' (river side) translated as the financial institution.",)),
    ("Accuracy/Addition", "The target includes content not present in the source.", ()),
    ("Accuracy/Omission", "Content of the source is missing from the target (mark the missing words in the source).", ()),
    ("Accuracy/Untranslated text", "Source text left untranslated in the target.", ()),
    ("Fluency/Grammar", "Problems with grammar, other than spelling and orthography.", ()),
    ("Fluency/Spelling", "Spelling, capitalisation or diacritic errors.", ()),
    ("Fluency/Punctuation", "Punctuation used incorrectly for the target language.", ()),
    ("Fluency/Register", "Wrong grammatical register (e.g. informal pronouns or verb forms where formal ones are needed).", ()),
    ("Fluency/Inconsistency", "Internal inconsistency, not related to terminology.", ()),
    ("Fluency/Character encoding", "Characters garbled by wrong encoding.", ()),
    ("Terminology/Inappropriate for context", "Terminology non-standard or not fitting the context.", ()),
    ("Terminology/Inconsistent use of terminology", "Terminology used inconsistently within the text.", ()),
    ("Style/Awkward", "Style involving awkward, unnatural or overly literal wording.", ()),
    ("Locale convention/Address format", "Wrong format for addresses.", ()),
    ("Locale convention/Currency format", "Wrong format for currency.", ()),
    ("Locale convention/Date format", "Wrong format for dates.", ()),
    ("Locale convention/Name format", "Wrong format for names.", ()),
    ("Locale convention/Telephone format", "Wrong format for telephone numbers.", ()),
    ("Locale convention/Time format", "Wrong format for time expressions.", ()),
    ("Non-translation", "The segment is not a translation at all (impossible to identify errors); mark the whole segment.", ()),
    ("Source error", "An error in the source itself (mark it in the source).", ()),
    ("Other", "Any other issue.", ()),
)

#: The Discourse branch: errors visible only with the surrounding sentences.
DISCOURSE_CATEGORIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Discourse/Pronoun reference",
     "A pronoun does not agree with, or points to the wrong, antecedent in the context.",
     ("'the table … it' rendered with a masculine 'er' when the noun is feminine 'sie'.",)),
    ("Discourse/Connective",
     "A discourse connective expresses the wrong relation (contrast, cause, time…) or is missing.",
     ("'however' translated as 'therefore'.",)),
    ("Discourse/Lexical consistency",
     "The same source term is translated differently across sentences where it should stay the same.", ()),
    ("Discourse/Named-entity consistency",
     "A person, place or organisation is named differently across sentences.", ()),
    ("Discourse/Tense consistency",
     "Verb tense or aspect changes across sentences without a reason in the source.", ()),
    ("Discourse/Ellipsis",
     "Omitted context (ellipsis) is resolved wrongly or left unresolved, so the sentence no longer follows from the previous ones.",
     ()),
)


def _entry(name: str, description: str, examples: tuple[str, ...]) -> dict[str, Any]:
    return {"name": name, "description": description, "examples": list(examples)}


DEFAULT_MQM_TAXONOMY: list[dict[str, Any]] = [_entry(*c) for c in _MQM_CORE + DISCOURSE_CATEGORIES]

MQM_SEVERITIES = ("minor", "major", "critical")
#: Severities a study may use; ``neutral`` is optional (weight 0, MQM's "purely subjective" marks).
ALLOWED_SEVERITIES = ("neutral", "minor", "major", "critical")
ESA_SEVERITIES = ("minor", "major")
#: ESA/DA score scale and the anchors WMT24 shows on the slider (Kocmi et al. 2024).
SCORE_MIN, SCORE_MAX = 0, 100
SCORE_ANCHORS = (0, 33, 66, 100)
NOTE_MAX_LENGTH = 500


def taxonomy_errors(value: Any, where: str = "settings.taxonomy") -> list[str]:
    """Problems of a study file's taxonomy (a non-empty list of {name, description?, examples?})."""
    if not isinstance(value, list) or not value:
        return [f"{where}: must be a non-empty list of categories ({{\"name\": …, \"description\": …}})"]
    errors: list[str] = []
    seen: set[str] = set()
    for k, entry in enumerate(value):
        here = f"{where}[{k}]"
        if isinstance(entry, str):
            entry = {"name": entry}
        if not isinstance(entry, dict):
            errors.append(f"{here}: must be an object with a name")
            continue
        unknown = set(entry) - {"name", "description", "examples"}
        if unknown:
            errors.append(f"{here}: unknown field(s) {sorted(unknown)}")
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip():
            errors.append(f"{here}.name: required, a non-empty string")
            continue
        if len(name) > 100:
            errors.append(f"{here}.name: at most 100 characters")
        if name.strip().lower() in seen:
            errors.append(f"{here}.name: duplicate category {name!r}")
        seen.add(name.strip().lower())
        if "description" in entry and not isinstance(entry["description"], str):
            errors.append(f"{here}.description: must be a string")
        examples = entry.get("examples", [])
        if not isinstance(examples, list) or not all(isinstance(e, str) for e in examples):
            errors.append(f"{here}.examples: must be a list of strings")
    return errors


def normalise_taxonomy(value: list[Any]) -> list[dict[str, Any]]:
    """The stored form: every entry an object with name, description and examples."""
    out = []
    for entry in value:
        entry = {"name": entry} if isinstance(entry, str) else entry
        out.append({"name": entry["name"].strip(), "description": entry.get("description", ""),
                    "examples": list(entry.get("examples", []))})
    return out


def severities_errors(value: Any, protocol: str, where: str = "settings.severities") -> list[str]:
    allowed = (protocol_named(protocol).allowed_severities if protocol in registry.names() else ()) or ALLOWED_SEVERITIES
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        return [f"{where}: must be a non-empty list from {', '.join(allowed)}"]
    bad = [v for v in value if v not in allowed]
    if bad:
        return [f"{where}: unknown severit{'y' if len(bad) == 1 else 'ies'} {bad}; a {protocol} study allows "
                f"{', '.join(allowed)}"]
    if len(set(value)) != len(value):
        return [f"{where}: a severity is repeated"]
    return []


def weights_errors(value: Any, where: str = "settings.mqm_weights") -> list[str]:
    """``mqm_weights``: {minor, major, critical, neutral, non_translation, minor_punctuation} → numbers ≥ 0."""
    keys = ("neutral", "minor", "major", "critical", "non_translation", "minor_punctuation")
    if not isinstance(value, dict):
        return [f"{where}: must be an object with numbers for {', '.join(keys)}"]
    errors = []
    for key, number in value.items():
        if key not in keys:
            errors.append(f"{where}.{key}: unknown weight (known: {', '.join(keys)})")
        elif isinstance(number, bool) or not isinstance(number, (int, float)) or not 0 <= number <= 1000:
            errors.append(f"{where}.{key}: must be a number from 0 to 1000")
    return errors
