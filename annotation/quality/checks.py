"""Per-annotator quality control (reads only): spam checks, the reference control, speed.

Only current judgments count (a revised answer replaces the earlier one). The
numbers come from three queries whatever the study's size: the annotators
(with their count of skipped items, ``n_skipped``), their current judgments,
and the study's spam and reference candidates.

Spam-check failure rules (BlonDe App. D, after Kittur et al. 2008: "if a rater
marks a spam item as better than or equal to an actual translation"):

- ranking: the scrambled candidate's rank is better than or equal to the rank of
  at least one real candidate (passing means ranking it strictly last);
- choice: the annotator picked the scrambled candidate, or answered ``tie``
  (``neither`` and ``invalid`` pass: both are honest answers to a nonsensical pair);
- judgment: the annotator gave the study's first label to the scrambled candidate.
  Study files list the "good" label first (``correct``, ``no error``), so the first
  label on a word salad means the candidate was not read.

- mqm / esa: the control item's degraded candidate carries one generated error;
  the annotator fails the check unless a major or critical span overlaps it.
  ESA also reports, per annotator, the one-sided Mann–Whitney p that their scores
  of the originals exceed those of the degraded copies (``score_drop_p``); for DA
  (ESA without spans) a check is a copy whose original the annotator also scored,
  failed unless the copy scored lower (annotation/quality/span_controls.py).

The reference control (DiP A.1): among judged real items that have a reference
candidate, the share where the reference won outright — ranking: the reference
alone has the best rank; choice: the reference was chosen. Judgment studies have
no such control (``None``).
"""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from django.db.models import Count, Q

from studies.models import Candidate, Item, Study

from annotation.models import Annotator, Assignment, Judgment
from annotation.quality.probes import (ProbeRecord, context_use_summary, probe_caught, probe_items_q, study_probes,
                                      wilson_interval)
from annotation.quality.span_controls import ControlTally, SpanControl, score_drop_p, study_controls

#: Columns of the quality table, in INTERFACES.md order, then the extras.
QUALITY_KEYS = ("annotator", "n_judgments", "spam_seen", "spam_failed", "reference_first_rate", "median_seconds",
                "excluded", "exclusion_reason", "spam_failed_share", "fast_answers", "reference_items",
                "external_id", "n_skipped", "score_drop_pairs", "score_drop_p", "unit", "probes_seen", "probes_caught",
                "context_use_rate", "context_use_ci", "local_catch_rate", "local_catch_ci")


