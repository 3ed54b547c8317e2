"""Tutorial (practice) items of a study file: validated and normalised before anything is stored.

A tutorial item looks like an ordinary item (id, source, contexts, candidates
with system and text) plus ``gold``, the expected answer in the annotation API's
shape but naming candidates by their SYSTEM (the file's only stable name for
them), and ``explanation`` (markdown shown after the annotator answered).

Tutorial items are stored on the study (``Study.tutorial``), never as Items:
they are never handed out, never judged, and so never counted anywhere
(exports, reports, quality control, redundancy). Each candidate gets an opaque
``id`` here, the only name an annotator ever sees (annotation/pages/tutorial.py).

Why not annotation/handout/answers.py: studies may not import annotation (import-linter);
this checks the gold answer with the same rules, worded for a study file
(``tutorial[2].gold.ranks: …``), its error spans through ``studies.importing.span_checks``
as the API's are; the annotator's own tutorial answer does go through
``annotation.handout.answers.judgment_validate``.
"""
from __future__ import annotations

from typing import Any

from protocols.registry import protocol_named
from studies.models import CHOICE_OPTIONS, Study, opaque_id
from studies.definition import taxonomy as tx
from studies.importing.span_checks import category_names, overlap_problems, sorted_spans, span_checked

TUTORIAL_FIELDS = {"id", "source", "source_context", "target_context", "candidates", "gold", "explanation"}
TUTORIAL_CANDIDATE_FIELDS = {"system", "text", "highlights"}
#: At most this many practice screens: a tutorial is a warm-up, not a study of its own.
TUTORIAL_MAX_ITEMS = 20
#: Study settings the gold answer depends on (read from the file's settings).
GOLD_SETTINGS = ("allow_ties", "options", "labels", "multi_label", "taxonomy", "severities", "allow_overlap",
                 "esa_spans", "show_source")


def settings_study(protocol: str, fields: dict[str, Any]) -> Study:
    """An unsaved Study carrying the settings a gold answer is checked against (never saved).

    A taxonomy or severity list with problems of its own (reported by parse_study) is left out.
    """
    values = {k: fields[k] for k in GOLD_SETTINGS if k in fields}
    if "taxonomy" in values and tx.taxonomy_errors(values["taxonomy"]):
        del values["taxonomy"]
    if "severities" in values and (not protocol_named(protocol).allowed_severities
                                   or tx.severities_errors(values["severities"], protocol)):
        del values["severities"]
    return Study(protocol=protocol, protocol_settings=fields.get("protocol_settings") or {}, **values)


def tutorial_errors_and_items(raw: Any, study: Study) -> tuple[list[str], list[dict[str, Any]]]:
    """Every problem of the file's ``tutorial`` list (each named ``tutorial[i].field``) and the normalised items."""
    errors: list[str] = []
    if not isinstance(raw, list):
        return ["tutorial: must be a list of tutorial items"], []
    if len(raw) > TUTORIAL_MAX_ITEMS:
        errors.append(f"tutorial: at most {TUTORIAL_MAX_ITEMS} tutorial items ({len(raw)} given)")
    seen: set[str] = set()
    items = []
    for index, entry in enumerate(raw):
        item = _tutorial_item(entry, f"tutorial[{index}]", study, seen, errors)
        if item is not None:
            items.append(item)
    return errors, items


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _tutorial_item(raw: Any, where: str, study: Study, seen: set[str], errors: list[str]) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        errors.append(f"{where}: must be an object")
        return None
    before = len(errors)
    unknown = sorted(set(raw) - TUTORIAL_FIELDS)
    if unknown:
        errors.append(f"{where}: unknown field(s) {unknown} (known: {', '.join(sorted(TUTORIAL_FIELDS))})")
    ext = raw.get("id")
    if isinstance(ext, int) and not isinstance(ext, bool):
        ext = str(ext)
    if not isinstance(ext, str) or not ext.strip():
        errors.append(f"{where}.id: required, a non-empty string")
    elif ext in seen:
        errors.append(f"{where}.id: duplicate tutorial id {ext!r}")
    else:
        seen.add(ext)
    source = raw.get("source", "")
    if not isinstance(source, str):
        errors.append(f"{where}.source: must be a string")
        source = ""
    for key in ("source_context", "target_context"):
        if key in raw and not _strings(raw[key]):
            errors.append(f"{where}.{key}: must be a list of strings")
    explanation = raw.get("explanation", "")
    if not isinstance(explanation, str):
        errors.append(f"{where}.explanation: must be a string (markdown)")
    candidates = _tutorial_candidates(raw.get("candidates"), where, study, errors)
    gold = None
    if "gold" not in raw:
        errors.append(f"{where}.gold: required, the expected answer")
    elif candidates is not None:
        gold = gold_normalised(raw["gold"], study, {c["system"]: c["text"] for c in candidates}, source,
                               f"{where}.gold", errors)
    if len(errors) > before or candidates is None or gold is None:
        return None
    return {"id": ext, "source": source, "source_context": raw.get("source_context", []),
            "target_context": raw.get("target_context", []), "candidates": candidates, "gold": gold,
            "explanation": explanation}


