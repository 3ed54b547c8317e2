"""Small helpers shared by the statistics modules.

Kept here so that every module turns undefined values into ``None`` and
confidence levels into percentiles the same way.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["finite_or_none", "percentile_levels"]


def finite_or_none(x: Any) -> float | None:
    """``float(x)``, or ``None`` when ``x`` is not a number or is NaN/inf.

    The reports promise that ``NaN``/``inf`` never appear in their JSON.
    """
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def percentile_levels(confidence: float) -> tuple[float, float]:
    """The two percentiles (0-100) of a two-sided percentile interval.

    ``confidence = 0.95`` gives ``(2.5, 97.5)`` (Efron & Tibshirani 1993).
    """
    return 100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2
