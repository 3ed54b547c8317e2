"""A study's allocation setting: uniform (every item to its redundancy) or adaptive (stop when settled).

The setting is ``Study.allocation`` and the study file's ``settings.allocation``: ``"uniform"`` (the
default, stored as ``{}``), ``"adaptive"``, or an object ``{"policy": "adaptive", "alpha": 0.05,
"min_effect": null, "warmup": 20, "target": "all", "close_when_settled": false, "refresh_every": 10}``
(docs/study-file.md, docs/efficient-evaluation.md
"Adaptive allocation"). This module checks and normalises the value; the statistics are
``evaluators.stats.sequential``, the live state ``evaluators.live_allocation``, the hand-out's use of it
``annotation.handout.allocation``. Pure Python.
"""
from __future__ import annotations

import math
from typing import Any

POLICIES = ("uniform", "adaptive")
TARGETS = ("all", "top")
#: The defaults of an adaptive study (the same as ``replay --allocation adaptive``'s).
DEFAULTS: dict[str, Any] = {"alpha": 0.05, "min_effect": None, "warmup": 20, "target": "all",
                            "close_when_settled": False, "refresh_every": 10}
#: The largest ``refresh_every``: the hand-out's state may be that many judgments old, less one.
MAX_REFRESH_EVERY = 1000
#: Every score a 0–100 protocol gives lies in [0, 100] (the confidence sequences need the bound in advance).
SCORE_RANGE = (0.0, 100.0)
#: MQM: minus the weighted error count of a candidate, capped at 25 (five Major errors: Freitag et al. 2021), so
#: in [−25, 0] whatever the study's weights.
MQM_CAP = 25.0
MQM_RANGE = (-MQM_CAP, 0.0)
#: Ranking and choice: a pair's observation is a preference (+1, 0, −1) as (1 + sign)/2, its mean difference
#: P(A preferred) − P(B preferred); ``min_effect`` is on that scale (below 1).
PREFERENCE_RANGE = (0.0, 1.0)


def score_range(*, uses_score: bool, per_candidate_spans: bool, preference: bool = False,
                ) -> tuple[float, float] | None:
    """The known bound of a study's per-candidate scores: 0–100 scores, else MQM's capped error score, else the
    preference scale of a protocol whose answers order the candidates (``preference``), else None (nothing to
    compare: adaptive allocation is not possible)."""
    if uses_score:
        return SCORE_RANGE
    if per_candidate_spans:
        return MQM_RANGE
    if preference:
        return PREFERENCE_RANGE
    return None
_KEYS = ("policy", *DEFAULTS)


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def allocation_errors(value: Any, field: str = "allocation", scale: tuple[float, float] = SCORE_RANGE) -> list[str]:
    """Problems of a study file's or the admin's allocation value, each naming ``field`` or its key;
    ``scale`` the study's score range (``min_effect`` is in its points)."""
    if isinstance(value, str):
        return [] if value in POLICIES else [f"{field}: {value!r} is not one of {', '.join(POLICIES)}"]
    if not isinstance(value, dict):
        return [f"{field}: \"uniform\", \"adaptive\" or an object {{\"policy\": …}}"]
    if not value:
        return []
    errors = []
    unknown = sorted(set(value) - set(_KEYS))
    if unknown:
        errors.append(f"{field}: unknown key(s) {unknown} (known: {', '.join(_KEYS)})")
    policy = value.get("policy")
    if policy not in POLICIES:
        errors.append(f"{field}.policy: required, one of {', '.join(POLICIES)}")
    if policy == "uniform" and set(value) - {"policy"}:
        errors.append(f"{field}: alpha, min_effect, warmup, target, close_when_settled and refresh_every apply to "
                      "the adaptive policy only")
    alpha = value.get("alpha", DEFAULTS["alpha"])
    if not _number(alpha) or not 0 < alpha < 1:
        errors.append(f"{field}.alpha: {alpha!r} must be a number between 0 and 1 (exclusive)")
    effect = value.get("min_effect")
    width = scale[1] - scale[0]
    if effect is not None and (not _number(effect) or not 0 < effect < width):
        errors.append(f"{field}.min_effect: {effect!r} must be null or a number above 0 and below {width:g} "
                      "(score points)")
    warmup = value.get("warmup", DEFAULTS["warmup"])
    if isinstance(warmup, bool) or not isinstance(warmup, int) or not 0 <= warmup <= 1_000_000:
        errors.append(f"{field}.warmup: {warmup!r} must be a whole number of judgments, 0 to 1000000")
    close = value.get("close_when_settled", DEFAULTS["close_when_settled"])
    if not isinstance(close, bool):
        errors.append(f"{field}.close_when_settled: {close!r} must be true or false")
    every = value.get("refresh_every", DEFAULTS["refresh_every"])
    if isinstance(every, bool) or not isinstance(every, int) or not 1 <= every <= MAX_REFRESH_EVERY:
        errors.append(f"{field}.refresh_every: {every!r} must be a whole number of judgments, 1 to "
                      f"{MAX_REFRESH_EVERY}")
    target = value.get("target", DEFAULTS["target"])
    if target not in TARGETS:
        errors.append(f"{field}.target: {target!r} is not one of {', '.join(TARGETS)}")
    return errors


def normalise_allocation(value: Any) -> dict[str, Any]:
    """The stored form of a valid value: ``{}`` for uniform, every option spelled out for adaptive."""
    if isinstance(value, str):
        value = {"policy": value}
    if not value or value.get("policy") == "uniform":
        return {}
    return {"policy": "adaptive", **{key: value.get(key, default) for key, default in DEFAULTS.items()}}


def refresh_every(value: dict[str, Any]) -> int:
    """An adaptive study's ``refresh_every`` (a study stored before the key existed: the default)."""
    return int(value.get("refresh_every", DEFAULTS["refresh_every"]))


def is_adaptive(value: Any) -> bool:
    return isinstance(value, dict) and value.get("policy") == "adaptive"
