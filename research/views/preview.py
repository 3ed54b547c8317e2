"""Preview as annotator (staff only): any item of a study on the annotator's own item page; nothing is stored.

The page renders ``annotation/_item.html``, the template annotators get, for
the n-th item of the study (spam items included, in document order), in any
status, draft included. Its form posts back here: the answer goes through the
same validation as a real one (``judgment_validate``) and, for a spam (control)
copy, through the quality check's own rule (``annotation.quality.checks.spam_check_failed``).
A valid answer moves on to the next item, as Enter does for an annotator, and
the next page says what would have been stored for the previous one and
whether it passes the spam check; no annotator, assignment or judgment is
created. The outcome travels in the redirect's query string, signed, so the
preview keeps nothing on the server either.

What only the researcher sees (the preview bar, the outline of the scrambled
card and its note) is drawn by ``studies/preview.html``
around the annotator's template, never by the annotator's template itself. Like
annotators, the researcher sees no system names and no reference mark here.
"""
from __future__ import annotations

from typing import Any

from django.contrib.admin.views.decorators import staff_member_required
from django.core import signing
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotation.pages.forms import answer_from_payload, payload_from_post
from annotation.models import Assignment
from annotation.quality.probes import probe_caught, study_probes
from studies.controls.spam import PROBE_KEY
from annotation.quality.checks import spam_check_failed
from annotation.pages.screens import preview_screen
from annotation.handout.services import JudgmentError, judgment_validate
from studies.access import rules as access
from studies.models import Candidate, Item, Study

_SALT = "research.preview.outcome"

def _position(raw: str | None, total: int) -> int:
    """The 1-based item number asked for, clamped to the study's items (a bad value means the first)."""
    try:
        number = int(raw or 1)
    except ValueError:
        return 1
    return min(max(number, 1), max(total, 1))


def _outcome(answer: dict[str, Any], candidates: dict[int, str]) -> str:
    """The validated answer in the researcher's words (candidate letters, as on the screen)."""
    if "ranks" in answer:
        return "ranks " + ", ".join(f"{candidates.get(int(pk), pk)} = {rank}" for pk, rank in
                                    sorted(answer["ranks"].items(), key=lambda kv: kv[1]))
    if "choice" in answer:
        choice = answer["choice"]
        return f"choice {candidates.get(choice['candidate'], '?')}" if "candidate" in choice else \
            f"option {choice['option']}"
    if "annotations" in answer:
        return "; ".join(_annotation_outcome(candidates.get(int(pk), pk), entry)
                         for pk, entry in answer["annotations"].items())
    return "label(s) " + ", ".join(answer.get("labels", []))


def _annotation_outcome(letter: Any, entry: dict[str, Any]) -> str:
    """One candidate's span answer in words: its errors by severity (or none) and its score."""
    spans = entry.get("spans", [])
    words = [f"{letter}: " + (", ".join(f"{s['severity']} {s.get('category', '')} [{s['start']}, {s['end']})"
                                        f"{' in the source' if s['side'] == 'source' else ''}".replace("  ", " ")
                                        for s in spans) or "no error")]
    if "score" in entry:
        words.append(f"score {entry['score']}")
    return " ".join(words)


def spam_rule(study: Study) -> str:
    """The spam check's rule for this study's protocol, in words."""
    return study.spec.spam_rule(study)


def spam_outcome(*, study: Study, candidates: list[Candidate], answer: dict[str, Any]) -> str | None:
    """What the quality check would make of this valid answer: None on a real item, else "passed" or "failed".

    The quality page's own rule (``annotation.quality.checks.spam_check_failed``), on the item's scrambled candidate;
    on a context probe its rule (``annotation.quality.probes.probe_caught``): caught passes, missed fails.
    """
    spam = next((c for c in candidates if c.is_spam), None)
    if spam is None:
        return None
    probe = study_probes(study).get(spam.item_id) if PROBE_KEY in (spam.item.metadata or {}) else None
    if probe is not None:
        return "passed" if probe_caught(study=study, answer=answer, probe=probe) else "failed"
    return "failed" if spam_check_failed(study=study, answer=answer, spam_pk=spam.pk) else "passed"


def _letters(screen: dict[str, Any], candidates: list[Candidate]) -> dict[int, str]:
    """Candidate pk → the letter it has on this preview screen."""
    by_public = {c.public_id: c.pk for c in candidates}
    return {by_public[view["public_id"]]: view["letter"] for view in screen["candidates"]}


def _spam_letter(screen: dict[str, Any], candidates: list[Candidate]) -> str:
    """For the researcher only: the letter of the scrambled candidate on this screen ('' on a real item)."""
    spam = {c.public_id for c in candidates if c.is_spam}
    return next((view["letter"] for view in screen["candidates"] if view["public_id"] in spam), "")


def _last_outcome(raw: str | None) -> dict[str, Any] | None:
    """The previous item's outcome carried by the redirect (None when absent or not signed by us)."""
    if not raw:
        return None
    try:
        value = signing.loads(raw, salt=_SALT)
    except signing.BadSignature:
        return None
    return value if isinstance(value, dict) else None


@require_http_methods(["GET", "POST"])
@staff_member_required
def study_preview(request: HttpRequest, slug: str) -> HttpResponse:
    study = access.study_for(request.user, slug, "preview")
    items = Item.objects.filter(study=study).order_by("order_key", "position", "pk")
    total = items.count()
    position = _position(request.GET.get("item"), total)
    item = items[position - 1] if total else None
    base = reverse("studies:preview", args=[study.slug])
    context: dict[str, Any] = {"study": study, "position": position, "total": total, "item": item,
                               "outcome": None, "preview_url": base}
    if item is None:
        return render(request, "studies/preview.html", context)
    item.study = study
    candidates = list(item.candidates.all())
    answer = errors = None
    if request.method == "POST":
        payload = payload_from_post(study=study, candidates=candidates, data=request.POST)
        answer = answer_from_payload(payload)
        try:
            validated, _ = judgment_validate(assignment=Assignment(item=item), payload=payload, candidates=candidates)
        except JudgmentError as refused:
            errors = refused.errors
        else:
            screen = preview_screen(item=item, candidates=candidates, answer=None, errors=None, post_url="",
                                    position=position, total=total)
            outcome = {"position": position, "text": _outcome(validated, _letters(screen, candidates)),
                       "spam": spam_outcome(study=study, candidates=candidates, answer=validated)}
            following = min(position + 1, total)
            token = signing.dumps(outcome, salt=_SALT, compress=True)
            return HttpResponseRedirect(f"{base}?item={following}&last={token}", status=303)
    post_url = f"{base}?item={position}"
    screen = preview_screen(item=item, candidates=candidates, answer=answer, errors=errors,
                            post_url=post_url, position=position, total=total)
    context.update(screen)
    last = _last_outcome(request.GET.get("last"))
    context.update({
        "study": study,
        "previous_url": f"{base}?item={position - 1}" if position > 1 else "",
        "next_url": f"{base}?item={position + 1}" if position < total else "",
        "outcome": last,
        "outcome_url": f"{base}?item={last['position']}" if last and isinstance(last.get("position"), int) else "",
        "outcome_is_this_item": bool(last and last.get("position") == position),
        "spam_letter": _spam_letter(screen, candidates),
        "spam_rule": spam_rule(study),
    })
    return render(request, "studies/preview.html", context, status=422 if errors else 200)
