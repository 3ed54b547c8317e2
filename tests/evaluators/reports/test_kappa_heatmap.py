"""The kappa heat map prints n per pair and hatches pairs with too few shared items instead of a kappa."""
from __future__ import annotations

import re
from xml.etree import ElementTree

from evaluators.reports.svg import KAPPA_MIN_SHARED, kappa_heatmap_svg

NS = "{http://www.w3.org/2000/svg}"


def _cells(svg: str) -> dict[str, ElementTree.Element]:
    root = ElementTree.fromstring(svg)
    return {g.find(f"{NS}title").text: g for g in root.iter(f"{NS}g") if "kappa-cell" in g.get("class", "")}


def test_few_items_are_hatched_and_never_print_a_kappa():
    pairs = [
        {"rater_a": "a1", "rater_b": "a2", "n": 2, "value": 0.0},
        {"rater_a": "a1", "rater_b": "a3", "n": 40, "value": 0.61},
        {"rater_a": "a2", "rater_b": "a3", "n": KAPPA_MIN_SHARED, "value": 0.0},
    ]
    svg = kappa_heatmap_svg(pairs)
    cells = _cells(svg)
    assert len(cells) == 6  # both halves of the symmetric matrix
    few = [g for g in cells.values() if "few" in g.get("class")]
    assert len(few) == 2 and all(g.get("data-n") == "2" for g in few)
    for g in few:
        texts = [t.text for t in g.iter(f"{NS}text")]
        assert texts == ["n=2"] and "0.00" not in texts
        assert g.find(f"{NS}rect").get("fill") == "url(#kappa-few)"
    enough = [g for g in cells.values() if g.get("data-n") == "40"]
    assert [t.text for t in enough[0].iter(f"{NS}text")] == ["0.61", "n=40"]
    # At the threshold a pair counts: its 0.00 is a real value.
    at_threshold = [g for g in cells.values() if g.get("data-n") == str(KAPPA_MIN_SHARED)]
    assert [t.text for t in at_threshold[0].iter(f"{NS}text")] == ["0.00", f"n={KAPPA_MIN_SHARED}"]
    assert f"n &lt; {KAPPA_MIN_SHARED}: too few" in svg and 'id="kappa-few"' in svg


def test_threshold_is_a_parameter_and_titles_say_why():
    svg = kappa_heatmap_svg([{"rater_a": "x", "rater_b": "y", "n": 5, "value": 1.0}], min_shared=3)
    titles = list(_cells(svg))
    assert all(re.search(r": 1\.0 on 5 units", t) for t in titles)
    svg = kappa_heatmap_svg([{"rater_a": "x", "rater_b": "y", "n": 1, "value": None}])
    assert all("1 shared unit, fewer than 10: no kappa shown" in t for t in _cells(svg))
