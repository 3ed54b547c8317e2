"""Pilots for :mod:`evaluators.stats.planning`, read from the files ``replay`` reads (MQM TSV, long CSV, mt-metrics-eval)."""
from __future__ import annotations

import pandas as pd

from evaluators.stats.mqm import WMT_WEIGHTS, MqmWeights, mqm_segment_scores
from evaluators.stats.planning import Pilot, PlanningError, pilot_from_ratings
from evaluators.stats.replay_data import from_score_table, mqm_item_label
from formats.mqm_tsv import MqmData
from formats.mtme import ScoreTable


def pilot_from_mqm(data: MqmData, *, weights: MqmWeights = WMT_WEIGHTS,
                   seconds_per_judgment: float | None = None) -> Pilot:
    """An MQM TSV file: one rating per (system, item, rater), minus its MQM score (higher is better).

    The file has no times: ``seconds_per_judgment`` (given by the researcher) is used as the median.
    """
    rows = pd.DataFrame(data.rows())
    if rows.empty:
        raise PlanningError("the file has no ratings")
    scores = mqm_segment_scores(rows, weights)
    labels = [mqm_item_label(*k) for k in data.item_keys()]
    ratings = pd.DataFrame({"system": scores["system"].astype(str),
                            "item": [labels[int(i)] for i in scores["segment"]],
                            "rater": scores["rater"].astype(str), "score": -scores["score"].astype(float)})
    pilot = pilot_from_ratings(ratings)
    return _with_seconds(pilot, seconds_per_judgment)


def pilot_from_table(table: ScoreTable, *, human: str, seconds_per_judgment: float | None = None) -> Pilot:
    """A long CSV or an mt-metrics-eval layout: the ``human`` scorer's scores (no per-rater data, no times)."""
    return Pilot.from_complete(from_score_table(table, human=human), seconds_per_judgment=seconds_per_judgment)


def _with_seconds(pilot: Pilot, seconds: float | None) -> Pilot:
    if seconds is None:
        return pilot
    return Pilot(pilot.systems, pilot.items, pilot.scores, pilot.raters_per_cell, pilot.within_variance, seconds,
                 pilot.dropped_items)
