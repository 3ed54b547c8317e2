"""The document view of a document-unit item: aligned sentence rows and the document around the block.

Row *i* of the view holds source sentence *i* and every candidate's sentence
*i* (templates/annotation/_document_source.html and the candidate cards share
one CSS grid, static/css/document.css). Columns shorter than the longest are
padded with empty cells, so rows never shift.

What the surrounding document shows (docs/ranking.md, "Document view"): where
the block sits (block k of n), the item's own context, and the earlier blocks.
With ``show_source`` the earlier blocks are their source text, as BlonDe's
adequacy condition presents the source document. Without it (BlonDe's fluency
condition, DiP A.2's coherence ranking) they are each candidate's *own* earlier
blocks: BlonDe App. D presents "entire documents", one per system, in "the same
ordering of systems ... within a document" (annotation.handout.services.candidate_order_for),
so the column under letter A continues the text letter A had on the earlier
screens. Every candidate gets its own earlier text, the reference like any
system, so nothing favours or singles out one of them; the texts go through the
same typography normalisation as the candidates (studies/definition/typography.py). A spam
copy's scrambled candidate keeps its system's name, so it shows that system's
real earlier blocks, like the item it copies.

Long documents start collapsed: more than ``OPEN_LINES`` earlier lines in a
column, or more than ``OPEN_TOTAL_LINES`` earlier and current rows together (a
long block being judged needs the window). Short ones start open, in a box of
bounded height (static/css/annotate.css), so the sentence grid and Submit still
fit the window.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q
from django.utils.safestring import SafeString

from studies.models import Candidate, Item, Study
from studies.definition.sentences import lines_of, shown_sentences
from studies.definition.typography import shown_candidate

from annotation.items.rendering import highlighted_sentences


@dataclass
class DocumentBlocks:
    earlier: list[Item]  # the earlier blocks (only when their texts were asked for)
    number: int  # this block's number in its document, from 1
    total: int  # blocks in the document


def document_blocks(*, item: Item, with_texts: bool) -> DocumentBlocks:
    """The blocks before ``item`` in its document (oldest first), its number and the document's length.

    Items of one document are handed out in (position, pk) order, so these are
    the blocks the annotator judged just before. A spam copy stands in for its
    real item: it shows the same document around it, so nothing sets it apart.
    """
    real = item.spam_of if item.is_spam and item.spam_of_id else item
    assert real is not None
    if not real.document_id:
        return DocumentBlocks(earlier=[], number=1, total=1)
    same = Item.objects.filter(study_id=real.study_id, document_id=real.document_id, is_spam=False)
    earlier_qs = same.filter(Q(position__lt=real.position) | Q(position=real.position, pk__lt=real.pk))
    total = same.count()
    if not with_texts:
        return DocumentBlocks(earlier=[], number=earlier_qs.count() + 1, total=total)
    earlier = list(earlier_qs.order_by("position", "pk").only("pk", "source", "source_sentences"))
    return DocumentBlocks(earlier=earlier, number=len(earlier) + 1, total=total)


#: The earlier blocks start open when no column has more earlier lines than this ...
OPEN_LINES = 6
#: ... and the earlier lines and this block's rows together are at most this; else collapsed.
OPEN_TOTAL_LINES = 16


def _candidate_rows(cand: Candidate, *, normalise: bool) -> list[SafeString]:
    """A candidate's sentences as the document view shows them (typography as on every screen, highlights marked)."""
    return highlighted_sentences(*shown_candidate(text=cand.text, highlights=cand.highlights, normalise=normalise),
                                 shown_sentences(cand.sentences, normalise=normalise))


def _plain_rows(cand: Candidate, *, normalise: bool) -> list[str]:
    """The same rows as plain text (the API): typography as on every screen, no marks."""
    text, _spans = shown_candidate(text=cand.text, highlights=cand.highlights, normalise=normalise)
    return lines_of(text, shown_sentences(cand.sentences, normalise=normalise))