@dataclass
class AnnotatorQuality:
    annotator: str
    external_id: str
    excluded: bool
    exclusion_reason: str
    n_judgments: int = 0
    spam_seen: int = 0
    spam_failed: int = 0
    reference_items: int = 0
    reference_first: int = 0
    fast_answers: int = 0
    #: Items the annotator skipped with a reason (annotation/handout/skips.py), answered later or not.
    n_skipped: int = 0
    seconds: list[float] = field(default_factory=list, repr=False)
    #: ESA/DA: (score of the original, score of its degraded copy) per control whose original was also scored.
    score_pairs: list[tuple[float, float]] | None = field(default=None, repr=False)
    #: The interface the annotator judged in: the study's unit (sentence items or document blocks).
    unit: str = ""
    #: Context probes answered and caught (annotation/quality/probes.py).
    probes_seen: int = 0
    probes_caught: int = 0
    #: (kind, caught) per probe answered, for the report's block by kind.
    probe_outcomes: list[tuple[str, bool]] = field(default_factory=list, repr=False)

    @property
    def context_use_rate(self) -> float | None:
        """Probes caught ÷ probes answered (None before the first)."""
        return self.probes_caught / self.probes_seen if self.probes_seen else None

    @property
    def context_use_ci(self) -> list[float] | None:
        interval = wilson_interval(self.probes_caught, self.probes_seen)
        return list(interval) if interval else None

    @property
    def local_caught(self) -> int:
        return self.spam_seen - self.spam_failed

    @property
    def local_catch_rate(self) -> float | None:
        """Local (spam or generated-error) checks passed ÷ answered: the sentence-level twin of the context-use rate."""
        return (self.spam_seen - self.spam_failed) / self.spam_seen if self.spam_seen else None

    @property
    def local_catch_ci(self) -> list[float] | None:
        interval = wilson_interval(self.spam_seen - self.spam_failed, self.spam_seen)
        return list(interval) if interval else None

    @property
    def score_drop_pairs(self) -> int | None:
        return None if self.score_pairs is None else len(self.score_pairs)

    @property
    def score_drop_p(self) -> float | None:
        """One-sided Mann–Whitney p (originals scored higher); None with fewer than two pairs or no scores."""
        return None if self.score_pairs is None else score_drop_p(self.score_pairs)

    @property
    def spam_failed_share(self) -> float | None:
        return self.spam_failed / self.spam_seen if self.spam_seen else None

    @property
    def reference_first_rate(self) -> float | None:
        return self.reference_first / self.reference_items if self.reference_items else None

    @property
    def median_seconds(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds else None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("seconds")
        data.pop("reference_first")
        data.pop("score_pairs")
        data.pop("probe_outcomes")
        data.update(spam_failed_share=self.spam_failed_share, reference_first_rate=self.reference_first_rate,
                    median_seconds=self.median_seconds, score_drop_pairs=self.score_drop_pairs,
                    score_drop_p=self.score_drop_p, context_use_rate=self.context_use_rate,
                    context_use_ci=self.context_use_ci, local_catch_rate=self.local_catch_rate,
                    local_catch_ci=self.local_catch_ci)
        return {key: data[key] for key in QUALITY_KEYS}


def spam_check_failed(*, study: Study, answer: dict[str, Any], spam_pk: int,
                      control: SpanControl | None = None) -> bool:
    """Whether one answer to a spam item fails the check (rules in the module docstring).

    MQM/ESA: ``control`` is the item's control record (read from the database when
    not given). DA's check needs the annotator's answer to the original too, so
    a single DA answer never fails here (study_quality counts DA checks).
    """
    return study.spec.spam_check_failed(study, answer, spam_pk, control)


def reference_won(*, study: Study, answer: dict[str, Any], reference_pk: int) -> bool | None:
    """Whether the reference won outright on a real item (None: the protocol has no such control)."""
    return study.spec.reference_won(study, answer, reference_pk)


def _control_candidates(study: Study) -> tuple[dict[int, int], dict[int, int]]:
    """({spam item pk: scrambled candidate pk}, {real item pk: reference candidate pk}) in one query."""
    spam: dict[int, int] = {}
    reference: dict[int, int] = {}
    rows = (Candidate.objects.filter(item__study=study)
            .filter((Q(is_spam=True) & ~probe_items_q("item__")) | Q(is_reference=True, item__is_spam=False))
            .values_list("pk", "item_id", "is_spam"))
    for pk, item_id, is_spam in rows:
        (spam if is_spam else reference)[item_id] = pk
    return spam, reference


def _accumulate(study: Study, rows: Iterable[tuple[int, int, bool, dict, int | None]],
                by_annotator: dict[int, AnnotatorQuality], spam: dict[int, int], reference: dict[int, int],
                tally: ControlTally | None = None, probes: dict[int, ProbeRecord] | None = None) -> None:
    minimum_ms = (study.min_seconds or 0) * 1000
    for annotator_id, item_id, item_is_spam, answer, duration_ms in rows:
        entry = by_annotator.get(annotator_id)
        if entry is None:
            continue
        entry.n_judgments += 1
        if duration_ms is not None:
            entry.seconds.append(duration_ms / 1000)
            if duration_ms < minimum_ms:
                entry.fast_answers += 1
        probe = probes.get(item_id) if probes else None
        if probe is not None:
            caught = probe_caught(study=study, answer=answer, probe=probe)
            entry.probes_seen += 1
            entry.probes_caught += caught
            entry.probe_outcomes.append((probe.kind, caught))
        elif tally is not None:
            tally.add(annotator_id, item_id, answer)
        elif item_is_spam:
            if item_id in spam:
                entry.spam_seen += 1
                entry.spam_failed += spam_check_failed(study=study, answer=answer, spam_pk=spam[item_id])
        elif item_id in reference:
            won = reference_won(study=study, answer=answer, reference_pk=reference[item_id])
            if won is not None:
                entry.reference_items += 1
                entry.reference_first += won


def _current_rows(study: Study, annotators: list[Annotator]):
    return (Judgment.objects.filter(is_current=True, assignment__annotator__in=[a.pk for a in annotators],
                                    assignment__item__study=study)
            .values_list("assignment__annotator_id", "assignment__item_id", "assignment__item__is_spam",
                         "answer", "duration_ms")
            .order_by())


def study_quality(*, study: Study, annotators: list[Annotator] | None = None) -> list[AnnotatorQuality]:
    """Quality figures for every annotator of a study (or the given ones), in arrival order.

    Three queries whatever the number of annotators, items or judgments (one more for the context probes of a
    study whose ``probe_rate`` is on, one more for ``n_skipped``
    when the annotators are given; two more in MQM/ESA studies for the control items' records).
    """
    if annotators is None:
        annotators = list(study.annotators.order_by("sequence").annotate(
            skips=Count("assignments", filter=Q(assignments__skipped_at__isnull=False))))
    by_annotator = {a.pk: AnnotatorQuality(annotator=a.code, external_id=a.external_id, excluded=a.excluded,
                                           exclusion_reason=a.exclusion_reason, unit=study.unit) for a in annotators}
    if not annotators:
        return []
    spam, reference = _control_candidates(study)
    tally = ControlTally(study, study_controls(study)) if study.spec.generated_error_controls else None
    probes = study_probes(study) if study.probe_rate else {}
    _accumulate(study, _current_rows(study, annotators), by_annotator, spam, reference, tally, probes)
    if tally is not None:
        _span_checks(study, tally, by_annotator)
    _count_skips(by_annotator, annotators)
    return [by_annotator[a.pk] for a in annotators]


def _span_checks(study: Study, tally: ControlTally, by_annotator: dict[int, AnnotatorQuality]) -> None:
    """MQM/ESA: the control checks into the spam columns (so the exclusion rule applies unchanged)."""
    for annotator_id, entry in by_annotator.items():
        mine = tally.of(annotator_id)
        checks = mine.checks(study)
        entry.spam_seen = len(checks)
        entry.spam_failed = sum(not passed for _, passed in checks)
        if study.uses_score:
            entry.score_pairs = mine.pairs()


def _count_skips(by_annotator: dict[int, AnnotatorQuality], annotators: list[Annotator]) -> None:
    """``n_skipped``: each annotator's skipped items, counted with the annotators when study_quality read
    them (``skips``), else in one query over their assignments' skip times."""
    if all(hasattr(a, "skips") for a in annotators):
        rows = [(a.pk, int(getattr(a, "skips"))) for a in annotators]
    else:
        rows = list(Assignment.objects.filter(annotator_id__in=list(by_annotator), skipped_at__isnull=False)
                    .values_list("annotator_id").annotate(n=Count("pk")).values_list("annotator_id", "n").order_by())
    for annotator_id, n in rows:
        by_annotator[annotator_id].n_skipped = n


def study_context_probes(*, study: Study, include_excluded: bool = False) -> dict[str, Any] | None:
    """The report's context-probe block (annotation.quality.probes.context_use_summary) from the study's current
    judgments; None when the study has no probe. Excluded annotators are left out unless ``include_excluded``."""
    if not study.items.filter(probe_items_q()).exists():
        return None
    rows = [q for q in study_quality(study=study) if include_excluded or not q.excluded]
    return context_use_summary(unit=study.unit,
                               probes={q.annotator: q.probe_outcomes for q in rows if q.probes_seen},
                               local={q.annotator: (q.local_caught, q.spam_seen) for q in rows if q.spam_seen})


def annotator_quality(*, annotator: Annotator) -> AnnotatorQuality:
    """One annotator's figures (same queries as study_quality, restricted to them)."""
    return study_quality(study=annotator.study, annotators=[annotator])[0]


def study_over_redundancy(*, study: Study) -> int:
    """Items with more counted assignments than the redundancy: re-handed while an annotator was excluded,
    then the annotator was put back (or a late answer to a released item). Reported, never deleted."""
    return Item.objects.filter(study=study, n_assigned__gt=study.redundancy).count()


#: Columns the researcher page can sort by, and the value each sorts on.
SORT_KEYS: dict[str, Any] = {
    "annotator": lambda q: q.annotator,
    "n_judgments": lambda q: q.n_judgments,
    "spam_seen": lambda q: q.spam_seen,
    "spam_failed": lambda q: q.spam_failed,
    "spam_failed_share": lambda q: q.spam_failed_share,
    "reference_first_rate": lambda q: q.reference_first_rate,
    "median_seconds": lambda q: q.median_seconds,
    "fast_answers": lambda q: q.fast_answers,
    "score_drop_p": lambda q: q.score_drop_p,
    "context_use_rate": lambda q: q.context_use_rate,
    "local_catch_rate": lambda q: q.local_catch_rate,
    "n_skipped": lambda q: q.n_skipped,
    "excluded": lambda q: (q.excluded, q.exclusion_reason),
}


def quality_sorted(rows: list[AnnotatorQuality], *, sort: str, descending: bool) -> list[AnnotatorQuality]:
    """Rows sorted by a known column (an unknown one keeps arrival order); missing values always come last."""
    value = SORT_KEYS.get(sort)
    if value is None:
        return list(rows)
    present = [r for r in rows if value(r) is not None]
    missing = [r for r in rows if value(r) is None]
    return sorted(present, key=value, reverse=descending) + missing
