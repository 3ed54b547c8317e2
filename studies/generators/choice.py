"""Study generators: build a new choice study from the items of another study or of a file.

- Connective deletion (DiP A.4, study 1): the reference, with its connective
  highlighted, against the same reference with the connective deleted (spacing
  and the sentence-initial capital repaired). Study 2: the reference against a
  system output that lacks the connective (``system=``).
- Contrastive choice (ContraPro, seed 001): the reference against its contrastive
  variants (one pronoun swapped); no neither/tie options.

Generators read study-file-shaped item dicts (``items_from_study`` turns stored
items into those), collect every problem naming the item (and the line, for
JSON Lines) and the field, then hand a complete study file to
``study_import``, so the result is validated and stored exactly like a
researcher's own file — spam items included. Input format: docs/protocols/generators.md.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studies.importing.study_file import StudyFileError, read_items_file, study_import
from formats.jsonlimits import JSONTooDeep, json_loads_limited
from studies.models import Study

_SENTENCE_END = re.compile(r"[.!?…][\"'’”»)\]]*$")
_PUNCT_START = re.compile(r"^[,.;:!?…)\]]")

CONNECTIVE_INSTRUCTIONS = (
    "You will see two sentences of a conversation or text, then two versions of the next sentence, "
    "**A** and **B**. They differ in one small place.\n\n"
    "Choose the version that reads better **in this context**: press **a** or **b**. "
    "If both read equally well or equally badly, press **n** (Neither). "
    "If the item cannot be judged (broken text, wrong language), press **i** (Invalid). "
    "Then press **Enter**."
)
CONTRASTIVE_INSTRUCTIONS = (
    "You will see a source sentence with its context, and several translations of it that differ only "
    "in a pronoun. Choose the translation that is correct in this context: press **1**, **2**, … then **Enter**."
)


@dataclass
class Generated:
    """A generated study file and what was left out (item label → why)."""
    data: dict[str, Any]
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass
class SourceItem:
    """An item dict in study-file shape and how to name it in errors (``item X`` or ``line N (item X)``)."""
    data: dict[str, Any]
    where: str


# --- reading inputs ---------------------------------------------------------------

def items_from_study(study: Study) -> list[SourceItem]:
    """A stored study's real items (no spam copies) in study-file shape, in file order."""
    items = []
    for item in study.items.filter(is_spam=False).order_by("pk").prefetch_related("candidates"):
        items.append(SourceItem(where=f"item {item.external_id}", data={
            "id": item.external_id, "document_id": item.document_id, "position": item.position,
            "phenomenon": item.phenomenon, "source_context": item.source_context, "source": item.source,
            "target_context": item.target_context, "metadata": item.metadata,
            **{key: getattr(item, key) for key in ("source_language", "target_language") if getattr(item, key)},
            **{f"{key}_languages": tags for key, tags in (item.context_languages or {}).items() if tags},
            "candidates": [{"system": c.system, "text": c.text, "is_reference": c.is_reference,
                            "highlights": c.highlights} for c in item.candidates.all()],
        }))
    return items


def items_from_file(path: Path) -> list[SourceItem]:
    """Items of a study file (JSON with ``items``) or of a JSON Lines / CSV items file."""
    content = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        try:
            data = json_loads_limited(content)
        except JSONTooDeep as exc:
            raise StudyFileError([str(exc)])
        except json.JSONDecodeError as exc:
            raise StudyFileError([f"line {exc.lineno}: not valid JSON ({exc.msg})"])
        raw = data.get("items") if isinstance(data, dict) else data
        if not isinstance(raw, list):
            raise StudyFileError(["items: required, a list of items"])
        return [SourceItem(data=r, where=_name(r, f"items[{k}]")) for k, r in enumerate(raw)]
    raw_items = read_items_file(path.name, content)
    if path.suffix.lower() == ".csv":
        return [SourceItem(data=r, where=_name(r, f"items[{k}]")) for k, r in enumerate(raw_items)]
    lines = [n for n, line in enumerate(content.splitlines(), start=1) if line.strip()]
    return [SourceItem(data=r, where=f"line {n} ({_name(r, 'item')})") for n, r in zip(lines, raw_items)]


def _name(raw: Any, fallback: str) -> str:
    ext = raw.get("id") if isinstance(raw, dict) else None
    return f"item {ext}" if isinstance(ext, (str, int)) and not isinstance(ext, bool) and str(ext) else fallback


