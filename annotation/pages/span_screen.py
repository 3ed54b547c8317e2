"""The item page of the span protocols (MQM, ESA, DA): segments with their offsets, taxonomy, marks to pre-fill.

The page marks error spans as character offsets into the candidate's stored
text (side "target") or the item's source (side "source"). The browser works on
the text as shown, which differs from the stored one only when the study
normalises typography ("…" becomes "..."): :func:`shown_offsets` and
:func:`stored_offset` translate between the two, so the offsets the server
validates and stores are always into the stored text.

Each text is cut into segments (a document block's sentences, a sentence item's
whole text), each rendered with its start offset (``data-start``): the script
maps a selection to ``segment start + characters before it in the segment``,
so markup inside a segment never shifts an offset. Only annotator-safe data
goes in (opaque public ids, letters, texts), never system names or flags.
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy, pgettext_lazy

from studies.definition import taxonomy as tx
from studies.definition.languages import writes_words_with_spaces
from studies.models import Candidate, Item, Study
from studies.definition.sentences import sentence_spans, shown_sentences
from studies.definition.typography import normalise_text

#: Severity wording and keys (the keys stay Latin letters and digits in every language).
SEVERITY_TEXT: dict[str, tuple[Promise, tuple[str, ...]]] = {
    "minor": (pgettext_lazy("error severity", "Minor"), ("1", "m")),
    "major": (pgettext_lazy("error severity", "Major"), ("2", "M")),
    "critical": (pgettext_lazy("error severity", "Critical"), ("3", "c")),
    "neutral": (pgettext_lazy("error severity", "Neutral"), ("n",)),
}

#: The slider's anchors as WMT24's ESA interface labels them (Kocmi et al. 2024).
ANCHOR_TEXT: dict[int, Promise] = {
    0: gettext_lazy("No meaning preserved"),
    33: gettext_lazy("Some meaning preserved"),
    66: gettext_lazy("Most meaning preserved, few grammar mistakes"),
    100: gettext_lazy("Perfect meaning and grammar"),
}

#: The nudge before submit (Pearmut's): a score below NUDGE_LOW with no error marked, or above
#: NUDGE_HIGH with a major (or critical) error, asks once whether that is meant.
NUDGE_LOW, NUDGE_HIGH = 34, 66



def shown_offsets(text: str, normalise: bool) -> list[int]:
    """``offsets[k]``: where stored character k starts in the shown text (``len(text) + 1`` entries)."""
    if not normalise:
        return list(range(len(text) + 1))
    return normalise_text(text)[1]


def stored_offset(offsets: list[int], shown: int, *, end: bool) -> int:
    """The stored offset of a shown one; inside a character shown as several ("…" → "..."), the whole character."""
    k = bisect.bisect_right(offsets, shown) - 1
    if k < 0:
        return 0
    if end and offsets[k] < shown and k + 1 < len(offsets):
        return k + 1
    return k


def _segments(text: str, sentences: list[str] | None) -> list[dict[str, Any]]:
    """A text cut into the rows the page shows: its sentences (with their offsets), else its lines."""
    spans = sentence_spans(text, sentences) if sentences else None
    if spans is None:
        spans, pos = [], 0
        for line in text.split("\n"):
            spans.append((pos, pos + len(line)))
            pos += len(line) + 1
    return [{"start": a, "text": text[a:b]} for a, b in spans]


def _shown_candidate(cand: Candidate, normalise: bool) -> tuple[str, list[str] | None]:
    text = normalise_text(cand.text)[0] if normalise else cand.text
    sentences = shown_sentences(cand.sentences, normalise=normalise) if cand.sentences else None
    return text, sentences


def _marks_shown(entry: dict[str, Any], offsets: list[int]) -> dict[str, Any]:
    """A stored (or refused) answer of one candidate with target offsets moved to the shown text."""
    out: dict[str, Any] = {}
    spans = entry.get("spans")
    if isinstance(spans, list):
        moved = []
        for span in spans:
            if not isinstance(span, dict):
                continue
            span = dict(span)
            if span.get("side", "target") == "target":
                for key in ("start", "end"):
                    value = span.get(key)
                    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(offsets):
                        span[key] = offsets[value]
            moved.append(span)
        out["spans"] = moved
    if "score" in entry:
        out["score"] = entry["score"]
    return out


def candidate_errors(messages: list[str], letters: dict[str, str]) -> tuple[dict[str, list[str]], list[str]]:
    """The server's messages split by the candidate they name (public id → its messages), and the rest.

    A message naming several candidates ("Every candidate needs an answer; 2
    missing (x, y).") goes to each of them; ids become the on-screen letters.
    """
    by_candidate: dict[str, list[str]] = {}
    general: list[str] = []
    for message in messages:
        named = [pid for pid in letters if re.search(rf"(?<![\w-]){re.escape(pid)}(?![\w-])", message)]
        shown = message
        for pid in named:
            shown = shown.replace(f"candidate {pid}", f"candidate {letters[pid]}").replace(pid, letters[pid])
        if not named:
            general.append(shown)
        for pid in named:
            by_candidate.setdefault(pid, []).append(shown)
    return by_candidate, general


def severity_views(study: Study) -> list[dict[str, Any]]:
    """The study's severities with their wording and keys, in the study's order."""
    return [{"value": s, "text": SEVERITY_TEXT[s][0], "keys": SEVERITY_TEXT[s][1]}
            for s in study.effective_severities() if s in SEVERITY_TEXT]


def span_keys(study: Study) -> dict[str, Any]:
    """What the keyboard legend (``_keys.html``) needs on a span study's start page; {} for other protocols."""
    if not study.is_span_protocol:
        return {}
    return {"uses_spans": study.uses_spans, "uses_score": study.uses_score,
            "is_mqm": bool(study.effective_taxonomy()), "severities": severity_views(study)}


def snap_to_words(study: Study, item: Item) -> dict[str, bool]:
    """Per side, whether a mouse or touch selection grows to whole words: the study's ``snap_to_words``, or
    (blank) yes unless that side's language is written without spaces (Chinese, Japanese, Thai…)."""
    if study.snap_to_words is not None:
        return {"target": study.snap_to_words, "source": study.snap_to_words}
    return {"target": writes_words_with_spaces(item.target_language or study.target_language),
            "source": writes_words_with_spaces(item.source_language or study.source_language)}


def _suggestions_shown(cands: list[Candidate], suggestions: Sequence[Any], fates: Any,
                       normalise: bool) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The suggestions as the page draws them (target offsets into the shown text), and the fates already given
    (a revision's, or a refused post's) likewise: only opaque ids, letters of nothing else (no source name,
    no score, nothing that tells a decoy apart)."""
    by_pk = {c.pk: c for c in cands}
    offsets = {c.pk: shown_offsets(c.text, normalise) for c in cands}
    shown = []
    for row in suggestions:
        cand = by_pk.get(row.candidate_id)
        if cand is None:
            continue
        span = _marks_shown({"spans": [row.as_span()]}, offsets[cand.pk])["spans"][0]
        shown.append({"id": row.public_id, "candidate": cand.public_id, **span})
    given: dict[str, Any] = {}
    owner = {s["id"]: s["candidate"] for s in shown}
    if isinstance(fates, dict):
        for sid, fate in fates.items():
            if sid not in owner or not isinstance(fate, dict):
                continue
            if fate.get("fate") == "edited":
                pk = next(c.pk for c in cands if c.public_id == owner[sid])
                moved = _marks_shown({"spans": [{k: v for k, v in fate.items() if k != "fate"}]}, offsets[pk])
                given[sid] = {"fate": "edited", **moved["spans"][0]}
            else:
                given[sid] = {"fate": fate.get("fate")}
    return shown, given


def span_screen(*, study: Study, item: Item, cands: list[Candidate], candidate_views: list[dict[str, Any]],
                answer: dict[str, Any] | None, show_source: bool, suggestions: Sequence[Any] = ()) -> dict[str, Any]:
    """The span page's part of the item context; adds ``segments``, ``source_segments`` to each candidate view."""
    normalise = study.normalise_typography
    source_segments = _segments(item.source, item.source_sentences) if show_source and item.source else []
    annotations = (answer or {}).get("annotations") or {}
    initial: dict[str, Any] = {}
    for cand, view in zip(cands, candidate_views):
        text, sentences = _shown_candidate(cand, normalise)
        view["segments"] = _segments(text, sentences)
        rows = max(len(view["segments"]), len(source_segments))
        view["rows"] = [{"target": view["segments"][k] if k < len(view["segments"]) else None,
                         "source": source_segments[k] if k < len(source_segments) else None}
                        for k in range(rows)]
        entry = annotations.get(cand.public_id)
        if isinstance(entry, dict):
            initial[cand.public_id] = _marks_shown(entry, shown_offsets(cand.text, normalise))
            view["score"] = initial[cand.public_id].get("score")
            view["no_error"] = initial[cand.public_id].get("spans") == []
    severities = study.effective_severities()
    shown, fates = _suggestions_shown(cands, suggestions, (answer or {}).get("suggestions"), normalise)
    return {
        "span_page": True,
        "has_suggestions": bool(shown),
        "uses_spans": study.uses_spans,
        "uses_score": study.uses_score,
        # "is_mqm": spans carry a category from the study's taxonomy (MQM's), not only a severity (ESA's).
        "is_mqm": bool(study.effective_taxonomy()),
        "mark_source": study.spec.source_spans_allowed(study) and bool(source_segments),
        "has_source_column": bool(source_segments),
        "taxonomy": study.effective_taxonomy(),
        # The default taxonomy is English; a study's own is in the study's wording language.
        "taxonomy_lang": study.wording_language() if study.taxonomy else "en",
        "severities": severity_views(study),
        "anchors": [{"value": v, "text": ANCHOR_TEXT[v]} for v in tx.SCORE_ANCHORS],
        "score_min": tx.SCORE_MIN,
        "score_max": tx.SCORE_MAX,
        "allow_overlap": study.allow_overlap,
        "span_config": {
            "protocol": study.protocol, "spans": study.uses_spans, "score": study.uses_score,
            "overlap": study.allow_overlap, "severities": severities,
            "categories": [c["name"] for c in study.effective_taxonomy()], "initial": initial,
            "nudgeLow": NUDGE_LOW, "nudgeHigh": NUDGE_HIGH, "snap": snap_to_words(study, item),
            "suggestions": shown, "fates": fates,
        },
    }
