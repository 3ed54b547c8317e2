"""Reads on the annotator's side: what an annotator may see of an assignment.

Everything returned here is safe to send to an annotator: no system names, no
reference or spam flags, no database ids (only opaque public ids).
"""
from __future__ import annotations

from typing import Any

from studies.models import Candidate, Item, Study, Suggestion, Unit
from studies.definition.sentences import lines_of, shown_sentences
from studies.definition.typography import shown_candidate

from annotation.handout import statements
from annotation.handout.suggestions import suggestion_payload, suggestions_shown
from annotation.items.document import document_blocks, earlier_payload
from annotation.items.item_keys import item_key
from annotation.items.span_config import span_block
from annotation.models import Annotator, Assignment, AssignmentStatus, Judgment


def annotator_by_token(token: str) -> Annotator | None:
    if not token or len(token) > 64:
        return None
    return statements.annotator_with_study(token)


def assignment_for_annotator(*, annotator: Annotator, public_id: str) -> Assignment | None:
    """The annotator's own assignment with this public id (None for anyone else's)."""
    return (Assignment.objects.select_related("item", "item__study")
            .filter(annotator=annotator, public_id=public_id).first())


def annotator_for_next(token: str) -> tuple[Annotator, Assignment | None, tuple[int, int, int, int]] | None:
    """The annotator with this token, their latest assignment and their progress counts (one query), or None."""
    if not token or len(token) > 64:
        return None
    return statements.annotator_for_next(token, done=AssignmentStatus.DONE, pending=AssignmentStatus.PENDING)


def progress_after(counts: tuple[int, int, int, int], delta: tuple[int, int, int] | None) -> tuple[int, int, int, int] | None:
    """Progress counts read before a hand-out, moved by what it changed (``Assignment.progress_delta``);
    None when that is not known (``progress`` reads them again)."""
    if delta is None:
        return None
    done, pending, mine_open, n_open = counts
    return done, pending + delta[0], mine_open + delta[1], n_open + delta[2]


def assignment_by_token(*, token: str, public_id: str, candidates: bool = False) -> Assignment | None:
    """The assignment with this public id of the annotator with this token, with both loaded (one query);
    ``candidates``: its item's candidates too (``Assignment.candidates_loaded``), in the same query.

    None for a wrong token or someone else's assignment; the caller tells the two apart.
    """
    if not token or len(token) > 64 or not public_id or len(public_id) > 64:
        return None
    return statements.assignment_by_token(token=token, public_id=public_id, candidates=candidates)


def assignment_previous(*, annotator: Annotator, before: Assignment | None) -> Assignment | None:
    """The judged assignment just before ``before`` (or the last judged one), for going back."""
    qs = annotator.assignments.filter(status=AssignmentStatus.DONE).select_related("item", "item__study")
    if before is not None:
        qs = qs.filter(sequence__lt=before.sequence)
    return qs.order_by("-sequence").first()


def assignment_following(*, annotator: Annotator, after: Assignment) -> Assignment | None:
    """The assignment just after ``after`` in the annotator's queue (done or pending; never one they skipped)."""
    return (annotator.assignments.filter(sequence__gt=after.sequence).exclude(status=AssignmentStatus.SKIPPED)
            .select_related("item", "item__study")
            .order_by("sequence").first())


def progress(*, annotator: Annotator, counts: tuple[int, int, int, int] | None = None) -> dict[str, int]:
    """{"done": judged items, "total": what this annotator can expect to judge in all}.

    The total is what they have judged, plus their unjudged item (also while they
    go back to revise an earlier one), plus what is still open to them (capped by
    the study's ``items_per_annotator``), so it can shrink while other
    annotators take the last slots of some items. One query over the
    annotator's own assignments and the study's maintained count of open items
    (annotation.handout.slots): never a count over the study's items. ``counts``: those
    four figures when the caller has them already (``next`` reads them with the token).
    """
    study: Study = annotator.study
    if counts is None:
        counts = statements.progress_counts(annotator_id=annotator.pk, study_id=study.pk,
                                            done=AssignmentStatus.DONE, pending=AssignmentStatus.PENDING)
    done, pending, mine_open, n_open = counts
    open_to_me = max(0, n_open - mine_open)
    total = done + pending + open_to_me
    if study.items_per_annotator:
        total = min(total, study.items_per_annotator)
    return {"done": done, "total": max(total, done)}


