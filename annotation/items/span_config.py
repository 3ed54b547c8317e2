"""What a client needs to collect an MQM or ESA answer: the ``spans`` block of ``GET next``.

The answer itself is checked by ``annotation.handout.answers._validate_annotations``;
this block states the same study settings to the client, so it can offer the
right categories, severities and score scale and refuse what the server would.
Nothing in it names a system, a reference or a control item.
"""
from __future__ import annotations

from typing import Any

from studies.definition import taxonomy as tx
from studies.models import Study


def span_block(study: Study) -> dict[str, Any] | None:
    """The span-protocol settings of an item's study; None for ranking, choice and judgment studies.

    - ``spans``: whether error spans are marked (MQM always; ESA unless it is
      DA, ``esa_spans`` off — then each candidate gets a score alone);
    - ``taxonomy``: MQM's categories {name, description, examples}, a span's
      ``category`` must be one of the names (case-insensitively); [] for ESA;
    - ``severities``: the severities a span may have ([] when there are no spans);
    - ``allow_overlap``: whether spans of one text may overlap;
    - ``sides``: the texts spans may be marked in — "target" (the candidate),
      and "source" (e.g. MQM omissions) when the study shows the source;
    - ``note_max_length``: the longest optional note of a span;
    - ``score``: ESA/DA's 0–100 scale with WMT24's slider anchors (Kocmi et
      al. 2024), required for every candidate; None for MQM.
    """
    if not study.is_span_protocol:
        return None
    marks = study.uses_spans
    score = ({"min": tx.SCORE_MIN, "max": tx.SCORE_MAX, "anchors": list(tx.SCORE_ANCHORS)}
             if study.uses_score else None)
    return {
        "spans": marks,
        "taxonomy": [{"name": c["name"], "description": c.get("description", ""), "examples": list(c.get("examples", []))}
                     for c in study.effective_taxonomy()] if marks else [],
        "severities": study.effective_severities() if marks else [],
        "allow_overlap": study.allow_overlap,
        "sides": (["target", "source"] if study.show_source else ["target"]) if marks else [],
        "note_max_length": tx.NOTE_MAX_LENGTH,
        "score": score,
    }
