"""How the protocol's answers become ratings for agreement and scores for rankings, and what the reports and methods text say (evaluators.reports, research).

Two shapes of report exist (``evaluators.reports.study_stats``):

* **labels and preferences** (a judgment covers every candidate of its item): the
  protocol turns the judgments into agreement units (:meth:`ReportsRules.agreement_ratings`),
  may give pairwise preferences for the system ranking (:meth:`ReportsRules.human_pairs`)
  and may contest a hidden reference (:meth:`ReportsRules.reference_outcomes`, which
  gives the DiP Table 13 counts and the control figure);
* **per-candidate annotations** (``per_candidate_annotations``: spans and/or a score per
  candidate): the blocks of ``evaluators.reports.span_report``, with the protocol's
  segment score (:meth:`ReportsRules.segment_scores`), its direction and the methods
  text's score and ranking lines.

Every frame here is the report's stats frame (``study_stats.stats_frame``): columns
``judgment``, ``item``, ``annotator``, ``system``, ``is_reference``, ``is_spam_item``,
``excluded``, ``phenomenon`` and the answer columns ``rank``, ``choice``, ``label``,
``score``, ``spans``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    import pandas as pd


class ReportsRules:
    name: ClassVar[str] = ""

    #: What one agreement unit is (the report's ``unit``).
    report_unit: ClassVar[str] = "items"
    #: The export column holding the answer: a report from a file without it is refused.
    answer_column: ClassVar[str] = ""
    #: The ways a unit's label may be coded (the ``ranking_coding`` policy; the first is the default),
    #: () when the protocol has one coding only.
    ranking_codings: ClassVar[tuple[str, ...]] = ()
    #: Answers may tie ("tie" is a category): the report then also gives agreement without the tied units.
    has_ties: ClassVar[bool] = True
    #: Answers say whether a hidden reference won (``reference_outcomes``): the report gives the DiP Table 13
    #: counts and the control figure.
    contests_reference: ClassVar[bool] = False
    #: The human side of a comparison with metrics is pairwise preferences (``human_pairs``).
    gives_preferences: ClassVar[bool] = False

    # --- labels and preferences ---------------------------------------------------------------------

    def agreement_ratings(self, frame: pd.DataFrame, *, ties: str, spam: str, excluded: str,
                          ranking_coding: str) -> tuple[pd.DataFrame, dict[str, Any]]:
        """The agreement units (``item``, ``rater``, ``label``, ``judgment``, ``phenomenon``…) and the applied policies.

        The converters of ``evaluators.stats.ratings``; a ``ValueError`` names the bad value.
        """
        raise NotImplementedError(f"{type(self).__name__} gives no agreement ratings")

    def human_pairs(self, frame: pd.DataFrame, *, excluded: str = "drop") -> tuple[pd.DataFrame | None, dict | None]:
        """Pairwise outcomes on REAL items (ties kept, spam dropped) for the system ranking, or ``(None, None)``.

        Shared by the study report and the metric comparison, so both rank systems on the same pairs.
        """
        return None, None

    def pairs_from_ratings(self, ratings: pd.DataFrame, *, spam: str, ranking_coding: str) -> pd.DataFrame | None:
        """:meth:`human_pairs` read off the agreement ratings with ties kept, when they are the same (saves a conversion)."""
        return None

    def reference_outcomes(self, frame: pd.DataFrame) -> pd.DataFrame | None:
        """One row per judgment showing a reference, with its ``outcome``, or None when answers do not contest one.

        Columns ``judgment``, ``phenomenon``, ``is_spam_item``, ``excluded``, ``outcome``
        (``reference`` / ``system`` / ``tie`` / ``invalid``) and ``neither``.
        """
        return None

    def prefers_reference(self, frame: pd.DataFrame) -> pd.Series | None:
        """Per judgment (index), whether it put the reference above every other candidate shown (contrastive sets).

        ``frame`` holds real items' reference and variant rows only; None when the protocol cannot tell.
        """
        return None

    # --- per-candidate annotations (spans and/or scores) --------------------------------------------

    #: A segment score is better when higher (MQM points: lower).
    higher_is_better: ClassVar[bool] = True
    #: The spans carry an error category (MQM) besides the severity.
    spans_have_categories: ClassVar[bool] = False

    def file_uses_spans(self, spans_seen: bool) -> bool:
        """Whether a report read from a file treats the judgments as spans (``spans_seen``: some rating has spans)."""
        return spans_seen

    #: What the human column of the comparison page holds for this protocol's own score ("" = no own score).
    comparison_score_label: ClassVar[str] = ""

    #: A template the report page includes for :meth:`protocol_blocks` ("" = none).
    report_template: ClassVar[str] = ""

    def protocol_blocks(self, frame: pd.DataFrame, *, spam: str, excluded: str, seed: int) -> dict[str, Any]:
        """Report blocks of the protocol's own, from the stats frame (span protocols' report: after the span
        blocks); merged into the report's JSON and shown by :attr:`report_template`."""
        return {}

    def score_kind(self, uses_spans: bool) -> str:
        """The score's short name on the report page and plots (``mqm``, ``esa``, ``da``)."""
        return self.name

    def segment_scores(self, ratings: pd.DataFrame, weights: Any) -> pd.DataFrame:
        """One score per rating: columns ``system``, ``item``, ``annotator``, ``score`` (``span_report.span_ratings`` rows).

        ``weights`` is the study's MQM scheme (``evaluators.stats.mqm.MqmWeights``, not imported here: the
        spec is read by every app, the statistics only by the evaluators).
        """
        raise NotImplementedError(f"{type(self).__name__} gives no segment scores")

    def score_scheme(self, weights: Any) -> dict[str, Any]:
        """What the report's ``ranking.score`` says of the score besides its direction, aggregate and CI."""
        return {"name": self.name}

    def score_methods(self, uses_spans: bool) -> dict[str, str]:
        """The methods text's lines that differ for this protocol (``score``, ``ranking``), over ``span_report.METHODS``."""
        return {}

    def comparison_score_notes(self) -> tuple[str, str]:
        """What the comparison adds to its segment and system score descriptions (the orientation)."""
        return "", ""

    def tests_score_drop(self, uses_spans: bool) -> bool:
        """Control items also test that the copies with an injected error score lower than their originals."""
        return False

    # --- the methods text and the text report (evaluators.reports.paper, span_paper, text) ---------------

    def methods_design_words(self) -> str:
        """What annotators did, after "Annotators" in the methods paragraph of a label/preference study."""
        return "judged each item"

    def methods_coding_words(self, coding: str | None) -> str:
        """How a unit's label was coded (the ``ranking_coding`` policy), appended to the agreement clause."""
        return ""

    def methods_protocol_sentence(self, kind: str, facts: dict[str, Any], report: dict[str, Any]) -> str:
        """The methods sentence of a span/score study saying what annotators did and how a segment is scored.

        ``kind`` is :meth:`score_kind`'s; ``facts`` the report's facts block (evaluators/reports/facts.py):
        say only what it records.
        """
        return ""

    def segment_scores_name(self) -> str:
        """The segment scores' name in the methods text's score-agreement sentence."""
        return "scores"

    def z_scores_of(self) -> str:
        """What the WMT ranking's per-annotator z-scores are "of", when not the scores as given (`` of −MQM``)."""
        return ""

    def score_unit_words(self) -> str:
        """The score's unit and direction in the text report's ranking heading."""
        return "0-100, higher is better"

    # --- the facts block (evaluators.reports.facts) ----------------------------------------------------

    def facts_kind(self, uses_spans: bool) -> str:
        """``pairwise``, ``span`` or ``da``: which controls the study uses and how the methods text words them."""
        return "pairwise"

    def file_facts_kind(self) -> str | None:
        """The kind of a report read from a file (None when the file cannot tell)."""
        return "pairwise"

    def records_ties_allowed(self) -> bool:
        """Whether the study's ``allow_ties`` setting is a fact of the report (annotators could tie)."""
        return False
