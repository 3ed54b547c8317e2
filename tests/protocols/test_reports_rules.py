"""The protocols' report rules (protocols/parts/reports.py and each protocol's reports.py) and that the report
core reaches a protocol only through them: a protocol registered here gets a report without core edits."""
from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from evaluators.reports import span_report as sr
from evaluators.reports import study_stats as ss
from evaluators.stats import ratings as rt
from protocols import registry
from protocols.registry import protocol_named
from protocols.spec import ProtocolSpec


class Thumbs(ProtocolSpec):
    """A protocol the core has never heard of: one thumbs-up/down label per item."""

    name = "thumbs"
    label = "Thumbs (test only)"
    report_unit = "thumbed items"
    answer_column = "label"
    has_ties = False

    def agreement_ratings(self, frame: pd.DataFrame, *, ties: str, spam: str, excluded: str,
                          ranking_coding: str) -> tuple[pd.DataFrame, dict[str, Any]]:
        return rt.judgment_to_labels(frame.drop_duplicates("judgment"), spam=spam, excluded=excluded, unit="item")


@pytest.fixture
def thumbs():
    spec = registry.register(Thumbs())
    yield spec
    registry._REGISTRY.pop(spec.name)  # the registry has no unregister: tests only


def _export(protocol: str, labels: dict[tuple[str, str], str], **extra: Any) -> pd.DataFrame:
    rows = [{"study": "s", "item": item, "annotator": ann, "system": "A", "judgment": f"{item}-{ann}",
             "protocol": protocol, "label": label, **extra} for (item, ann), label in labels.items()]
    return pd.DataFrame(rows)


def test_a_newly_registered_protocol_gets_a_report_from_its_spec_alone(thumbs):
    labels = {("i1", "u1"): "up", ("i1", "u2"): "up", ("i2", "u1"): "down", ("i2", "u2"): "up"}
    report = ss.report_from_export(_export("thumbs", labels), source="t.csv", n_boot=5)
    assert report["unit"] == "thumbed items"
    assert report["n_items"] == 2 and report["coefficients"]["percent_agreement"]["value"] == 0.5
    assert report["without_ties"] is None and "thumbs studies have no ties" in " ".join(report["notes"])
    assert report["control"] is None and report["ranking"] is None
    assert "no system ranking for the thumbs protocol (labels are not preferences)" in report["notes"]
    assert report["policies"]["ranking_coding"] is None


def test_an_export_misses_the_answer_column_the_protocol_names(thumbs):
    export = _export("thumbs", {("i1", "u1"): "up"}).drop(columns=["label"])
    with pytest.raises(ss.ReportError, match="missing column 'label', needed for a thumbs study"):
        ss.stats_frame(export, source="t.csv")


def test_an_unregistered_protocol_in_a_file_is_refused_with_the_registered_names():
    with pytest.raises(ss.ReportError, match="unknown protocol 'nope' \\(ranking, choice, judgment, mqm, esa"):
        ss.stats_frame(_export("nope", {("i1", "u1"): "up"}), source="t.csv")


def test_only_preference_protocols_give_pairs_codings_and_a_reference_contest():
    ranking, choice, judgment = (protocol_named(n) for n in ("ranking", "choice", "judgment"))
    assert ranking.ranking_codings == ("system", "position") and not choice.ranking_codings
    assert [p.gives_preferences for p in (ranking, choice, judgment)] == [True, True, False]
    assert [p.contests_reference for p in (ranking, choice, judgment)] == [True, True, False]
    assert [p.has_ties for p in (ranking, choice, judgment)] == [True, True, False]
    assert ranking.pairs_from_ratings(pd.DataFrame({"x": [1]}), spam="drop", ranking_coding="system") is not None
    assert ranking.pairs_from_ratings(pd.DataFrame({"x": [1]}), spam="keep", ranking_coding="system") is None
    assert ranking.pairs_from_ratings(pd.DataFrame({"x": [1]}), spam="drop", ranking_coding="position") is None


