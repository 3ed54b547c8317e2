"""An ``mqm`` study's judgments as Google's WMT MQM TSV (``export_judgments SLUG --format mqm-tsv``).

The inverse of :mod:`annotation.importing.mqm`, written with the one
writer of :mod:`formats.mqm_tsv` (the format Marot opens): columns
``system doc doc_id seg_id rater source target category severity`` (plus
``comment`` when a span has a note), one row per error span with
``<v>…</v>`` inserted at the span's offsets (in the source column for a
span of side ``source``), one ``No-error`` row per candidate a rater
confirmed clean (``spans: []``).  A span imported without markers
(``"whole": true``) is written without markers again, so import -> export ->
import gives the same judgments (tested).

What goes in: current judgments (revisions are not part of the format) of
real items (spam copies are QC, not data); every rater, excluded or not
(the format has no flag for it).  ``doc``/``doc_id``/``seg_id`` come from
the item's ``metadata["mqm_tsv"]`` when the study was imported from this
format, else the item's document (or id), its position and its id.  The
rater is the annotator's external id, else its code.  Severities are
written capitalised as in Google's files (Minor, Major); a note's tabs and
line breaks become spaces (a TSV field cannot hold them).  In a
sentence-unit study a text with a tab or a line break cannot be written in
this one-line-per-segment format: the export is refused, naming the item.

A study with suggested spans (``import_prefill``) gets a ``metadata`` column (JSON, as in Google's
later releases): each error row says where its span came from (``span_source``: the annotator, a
``kept`` or ``edited`` suggestion, or ``suggestion`` on the rows of the automatic system, written as
one more rater named by its source), and the first row of a rating (its ``No-error`` row when it
has no error) lists the suggestions that rater deleted on that candidate (``deleted_suggestions``:
id, span, severity, category, decoy flag). A deleted suggestion is never an error row, so MQM
scores read from the file are those of the stored answers.

A **document-unit** study (:func:`_document_layout`) is written as Google
writes its document-level releases: one segment per sentence of a block
(``source_sentences``/``sentences``, else the texts' lines), ``doc`` the
block's document, ``doc_id`` the sentence's number within that document
(blocks in document order), ``seg_id`` ``<item id>.<sentence number>``.
A rater's judgment of a block becomes one rating per sentence: the error
rows of the spans that start in that sentence (offsets made relative to
it), else ``No-error`` -- the rater read the whole block, so a sentence
without a mark was judged clean.  A span that runs over a sentence
boundary is written once, in the sentence where it starts, its markers cut
at that sentence's end (one error, one row: the MQM score counts it once);
a span over the line break alone, and a ``whole`` span, are written
without markers in the sentence where they start.  Each such case is
counted in :attr:`MqmData.warnings` (printed by the command).  Importing
the file gives a sentence-unit study with the same errors per sentence, and
exporting that gives the same file (tested).
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from annotation.handout.suggestions import candidate_suggestions, span_origins, study_suggestions
from annotation.models import Annotator, Judgment
from studies.models import Candidate, Item, PrefillSource, Study, Unit
from formats.mqm_tsv import Judgment as TsvJudgment
from formats.mqm_tsv import MqmData, MqmError, Segment, Span, format_mqm_tsv
from studies.definition.sentences import sentence_spans

FORMAT = "mqm-tsv"
_BLANKS = re.compile(r"[\t\r\n]+")


class MqmExportError(ValueError):
    """The study cannot be written as MQM TSV; the message says why (and which item)."""


def _segment_ids(item: Mapping[str, Any]) -> tuple[str, str, str]:
    """(doc, doc_id, seg_id) of an item: those it was imported with, else document, position and id."""
    meta = (item["metadata"] or {}).get("mqm_tsv") if isinstance(item["metadata"], dict) else None
    if isinstance(meta, dict) and all(isinstance(meta.get(k), str) for k in ("doc", "doc_id", "seg_id")):
        return meta["doc"], meta["doc_id"], meta["seg_id"]
    return item["document_id"] or item["external_id"], str(item["position"]), item["external_id"]


def _one_line(value: str, what: str, item: str) -> str:
    if "\t" in value or "\n" in value or "\r" in value:
        raise MqmExportError(f"item {item!r}: the {what} contains a tab or a line break, which the MQM TSV format "
                             "(one line per segment) cannot hold in a sentence-unit study (a document-unit study is "
                             "written one segment per sentence)")
    return value


def _error(span: dict[str, Any], item: str, source: str, target: str) -> MqmError:
    """One stored span as the reader's error (no markers for a ``whole`` span)."""
    side, start, end = span.get("side", "target"), span.get("start"), span.get("end")
    text = source if side == "source" else target
    note = _BLANKS.sub(" ", str(span.get("note") or "")).strip()
    category, severity = str(span.get("category") or ""), str(span.get("severity", "")).capitalize()
    if span.get("whole"):
        return MqmError(category=category, severity=severity, spans=(), note=note)
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)):
        raise MqmExportError(f"item {item!r}: span [{start}, {end}) does not fit its {side} text")
    return MqmError(category=category, severity=severity, spans=(Span(side, start, end),), note=note)


