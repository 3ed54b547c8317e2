"""Layout of the small server-rendered scatter plot (human vs evaluator system scores).

Pure geometry: returns coordinates and tick labels for the template to draw
as SVG, so the page needs no JavaScript and no plotting library.
"""
from __future__ import annotations

from typing import Any

WIDTH, HEIGHT = 300, 220
LEFT, RIGHT, TOP, BOTTOM = 52, 40, 14, 40  # room on the right for the last point's label


def _scale(lo: float, hi: float, start: float, end: float):  # noqa: ANN202 - a small closure
    if hi == lo:  # one distinct value: put it in the middle
        return lambda v: (start + end) / 2
    return lambda v: start + (v - lo) / (hi - lo) * (end - start)


def _fmt(v: float) -> str:
    return f"{v:.3g}"


def scatter(points: list[tuple[str, float, float]], *, x_label: str, y_label: str) -> dict[str, Any] | None:
    """Points ``(system, human score, evaluator score)`` -> SVG coordinates, or None without points.

    x = human system score, y = the evaluator's system score as reported
    (so for a lower-is-better metric a good metric slopes downwards; the y
    label says which way is better).
    """
    points = [(s, x, y) for s, x, y in points if x is not None and y is not None]
    if not points:
        return None
    xs, ys = [p[1] for p in points], [p[2] for p in points]
    fx = _scale(min(xs), max(xs), LEFT + 8, WIDTH - RIGHT - 8)
    fy = _scale(min(ys), max(ys), HEIGHT - BOTTOM - 8, TOP + 8)
    return {
        "width": WIDTH, "height": HEIGHT, "left": LEFT, "right": WIDTH - RIGHT, "top": TOP, "bottom": HEIGHT - BOTTOM,
        "x_label": x_label, "y_label": y_label,
        "x_label_x": (LEFT + WIDTH - RIGHT) / 2, "x_label_y": HEIGHT - 6, "y_label_x": 12,
        "y_label_y": (TOP + HEIGHT - BOTTOM) / 2, "x_tick_y": HEIGHT - BOTTOM + 14, "y_tick_x": LEFT - 4,
        "x_ticks": [{"x": round(fx(v), 1), "label": _fmt(v)} for v in sorted({min(xs), max(xs)})],
        "y_ticks": [{"y": round(fy(v), 1), "label": _fmt(v)} for v in sorted({min(ys), max(ys)})],
        "points": [{"system": s, "x": round(fx(x), 1), "y": round(fy(y), 1), "hx": _fmt(x), "hy": _fmt(y),
                    "lx": round(fx(x) + 6, 1), "ly": round(fy(y) - 6, 1)}
                   for s, x, y in points],
    }