def test_choice_outcomes_count_neither_as_a_tie_and_a_chosen_reference_as_won():
    rows = []
    for judgment, choice in (("j1", "ref"), ("j2", "A"), ("j3", "neither"), ("j4", "invalid")):
        for system in ("ref", "A"):
            rows.append({"judgment": judgment, "item": "i", "annotator": judgment, "system": system,
                         "is_reference": system == "ref", "is_spam_item": False, "excluded": False,
                         "phenomenon": "p", "choice": choice})
    out = protocol_named("choice").reference_outcomes(pd.DataFrame(rows)).set_index("judgment")
    assert out["outcome"].to_dict() == {"j1": "reference", "j2": "system", "j3": "tie", "j4": "invalid"}
    assert out["neither"].to_dict() == {"j1": False, "j2": False, "j3": True, "j4": False}
    assert protocol_named("judgment").reference_outcomes(pd.DataFrame(rows)) is None


def test_span_protocols_score_direction_scheme_and_methods_lines():
    mqm, esa = protocol_named("mqm"), protocol_named("esa")
    assert not mqm.higher_is_better and esa.higher_is_better
    assert mqm.spans_have_categories and not esa.spans_have_categories
    assert mqm.file_uses_spans(False) and not esa.file_uses_spans(False)
    assert esa.score_scheme(sr.weights_from(None)) == {"name": "esa", "scale": [0, 100]}
    assert mqm.score_scheme(sr.weights_from(None))["z"] == "per-annotator z-scores of −MQM (higher is better)"
    assert [mqm.score_kind(True), esa.score_kind(True), esa.score_kind(False)] == ["mqm", "esa", "da"]
    assert sr.methods_for("mqm", True)["score"].startswith("MQM: a rating's score is the sum of its error weights")
    assert sr.methods_for("mqm", True)["ranking"].endswith("MQM points enter the ranking negated (higher is better there).")
    assert sr.methods_for("esa", True)["score"].startswith("ESA: annotators mark minor/major error spans")
    assert sr.methods_for("esa", False)["score"].startswith("DA: the 0–100 score as given")
    assert sr.methods_for("esa", False)["ranking"] == sr.METHODS["ranking"]
    assert [esa.tests_score_drop(True), esa.tests_score_drop(False), mqm.tests_score_drop(True)] == [True, False, False]


def test_segment_scores_are_mqm_points_or_the_scores_as_given():
    ratings = pd.DataFrame({"system": ["A", "B"], "item": ["i", "i"], "annotator": ["u", "u"],
                            "span_list": [[{"start": 0, "end": 1, "severity": "major", "category": "Accuracy"}], []],
                            "score_given": [40.0, 90.0]})
    weights = sr.weights_from(None)
    mqm = protocol_named("mqm").segment_scores(ratings, weights).set_index("system")["score"].to_dict()
    esa = protocol_named("esa").segment_scores(ratings, weights).set_index("system")["score"].to_dict()
    assert mqm == {"A": weights.major, "B": 0.0}
    assert esa == {"A": 40.0, "B": 90.0}


def test_facts_kind_and_methods_words_per_protocol():
    assert [protocol_named(n).facts_kind(True) for n in ("ranking", "mqm", "esa")] == ["pairwise", "span", "span"]
    assert protocol_named("esa").facts_kind(False) == "da"
    assert protocol_named("mqm").file_facts_kind() is None and protocol_named("choice").file_facts_kind() == "pairwise"
    assert protocol_named("ranking").records_ties_allowed() and not protocol_named("choice").records_ties_allowed()
    assert protocol_named("ranking").methods_coding_words("position") == ", each pair's outcome coded as first, second or tie"
    assert protocol_named("choice").methods_coding_words("system") == ""
    assert ProtocolSpec().methods_design_words() == "judged each item"
