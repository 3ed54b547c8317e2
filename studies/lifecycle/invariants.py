"""Running-study invariants: what may no longer change once a study has a judgment.

A stored answer means something only under the settings it was given with: a
rank under ``ranking``, a choice under the options offered, a label under the
labels shown. So once a study has a judgment its protocol, options, labels,
ties, unit, language set-up and its candidates' texts and systems are fixed;
redundancy may grow but not fall below what some item already has. Title,
instructions, status and the other settings stay editable. Every write path
(the admin, the study file import) asks :func:`study_change_errors` or
:func:`candidate_change_errors` and refuses with their messages, which point at
*Copy as new study* (:func:`study_copy`).

"Has a judgment" is a reverse-relation query (Study → items → assignments →
judgments, the related names the ORM resolves at run time), not a ``locked_at``
column that annotation would set: studies imports nothing of ours, nothing has
to be kept in sync with the judgments, and the question is asked only on these
edit paths (one EXISTS query), never on an annotator's request.

Also here: the one slug rule of every path that names a study (:func:`slug_error`),
the copy's title (:func:`free_copy_title`), and when the one-click "Normalise
typography" may turn that setting on (:func:`typography_lock_reason`: a draft
without judgments).
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Max, Q

from studies.models import Candidate, Item, Status, Study

#: Study fields whose change would change the meaning of the answers already stored.
LOCKED_FIELDS = ("protocol", "options", "labels", "multi_label", "allow_ties", "unit", "show_source",
                 "taxonomy", "severities", "allow_overlap", "esa_spans")
#: Candidate fields an annotator judged.
LOCKED_CANDIDATE_FIELDS = ("system", "text", "is_reference", "highlights")
#: Item fields an annotator read the candidates against.
LOCKED_ITEM_FIELDS = ("source", "source_context", "target_context")
COPY_HINT = "Use “Copy as new study” (admin) or `copy_study` to run it with the new setting."
RESERVED_SLUGS = {"import"}
#: A study's slug: what every path that names a study (admin, import page, import_study, copy) accepts.
SLUG_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]*")
SLUG_RULE = "only lowercase letters a–z, digits 0–9, hyphens (-) and underscores (_), starting with a letter or digit"
#: The suffix of a copy's title: " (copy)", then " (copy 2)", " (copy 3)", …
_COPY_TITLE = re.compile(r" \(copy(?: \d+)?\)$")


def slug_error(slug: str) -> str | None:
    """The one message for a slug a study cannot have (None when it may): empty, too long, bad characters, reserved.

    Whether the slug is already taken is left to the caller, whose message depends
    on what it was doing (an import never replaces a study; a copy needs a new one).
    """
    limit = Study._meta.get_field("slug").max_length or 80
    if not slug:
        return f"required: {SLUG_RULE}"
    if len(slug) > limit:
        return f"{slug[:24]!r}… has {len(slug)} characters: at most {limit}"
    if not SLUG_PATTERN.fullmatch(slug):
        return f"{slug!r} is not a valid slug: {SLUG_RULE}"
    if slug in RESERVED_SLUGS:
        return f"{slug!r} is reserved (it names a page): choose another"
    return None


def study_has_judgments(*, study: Study) -> bool:
    """True once any annotator has stored an answer to any of the study's items."""
    if study.pk is None:
        return False
    return Study.objects.filter(pk=study.pk, items__assignments__judgments__isnull=False).exists()


def study_has_assignments(*, study: Study) -> bool:
    """True once any item of the study has been handed out (to anyone, answered or not)."""
    if study.pk is None:
        return False
    return Study.objects.filter(pk=study.pk, items__assignments__isnull=False).exists()


def skip_clean_change_error(*, study: Study, proposed: Any = None) -> str | None:
    """Why ``prefill_skip_clean`` may not change (None when it may): which items are left out of the hand-out is
    fixed once an item has been handed out, so that a skipped item never has an assignment."""
    if study.pk is None:
        return None
    stored = Study.objects.filter(pk=study.pk).values_list("protocol_settings", flat=True).first()
    before = (stored or {}).get("prefill_skip_clean") if isinstance(stored, dict) else None
    proposed = study.protocol_settings if proposed is None else proposed
    after = proposed.get("prefill_skip_clean") if isinstance(proposed, dict) else None
    if before == after or not study_has_assignments(study=study):
        return None
    return (f"prefill_skip_clean cannot change from {before!r} to {after!r}: items of this study have already been "
            f"handed out, and which items are skipped as clean is fixed before that. {COPY_HINT}")


def study_judged_redundancy(*, study: Study) -> int:
    """The most annotators with a current answer on any one item: the floor for the study's redundancy."""
    result = (Item.objects.filter(study=study)
              .annotate(n=Count("assignments", filter=Q(assignments__judgments__is_current=True), distinct=True))
              .aggregate(top=Max("n")))
    return int(result["top"] or 0)