Bounds = list[tuple[int, int]]


def _bounds(text: str, sentences: list[str] | None) -> Bounds:
    """[start, end) of each sentence of a block's text: its sentence list when it has one, else its lines."""
    if sentences:
        found = sentence_spans(text, sentences)
        if found is not None:
            return found
    bounds, pos = [], 0
    for line in text.split("\n"):
        bounds.append((pos, pos + len(line)))
        pos += len(line) + 1
    return bounds


@dataclass
class _Block:
    """A document-unit item cut into sentences: the ids of its segments and the bounds of its texts."""

    doc: str
    doc_ids: list[str]  # the sentence's number within the document, per sentence
    seg_ids: list[str]
    source: Bounds
    targets: dict[int, Bounds]  # candidate pk -> bounds


@dataclass
class _Placement:
    """What mapping a block's spans onto its sentences had to do (the export's warnings)."""

    cut: list[str] = field(default_factory=list)  # items with a span cut at a sentence's end
    unmarked: list[str] = field(default_factory=list)  # items with a span written without markers

    def warnings(self) -> list[str]:
        out = []
        if self.cut:
            out.append(f"{len(self.cut)} span(s) run over a sentence boundary (items: {_listed(self.cut)}): each "
                       "is written once, in the sentence where it starts, its markers cut at that sentence's end")
        if self.unmarked:
            out.append(f"{len(self.unmarked)} span(s) mark the whole block or only the line break between two "
                       f"sentences (items: {_listed(self.unmarked)}): each is written without markers, in the "
                       "sentence where it starts")
        return out


def _listed(items: list[str], at_most: int = 10) -> str:
    distinct = list(dict.fromkeys(items))
    return ", ".join(distinct[:at_most]) + (f" and {len(distinct) - at_most} more" if len(distinct) > at_most else "")


def _document_layout(items: Mapping[int, Mapping[str, Any]],
                     cands: Mapping[int, Mapping[str, Any]]) -> dict[int, _Block]:
    """Each document-unit item's sentences, numbered within its document (blocks in document order)."""
    by_cand: dict[int, list[Mapping[str, Any]]] = {}
    for cand in cands.values():
        by_cand.setdefault(cand["item_id"], []).append(cand)
    next_number: dict[str, int] = {}
    blocks: dict[int, _Block] = {}
    for pk, item in sorted(items.items(), key=lambda kv: (kv[1]["document_id"], kv[1]["position"], kv[0])):
        ext = item["external_id"]
        source = _bounds(item["source"], item["source_sentences"])
        targets = {c["pk"]: _bounds(c["text"], c["sentences"]) for c in by_cand.get(pk, [])}
        sizes = {len(b) for b in targets.values()} | ({len(source)} if item["source"] else set())
        if len(sizes) > 1:
            raise MqmExportError(f"item {ext!r}: its source and candidates have different numbers of sentences "
                                 f"({', '.join(map(str, sorted(sizes)))}), so they cannot be written one segment "
                                 "per sentence")
        n = sizes.pop() if sizes else 0
        doc = item["document_id"] or ext
        first = next_number.get(doc, 1)
        next_number[doc] = first + n
        blocks[pk] = _Block(_one_line(doc, "document", ext), [str(first + k) for k in range(n)],
                            [f"{ext}.{k + 1}" for k in range(n)], source, targets)
    return blocks


def _sentence_of(bounds: Bounds, offset: int) -> int:
    """The sentence an offset falls in (the line break after a sentence counts as that sentence's)."""
    for k in range(len(bounds) - 1, -1, -1):
        if bounds[k][0] <= offset:
            return k
    return 0


def _place(span: dict[str, Any], bounds: Bounds, item: str, source: str, target: str,
           placement: _Placement) -> tuple[int, MqmError]:
    """(sentence, its error) of one stored span of a block: offsets made relative to the sentence it starts in."""
    error = _error(span, item, source, target)
    if not error.spans:
        placement.unmarked.append(item)
        return 0, error
    where = error.spans[0]
    k = _sentence_of(bounds, where.start)
    lo, hi = bounds[k]
    start, end = where.start, where.end
    if start >= hi:  # starts on the line break after sentence k: the span belongs to the next sentence
        if k + 1 < len(bounds) and end > bounds[k + 1][0]:
            k, start = k + 1, bounds[k + 1][0]
            lo, hi = bounds[k]
        else:
            placement.unmarked.append(item)
            return k, MqmError(error.category, error.severity, (), error.note)
    if end > hi:  # a cut is said only when the span reaches into the next sentence (not just its line break)
        if k + 1 < len(bounds) and end > bounds[k + 1][0]:
            placement.cut.append(item)
        end = hi
    return k, MqmError(error.category, error.severity, (Span(where.side, start - lo, end - lo),), error.note)


