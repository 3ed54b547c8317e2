"""Quality control for MQM and ESA: control items with a generated error (docs/protocols/mqm-esa.md).

A span study's control item is a copy of a real item whose degraded candidate
(``Candidate.is_spam``) carries one generated error; the copy's
``metadata["control_error"]`` says where (studies/controls/spam.py, studies/controls/error_injection.py).

Two checks:

- **Span check** (MQM, and ESA with spans): the annotator passes a control item
  when one of their spans on the degraded candidate's text has severity
  ``major`` or ``critical`` and overlaps the injected error's ``[start, end)``
  by at least one character. A minor span, a span elsewhere, or "no error"
  misses it. (A control made before errors were generated, a scramble without
  ``control_error``, passes with any major span on that candidate: the whole
  text is wrong.)
- **Score drop** (ESA and DA), after the "BAD references" of WMT's ESA and DA
  campaigns (Kocmi et al. 2024; Appraise): per annotator, the scores they gave
  the original candidate and the degraded copy of the same candidate, for every
  control item whose original they also scored; a one-sided Mann–Whitney U test
  (``scipy.stats.mannwhitneyu``, ``alternative="greater"``: originals score
  higher) gives the p-value, ``None`` with fewer than two such pairs. For DA
  (ESA without spans) there is no span to check, so each such pair is the check:
  it passes when the copy scored strictly lower than the original.

Everything here reads; nothing writes. ``span_control_summary`` is pure (no
database) for reports; ``study_span_controls`` reads a study and calls it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from protocols.registry import protocol_named
from studies.models import Candidate, Study
from studies.controls.spam import CONTROL_ERROR_KEY, PROBE_KEY

from annotation.models import Annotator, Judgment

#: Severities that pass a control item (the injected errors change the meaning: at least major).
PASSING_SEVERITIES = frozenset({"major", "critical"})


@dataclass(frozen=True)
class ControlError:
    """Where the generated error is: ``[start, end)`` of the degraded candidate's text, and its kind."""
    start: int
    end: int
    kind: str

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any] | None) -> ControlError | None:
        """The record studies/controls/spam.py keeps on the control item (None when absent or malformed)."""
        record = (metadata or {}).get(CONTROL_ERROR_KEY)
        if not isinstance(record, dict):
            return None
        start, end, kind = record.get("start"), record.get("end"), record.get("kind")
        if not (isinstance(start, int) and isinstance(end, int) and start < end and isinstance(kind, str)):
            return None
        return cls(start, end, kind)


@dataclass(frozen=True)
class SpanControl:
    """One control item of a span study: its degraded candidate, the original it copies, the error."""
    item_id: int
    candidate_pk: int
    original_item_id: int | None
    original_candidate_pk: int | None
    error: ControlError | None

    @property
    def kind(self) -> str:
        return self.error.kind if self.error else "scrambled"


def _entry(answer: Mapping[str, Any], candidate_pk: int) -> Mapping[str, Any]:
    entry = (answer.get("annotations") or {}).get(str(candidate_pk))
    return entry if isinstance(entry, dict) else {}


def candidate_score(answer: Mapping[str, Any], candidate_pk: int) -> float | None:
    """The ESA/DA score an answer gave a candidate (None when it has none)."""
    score = _entry(answer, candidate_pk).get("score")
    return float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None


def span_check_passed(*, answer: Mapping[str, Any], candidate_pk: int, error: ControlError | None) -> bool:
    """Whether a stored answer marks the injected error: a major or critical target span overlapping it."""
    for span in _entry(answer, candidate_pk).get("spans") or []:
        if span.get("side", "target") != "target" or span.get("severity") not in PASSING_SEVERITIES:
            continue
        if error is None or (span["start"] < error.end and error.start < span["end"]):
            return True
    return False


