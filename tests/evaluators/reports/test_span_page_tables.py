"""evaluators/reports/span_page.py and span_svg.py on hand-made report dicts (no database)."""
from __future__ import annotations

from evaluators.reports import span_page, span_svg


def report(protocol: str = "mqm", uses_spans: bool = True) -> dict:
    systems = [
        {"system": "ref<A>", "rank": 1, "score": 0.5, "score_ci": [0.2, 0.8], "z": 0.7, "cluster": 1,
         "rank_range": [1, 2], "wins": 1, "losses": 0, "n_items": 4, "n_ratings": 8, "is_reference": True},
        {"system": "B", "rank": 2, "score": 0.9, "score_ci": [0.4, 1.3], "z": 0.5, "cluster": 1,
         "rank_range": [1, 2], "wins": 1, "losses": 0, "n_items": 4, "n_ratings": 8, "is_reference": False},
        {"system": "C", "rank": 3, "score": 6.0, "score_ci": None, "z": -1.2, "cluster": 2,
         "rank_range": [3, 3], "wins": 0, "losses": 2, "n_items": 4, "n_ratings": 8, "is_reference": False},
    ]
    rows = [
        {"system": "B", "category": "Discourse/Connective", "severity": "major", "count": 2, "penalty": 10.0, "per_segment": 0.25},
        {"system": "B", "category": "Discourse/Connective", "severity": "minor", "count": 1, "penalty": 1.0, "per_segment": 0.125},
        {"system": "C", "category": "Accuracy/Omission", "severity": "critical", "count": 1, "penalty": 25.0, "per_segment": 0.125},
        {"system": "C", "category": "Discourse/Pronoun reference", "severity": "minor", "count": 3, "penalty": 3.0, "per_segment": 0.375},
        {"system": "ref<A>", "category": "Style/Awkward", "severity": "minor", "count": 1, "penalty": 1.0, "per_segment": 0.125},
    ]
    return {"protocol": protocol, "policies": {"uses_spans": uses_spans}, "span_agreement": {},
            "ranking": {"systems": systems, "score": {"name": "wmt-mqm", "weights": {"minor": 1.0, "major": 5.0}}},
            "errors": {"rows": rows, "discourse_categories": ["Discourse/Connective", "Discourse/Pronoun reference"],
                       "n_errors": 8, "n_ratings": 24}}


def test_ranking_rows_flag_the_first_row_of_each_cluster_after_the_first():
    rows = span_page.ranking_rows(report())
    assert [r["cluster_start"] for r in rows] == [False, False, True]
    assert [r["rank_range_text"] for r in rows] == ["1–2", "1–2", "3"]


def test_error_matrix_puts_discourse_first_and_splits_cells_by_severity():
    m = span_page.error_matrix(report())
    assert m["systems"] == ["ref<A>", "B", "C"]
    assert [g["name"] for g in m["groups"]] == ["Discourse", "Accuracy", "Style"]
    discourse = m["groups"][0]
    assert discourse["discourse"] and [c.count for c in discourse["subtotal"]] == [0, 3, 3]
    connective = discourse["categories"][0]
    assert connective["label"] == "Connective"
    assert connective["cells"][1].split() == [("major", 2), ("minor", 1)]
    assert [t.count for t in m["totals"]] == [1, 3, 4]
    assert abs(m["totals"][2].per_segment - 0.5) < 1e-12


def test_esa_matrix_has_one_row_per_severity_worst_first():
    r = report("esa")
    m = span_page.error_matrix(r)
    assert m["flat"] and [c["label"] for c in m["groups"][0]["categories"]] == ["critical", "major", "minor"]
    assert span_page.score_kind(r) == "esa" and span_page.score_kind(report("esa", uses_spans=False)) == "da"


def test_plots_escape_names_label_groups_in_words_and_hatch_discourse():
    r = report()
    scores = span_svg.score_svg(r)
    assert "ref&lt;A&gt; (reference)" in scores and "<A>" not in scores
    assert "MQM points per segment (lower is better)" in scores
    bars = span_svg.errors_svg(r)
    assert bars.count('data-group="Discourse"') == 2  # B and C
    assert "url(#discourse-hatch)" in bars and ">Discourse</text>" in bars and ">Accuracy</text>" in bars
    assert ">Di</text>" in bars  # the legend's letters, also written on wide enough bar segments
    assert span_svg.errors_svg({**r, "errors": None}) == ""


def test_csv_tables():
    columns, rows = span_page.errors_table(report())
    assert columns[:5] == ["system", "category", "top_level", "discourse", "severity"]
    assert rows[0][:5] == ["B", "Discourse/Connective", "Discourse", True, "major"]
    columns, rows = span_page.span_ranking_table(report())
    assert rows[2][columns.index("score_ci_low")] is None and rows[0][columns.index("rank_range_high")] == 2
    assert span_page.weights_text(report()["ranking"]["score"]) == "wmt-mqm: minor 1, major 5"


def test_esa_score_plot_has_ticks_across_the_0_100_scale():
    r = report("esa")
    for s in r["ranking"]["systems"]:
        s["score"], s["score_ci"] = 50.0, [40.0, 60.0]
    svg = span_svg.score_svg(r)
    assert all(f">{t}</text>" in svg for t in (0, 20, 40, 60, 80, 100))