def _reference(item: SourceItem, errors: list[str]) -> tuple[int, dict] | None:
    cands = item.data.get("candidates") if isinstance(item.data, dict) else None
    if not isinstance(cands, list):
        errors.append(f"{item.where}.candidates: required, a list with a reference candidate")
        return None
    refs = [(k, c) for k, c in enumerate(cands) if isinstance(c, dict) and c.get("is_reference") is True]
    if len(refs) != 1:
        errors.append(f"{item.where}.candidates: needs exactly one candidate with is_reference true ({len(refs)} found)")
        return None
    k, ref = refs[0]
    if not isinstance(ref.get("text"), str) or not ref["text"].strip():
        errors.append(f"{item.where}.candidates[{k}].text: required, a non-empty string")
        return None
    return k, ref


def _base_item(item: SourceItem, **overrides: Any) -> dict[str, Any]:
    keep = ("id", "document_id", "position", "phenomenon", "source_context", "source", "target_context", "metadata",
            "source_language", "target_language", "source_context_languages", "target_context_languages")
    data = {k: item.data[k] for k in keep if k in item.data and item.data[k] is not None}
    data.update(overrides)
    return data


def _study_file(*, slug: str, title: str, description: str, items: list[dict], settings: dict[str, Any]) -> dict:
    return {"slug": slug, "title": title, "description": description, "protocol": "choice",
            "settings": settings, "items": items}


# --- connective deletion ----------------------------------------------------------------

_OPENERS = "“‘«\"'(["


def _at_sentence_start(before: str) -> bool:
    stripped = before.rstrip().rstrip(_OPENERS).rstrip()
    return not stripped or bool(_SENTENCE_END.search(stripped))


def delete_span(text: str, start: int, end: int) -> str:
    """``text`` without ``text[start:end]``, repaired so it reads as if never there.

    - one space where the deletion leaves two (or none before punctuation);
    - a comma right after a connective that opened a clause goes too
      ("However, we left" → "We left"; "It rained, however, we left" → "It rained, we left");
    - the first letter is capitalised when the deletion opened a sentence
      ("But we left. So it rained" deleting "So" → "But we left. It rained").
    """
    before, after = text[:start], text[end:]
    stripped_after = after.lstrip()
    before_end = before.rstrip()
    opens_clause = _at_sentence_start(before) or before_end.endswith((",", ";", ":"))
    if opens_clause and stripped_after.startswith(","):
        stripped_after = stripped_after[1:].lstrip()
    sentence_start = _at_sentence_start(before)
    if sentence_start and stripped_after[:1].islower():
        stripped_after = stripped_after[0].upper() + stripped_after[1:]
    if not before_end:
        return stripped_after
    if not stripped_after:
        return before_end
    if before_end.endswith(tuple(_OPENERS)) and before_end[-1] not in "\"'" or before_end in _OPENERS:
        return before_end + stripped_after  # right after an opening quote or bracket
    if _PUNCT_START.match(stripped_after):
        if before_end.endswith((",", ";", ":")) and stripped_after[0] in ",;:":
            return before_end + " " + stripped_after[1:].lstrip()
        return before_end + stripped_after
    return before_end + " " + stripped_after


def connective_span(item: SourceItem, ref_index: int, ref: dict, errors: list[str]) -> tuple[int, int] | None:
    """Where the connective is in the reference: ``metadata.connective_span``, else ``metadata.connective``
    (a word found exactly once), else the reference's single highlight. None when unmarked (no error)."""
    where = item.where
    text = ref["text"]
    metadata = item.data.get("metadata") or {}
    if not isinstance(metadata, dict):
        errors.append(f"{where}.metadata: must be an object")
        return None
    if "connective_span" in metadata:
        span = metadata["connective_span"]
        ok = isinstance(span, list) and len(span) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in span)
        if not ok or not 0 <= span[0] < span[1] <= len(text):
            errors.append(f"{where}.metadata.connective_span: must be [start, end) inside the reference text "
                          f"(length {len(text)}), got {span!r}")
            return None
        return span[0], span[1]
    if "connective" in metadata:
        word = metadata["connective"]
        if not isinstance(word, str) or not word.strip():
            errors.append(f"{where}.metadata.connective: must be the connective as a non-empty string")
            return None
        found = [m.span() for m in re.finditer(rf"(?<!\w){re.escape(word.strip())}(?!\w)", text, re.IGNORECASE)]
        if len(found) != 1:
            errors.append(f"{where}.metadata.connective: {word!r} occurs {len(found)} times in the reference; "
                          "give metadata.connective_span [start, end) instead")
            return None
        return found[0]
    highlights = ref.get("highlights") or []
    if not highlights:
        return None
    if len(highlights) != 1:
        errors.append(f"{where}.candidates[{ref_index}].highlights: {len(highlights)} spans; mark the connective "
                      "with metadata.connective_span or a single highlight")
        return None
    span = highlights[0]
    if not (isinstance(span, list) and len(span) == 2 and all(isinstance(x, int) for x in span)
            and 0 <= span[0] < span[1] <= len(text)):
        errors.append(f"{where}.candidates[{ref_index}].highlights[0]: must be [start, end) inside the text")
        return None
    return span[0], span[1]


