"""A stored study as a planning pilot (:mod:`evaluators.stats.planning`): its segment scores and answer times.

The scores are the report's (``span_report.segment_scores``: MQM points negated, ESA/DA scores as given; one
per system, item and annotator), from the same export frame, with the report's policies for excluded
annotators and spam items (dropped); pilot annotators' judgments are *kept*, since a pilot's judgments are
what a plan is made from. The seconds per judgment are the server times (``duration_ms``: from the item's
display to the answer's arrival) divided by the candidates the answer rated, so that one judgment is one
rater's score of one system's output, as in the plan's cost.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evaluators.reports import span_report as sr
from evaluators.reports.study_stats import ReportError, stats_frame, study_export_frame
from evaluators.stats.planning import Pilot, PlanningError, pilot_from_ratings
from protocols.registry import protocol_named


def pilot_from_export(export: pd.DataFrame, *, source: str, mqm_weights: dict[str, Any] | None = None) -> Pilot:
    """The pilot of an export frame (``study_export_frame`` or an export file read back)."""
    try:
        frame, _, protocol = stats_frame(export, source=source)
    except ReportError as exc:
        raise PlanningError(str(exc)) from None
    if not protocol:
        raise PlanningError(f"{source}: no judgments yet")
    spec = protocol_named(protocol)
    if not spec.per_candidate_annotations:
        raise PlanningError(f"{source}: a {protocol} study has no segment scores; plans are made from studies "
                            "whose report ranks systems by segment scores (MQM, ESA, DA, …)")
    try:
        ratings = sr.span_ratings(frame)
    except ValueError as exc:
        raise PlanningError(f"{source}: {exc}") from None
    ratings = ratings[~ratings["excluded"].astype(bool) & ~ratings["is_spam_item"].astype(bool)]
    if ratings.empty:
        raise PlanningError(f"{source}: no scored segment yet")
    scores = sr.segment_scores(ratings, protocol, sr.weights_from(mqm_weights))
    sign = 1.0 if spec.higher_is_better else -1.0
    long = pd.DataFrame({"system": scores["system"], "item": scores["item"], "rater": scores["annotator"],
                         "score": sign * scores["score"].astype(float)})
    return pilot_from_ratings(long, seconds=seconds_per_rating(export, ratings))


def seconds_per_rating(export: pd.DataFrame, ratings: pd.DataFrame) -> list[float]:
    """Each judgment's server seconds divided by the candidates it rated (judgments without a time left out)."""
    if "duration_ms" not in export.columns:
        return []
    durations = pd.to_numeric(export[["judgment", "duration_ms"]].drop_duplicates("judgment")
                              .set_index("judgment")["duration_ms"], errors="coerce")
    rated = ratings.groupby("judgment").size()
    joined = pd.DataFrame({"ms": durations.reindex(rated.index.astype(str)).to_numpy(dtype=float),
                           "n": rated.to_numpy(dtype=float)})
    joined = joined[np.isfinite(joined["ms"]) & (joined["n"] > 0)]
    return list(joined["ms"] / 1000.0 / joined["n"])


def study_pilot(study: Any) -> Pilot:
    """The pilot of a stored study."""
    return pilot_from_export(study_export_frame(study), source=f"study {study.slug}",
                             mqm_weights=study.mqm_weights or None)