def _tutorial_candidates(raw: Any, where: str, study: Study, errors: list[str]) -> list[dict[str, Any]] | None:
    minimum = study.spec.candidates_per_item[0]
    if not isinstance(raw, list) or len(raw) < minimum:
        errors.append(f"{where}.candidates: required, a list of at least {minimum} candidates for a {study.protocol} study")
        return None
    out: list[dict[str, Any]] = []
    ok = True
    for k, cand in enumerate(raw):
        cw = f"{where}.candidates[{k}]"
        if not isinstance(cand, dict):
            errors.append(f"{cw}: must be an object with system and text")
            ok = False
            continue
        unknown = sorted(set(cand) - TUTORIAL_CANDIDATE_FIELDS)
        if unknown:
            errors.append(f"{cw}: unknown field(s) {unknown}")
            ok = False
        system, text = cand.get("system"), cand.get("text")
        if not isinstance(system, str) or not system.strip():
            errors.append(f"{cw}.system: required, a non-empty string")
            ok = False
        elif any(c["system"] == system for c in out):
            errors.append(f"{cw}.system: duplicate system {system!r} in this tutorial item")
            ok = False
        if not isinstance(text, str) or not text.strip():
            errors.append(f"{cw}.text: required, a non-empty string")
            ok = False
            text = ""
        highlights = cand.get("highlights", [])
        if not (isinstance(highlights, list) and all(
                isinstance(h, list) and len(h) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in h)
                and 0 <= h[0] < h[1] <= len(text) for h in highlights)):
            errors.append(f"{cw}.highlights: must be a list of [start, end] pairs inside the text")
            ok = False
        out.append({"id": opaque_id(), "system": system, "text": text, "highlights": highlights})
    return out if ok else None


def gold_normalised(gold: Any, study: Study, texts: dict[str, str], source: str, where: str,
                    errors: list[str]) -> dict[str, Any] | None:
    """The gold answer by system name, normalised like a stored answer; problems appended to ``errors``."""
    fields: dict[str, str] = {"ranking": "ranks", "choice": "choice", "judgment": "label", "mqm": "annotations",
                              "esa": "annotations"}
    expected = fields.get(str(study.protocol))
    if expected is None:
        return None  # the protocol itself is reported by parse_study
    allowed = {"label", "labels"} if expected == "label" else {expected}
    if not isinstance(gold, dict) or len(gold) != 1 or not set(gold) <= allowed:
        errors.append(f"{where}: must be an object with one field, "
                      f"{' or '.join(sorted(allowed))} (the {study.protocol} answer, candidates named by system)")
        return None
    before = len(errors)
    key, value = next(iter(gold.items()))
    if key == "ranks":
        result = _gold_ranks(value, study, texts, f"{where}.ranks", errors)
    elif key == "choice":
        result = _gold_choice(value, study, texts, f"{where}.choice", errors)
    elif key in ("label", "labels"):
        result = _gold_labels(key, value, study, f"{where}.{key}", errors)
    else:
        result = _gold_annotations(value, study, texts, source, f"{where}.annotations", errors)
    return result if len(errors) == before else None


def _gold_ranks(value: Any, study: Study, texts: dict[str, str], where: str, errors: list[str]) -> dict | None:
    if not isinstance(value, dict):
        errors.append(f"{where}: must map every candidate's system to its rank")
        return None
    n = len(texts)
    unknown = sorted(set(value) - set(texts))
    missing = [s for s in texts if s not in value]
    if unknown:
        errors.append(f"{where}: unknown system(s) {unknown} (this item's: {', '.join(texts)})")
    if missing:
        errors.append(f"{where}: every candidate needs a rank; missing {missing}")
    bad = [s for s, r in value.items() if isinstance(r, bool) or not isinstance(r, int) or not 1 <= r <= n]
    if bad:
        errors.append(f"{where}: ranks must be whole numbers from 1 to {n} (wrong for {sorted(bad)})")
    if not (unknown or missing or bad) and not study.allow_ties and len(set(value.values())) != n:
        errors.append(f"{where}: two candidates share a rank, but this study does not allow ties")
    return {"ranks": {s: value[s] for s in texts}} if not (unknown or missing or bad) else None


