"""The document view of a document-unit item: aligned sentence rows and the document around the block.

Row *i* of the view holds source sentence *i* and every candidate's sentence
*i* (templates/annotation/_document_source.html and the candidate cards share
one CSS grid, static/css/document.css). Columns shorter than the longest are
padded with empty cells, so rows never shift.

What the surrounding document shows (docs/ranking.md, "Document view"): with
``show_source`` the earlier blocks' source text, as BlonDe's adequacy condition
presents the source document; without it only where the block sits (block k of
n) and the item's own target-side context, because the earlier blocks' target
side is other systems' output or the hidden reference (BlonDe's fluency
condition shows neither source nor reference).
"""
from __future__ import annotations

from typing import Any

from django.utils.safestring import SafeString

from studies.models import Candidate, Item, Study
from studies.sentences import lines_of, shown_sentences
from studies.typography import shown_candidate

from annotation import selectors
from annotation.rendering import highlighted_sentences


def document_screen(*, item: Item, study: Study, cands: list[Candidate],
                    candidate_views: list[dict[str, Any]]) -> dict[str, Any]:
    """Template context of the document view; pads each candidate view's ``lines`` to the common row count."""
    source_rows: list[str] = lines_of(item.source, item.source_sentences) if study.show_source else []
    normalise = study.normalise_typography  # the candidates' typography, as on every screen (studies/typography.py)
    cand_rows: list[list[SafeString]] = [
        highlighted_sentences(*shown_candidate(text=c.text, highlights=c.highlights, normalise=normalise),
                              shown_sentences(c.sentences, normalise=normalise))
        for c in cands]
    rows = max([len(source_rows)] + [len(r) for r in cand_rows])
    for view, lines in zip(candidate_views, cand_rows):
        view["lines"] = lines + [SafeString("")] * (rows - len(lines))
    blocks = selectors.document_blocks(item=item, with_texts=study.show_source)
    earlier = [{"number": k, "lines": lines_of(b.source, b.source_sentences)}
               for k, b in enumerate(blocks.earlier, start=1)]
    context = list(item.source_context) if study.show_source else list(item.target_context)
    return {
        "rows": rows,
        "source_lines": source_rows + [""] * (rows - len(source_rows)) if source_rows else [],
        "number": blocks.number,
        "total": blocks.total,
        "earlier": earlier,
        "context": context,
        "has_earlier": bool(earlier or context),
    }
