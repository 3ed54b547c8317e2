"""An ``mqm`` study's judgments as Google's WMT MQM TSV (``export_judgments SLUG --format mqm-tsv``).

The inverse of :mod:`annotation.judgment_import_mqm`, written with the one
writer of :mod:`studies.mqm_tsv_format` (the format Marot opens): columns
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
line breaks become spaces (a TSV field cannot hold them).  A text with a tab
or a line break -- a document-unit study, whose candidates are sentences
joined by line breaks -- cannot be written in this one-line-per-segment
format: the export is refused, naming the item.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from annotation.models import Annotator, Judgment
from studies.models import Candidate, Item, Protocol, Study
from studies.mqm_tsv_format import Judgment as TsvJudgment
from studies.mqm_tsv_format import MqmData, MqmError, Segment, Span, format_mqm_tsv

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
                             "(one line per segment) cannot hold; document-unit studies cannot be exported in it")
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


def mqm_tsv_data(study: Study) -> MqmData:
    """The study's current judgments as :class:`MqmData` (segments = rated candidates, in item then system order)."""
    if study.protocol != Protocol.MQM:
        raise MqmExportError(f"--format {FORMAT}: only an mqm study can be written in this format "
                             f"({study.slug} is {study.protocol})")
    items = {i["pk"]: i for i in Item.objects.filter(study=study, is_spam=False)
             .values("pk", "external_id", "document_id", "position", "source", "metadata")}
    cands = {c["pk"]: c for c in Candidate.objects.filter(item__in=items.keys(), is_spam=False)
             .values("pk", "item_id", "system", "text", "position")}
    raters = {a["pk"]: (a["sequence"], a["external_id"] or a["code"])
              for a in Annotator.objects.filter(study=study).values("pk", "sequence", "external_id", "code")}
    rated: list[tuple[tuple[int, int, int], int, str, list[dict[str, Any]]]] = []
    for row in (Judgment.objects.filter(assignment__item__in=items.keys(), is_current=True)
                .values("assignment__annotator_id", "assignment__item_id", "answer").iterator(chunk_size=2000)):
        annotator = raters[row["assignment__annotator_id"]]
        for key, entry in ((row["answer"] or {}).get("annotations") or {}).items():
            cand = cands.get(int(key))
            if cand is None or not isinstance(entry, dict):
                continue
            order = (row["assignment__item_id"], cand["position"], annotator[0])
            rated.append((order, cand["pk"], annotator[1], list(entry.get("spans") or [])))
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
        has_note = has_note or any(e.note for e in errors)
        judgments.append(TsvJudgment(seg_index[cand_pk], _one_line(rater, "rater", item["external_id"]), errors))
    return MqmData(segments, judgments, extra_column="comment" if has_note else None, header=True)


def mqm_tsv_text(study: Study) -> tuple[str, int]:
    """The TSV text of the study and its number of rows (header excluded)."""
    data = mqm_tsv_data(study)
    try:
        text = format_mqm_tsv(data)
    except ValueError as exc:  # overlapping spans within one row cannot happen: one span a row
        raise MqmExportError(str(exc)) from None
    return text, max(0, text.count("\n") - 1)