def _contains_word(text: str, word: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE) is not None


def connective_study(*, items: list[SourceItem], slug: str, title: str = "", system: str | None = None,
                     skip_unmarked: bool = False, redundancy: int = 3, spam_rate: float = 0.1,
                     seed: int | None = None, highlight: bool = True) -> Generated:
    """Study file for DiP A.4's connective preference (options neither, invalid).

    Study 1 (``system`` None): reference vs reference-with-the-connective-deleted.
    Study 2 (``system`` given): reference vs that system's output, for the items
    where the output exists and does not contain the connective (others are skipped).
    Items without a marked connective are an error unless ``skip_unmarked``.
    """
    errors: list[str] = []
    out: list[dict] = []
    skipped: dict[str, str] = {}
    for item in items:
        if not isinstance(item.data, dict):
            errors.append(f"{item.where}: must be an object")
            continue
        found = _reference(item, errors)
        if found is None:
            continue
        ref_index, ref = found
        span = connective_span(item, ref_index, ref, errors)
        if span is None:
            if not any(e.startswith(item.where + ".") for e in errors):
                if skip_unmarked:
                    skipped[item.where] = "no connective marked"
                else:
                    errors.append(f"{item.where}: no connective marked (metadata.connective_span, "
                                  "metadata.connective or one highlight on the reference)")
            continue
        start, end = span
        connective = ref["text"][start:end]
        reference = {"system": "reference", "text": ref["text"], "is_reference": True,
                     "highlights": [[start, end]] if highlight else []}
        other: dict[str, Any]
        if system is None:
            other = {"system": "connective-deleted", "text": delete_span(ref["text"], start, end), "highlights": []}
        else:
            match = [c for c in item.data["candidates"] if isinstance(c, dict) and c.get("system") == system
                     and c.get("is_reference") is not True]
            if not match:
                skipped[item.where] = f"no output of system {system!r}"
                continue
            if _contains_word(str(match[0].get("text", "")), connective.strip()):
                skipped[item.where] = f"the output of {system!r} contains {connective.strip()!r}"
                continue
            other = {"system": system, "text": match[0].get("text"), "highlights": []}
        metadata = dict(item.data.get("metadata") or {})
        metadata.update(connective=connective.strip(), connective_span=[start, end])
        out.append(_base_item(item, phenomenon=item.data.get("phenomenon") or connective.strip().lower(),
                              metadata=metadata, candidates=[reference, other]))
    if errors:
        raise StudyFileError(errors)
    if not out:
        raise StudyFileError(["items: no item with a marked connective" +
                              (f" and an output of {system!r} without it" if system else "")])
    study_no = "2 (reference vs a system output missing the connective)" if system else \
        "1 (reference vs reference with the connective deleted)"
    settings: dict[str, Any] = {"show_source": False, "options": ["neither", "invalid"], "redundancy": redundancy,
                                "spam_rate": spam_rate, "unit": "sentence", "instructions": CONNECTIVE_INSTRUCTIONS,
                                "question": "Which version reads better in this context?"}
    if seed is not None:
        settings["seed"] = seed
    return Generated(data=_study_file(
        slug=slug, title=title or f"Connective preference ({slug})",
        description=f"Connective preference, DiP A.4 study {study_no}; generated from {len(out)} items.",
        items=out, settings=settings), skipped=skipped)


