"""The compare page's scatter plot: labels placed so that none overlaps another label or a point."""
from __future__ import annotations

import itertools

from evaluators.comparison.plot import HEIGHT, POINT_R, WIDTH, _label_box, _overlaps, scatter

# 14 systems of the WMT21 TED en-de MQM release with close scores: the labels overlapped at (x+6, y-6)
TED = [("ref", 0.91, 80.1), ("Facebook-AI", 1.06, 40.2), ("Online-W", 1.12, 39.9), ("VolcTrans-AT", 1.24, 40.0),
       ("metricsystem3", 1.44, 38.1), ("VolcTrans-GLAT", 1.49, 38.0), ("HuaweiTSC", 1.50, 38.2),
       ("metricsystem1", 1.63, 37.0), ("metricsystem2", 1.69, 37.1), ("metricsystem5", 1.72, 36.9),
       ("UEdin", 1.77, 36.0), ("metricsystem4", 1.78, 36.1), ("eTranslation", 1.97, 35.0), ("Nemo", 2.14, 34.0)]


def _boxes(plot):
    return {p["system"]: _label_box(p["lx"], p["ly"], p["system"], p["anchor"]) for p in plot["points"] if p["labelled"]}


def test_no_label_overlaps_another_label_or_a_point_and_every_system_is_named():
    plot = scatter(TED, x_label="MQM", y_label="BLEU")
    boxes = _boxes(plot)
    for (a, box_a), (b, box_b) in itertools.combinations(boxes.items(), 2):
        assert not _overlaps(box_a, box_b), (a, b)
    for name, box in boxes.items():
        assert 0 <= box[0] and box[2] <= WIDTH and 0 <= box[1] and box[3] <= HEIGHT, name
        for p in plot["points"]:
            dot = (p["x"] - POINT_R, p["y"] - POINT_R, p["x"] + POINT_R, p["y"] + POINT_R)
            assert not _overlaps(box, dot), (name, p["system"])
    unlabelled = [p["system"] for p in plot["unlabelled"]]
    assert sorted([*boxes, *unlabelled]) == sorted(s for s, _, _ in TED)  # each system named once
    assert len(boxes) >= 8 and plot["unlabelled"]  # the dense middle cannot all fit in 300 x 220 px


def test_the_old_fixed_offset_overlapped_on_the_same_data():
    """The fixed (x+6, y-6) placement put labels on top of each other: the test above is not vacuous."""
    plot = scatter(TED, x_label="MQM", y_label="BLEU")
    fixed = [_label_box(p["x"] + 6, p["y"] - 6, p["system"], "start") for p in plot["points"]]
    assert any(_overlaps(a, b) for a, b in itertools.combinations(fixed, 2))


def test_far_apart_points_keep_the_first_spot():
    plot = scatter([("A", 0.0, 0.0), ("B", 1.0, 1.0)], x_label="x", y_label="y")
    first = {p["system"]: (p["lx"] - p["x"], p["ly"] - p["y"], p["anchor"]) for p in plot["points"]}
    assert first["A"] == (6, -6, "start") and plot["unlabelled"] == []