def item_candidates(assignment: Assignment) -> list[Candidate]:
    """The assignment's item's candidates in their stored order: those the hand-out just read
    (``Assignment.candidates_loaded``), else one query."""
    if assignment.candidates_loaded is not None:
        return list(assignment.candidates_loaded)
    return list(assignment.item.candidates.all())


def ordered_candidates(assignment: Assignment, candidates: list[Candidate] | None = None) -> list[Candidate]:
    if candidates is None:
        candidates = item_candidates(assignment)
    position = {pk: k for k, pk in enumerate(assignment.candidate_order)}
    return sorted(candidates, key=lambda c: position.get(c.pk, len(position)))


def current_judgment(assignment: Assignment) -> Judgment | None:
    return assignment.judgments.filter(is_current=True).first()


def answer_for_client(judgment: Judgment | None, candidates: list[Candidate]) -> dict[str, Any] | None:
    """A stored answer re-expressed with opaque candidate ids (to pre-fill a revision)."""
    if judgment is None:
        return None
    by_pk = {c.pk: c.public_id for c in candidates}
    answer = judgment.answer
    if "ranks" in answer:
        return {"ranks": {by_pk[int(pk)]: rank for pk, rank in answer["ranks"].items() if int(pk) in by_pk}}
    if "annotations" in answer:  # first: a pairwise answer holds its scores and, as a choice, its preference
        out: dict[str, Any] = {"annotations": {by_pk[int(pk)]: entry for pk, entry in answer["annotations"].items()
                                               if int(pk) in by_pk}}
        if isinstance(answer.get("prefill"), dict):
            out = {**out, **own_marks_and_fates(answer, by_pk)}
        if "choice" in answer:
            choice = answer["choice"]
            out["preference"] = by_pk.get(choice.get("candidate")) if "candidate" in choice else choice["option"]
        return out
    if "choice" in answer:
        choice = answer["choice"]
        return {"choice": by_pk.get(choice.get("candidate")) if "candidate" in choice else choice["option"]}
    return {"labels": answer.get("labels", [])}


def own_marks_and_fates(answer: dict[str, Any], by_pk: dict[int, str]) -> dict[str, Any]:
    """A stored answer with suggestions as the annotator gave it: ``annotations`` with their own spans only (the
    kept and edited suggestions taken out of the stored spans) and ``suggestions``, id → fate (with the edit)."""
    taken: dict[int, list[dict[str, Any]]] = {}
    fates: dict[str, dict[str, Any]] = {}
    for sid, record in (answer["prefill"].get("suggestions") or {}).items():
        fate = {"fate": record["fate"], **(record.get("edit") or {})}
        fates[sid] = fate
        if record["fate"] == "edited":
            taken.setdefault(record["candidate"], []).append(record["edit"])
    kept = {s.public_id: s for s in Suggestion.objects.filter(
        public_id__in=[sid for sid, r in fates.items() if r["fate"] == "kept"])}
    for sid, row in kept.items():
        taken.setdefault(row.candidate_id, []).append(row.as_span())
    annotations: dict[str, Any] = {}
    for pk, entry in answer["annotations"].items():
        if int(pk) not in by_pk:
            continue
        spans = list(entry.get("spans") or [])
        for span in taken.get(int(pk), []):
            same = next((k for k, s in enumerate(spans) if {x: s.get(x) for x in span} == span), None)
            if same is not None:
                spans.pop(same)
        annotations[by_pk[int(pk)]] = {**entry, **({"spans": spans} if "spans" in entry else {})}
    return {"annotations": annotations, "suggestions": fates}