def _document_data(items: Mapping[int, Mapping[str, Any]], cands: Mapping[int, Mapping[str, Any]],
                   rated: list[tuple[tuple[int, int, int], int, str, list[dict[str, Any]]]]) -> MqmData:
    """A document-unit study's ratings, one segment per sentence of a block (module docstring)."""
    blocks = _document_layout(items, cands)
    placement = _Placement()
    ratings: list[tuple[tuple[int, int, int, int], int, int, str, tuple[MqmError, ...]]] = []
    for (item_pk, cand_position, sequence), cand_pk, rater, spans in rated:
        block, cand, item = blocks[item_pk], cands[cand_pk], items[item_pk]
        ext = item["external_id"]
        per_sentence: dict[int, list[MqmError]] = {}
        for span in spans:
            bounds = block.source if span.get("side") == "source" else block.targets[cand_pk]
            k, error = _place(span, bounds, ext, item["source"], cand["text"], placement)
            per_sentence.setdefault(k, []).append(error)
        for k in range(len(block.seg_ids)):
            ratings.append(((item_pk, k, cand_position, sequence), cand_pk, k, _one_line(rater, "rater", ext),
                            tuple(per_sentence.get(k, ()))))
    ratings.sort(key=lambda r: r[0])
    segments: list[Segment] = []
    seg_index: dict[tuple[int, int], int] = {}
    judgments: list[TsvJudgment] = []
    for (item_pk, *_), cand_pk, k, rater, errors in ratings:
        if (cand_pk, k) not in seg_index:
            block, cand, item = blocks[item_pk], cands[cand_pk], items[item_pk]
            ext = item["external_id"]
            lo, hi = block.source[k] if item["source"] else (0, 0)
            t_lo, t_hi = block.targets[cand_pk][k]
            seg_index[(cand_pk, k)] = len(segments)
            segments.append(Segment(_one_line(cand["system"], "system", ext), block.doc, block.doc_ids[k],
                                    _one_line(block.seg_ids[k], "id", ext),
                                    _one_line(item["source"][lo:hi], "source", ext),
                                    _one_line(cand["text"][t_lo:t_hi], "text", ext)))
        judgments.append(TsvJudgment(seg_index[(cand_pk, k)], rater, errors))
    has_note = any(e.note for j in judgments for e in j.errors)
    return MqmData(segments, judgments, extra_column="comment" if has_note else None, header=True,
                   warnings=placement.warnings())


