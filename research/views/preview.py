"""Preview as annotator (staff only): any item of a study on the annotator's own item page; nothing is stored.

The page renders ``annotation/_item.html``, the template annotators get, for
the n-th item of the study (spam items included, in document order), in any
status, draft included. Its form posts back here: the answer goes through the
same validation as a real one (``judgment_validate``) and the page says what
would have been stored, but no annotator, assignment or judgment is created.
"""
from __future__ import annotations

from typing import Any

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotation.forms import answer_from_payload, payload_from_post
from annotation.models import Assignment
from annotation.screens import preview_screen
from annotation.services import JudgmentError, judgment_validate
from studies.models import Item, Study


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
    return "label(s) " + ", ".join(answer.get("labels", []))


@require_http_methods(["GET", "POST"])
@staff_member_required
def study_preview(request: HttpRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(Study, slug=slug)
    items = Item.objects.filter(study=study).order_by("order_key", "position", "pk")
    total = items.count()
    position = _position(request.GET.get("item"), total)
    item = items[position - 1] if total else None
    base = reverse("studies:preview", args=[study.slug])
    context: dict[str, Any] = {"study": study, "position": position, "total": total, "item": item,
                               "outcome": "", "preview_url": base}
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
            letters = {c.pk: view["letter"] for view in screen["candidates"] for c in candidates
                       if c.public_id == view["public_id"]}
            context["outcome"] = _outcome(validated, letters)
    post_url = f"{base}?item={position}"
    context.update(preview_screen(item=item, candidates=candidates, answer=answer, errors=errors,
                                  post_url=post_url, position=position, total=total))
    context.update({"study": study, "previous_url": f"{base}?item={position - 1}" if position > 1 else "",
                    "next_url": f"{base}?item={position + 1}" if position < total else ""})
    return render(request, "studies/preview.html", context, status=422 if errors else 200)