def _gold_choice(value: Any, study: Study, texts: dict[str, str], where: str, errors: list[str]) -> dict | None:
    if isinstance(value, str) and value in texts:
        return {"choice": {"candidate": value}}
    options = [o for o in (study.options or []) if o in CHOICE_OPTIONS]
    if isinstance(value, str) and value in options:
        return {"choice": {"option": value}}
    errors.append(f"{where}: {value!r} is neither a system of this item ({', '.join(texts)}) nor an option of "
                  f"this study ({', '.join(options) or 'none'})")
    return None


def _gold_labels(key: str, value: Any, study: Study, where: str, errors: list[str]) -> dict | None:
    labels = [value] if key == "label" else value
    if key == "labels" and not study.multi_label:
        errors.append(f"{where}: this study takes a single label: give \"label\"")
        return None
    if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
        errors.append(f"{where}: must be {'a label' if key == 'label' else 'a non-empty list of labels'}")
        return None
    unknown = [x for x in labels if x not in (study.labels or [])]
    if unknown:
        errors.append(f"{where}: not a label of this study: {unknown} (labels: {', '.join(study.labels or [])})")
        return None
    order = {label: k for k, label in enumerate(study.labels)}
    return {"labels": sorted(set(labels), key=order.__getitem__)}


def _gold_annotations(value: Any, study: Study, texts: dict[str, str], source: str, where: str,
                      errors: list[str]) -> dict | None:
    if not isinstance(value, dict):
        errors.append(f"{where}: must map every candidate's system to {{\"spans\": […]"
                      + (", \"score\": 0–100" if study.uses_score else "") + "}")
        return None
    unknown = sorted(set(value) - set(texts))
    missing = [s for s in texts if s not in value]
    if unknown:
        errors.append(f"{where}: unknown system(s) {unknown} (this item's: {', '.join(texts)})")
    if missing:
        errors.append(f"{where}: every candidate needs a gold answer; missing {missing}")
    categories = category_names(study)
    severities = study.effective_severities()
    out: dict[str, Any] = {}
    for system in texts:
        entry = value.get(system)
        if entry is None:
            continue
        out[system] = _gold_entry(entry, study, {"target": texts[system], "source": source}, categories, severities,
                                  f"{where}.{system}", errors)
    return {"annotations": out} if not (unknown or missing) else None


def _gold_entry(entry: Any, study: Study, texts: dict[str, str], categories: dict[str, str], severities: list[str],
                where: str, errors: list[str]) -> dict[str, Any]:
    allowed = ({"spans"} if study.uses_spans else set()) | ({"score"} if study.uses_score else set())
    if not isinstance(entry, dict):
        errors.append(f"{where}: must be an object with {', '.join(sorted(allowed))}")
        return {}
    extra = sorted(set(entry) - allowed)
    if extra:
        errors.append(f"{where}: unknown field(s) {extra} (this study takes {', '.join(sorted(allowed))})")
    result: dict[str, Any] = {}
    if study.uses_spans:
        raw = entry.get("spans")
        if not isinstance(raw, list):
            errors.append(f"{where}.spans: required, a list of error spans ([] = no error)")
            raw = []
        spans = []
        for k, span in enumerate(raw):
            # The annotator's answer is checked by judgment_validate, which takes source spans only in MQM studies
            # that show the source: a gold answer outside that rule could never be matched.
            checked, problems = span_checked(span, study, texts, categories, severities, f"{where}.spans[{k}]",
                                             source_allowed=study.spec.source_spans_allowed(study))
            errors.extend(problems)
            if checked is not None:
                spans.append(checked)
        errors.extend(overlap_problems(study, spans, where))
        result["spans"] = sorted_spans(spans)
    if study.uses_score:
        score = entry.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not tx.SCORE_MIN <= score <= tx.SCORE_MAX:
            errors.append(f"{where}.score: required, a number from {tx.SCORE_MIN} to {tx.SCORE_MAX}")
        else:
            result["score"] = score
    return result