def locked_message(field: str, old: Any, new: Any) -> str:
    return (f"{field} cannot change from {old!r} to {new!r}: this study already has judgments, "
            f"given under {old!r}. {COPY_HINT}")


def study_change_errors(*, study: Study, changes: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Named errors ({field: message}) for the proposed values; empty when the change is allowed.

    The proposed values are ``changes`` (field → value) when given, else the
    study instance's own attributes, compared with what is stored. The lock
    is only looked up when a locked field or the redundancy actually changes.
    """
    if study.pk is None:
        return {}
    skip_error = (skip_clean_change_error(study=study, proposed=None if changes is None else changes["protocol_settings"])
                  if changes is None or "protocol_settings" in changes else None)
    if skip_error:
        return {"protocol_settings": skip_error, **_locked_field_errors(study, changes)}
    return _locked_field_errors(study, changes)


def _locked_field_errors(study: Study, changes: Mapping[str, Any] | None) -> dict[str, str]:
    proposed = dict(changes) if changes is not None else {f: getattr(study, f) for f in (*LOCKED_FIELDS, "redundancy")}
    stored = Study.objects.filter(pk=study.pk).values(*LOCKED_FIELDS, "redundancy").first()
    if stored is None:
        return {}
    changed = [f for f in LOCKED_FIELDS if f in proposed and proposed[f] != stored[f]]
    lowered = "redundancy" in proposed and proposed["redundancy"] is not None and proposed["redundancy"] < stored["redundancy"]
    if not changed and not lowered:
        return {}
    if not study_has_judgments(study=study):
        return {}
    errors = {f: locked_message(f, stored[f], proposed[f]) for f in changed}
    if lowered:
        floor = study_judged_redundancy(study=study)
        if proposed["redundancy"] < floor:
            errors["redundancy"] = (f"redundancy cannot go below {floor}: an item already has {floor} judgments. "
                                    "It may be raised, or lowered down to that.")
    return errors


def candidate_change_errors(*, candidate: Candidate, deleting: bool = False) -> dict[str, str]:
    """Named errors for adding, changing or deleting a candidate of a study that has judgments."""
    study = Study.objects.filter(items=candidate.item_id).first() if candidate.item_id else None
    if study is None:
        return {}
    if candidate.pk is None or deleting:
        action = "add a candidate to" if candidate.pk is None else "delete a candidate of"
        if study_has_judgments(study=study):
            return {"__all__": f"Cannot {action} item {candidate.item.external_id}: study {study.slug} already has "
                               f"judgments on its candidates. {COPY_HINT}"}
        return {}
    stored = Candidate.objects.filter(pk=candidate.pk).values(*LOCKED_CANDIDATE_FIELDS).first() or {}
    changed = [f for f in LOCKED_CANDIDATE_FIELDS if f in stored and getattr(candidate, f) != stored[f]]
    if not changed or not study_has_judgments(study=study):
        return {}
    return {f: f"A candidate's {f} cannot change: study {study.slug} already has judgments of this text. {COPY_HINT}"
            for f in changed}


def item_change_errors(*, item: Item) -> dict[str, str]:
    """Named errors for changing the source or context an annotator saw, once the study has judgments."""
    if item.pk is None:
        return {}
    stored = Item.objects.filter(pk=item.pk).values(*LOCKED_ITEM_FIELDS, "study_id").first()
    if stored is None:
        return {}
    changed = [f for f in LOCKED_ITEM_FIELDS if getattr(item, f) != stored[f]]
    study = Study(pk=stored["study_id"])
    if not changed or not study_has_judgments(study=study):
        return {}
    return {f: f"An item's {f} cannot change: its study already has judgments given with this text. {COPY_HINT}"
            for f in changed}


class StudyCopyError(Exception):
    """The copy's slug is unusable; ``errors`` names it."""

    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


def study_copy_slug_errors(slug: str) -> dict[str, str]:
    problem = slug_error(slug)
    if problem:
        return {"slug": problem}
    if Study.objects.filter(slug=slug).exists():
        return {"slug": f"a study {slug!r} already exists: choose another slug for the copy"}
    return {}


def free_copy_slug(study: Study) -> str:
    """``<slug>-copy``, or ``-copy-2``, … : the first one not taken."""
    base = f"{study.slug}-copy"[:70]
    slug, k = base, 1
    while Study.objects.filter(slug=slug).exists():
        k += 1
        slug = f"{base}-{k}"
    return slug


def free_copy_title(study: Study) -> str:
    """``<title> (copy)``, or ``(copy 2)``, … : the first title no study has, so the copy is told apart in lists.

    Copying a copy counts on from the original title ("T (copy)" → "T (copy 2)").
    """
    base = _COPY_TITLE.sub("", study.title)
    limit = Study._meta.get_field("title").max_length or 200
    k = 1
    while True:
        suffix = " (copy)" if k == 1 else f" (copy {k})"
        title = base[:limit - len(suffix)] + suffix
        if not Study.objects.filter(title=title).exists():
            return title
        k += 1


#: ``prolific_study_id``: a copy is another Prolific study, so its entry starts off (docs/crowd.md);
#: ``provenance``: a copy collects its own judgments (its items' selection is kept: ``study_copy``);
#: ``allocation_state``: computed from the study's own judgments (the copy keeps the ``allocation`` setting).
_NOT_COPIED = {"id", "slug", "title", "status", "created_at", "provenance", "prolific_study_id", "allocation_state"}


@transaction.atomic
def study_copy(*, study: Study, slug: str, title: str = "") -> Study:
    """A new draft study with the same settings, items, candidates and spam items; no annotators, no judgments.

    Its title is ``title`` when given, else :func:`free_copy_title` ("… (copy)"),
    so that the two studies are not confused in the study list and the admin.

    Spam items are copied, not regenerated: with the same seed and rate
    regeneration would draw the same copies anyway, and copying keeps the new
    study identical to what the first one showed even if spam generation
    changes between versions. Every public id is new; the seed is kept, so
    annotators of the copy see the same orders. Raises StudyCopyError for a bad slug.
    """
    errors = study_copy_slug_errors(slug)
    if errors:
        raise StudyCopyError(errors)
    values = {f.attname: getattr(study, f.attname) for f in Study._meta.concrete_fields if f.attname not in _NOT_COPIED}
    # The copy holds the same items, so how they were selected from their study file still describes it.
    selection = study.provenance.get("selection") if isinstance(study.provenance, dict) else None
    new = Study(slug=slug, title=title.strip() or free_copy_title(study), status=Status.DRAFT,
                provenance={"selection": selection} if selection else {}, **values)
    try:
        new.full_clean()
    except ValidationError as exc:
        raise StudyCopyError({k: " ".join(v) for k, v in exc.message_dict.items()}) from None
    new.save()
    # A copy's items start unassigned and open: the hand-out's counters and the skip of clean items (which needs
    # the suggestions, not copied: import_prefill on the copy) are recomputed below.
    item_fields = [f.attname for f in Item._meta.concrete_fields
                   if f.attname not in {"id", "study_id", "spam_of_id", "n_assigned", "is_open", "skipped_clean"}]
    old_items = list(study.items.order_by("pk"))
    real = [i for i in old_items if not i.is_spam]
    spam = [i for i in old_items if i.is_spam]
    new_pk: dict[int, int] = {}
    for batch in (real, spam):
        objs = [Item(study=new, n_assigned=0, **{f: getattr(i, f) for f in item_fields},
                     spam_of_id=new_pk.get(i.spam_of_id) if i.spam_of_id else None) for i in batch]
        Item.objects.bulk_create(objs, batch_size=2000)
        by_ext = {o.external_id: o.pk for o in objs}
        if any(pk is None for pk in by_ext.values()):  # backends that do not return pks from bulk_create
            by_ext = dict(new.items.values_list("external_id", "pk"))
        new_pk.update({i.pk: by_ext[i.external_id] for i in batch})
    cand_fields = [f.attname for f in Candidate._meta.concrete_fields if f.attname not in {"id", "item_id", "public_id"}]
    Candidate.objects.bulk_create(
        [Candidate(item_id=new_pk[c.item_id], **{f: getattr(c, f) for f in cand_fields})
         for c in Candidate.objects.filter(item__study=study).order_by("pk").iterator(chunk_size=5000)],
        batch_size=5000)
    new._recount_open_items()
    return new


def typography_lock_reason(*, study: Study) -> str | None:
    """Why the one-click "Normalise typography" may not turn the setting on for this study (None: it may).

    Only a draft without judgments: once annotators (pilot ones included) may have
    seen the candidates as stored, changing how they look would give the study's
    judgments two presentations. The admin still lets a researcher change the
    setting deliberately; the button is for the study being prepared.
    """
    if study.status != Status.DRAFT:
        return (f"Typography can be normalised in one click only while a study is a draft; this one is "
                f"{study.get_status_display().lower()}, so annotators may already have seen the candidates as stored, "
                "and changing how they look now would give its judgments two presentations. "
                "Use “Copy as new study” to run it again with typography normalised"
                + (", or set it back to draft if no one has answered yet." if study.status == Status.PILOT else "."))
    if study_has_judgments(study=study):
        return ("This draft already has (pilot) judgments, given with the typography as stored. "
                "Use “Copy as new study” to run it again with typography normalised.")
    return None


def typography_normalise(*, study: Study) -> Study:
    """Turn ``normalise_typography`` on for a draft study; ValidationError naming the field says why not."""
    if study.normalise_typography:
        return study
    reason = typography_lock_reason(study=study)
    if reason:
        raise ValidationError({"normalise_typography": [reason]})
    Study.objects.filter(pk=study.pk).update(normalise_typography=True)
    study.normalise_typography = True
    return study