def score_drop_p(pairs: Sequence[tuple[float, float]]) -> float | None:
    """One-sided Mann–Whitney U p-value that the originals (first) score higher than the copies (second).

    None with fewer than two pairs: one pair can never be significant, and
    reporting p = 0.5 for it would read as evidence.
    """
    if len(pairs) < 2:
        return None
    from scipy.stats import mannwhitneyu  # heavy import, only where a p-value is computed

    originals = [o for o, _ in pairs]
    degraded = [d for _, d in pairs]
    p = float(mannwhitneyu(originals, degraded, alternative="greater").pvalue)
    return None if math.isnan(p) else p


def study_controls(study: Study) -> dict[int, SpanControl]:
    """The study's control items by item pk (two queries; empty for other protocols)."""
    if not study.spec.generated_error_controls:
        return {}
    rows = list(Candidate.objects.filter(item__study=study, is_spam=True)
                .exclude(item__metadata__has_key=PROBE_KEY)  # context probes are counted apart (quality/probes.py)
                .values_list("pk", "item_id", "item__spam_of_id", "system", "item__metadata"))
    wanted = [r[2] for r in rows if r[2] is not None]
    originals: dict[tuple[int | None, str], int] = {
        (item_id, system): pk
        for pk, item_id, system in Candidate.objects.filter(item_id__in=wanted).values_list("pk", "item_id", "system")}
    return {item_id: SpanControl(item_id=item_id, candidate_pk=pk, original_item_id=spam_of,
                                 original_candidate_pk=originals.get((spam_of, system)),
                                 error=ControlError.from_metadata(metadata))
            for pk, item_id, spam_of, system, metadata in rows}


@dataclass
class AnnotatorControls:
    """One annotator's control answers: span checks, and the scores for the score-drop test."""
    outcomes: list[tuple[str, bool]] = field(default_factory=list)  # (kind, passed) per span check
    original_scores: dict[int, float] = field(default_factory=dict)  # original item pk → score
    degraded_scores: dict[int, tuple[str, float]] = field(default_factory=dict)  # original item pk → (kind, score)

    def pairs(self) -> list[tuple[float, float]]:
        """(original score, degraded score) for every control whose original the annotator also scored."""
        return [(self.original_scores[i], score) for i, (_, score) in sorted(self.degraded_scores.items())
                if i in self.original_scores]

    def checks(self, study: Study) -> list[tuple[str, bool]]:
        """(kind, passed) per check counted: span checks, or for DA the score pairs (passed: it dropped)."""
        if study.uses_spans:
            return list(self.outcomes)
        return [(kind, score < self.original_scores[i]) for i, (kind, score) in sorted(self.degraded_scores.items())
                if i in self.original_scores]


class ControlTally:
    """Collects one study's control answers per annotator as judgments stream by (used by annotation.quality.checks)."""

    def __init__(self, study: Study, controls: dict[int, SpanControl]) -> None:
        self.study = study
        self.controls = controls
        self.by_original = {c.original_item_id: c for c in controls.values()
                            if c.original_item_id is not None and c.original_candidate_pk is not None}
        self.by_annotator: dict[int, AnnotatorControls] = {}

    def add(self, annotator_id: int, item_id: int, answer: Mapping[str, Any]) -> None:
        control = self.controls.get(item_id)
        original = self.by_original.get(item_id)
        if control is None and original is None:
            return
        mine = self.by_annotator.setdefault(annotator_id, AnnotatorControls())
        if control is not None:
            if self.study.uses_spans:
                mine.outcomes.append((control.kind, span_check_passed(answer=answer, candidate_pk=control.candidate_pk,
                                                                      error=control.error)))
            score = candidate_score(answer, control.candidate_pk)
            if self.study.uses_score and score is not None and control.original_item_id is not None:
                mine.degraded_scores[control.original_item_id] = (control.kind, score)
        elif original is not None and self.study.uses_score:
            assert original.original_candidate_pk is not None
            score = candidate_score(answer, original.original_candidate_pk)
            if score is not None:
                mine.original_scores[item_id] = score

    def of(self, annotator_id: int) -> AnnotatorControls:
        return self.by_annotator.get(annotator_id, AnnotatorControls())