def _earlier_by_system(earlier: list[Item]) -> dict[int, dict[str, Candidate]]:
    """The earlier blocks' real candidates, by block pk and system: one query for all of them."""
    if not earlier:
        return {}
    rows = Candidate.objects.filter(item_id__in=[b.pk for b in earlier], is_spam=False).only(
        "item_id", "system", "text", "sentences", "highlights")
    by_block: dict[int, dict[str, Candidate]] = {}
    for cand in rows:
        by_block.setdefault(cand.item_id, {})[cand.system] = cand
    return by_block


def earlier_columns(*, earlier: list[Item], cands: list[Candidate], letters: list[str],
                    normalise: bool) -> list[list[dict[str, Any]]]:
    """Per earlier block, each on-screen candidate's own text of that block (matched by system), in screen order.

    A system missing from an earlier block gets an empty column (``lines`` = []).
    """
    by_block = _earlier_by_system(earlier)
    blocks = []
    for block in earlier:
        systems = by_block.get(block.pk, {})
        blocks.append([{"letter": letter, "lines": _candidate_rows(systems[c.system], normalise=normalise)
                        if c.system in systems else []} for c, letter in zip(cands, letters)])
    return blocks


def earlier_payload(*, earlier: list[Item], study: Study, cands: list[Candidate]) -> list[dict[str, Any]]:
    """The API's ``document.previous``: per earlier block, its source sentences (with the source) or each
    on-screen candidate's own sentences of that block, keyed by the candidate's opaque id (without it)."""
    if study.show_source:
        return [{"source_sentences": lines_of(b.source, b.source_sentences), "candidates": []} for b in earlier]
    by_block = _earlier_by_system(earlier)
    normalise = study.normalise_typography
    return [{"source_sentences": [],
             "candidates": [{"id": c.public_id,
                             "sentences": _plain_rows(by_block[b.pk][c.system], normalise=normalise)
                             if c.system in by_block.get(b.pk, {}) else []} for c in cands]}
            for b in earlier]


def document_screen(*, item: Item, study: Study, cands: list[Candidate],
                    candidate_views: list[dict[str, Any]]) -> dict[str, Any]:
    """Template context of the document view; pads each candidate view's ``lines`` to the common row count."""
    source_rows: list[str] = lines_of(item.source, item.source_sentences) if study.show_source else []
    normalise = study.normalise_typography  # the candidates' typography, as on every screen (studies/definition/typography.py)
    cand_rows: list[list[SafeString]] = [
        highlighted_sentences(*shown_candidate(text=c.text, highlights=c.highlights, normalise=normalise),
                              shown_sentences(c.sentences, normalise=normalise))
        for c in cands]
    rows = max([len(source_rows)] + [len(r) for r in cand_rows])
    for view, lines in zip(candidate_views, cand_rows):
        view["lines"] = lines + [SafeString("")] * (rows - len(lines))
    blocks = document_blocks(item=item, with_texts=True)
    earlier: list[dict[str, Any]]
    if study.show_source:
        source_blocks = [lines_of(b.source, b.source_sentences) for b in blocks.earlier]
        earlier = [{"number": k, "lines": lines, "columns": []} for k, lines in enumerate(source_blocks, start=1)]
        longest = sum(len(lines) for lines in source_blocks)
    else:
        columns = earlier_columns(earlier=blocks.earlier, cands=cands,
                                  letters=[view["letter"] for view in candidate_views], normalise=normalise)
        earlier = [{"number": k, "lines": [], "columns": cols} for k, cols in enumerate(columns, start=1)]
        longest = max((sum(len(block[i]["lines"]) for block in columns) for i in range(len(cands))), default=0)
    context = list(item.source_context) if study.show_source else list(item.target_context)
    return {
        "rows": rows,
        "source_lines": source_rows + [""] * (rows - len(source_rows)) if source_rows else [],
        "number": blocks.number,
        "total": blocks.total,
        "earlier": earlier,
        "context": context,
        "has_earlier": bool(earlier or context),
        "earlier_open": bool(earlier) and longest <= OPEN_LINES and longest + rows <= OPEN_TOTAL_LINES,
        "single_candidate": len(cands) == 1,
    }