def assignment_payload(*, assignment: Assignment, progress_data: dict[str, int],
                       candidates: list[Candidate] | None = None, judgment: Judgment | None = None) -> dict[str, Any]:
    """The API's view of an assignment (the annotator-safe fields only)."""
    item = assignment.item
    study = item.study
    cands = ordered_candidates(assignment, candidates)
    payload = {
        "assignment": assignment.public_id,
        "item_key": item_key(item.pk),
        "protocol": study.protocol,
        "unit": study.unit,
        "question": study.question,
        "allow_ties": study.allow_ties,
        "options": list(study.options),
        "labels": list(study.labels),
        "multi_label": study.multi_label,
        "source_language": item.source_language or study.source_language,  # per item in studies that mix directions
        "target_language": item.target_language or study.target_language,
        "context": {
            "source": list(item.source_context) if study.show_source else [],
            "target": [] if study.show_source else list(item.target_context),
        },
        "source": item.source if study.show_source else None,
        "source_sentences": lines_of(item.source, item.source_sentences) if study.show_source else [],
        "candidates": [_candidate_payload(c, normalise=study.normalise_typography) for c in cands],
        "document": document_payload(item=item, study=study, cands=cands) if study.unit == Unit.DOCUMENT else None,
        "progress": progress_data,
        "answer": answer_for_client(judgment, cands),
        "spans": span_block(study),
    }
    shown = suggestions_shown(assignment, cands)
    if shown is not None:
        by_pk = {c.pk: c.public_id for c in cands}
        payload["suggestions"] = [suggestion_payload(s, by_pk[s.candidate_id]) for s in shown.suggestions]
    return payload


def _candidate_payload(candidate: Candidate, *, normalise: bool) -> dict[str, Any]:
    """One candidate as the annotator gets it: the study's typographic normalisation applied, highlights moved."""
    text, highlights = shown_candidate(text=candidate.text, highlights=candidate.highlights, normalise=normalise)
    return {"id": candidate.public_id, "text": text, "highlights": highlights,
            "sentences": lines_of(text, shown_sentences(candidate.sentences, normalise=normalise))}


def study_by_slug(slug: str) -> Study | None:
    """The study behind a public entry link (e.g. Prolific's), or None."""
    if not slug or len(slug) > 80:
        return None
    return Study.objects.filter(slug=slug).first()


def assignments_done_count(*, annotator: Annotator) -> int:
    return annotator.assignments.filter(status=AssignmentStatus.DONE).count()


#: Answers needed before the start page promises a time.
ESTIMATE_MIN_ANSWERS = 20


def median_item_duration_ms(*, study: Study, minimum: int = ESTIMATE_MIN_ANSWERS) -> tuple[int | None, int]:
    """(median milliseconds per item, answers it is the median of) — (None, n) below ``minimum`` answers.

    Only answers that count: first answers to real (not spam) items of annotators who are neither
    pilots nor excluded, no faster than the study's ``min_seconds`` (QC's too-fast rule), so one
    speeder cannot promise "less than a minute". Two queries (a count, then the middle rows); the
    median, not the mean, so an item left open over lunch does not inflate the estimate.
    """
    qs = (Judgment.objects.filter(assignment__item__study=study, revision=1, duration_ms__isnull=False,
                                  duration_ms__gte=int((study.min_seconds or 0) * 1000),
                                  assignment__item__is_spam=False, assignment__annotator__is_pilot=False,
                                  assignment__annotator__excluded=False)
          .order_by("duration_ms").values_list("duration_ms", flat=True))
    n = qs.count()
    if n == 0 or n < minimum:
        return None, n
    middle = [d for d in qs[(n - 1) // 2:n // 2 + 1] if d is not None]
    return int(sum(middle) / len(middle)), n


def document_payload(*, item: Item, study: Study, cands: list[Candidate]) -> dict[str, Any]:
    """Where a document block sits in its document, and the earlier blocks' texts, as on the page.

    With the source: each earlier block's source sentences. Without it: each
    on-screen candidate's own sentences of that block, keyed by its opaque id
    (annotation/items/document.py says why no other candidate's text is ever shown).
    """
    blocks = document_blocks(item=item, with_texts=True)
    return {
        "block": blocks.number,
        "blocks": blocks.total,
        "previous": earlier_payload(earlier=blocks.earlier, study=study, cands=cands),
    }