def _rate(missed: int, seen: int) -> float | None:
    return missed / seen if seen else None


def span_control_summary(*, protocol: str, checks: Mapping[str, Sequence[tuple[str, bool]]],
                         score_pairs: Mapping[str, Sequence[tuple[float, float]]]) -> dict[str, Any]:
    """The control block of a span study's report, from per-annotator data (pure: no database).

    ``checks``: annotator code → [(kind of error, passed)] per control answered;
    ``score_pairs``: annotator code → [(score of the original, score of its degraded copy)]
    (ESA/DA; ignored for MQM). Returns ``n_checks``, ``n_missed``, ``miss_rate``,
    the same by kind of error, per annotator, and for ESA ``score_drop``: the
    pooled pairs' one-sided Mann–Whitney p and each annotator's.
    """
    by_kind: dict[str, dict[str, Any]] = {}
    annotators: dict[str, dict[str, Any]] = {}
    for code, outcomes in checks.items():
        missed = sum(not passed for _, passed in outcomes)
        annotators[code] = {"n_checks": len(outcomes), "n_missed": missed, "miss_rate": _rate(missed, len(outcomes))}
        for kind, passed in outcomes:
            row = by_kind.setdefault(kind, {"n_checks": 0, "n_missed": 0})
            row["n_checks"] += 1
            row["n_missed"] += not passed
    for row in by_kind.values():
        row["miss_rate"] = _rate(row["n_missed"], row["n_checks"])
    n_checks = sum(row["n_checks"] for row in annotators.values())
    n_missed = sum(row["n_missed"] for row in annotators.values())
    summary: dict[str, Any] = {
        "rule": "passed when a major or critical span overlaps the generated error",
        "n_checks": n_checks, "n_missed": n_missed, "miss_rate": _rate(n_missed, n_checks),
        "by_kind": dict(sorted(by_kind.items())), "annotators": annotators, "score_drop": None,
    }
    if protocol_named(protocol).compares_control_scores:
        pooled = [pair for pairs in score_pairs.values() for pair in pairs]
        summary["score_drop"] = {
            "test": "one-sided Mann-Whitney U, originals > degraded copies",
            "n_pairs": len(pooled), "p": score_drop_p(pooled),
            "annotators": {code: {"n_pairs": len(pairs), "p": score_drop_p(pairs)}
                           for code, pairs in score_pairs.items()},
        }
    return summary


def study_span_controls(*, study: Study, include_excluded: bool = False) -> dict[str, Any] | None:
    """``span_control_summary`` for a study from its current judgments (None unless MQM or ESA).

    Excluded annotators are left out unless ``include_excluded`` (as reports do).
    """
    if not study.spec.generated_error_controls:
        return None
    annotators = Annotator.objects.filter(study=study)
    if not include_excluded:
        annotators = annotators.filter(excluded=False)
    codes = dict(annotators.values_list("pk", "code"))
    tally = ControlTally(study, study_controls(study))
    relevant = set(tally.controls) | set(tally.by_original)
    rows: Iterable[tuple[int, int, dict]] = (
        Judgment.objects.filter(is_current=True, assignment__item__study=study, assignment__annotator__in=list(codes),
                                assignment__item_id__in=relevant)
        .values_list("assignment__annotator_id", "assignment__item_id", "answer").order_by())
    for annotator_id, item_id, answer in rows:
        tally.add(annotator_id, item_id, answer)
    seen = {pk: code for pk, code in codes.items() if pk in tally.by_annotator}
    return span_control_summary(
        protocol=study.protocol,
        checks={code: tally.of(pk).checks(study) for pk, code in seen.items()},
        score_pairs={code: tally.of(pk).pairs() for pk, code in seen.items()})