def mqm_tsv_data(study: Study) -> MqmData:
    """The study's current judgments as :class:`MqmData` (segments = rated candidates, in item then system order;
    for a document-unit study, rated candidates' sentences)."""
    if not study.spec.exports_mqm_tsv:
        raise MqmExportError(f"--format {FORMAT}: only an mqm study can be written in this format "
                             f"({study.slug} is {study.protocol})")
    items = {i["pk"]: i for i in Item.objects.filter(study=study, is_spam=False)
             .values("pk", "external_id", "document_id", "position", "source", "source_sentences", "metadata")}
    cands = {c["pk"]: c for c in Candidate.objects.filter(item__in=items.keys(), is_spam=False)
             .values("pk", "item_id", "system", "text", "sentences", "position")}
    raters = {a["pk"]: (a["sequence"], a["external_id"] or a["code"])
              for a in Annotator.objects.filter(study=study).values("pk", "sequence", "external_id", "code")}
    suggested = study_suggestions(study)
    rated: list[tuple[tuple[int, int, int], int, str, list[dict[str, Any]]]] = []
    origins: dict[tuple[int, str], list[tuple[str, str | None]]] = {}
    deleted: dict[tuple[int, str], list[dict[str, Any]]] = {}
    decoys = {r.public_id for rows in suggested.values() for r in rows if r.is_decoy}
    for row in (Judgment.objects.filter(assignment__item__in=items.keys(), is_current=True)
                .values("assignment__annotator_id", "assignment__item_id", "answer").iterator(chunk_size=2000)):
        annotator = raters[row["assignment__annotator_id"]]
        for key, entry in ((row["answer"] or {}).get("annotations") or {}).items():
            cand = cands.get(int(key))
            if cand is None or not isinstance(entry, dict):
                continue
            order = (row["assignment__item_id"], cand["position"], annotator[0])
            rated.append((order, cand["pk"], annotator[1], list(entry.get("spans") or [])))
            if suggested:
                origins[(cand["pk"], annotator[1])] = span_origins(row["answer"], list(entry.get("spans") or []),
                                                                   suggested.get(cand["pk"], []))
                deleted[(cand["pk"], annotator[1])] = _deleted(row["answer"], suggested.get(cand["pk"], []))
    rated.sort(key=lambda r: r[0])
    if study.unit == Unit.DOCUMENT:
        return _document_data(items, cands, rated)
    if suggested:
        # The automatic system's own spans as one more rater, named by its --source (decoys are not its).
        record = PrefillSource.objects.get(study=study)
        ai_rated = set(record.clean_candidates) | {pk for pk, rows in suggested.items()
                                                   if any(not r.is_decoy for r in rows)}
        for pk in sorted(ai_rated):
            if pk in cands:
                cand = cands[pk]
                spans = [r.as_span() for r in suggested.get(pk, []) if not r.is_decoy]
                rated.append(((cand["item_id"], cand["position"], -1), pk, record.name, spans))
                origins[(pk, record.name)] = [("suggestion", r.public_id)
                                              for r in suggested.get(pk, []) if not r.is_decoy]
        rated.sort(key=lambda r: r[0])
    segments: list[Segment] = []
    seg_index: dict[int, int] = {}
    judgments: list[TsvJudgment] = []
    has_note = False
    for _, cand_pk, rater, spans in rated:
        cand = cands[cand_pk]
        item = items[cand["item_id"]]
        if cand_pk not in seg_index:
            doc, doc_id, seg_id = _segment_ids(item)
            ext = item["external_id"]
            seg_index[cand_pk] = len(segments)
            segments.append(Segment(_one_line(cand["system"], "system", ext), _one_line(doc, "document", ext),
                                    _one_line(doc_id, "position", ext), _one_line(seg_id, "id", ext),
                                    _one_line(item["source"], "source", ext), _one_line(cand["text"], "text", ext)))
        errors = tuple(_error(s, item["external_id"], item["source"], cand["text"]) for s in spans)
        note = ""
        if suggested:
            errors = tuple(_with_origin(e, origin, decoys) for e, origin in zip(errors, origins.get((cand_pk, rater), [])))
            gone = deleted.get((cand_pk, rater))
            if gone and errors:
                meta = {**json.loads(errors[0].note), "deleted_suggestions": gone}
                errors = (MqmError(errors[0].category, errors[0].severity, errors[0].spans,
                                   json.dumps(meta, ensure_ascii=False)), *errors[1:])
            elif gone:
                note = json.dumps({"deleted_suggestions": gone}, ensure_ascii=False)
        has_note = has_note or any(e.note for e in errors)
        judgments.append(TsvJudgment(seg_index[cand_pk], _one_line(rater, "rater", item["external_id"]), errors,
                                     note))
    extra = "metadata" if suggested else ("comment" if has_note else None)
    return MqmData(segments, judgments, extra_column=extra, header=True)


def _deleted(answer: Mapping[str, Any], rows: list[Any]) -> list[dict[str, Any]]:
    """The suggestions of a candidate this answer deleted, as spans with their id and decoy flag (researchers only)."""
    out = []
    for entry in candidate_suggestions(dict(answer or {}), rows):
        if entry["fate"] == "deleted":
            span = {k: entry[k] for k in ("start", "end", "side", "severity", "category") if k in entry}
            out.append({"suggestion": entry["id"], **span, "decoy": entry["decoy"]})
    return out


def _with_origin(error: MqmError, origin: tuple[str, str | None], decoys: set[str]) -> MqmError:
    """An error row of a study with suggestions: its ``metadata`` column says where the span came from
    (``{"span_source": "annotator" | "kept" | "edited" | "suggestion", "suggestion": id, "decoy": true, "note": …}``;
    ``decoy`` only on a kept or edited decoy)."""
    meta: dict[str, Any] = {"span_source": origin[0]}
    if origin[1]:
        meta["suggestion"] = origin[1]
        if origin[1] in decoys:
            meta["decoy"] = True
    if error.note:
        meta["note"] = error.note
    return MqmError(error.category, error.severity, error.spans, json.dumps(meta, ensure_ascii=False))


def mqm_tsv_text(study: Study) -> tuple[str, int, list[str]]:
    """The TSV text of the study, its number of rows (header excluded) and what the export had to change."""
    data = mqm_tsv_data(study)
    try:
        text = format_mqm_tsv(data)
    except ValueError as exc:  # overlapping spans within one row cannot happen: one span a row
        raise MqmExportError(str(exc)) from None
    return text, max(0, text.count("\n") - 1), list(data.warnings)
