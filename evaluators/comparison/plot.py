"""Layout of the small server-rendered scatter plot (human vs evaluator system scores).

Pure geometry: returns coordinates and tick labels for the template to draw
as SVG, so the page needs no JavaScript and no plotting library.
"""
from __future__ import annotations

from typing import Any

WIDTH, HEIGHT = 300, 220
LEFT, RIGHT, TOP, BOTTOM = 52, 40, 14, 40  # room on the right for labels


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
        "points": (placed := _place_labels([{"system": s, "x": round(fx(x), 1), "y": round(fy(y), 1),
                                              "hx": _fmt(x), "hy": _fmt(y)} for s, x, y in points])),
        "unlabelled": [p for p in placed if not p["labelled"]],
    }


#: The labels' font size in the page (static/css/compare.css ``.pt-label``) and a generous average glyph width
#: of the sans-serif fonts at that size: a label's box is estimated, not measured (no browser here).
LABEL_FONT = 9.0
GLYPH = 0.62 * LABEL_FONT
POINT_R = 4.0
#: Where a label may go around its point, tried in this order: (dx, dy of the text's baseline, text-anchor).
#: The first eight touch their point; the rest sit further out and get a leader line to it.
_SPOTS = ((6, -6, "start"), (6, 10, "start"), (-6, -6, "end"), (-6, 10, "end"), (0, -8, "middle"),
          (0, 15, "middle"), (9, 3, "start"), (-9, 3, "end"),
          (10, -18, "start"), (10, 22, "start"), (-10, -18, "end"), (-10, 22, "end"), (0, -30, "middle"),
          (0, 36, "middle"), (14, -30, "start"), (14, 34, "start"), (-14, -30, "end"), (-14, 34, "end"))
_TOUCHING = 8

Box = tuple[float, float, float, float]  # x0, y0, x1, y1


def _label_box(x: float, y: float, text: str, anchor: str) -> Box:
    width = GLYPH * len(text)
    x0 = x if anchor == "start" else x - width if anchor == "end" else x - width / 2
    return (x0, y - LABEL_FONT, x0 + width, y + 2)  # from the cap height to just below the baseline


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _place_labels(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each point's label put where it overlaps no other label, no point and stays inside the figure.

    Greedy, points from left to right: the first free spot of :data:`_SPOTS` (a far one gets a ``leader``
    line). A label with no free spot is not drawn (``labelled`` False): the template lists those points under
    the plot with their values, so every system is named once, readably, and no name sits on another.
    """
    dots = [(p["x"] - POINT_R, p["y"] - POINT_R, p["x"] + POINT_R, p["y"] + POINT_R) for p in points]
    taken: list[Box] = []
    out: list[dict[str, Any]] = [{} for _ in points]
    for k in sorted(range(len(points)), key=lambda i: (points[i]["x"], points[i]["y"])):
        p = points[k]
        out[k] = {**p, "labelled": False, "lx": None, "ly": None, "anchor": None, "leader": None}
        for n, (dx, dy, anchor) in enumerate(_SPOTS):
            lx, ly = p["x"] + dx, p["y"] + dy
            box = _label_box(lx, ly, p["system"], anchor)
            inside = box[0] >= 0 and box[2] <= WIDTH and box[1] >= 0 and box[3] <= HEIGHT - BOTTOM + 2
            if inside and not any(_overlaps(box, t) for t in taken) and not any(_overlaps(box, d) for d in dots):
                taken.append(box)
                end_y = ly + 2 if dy < 0 else ly - LABEL_FONT  # the label's edge facing the point
                leader = None if n < _TOUCHING else {"x": round(lx, 1), "y": round(end_y, 1)}
                out[k] = {**p, "labelled": True, "lx": round(lx, 1), "ly": round(ly, 1), "anchor": anchor,
                          "leader": leader}
                break
    return out
