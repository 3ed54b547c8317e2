"""Google's WMT MQM TSV as a closed ``mqm`` study (``import_judgments FILE --format mqm-tsv``).

The file (format: ``docs/mqm.md``; parsed by :mod:`formats.mqm_tsv`)
holds one row per marked error and a ``No-error`` row per clean rating.
It becomes:

* one **item** per (``doc``, ``doc_id``, ``seg_id``) -- id ``doc:doc_id:seg_id``,
  document ``doc``, position ``doc_id`` when it is a whole number, the three
  values kept in ``metadata["mqm_tsv"]`` for the export -- with the source
  text without its ``<v>…</v>`` markers (every system must give the same
  source for a segment);
* one **candidate** per system of that segment, its text the target without
  markers; reference systems flagged (``--reference-system``, else names
  such as ``ref``, ``ref.A``, ``ref-C``, ``Human-A.0``: :data:`REFERENCE_NAME`);
* one **annotator** per rater (``external_id`` = the rater's name);
* one done **assignment** and one **judgment** per (rater, item), its answer
  the normalised span answer of the MQM contract holding only the systems
  the rater rated for that segment: ``No-error`` -> ``spans: []``; each
  error row -> one span (offsets into the clean target, or the source when
  the markers are in the source column; severity lower-cased; category as
  in the file; the ``comment``/``note`` column as the span's note).

Rules for what the format allows but a span answer cannot hold
(``docs/mqm.md``, "Import and export in the product"):

* an error row **without markers** (the rater did not localise the error)
  is stored as a span over the whole target with ``"whole": true``; the
  export writes it back without markers;
* an error row marking **more than one stretch** is refused (one row is one
  error, one error one span; splitting it would count it twice in the score);
* severities must be MQM severities (neutral, minor, major, critical, any
  case); categories are matched case-insensitively, the first spelling wins.

Nothing is stored unless the whole file is good; every bad row is named by
its line.  The study is created closed, with its provenance (file name,
format, SHA-256, import time) in its description, like the ``export``
import of :mod:`annotation.importing.judgments`.  Items, candidates, annotators,
assignments and judgments are written with ``bulk_create`` in batches: the
speed figure (100,000 rows) is in ``docs/mqm.md`` (``bench/mqm_import_speed.py``).
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.handout.statements import insert_rows
from annotation.importing.base import (MAX_ERRORS, JudgmentImportError, closed_study, record_provenance,
                                             unsafe_input)
from annotation.models import Annotator, Assignment, AssignmentStatus, Judgment
from studies.importing.study_file import EXTERNAL_ID_MAX_LENGTH, items_create
from studies.models import Candidate, Item, Status, Study, Unit
from formats.mqm_tsv import MqmData, MqmError, MqmTsvError, Segment, Unclosed, parse_mqm_tsv
from studies.definition.taxonomy import ALLOWED_SEVERITIES, DEFAULT_MQM_TAXONOMY, NOTE_MAX_LENGTH

FORMAT = "mqm-tsv"
#: ``--unclosed-spans``: refuse a ``<v>`` never closed (default), or let its span run to the end of the text.
UNCLOSED_CHOICES = ("error", "close-at-end")
#: System names taken for human references when no ``--reference-system`` is given: ``ref``, ``reference``
#: or ``human``, optionally one letter or digit after a separator, optionally ``.N`` (ref.A, ref-C, refB,
#: Human-A.0, Human-P.0).  Strict on purpose: "human-parity-mt" or "refine" are systems.
REFERENCE_NAME = re.compile(r"^(?:ref|reference|human)(?:[-._]?[a-z0-9])?(?:\.\d+)?$", re.IGNORECASE)
#: The 10th column is a span's note when it is called so; a ``metadata`` column (JSON in Marot's files) is not.
NOTE_COLUMNS = ("comment", "note")
BATCH = 2000
_COLUMN_LIMITS = {"system": Candidate._meta.get_field("system").max_length,
                  "doc": Item._meta.get_field("document_id").max_length,
                  "rater": Annotator._meta.get_field("external_id").max_length}
_CATEGORY_MAX = 100  # studies.definition.taxonomy.taxonomy_errors
_DESCRIPTIONS = {c["name"].lower(): c for c in DEFAULT_MQM_TAXONOMY}

ItemKey = tuple[str, str, str]


@dataclass
class _Plan:
    """What the file becomes, checked, before anything is written."""

    items: dict[ItemKey, dict[str, Any]] = field(default_factory=dict)  # key -> study-file item
    categories: dict[str, str] = field(default_factory=dict)  # lower -> first spelling
    severities: set[str] = field(default_factory=set)
    # (rater, item key) -> system -> spans, in file order
    ratings: dict[tuple[str, ItemKey], dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    raters: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    overlap: bool = False
    warnings: list[str] = field(default_factory=list)


#: Google's MQM TSV is the MQM protocol's own format: its rows become an ``mqm`` study.
MQM = "mqm"


def item_external_id(doc: str, doc_id: str, seg_id: str) -> str:
    """The item id of a segment: ``doc:doc_id:seg_id`` (the three values are also in the item's metadata)."""
    return f"{doc}:{doc_id}:{seg_id}"


def _line_errors(name: str, problems: Sequence[tuple[int, str]]) -> JudgmentImportError:
    """Problems as the import's errors, in line order, at most MAX_ERRORS of them listed."""
    ordered = sorted(problems, key=lambda p: (p[0] == 0, p[0]))  # the file-wide hints (line 0) last
    errors = [f"{name}: line {ln}: {msg}" if ln else f"{name}: {msg}" for ln, msg in ordered[:MAX_ERRORS]]
    if len(ordered) > MAX_ERRORS:
        errors.append(f"{name}: … and {len(ordered) - MAX_ERRORS} more bad row(s)")
    return JudgmentImportError(errors)


def _references(systems: Iterable[str], given: Sequence[str], name: str) -> tuple[list[str], list[str]]:
    """(reference systems, errors): the names given (each must be a system of the file), else the detected ones."""
    known = list(dict.fromkeys(systems))
    if given:
        wanted = [g.strip() for g in given]
        unknown = [g for g in wanted if g not in known]
        if unknown:
            return [], [f"--reference-system: {', '.join(map(repr, unknown))} is not a system of {name} "
                        f"(its systems: {', '.join(known)})"]
        return list(dict.fromkeys(wanted)), []
    return [s for s in known if REFERENCE_NAME.match(s)], []


def _position(doc_id: str, fallback: int) -> int:
    """The item's position in its document: ``doc_id`` when it is a whole number, else its order of appearance."""
    text = doc_id.strip()
    if text.lstrip("-").isdigit() and -2**31 <= int(text) < 2**31:
        return int(text)
    return fallback


def _check_segment(seg: Segment, problems: list[tuple[int, str]]) -> None:
    for column, value in (("system", seg.system), ("doc", seg.doc)):
        limit = _COLUMN_LIMITS[column]
        if limit is not None and len(value) > limit:
            problems.append((seg.line, f"{column}: at most {limit} characters ({len(value)} given)"))
    if not seg.target.strip():
        problems.append((seg.line, "target: empty (a candidate needs a text)"))
    ext = item_external_id(seg.doc, seg.doc_seg_id, seg.global_seg_id)
    if len(ext) > EXTERNAL_ID_MAX_LENGTH:
        problems.append((seg.line, f"doc, doc_id and seg_id make an item id of {len(ext)} characters (at most "
                                   f"{EXTERNAL_ID_MAX_LENGTH})"))


def _span(error: MqmError, seg: Segment, note_column: bool, plan: _Plan,
          problems: list[tuple[int, str]]) -> dict[str, Any] | None:
    """The stored span of one error row, or None (the problem appended)."""
    severity = error.severity.strip().lower()
    bad: list[str] = []
    if severity not in ALLOWED_SEVERITIES:
        bad.append(f"severity {error.severity!r} is not an MQM severity ({', '.join(ALLOWED_SEVERITIES)}, any case)")
    category = error.category.strip()
    if len(category) > _CATEGORY_MAX:
        bad.append(f"category: at most {_CATEGORY_MAX} characters ({len(category)} given)")
    if len(error.spans) > 1:
        bad.append(f"{len(error.spans)} stretches marked <v>…</v>; one error row marks one span (write one row "
                   "per error)")
    note = error.note.strip() if note_column else ""
    if len(note) > NOTE_MAX_LENGTH:
        bad.append(f"comment: at most {NOTE_MAX_LENGTH} characters ({len(note)} given)")
    if bad:
        problems.extend((error.line, b) for b in bad)
        return None
    plan.severities.add(severity)
    canonical = plan.categories.setdefault(category.lower(), category)
    if error.spans:
        s = error.spans[0]
        span: dict[str, Any] = {"start": s.start, "end": s.end, "side": s.side}
    else:  # not localised by the rater: the whole target, flagged so the export writes no markers
        span = {"start": 0, "end": len(seg.target), "side": "target", "whole": True}
    span.update(severity=severity, category=canonical)
    if note:
        span["note"] = note
    return span


def _overlaps(spans: list[dict[str, Any]]) -> bool:
    for side in ("target", "source"):
        marks = sorted((s["start"], s["end"]) for s in spans if s["side"] == side)
        if any(b[0] < a[1] for a, b in zip(marks, marks[1:])):
            return True
    return False


def plan_import(data: MqmData, name: str, reference_systems: Sequence[str]) -> _Plan:
    """Check every row and turn the file into items, ratings and settings; JudgmentImportError otherwise."""
    plan = _Plan(warnings=list(data.warnings))
    problems: list[tuple[int, str]] = []
    note_column = data.extra_column in NOTE_COLUMNS
    if data.extra_column and not note_column:
        plan.warnings.append(f"the {data.extra_column} column is not stored (only a comment or note column "
                             "becomes the spans' notes)")
    references, errors = _references((s.system for s in data.segments), reference_systems, name)
    if errors:
        raise JudgmentImportError(errors)
    plan.references = references
    ref_set = set(references)
    source_line: dict[ItemKey, tuple[str, int]] = {}
    per_doc: dict[str, int] = {}
    for seg in data.segments:
        _check_segment(seg, problems)
        key = (seg.doc, seg.doc_seg_id, seg.global_seg_id)
        first = source_line.setdefault(key, (seg.source, seg.line))
        if first[0] != seg.source:
            problems.append((seg.line, f"source differs from line {first[1]} for the same doc, doc_id and seg_id "
                                       "(one item has one source)"))
            continue
        item = plan.items.get(key)
        if item is None:
            per_doc[seg.doc] = per_doc.get(seg.doc, 0) + 1
            item = plan.items[key] = {
                "id": item_external_id(*key), "document_id": seg.doc,
                "position": _position(seg.doc_seg_id, per_doc[seg.doc]), "source": seg.source,
                "metadata": {"mqm_tsv": {"doc": seg.doc, "doc_id": seg.doc_seg_id, "seg_id": seg.global_seg_id}},
                "candidates": []}
        item["candidates"].append({"system": seg.system, "text": seg.target, "is_reference": seg.system in ref_set})
    ids: dict[str, ItemKey] = {}
    for key, item in plan.items.items():
        other = ids.setdefault(item["id"], key)
        if other != key:
            problems.append((source_line[key][1], f"item id {item['id']!r} is also that of doc {other[0]!r}, "
                                                  f"doc_id {other[1]!r}, seg_id {other[2]!r}"))
    dropped_notes = 0
    raters: dict[str, None] = {}
    for j in data.judgments:
        seg = data.segments[j.segment]
        limit = _COLUMN_LIMITS["rater"]
        if limit is not None and len(j.rater) > limit:
            problems.append((j.line, f"rater: at most {limit} characters ({len(j.rater)} given)"))
            continue
        spans = [s for s in (_span(e, seg, note_column, plan, problems) for e in j.errors) if s is not None]
        if note_column and j.note.strip():
            dropped_notes += 1
        spans.sort(key=lambda s: (s["side"] != "target", s["start"], s["end"]))
        plan.overlap = plan.overlap or _overlaps(spans)
        raters.setdefault(j.rater)
        rated = plan.ratings.setdefault((j.rater, (seg.doc, seg.doc_seg_id, seg.global_seg_id)), {})
        rated[seg.system] = spans
    if problems:
        raise _line_errors(name, problems)
    if not plan.ratings:
        raise JudgmentImportError([f"{name}: no rating (every row is a segment without a rater)"])
    if dropped_notes:
        plan.warnings.append(f"{dropped_notes} No-error row(s) carry a comment, which is not stored (a confirmed "
                             "'no error' has no note)")
    plan.raters = list(raters)
    return plan


def _study_file(plan: _Plan, name: str, slug: str) -> dict[str, Any]:
    """The study file of the import (validated by :func:`studies.importing.study_file.parse_study` like any other)."""
    per_item: dict[ItemKey, int] = {}
    for _, key in plan.ratings:
        per_item[key] = per_item.get(key, 0) + 1
    settings: dict[str, Any] = {
        "unit": Unit.SENTENCE, "show_source": True, "spam_rate": 0.0,
        "redundancy": max(1, min(100, max(per_item.values(), default=1))),
        "allow_overlap": plan.overlap,
    }
    if plan.categories:
        names = sorted(plan.categories.values(), key=str.lower)
        settings["taxonomy"] = [{"name": n, "description": _DESCRIPTIONS.get(n.lower(), {}).get("description", ""),
                                 "examples": list(_DESCRIPTIONS.get(n.lower(), {}).get("examples", []))}
                                for n in names]
    if plan.severities:
        settings["severities"] = [s for s in ALLOWED_SEVERITIES if s in plan.severities]
    refs = ", ".join(plan.references) if plan.references else "none"
    description = f"Reference systems: {refs}."
    if plan.warnings:
        description += "\nNotes: " + "; ".join(plan.warnings[:MAX_ERRORS])
    return {"slug": slug, "title": f"Imported MQM judgments: {name}"[:200], "protocol": MQM,
            "status": Status.CLOSED, "description": description, "settings": settings,
            "items": list(plan.items.values())}


def _batches(objs: list[Any], size: int = BATCH) -> Iterable[list[Any]]:
    for k in range(0, len(objs), size):
        yield objs[k:k + size]


def _candidates(study: Study, parsed_items: list[dict[str, Any]], items: list[Item],
                now: datetime) -> dict[tuple[int, str], tuple[int, int]]:
    """Insert the candidates of the parsed items; (item pk, system) -> (candidate pk, position)."""
    by_ext = {i.external_id: i.pk for i in items}
    insert_rows(Candidate, [{"item_id": by_ext[data["external_id"]], **c}
                            for data in parsed_items for c in data["candidates"]], now=now)
    return {(item_id, system): (pk, position) for pk, item_id, system, position in
            Candidate.objects.filter(item__study=study).values_list("pk", "item_id", "system", "position")}


def _store(study: Study, plan: _Plan, items: list[Item], cand: dict[tuple[int, str], tuple[int, int]],
           now: datetime) -> int:
    """Annotators, assignments and judgments; returns the number of judgments."""
    by_ext = {i.external_id: i for i in items}
    item_of = {key: by_ext[data["id"]] for key, data in plan.items.items()}
    Annotator.objects.bulk_create(
        [Annotator(study=study, external_id=r, sequence=n) for n, r in enumerate(plan.raters, start=1)],
        batch_size=BATCH)
    annotator_of = dict(Annotator.objects.filter(study=study).values_list("external_id", "pk"))
    assignments: list[dict[str, Any]] = []
    answers: dict[tuple[int, int], dict[str, Any]] = {}
    sequence: dict[str, int] = {}
    for (rater, key), systems in plan.ratings.items():
        item = item_of[key]
        spans = {cand[(item.pk, system)]: s for system, s in systems.items()}
        sequence[rater] = sequence.get(rater, 0) + 1
        assignments.append({"annotator_id": annotator_of[rater], "item_id": item.pk, "sequence": sequence[rater],
                            "candidate_order": [pk for pk, _ in sorted(spans, key=lambda c: c[1])],
                            "status": AssignmentStatus.DONE.value, "opened_at": now, "completed_at": now})
        answers[(annotator_of[rater], item.pk)] = {
            "annotations": {str(pk): {"spans": spans[(pk, pos)]} for pk, pos in sorted(spans)}}
    insert_rows(Assignment, assignments, now=now)
    judgments = []
    for pk, annotator_id, item_id in (Assignment.objects.filter(item__study=study)
                                      .values_list("pk", "annotator_id", "item_id")):
        answer = answers[(annotator_id, item_id)]
        judgments.append({"assignment_id": pk, "revision": 1, "is_current": True, "answer": answer,
                          "started_at": now,
                          "payload_digest": hashlib.sha256(json.dumps(answer, sort_keys=True).encode()).hexdigest()})
    insert_rows(Judgment, judgments, now=now)
    _close_items(study, [a["item_id"] for a in assignments])
    return len(judgments)


def _close_items(study: Study, assigned_items: list[int]) -> None:
    """Every item closed, its n_assigned the number of raters (a few UPDATEs: one per distinct count)."""
    counts: dict[int, int] = {}
    for item_id in assigned_items:
        counts[item_id] = counts.get(item_id, 0) + 1
    by_count: dict[int, list[int]] = {}
    for item_id, n in counts.items():
        by_count.setdefault(n, []).append(item_id)
    Item.objects.filter(study=study).update(is_open=False)
    for n, ids in by_count.items():
        for batch in _batches(ids):
            Item.objects.filter(pk__in=batch).update(n_assigned=n)
    Study.objects.filter(pk=study.pk).update(n_open_items=0, n_spam_items=0)


@transaction.atomic
def mqm_tsv_import(*, name: str, content: str, slug: str, reference_systems: Sequence[str] = (),
                   unclosed: str = "error", source: str = "") -> Study:
    """Create a closed ``mqm`` study from an MQM TSV file; JudgmentImportError (nothing stored) otherwise."""
    if unclosed not in UNCLOSED_CHOICES:
        raise JudgmentImportError([f"--unclosed-spans: {unclosed!r} is not one of {', '.join(UNCLOSED_CHOICES)}"])
    unsafe_input(name, content, slug=slug, reference_systems=reference_systems)
    if Study.objects.filter(slug=slug).exists():
        raise JudgmentImportError([f"--slug: a study {slug!r} exists already"])
    mode: Unclosed = "close_at_end" if unclosed == "close-at-end" else "error"
    try:
        data = parse_mqm_tsv(content, source=name, unclosed=mode)
    except MqmTsvError as exc:
        hint = [(0, "a <v> that is never closed: --unclosed-spans close-at-end lets its span run to the end of "
                    "the text")] if any("without </v>" in m for _, m in exc.problems) else []
        api_hint = " (pass unclosed='close_at_end' to let the span run to the end)"  # the reader's, for Python
        raise _line_errors(name, [(ln, m.replace(api_hint, "")) for ln, m in exc.problems] + hint) from None
    plan = plan_import(data, name, reference_systems)
    study, parsed = closed_study(name, _study_file(plan, name, slug))
    now = timezone.now()
    # items_create stores the items (document order keys, counts); their candidates go in with statements.insert_rows
    items = items_create(study=study, items=[{**data, "candidates": []} for data in parsed.items])
    candidates = _candidates(study, parsed.items, items, now)
    n_judgments = _store(study, plan, items, candidates, now)
    n_rows = sum(max(1, len(j.errors)) for j in data.judgments)
    return record_provenance(study, name=name, fmt=FORMAT, content=content,
                             summary=f"{n_rows} rows, {n_judgments} judgments", source=source)