# --- contrastive variants -----------------------------------------------------------------

def _variants(item: SourceItem, errors: list[str]) -> list[dict]:
    """Contrastive variants of an item: candidates whose system starts with ``contrastive`` and/or
    ``metadata.variants`` (strings, or objects with ``text`` and optional ``highlights``)."""
    found: list[dict] = []
    for k, cand in enumerate(item.data.get("candidates") or []):
        if isinstance(cand, dict) and str(cand.get("system", "")).startswith("contrastive") \
                and cand.get("is_reference") is not True:
            found.append({"text": cand.get("text"), "highlights": cand.get("highlights", []),
                          "where": f"{item.where}.candidates[{k}]"})
    metadata = item.data.get("metadata") or {}
    raw = metadata.get("variants", []) if isinstance(metadata, dict) else []
    if not isinstance(raw, list):
        errors.append(f"{item.where}.metadata.variants: must be a list of texts or {{\"text\": …}} objects")
        raw = []
    for k, variant in enumerate(raw):
        where = f"{item.where}.metadata.variants[{k}]"
        if isinstance(variant, str):
            found.append({"text": variant, "highlights": [], "where": where})
        elif isinstance(variant, dict):
            found.append({"text": variant.get("text"), "highlights": variant.get("highlights", []), "where": where})
        else:
            errors.append(f"{where}: must be a text or an object with text")
    return found


def contrastive_study(*, items: list[SourceItem], slug: str, title: str = "", redundancy: int = 3,
                      spam_rate: float = 0.1, seed: int | None = None, show_source: bool = True) -> Generated:
    """Study file for ContraPro-style contrastive choice: reference vs its variants, no neither/tie."""
    errors: list[str] = []
    out: list[dict] = []
    for item in items:
        if not isinstance(item.data, dict):
            errors.append(f"{item.where}: must be an object")
            continue
        found = _reference(item, errors)
        if found is None:
            continue
        _, ref = found
        variants = _variants(item, errors)
        if not variants:
            errors.append(f"{item.where}: no contrastive variant (candidates with system 'contrastive…' "
                          "or metadata.variants)")
            continue
        texts = {" ".join(ref["text"].split())}
        candidates = [{"system": "reference", "text": ref["text"], "is_reference": True,
                       "highlights": ref.get("highlights", [])}]
        for k, variant in enumerate(variants, start=1):
            text = variant["text"]
            if not isinstance(text, str) or not text.strip():
                errors.append(f"{variant['where']}.text: required, a non-empty string")
                continue
            if " ".join(text.split()) in texts:
                errors.append(f"{variant['where']}.text: the same as the reference or another variant")
                continue
            texts.add(" ".join(text.split()))
            candidates.append({"system": f"contrastive-{k}", "text": text, "highlights": variant["highlights"]})
        out.append(_base_item(item, candidates=candidates))
    if errors:
        raise StudyFileError(errors)
    settings: dict[str, Any] = {"show_source": show_source, "options": [], "redundancy": redundancy,
                                "spam_rate": spam_rate, "unit": "sentence", "instructions": CONTRASTIVE_INSTRUCTIONS,
                                "question": "Which translation is correct in this context?"}
    if seed is not None:
        settings["seed"] = seed
    return Generated(data=_study_file(
        slug=slug, title=title or f"Contrastive choice ({slug})",
        description=f"Contrastive choice (ContraPro-style): the reference against its contrastive variants; "
                    f"{len(out)} items.", items=out, settings=settings))


def generated_import(*, generated: Generated, status: str | None = None) -> Study:
    """Store a generated study file through the ordinary import (validated whole; spam items included).

    A draft unless ``status`` says otherwise, like any import.
    """
    return study_import(data=generated.data, status=status)


def free_slug(base: str) -> str:
    """``base``, or ``base-2``, ``base-3``… whichever is not taken yet."""
    slug, n = base, 1
    while Study.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def source_items(source: str) -> list[SourceItem]:
    """Items from a stored study (by slug) or from a file path (.json study file, .jsonl or .csv items)."""
    path = Path(source)
    if path.is_file():
        return items_from_file(path)
    study = Study.objects.filter(slug=source).first()
    if study is None:
        raise StudyFileError([f"source: {source!r} is neither a file nor the slug of a study"])
    return items_from_study(study)
