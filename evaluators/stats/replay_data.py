"""Complete data sets for a replay (:mod:`evaluators.stats.replay`), read from the files other tools write.

Each reader returns a :class:`~evaluators.stats.replay.CompleteData`: the items every system has a
human score for (the others are listed in ``dropped_items``), human scores higher-is-better, and the
automatic metrics' scores on the same items.
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from sacrebleu.metrics import BLEU, CHRF

from evaluators.stats.mqm import WMT_WEIGHTS, MqmWeights, mqm_segment_scores
from evaluators.stats.replay import CompleteData
from formats.mqm_tsv import MqmData
from formats.mtme import ScoreTable

#: Sentence-level metrics a replay of an MQM file computes itself, against a reference system's text.
TEXT_METRICS = ("chrF", "BLEU")


class ReplayDataError(ValueError):
    """The file cannot be replayed (the message says why)."""


def _complete_items(human: np.ndarray, items: list[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    keep = np.isfinite(human).all(axis=0)
    return keep, tuple(item for item, kept in zip(items, keep, strict=True) if not kept)


def from_score_table(table: ScoreTable, *, human: str) -> CompleteData:
    """A long CSV or an mt-metrics-eval layout: the ``human`` scorer is the human score (higher is better).

    The other scorers become metrics; a metric missing a score on a kept item is left out of ``metrics``
    (the selection methods need every system's score on every item).
    """
    if human not in table.seg:
        known = ", ".join(table.scorers) or "none"
        raise ReplayDataError(f"no scorer {human!r} (the human scores; --human NAME); scorers found: {known}")
    keep, dropped = _complete_items(table.seg[human], table.segments)
    metrics = {name: values[:, keep] for name, values in table.seg.items()
               if name != human and np.isfinite(values[:, keep]).all()}
    return _data(table.systems, [s for s, k in zip(table.segments, keep, strict=True) if k],
                 table.seg[human][:, keep], metrics, dropped)


def mqm_item_label(doc: str, doc_seg_id: str, global_seg_id: str) -> str:
    """An item's name in a replay of an MQM file: the global segment id, else document and segment."""
    return global_seg_id or f"{doc}:{doc_seg_id}"


def from_mqm(data: MqmData, *, weights: MqmWeights = WMT_WEIGHTS,
             reference_system: str | None = None) -> tuple[CompleteData, dict[str, list[str]]]:
    """An MQM TSV file: the human score of a (system, item) is minus its MQM score averaged over raters.

    With ``reference_system``, sentence chrF and BLEU (sacrebleu's defaults) of every other system
    against that system's text become the metrics, and the reference system itself is scored by the
    humans only: its metric row is the mean of the other systems' (so it adds nothing to an item's
    variance or consistency). Returns the data and each system's texts by item (for ``diversity``).
    """
    rows = pd.DataFrame(data.rows())
    if rows.empty:
        raise ReplayDataError("the file has no ratings")
    scores = mqm_segment_scores(rows, weights)
    table = scores.groupby(["system", "segment"], sort=False)["score"].mean().unstack("segment")
    keys = data.item_keys()
    systems = [str(s) for s in table.index]
    table = table.reindex(columns=range(len(keys)))
    human = -table.to_numpy(dtype=float)
    labels = [mqm_item_label(*k) for k in keys]
    keep, dropped = _complete_items(human, labels)
    item_index = {k: i for i, k in enumerate(keys)}
    texts: dict[str, list[str]] = {s: [""] * len(keys) for s in systems}
    for seg in data.segments:
        if seg.system in texts:
            texts[seg.system][item_index[(seg.doc, seg.doc_seg_id, seg.global_seg_id)]] = seg.target
    kept_texts = {s: [t for t, k in zip(v, keep, strict=True) if k] for s, v in texts.items()}
    metrics: dict[str, np.ndarray] = {}
    if reference_system is not None:
        if reference_system not in kept_texts:
            raise ReplayDataError(f"reference system {reference_system!r} is not in the file; systems: "
                                  f"{', '.join(sorted(systems))}")
        metrics = text_metrics(systems, kept_texts, reference_system)
    kept_labels = [label for label, k in zip(labels, keep, strict=True) if k]
    return _data(systems, kept_labels, human[:, keep], metrics, dropped), kept_texts


def text_metrics(systems: list[str], texts: dict[str, list[str]], reference_system: str) -> dict[str, np.ndarray]:
    """Sentence chrF and BLEU of each system's text against ``reference_system``'s (systems × items)."""
    refs = texts[reference_system]
    out: dict[str, np.ndarray] = {}
    for name, metric in (("chrF", CHRF()), ("BLEU", BLEU(effective_order=True))):
        matrix = np.zeros((len(systems), len(refs)))
        others = [i for i, s in enumerate(systems) if s != reference_system]
        for i in others:
            hyps = texts[systems[i]]
            matrix[i] = [metric.sentence_score(h, [r]).score for h, r in zip(hyps, refs, strict=True)]
        ref_row = systems.index(reference_system)
        matrix[ref_row] = matrix[others].mean(axis=0)
        out[name] = matrix
    return out


def reference_candidates(systems: Iterable[str]) -> list[str]:
    """Systems whose name says they are a human reference (``ref``, ``refA``, ``ref-B``, ``human-A``…)."""
    return [s for s in systems if s.lower().startswith(("ref", "human"))]


def _data(systems: list[str], items: list[str], human: np.ndarray, metrics: dict[str, np.ndarray],
          dropped: tuple[str, ...]) -> CompleteData:
    try:
        return CompleteData(tuple(systems), tuple(items), human, metrics, dropped)
    except ValueError as exc:
        raise ReplayDataError(f"{exc} ({len(dropped)} item(s) lacked a human score for some system)") from None


def from_cells(cells: Iterable[tuple[str, str, float]]) -> CompleteData:
    """Human scores as (system, item, score) cells, several per cell allowed (raters): the human score of a
    (system, item) is the mean of its cells' scores, higher is better; systems and items in order of first
    appearance. No metric (the files read this way carry none). The readers of this tool's export and of
    Appraise's CSV (``replay --format export|appraise-csv``) come here after the importers have parsed them."""
    systems: dict[str, int] = {}
    items: dict[str, int] = {}
    sums: dict[tuple[int, int], list[float]] = {}
    for system, item, score in cells:
        key = (systems.setdefault(system, len(systems)), items.setdefault(item, len(items)))
        sums.setdefault(key, []).append(float(score))
    if not sums:
        raise ReplayDataError("no human score to replay")
    human = np.full((len(systems), len(items)), np.nan)
    for (row, col), values in sums.items():
        human[row, col] = float(np.mean(values))
    keep, dropped = _complete_items(human, list(items))
    return _data(list(systems), [item for item, kept in zip(items, keep, strict=True) if kept], human[:, keep], {},
                 dropped)
