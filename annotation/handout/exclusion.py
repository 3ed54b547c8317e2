"""Writes for quality control: excluding annotators and putting them back.

Exclusion never deletes anything: the annotator, their assignments and every
judgment stay; reports leave excluded annotators out by default, and putting an
annotator back brings all their work back in.

The study's automatic rule (``Study.auto_exclude_share``) runs

- after each answer to a spam item (``annotator_apply_auto_exclusion``, called by
  ``judgment_submit``): one extra query set for that one annotator, and only on
  spam items, which are a small share of all answers, so an ordinary answer
  costs nothing extra; an annotator who crosses the line is stopped at once
  (``assignment_next`` hands nothing to excluded annotators);
- on demand for the whole study (``study_apply_auto_exclusion``): the quality
  page's "Apply rule now" button and ``quality SLUG --apply-rule``, for a rule
  set or changed after answers came in.

An annotator put back by hand is excluded again only if they fail another spam
check (or the rule is applied to the whole study again) while still above the share.
The rule never fires before an annotator has answered the study's
``auto_exclude_min_checks`` spam checks (default 3): one unlucky answer is no evidence.

Redundancy: an excluded annotator's assignments stop counting (annotation.handout.slots),
so their items reopen for other annotators in the same transaction; putting them
back makes them count again, and an item re-handed meanwhile may then have more
counted judgments than the redundancy (reported on the quality page, never deleted).
"""
from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from studies.access.audit import audit
from studies.models import Item, Study

from annotation.handout import slots
from annotation.models import Annotator, Assignment, AssignmentStatus
from annotation.quality.checks import AnnotatorQuality, annotator_quality, study_over_redundancy, study_quality

_reason_length = Annotator._meta.get_field("exclusion_reason").max_length
assert _reason_length is not None  # a CharField: Django requires its max_length
REASON_MAX_LENGTH: int = _reason_length


def annotator_exclude(*, annotator: Annotator, reason: str) -> Annotator:
    """Exclude an annotator from reports (and from further work), with the researcher's reason."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"reason": ["Give a reason for excluding this annotator."]})
    if len(reason) > REASON_MAX_LENGTH:
        raise ValidationError({"reason": [f"At most {REASON_MAX_LENGTH} characters ({len(reason)} given)."]})
    with transaction.atomic():
        # The flag flips once, under the row lock: counts move exactly once however often this is called.
        # The lock (taken by this UPDATE, first in the transaction) is held to the commit: a late answer to a
        # released item reads the flag under the same lock (services._excluded_locked), so the two never
        # both decide from the state before the other.
        flipped = Annotator.objects.filter(pk=annotator.pk, excluded=False).update(excluded=True)
        annotator.excluded = True
        annotator.exclusion_reason = reason
        annotator.excluded_at = timezone.now()
        Annotator.objects.filter(pk=annotator.pk).update(exclusion_reason=reason, excluded_at=annotator.excluded_at)
        if flipped:
            slots.items_count_add(study=annotator.study, items=_counted_items(annotator), delta=-1)
    return annotator


def annotator_include(*, annotator: Annotator) -> int:
    """Put an excluded annotator back: their judgments count again, in reports and toward the redundancy.

    Returns how many of the study's items then have more counted assignments than
    the redundancy (items re-handed while the annotator was excluded; never deleted).
    """
    with transaction.atomic():
        flipped = Annotator.objects.filter(pk=annotator.pk, excluded=True).update(
            excluded=False, exclusion_reason="", excluded_at=None)
        annotator.excluded = False
        annotator.exclusion_reason = ""
        annotator.excluded_at = None
        if flipped:
            slots.items_count_add(study=annotator.study, items=_counted_items(annotator), delta=1)
    return study_over_redundancy(study=annotator.study)


def _counted_items(annotator: Annotator):
    """The items of the annotator's pending and done assignments (released ones never count)."""
    return Item.objects.filter(pk__in=Assignment.objects.filter(
        annotator=annotator, status__in=[AssignmentStatus.PENDING, AssignmentStatus.DONE]).values("item_id"))


def auto_exclusion_reason(quality: AnnotatorQuality) -> str:
    return f"auto: failed {quality.spam_failed} of {quality.spam_seen} spam checks"


def _over_share(study: Study, quality: AnnotatorQuality) -> bool:
    share = quality.spam_failed_share
    return (study.auto_exclude_share is not None and not quality.excluded and share is not None
            and quality.spam_seen >= study.auto_exclude_min_checks and share > study.auto_exclude_share)


@transaction.atomic
def study_apply_auto_exclusion(*, study: Study) -> list[Annotator]:
    """Exclude every annotator whose failed share of spam checks exceeds the study's rule; return them."""
    if study.auto_exclude_share is None:
        return []
    annotators = list(study.annotators.order_by("sequence"))
    excluded = []
    for annotator, quality in zip(annotators, study_quality(study=study, annotators=annotators)):
        if _over_share(study, quality):
            excluded.append(annotator_exclude(annotator=annotator, reason=auto_exclusion_reason(quality)))
    return excluded


def annotator_apply_auto_exclusion(*, annotator: Annotator) -> bool:
    """Apply the study's rule to one annotator (after a spam answer); True when they were excluded now."""
    study = annotator.study
    if study.auto_exclude_share is None or annotator.excluded:
        return False
    quality = annotator_quality(annotator=annotator)
    if not _over_share(study, quality):
        return False
    annotator_exclude(annotator=annotator, reason=auto_exclusion_reason(quality))
    audit(None, "excluded", study, annotator=annotator.code, reason=annotator.exclusion_reason, via="automatic rule")
    return True
