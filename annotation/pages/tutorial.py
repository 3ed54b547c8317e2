"""The practice (tutorial) screens: after the instructions, before the first real item.

GET shows practice item N (as JSON for ``Accept: application/json``: texts and opaque
candidate ids only); POST checks the answer on the server
(annotation/pages/tutorial_feedback.py) and shows what was expected, with the
study's explanation, and a Continue button. A JSON POST (``Content-Type:
application/json``, the annotation API's payload) gets the same feedback as
JSON. Nothing is stored but the annotator's progress (a signed cookie):
practice answers are never judgments.

Exempt from CSRF like the item page (annotation/pages/views.py): the credential is
the secret token in the URL, and nothing is written.
"""
from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods

from studies.models import Item

from annotation.pages import tutorial_feedback as tf
from annotation.handout.answers import JudgmentError
from annotation.pages.interface import page_context
from annotation.pages.links import page_url
from annotation.models import Annotator
from annotation.items.rendering import highlighted_lines, instructions_html
from annotation.pages.screens import option_views, readable_errors
from annotation.pages.span_screen import span_screen
from annotation.pages.views import _message, annotator_required

@require_GET
@annotator_required
def tutorial_next(request: HttpRequest, annotator: Annotator) -> HttpResponse:
    """The first practice screen not answered yet in this browser, else the real items."""
    total = len(tf.tutorial_items(annotator.study))
    answered = tf.progress_read(request, annotator)
    if answered >= total:
        return redirect(page_url(annotator, "item-current"))
    return redirect(page_url(annotator, "tutorial-step", answered + 1))


@csrf_exempt
@require_http_methods(["GET", "POST"])
@annotator_required
def tutorial_step(request: HttpRequest, annotator: Annotator, step: int) -> HttpResponse:
    study = annotator.study
    items = tf.tutorial_items(study)
    if not 1 <= step <= len(items):
        return _message(request, status=404, title=_("Item not found"), study=study,
                        message=_("This item is not one of yours. Open the link from your invitation again to go "
                                  "on with your own items."))
    cands = tf.ordered_candidates(study, annotator, step - 1)
    if request.method == "GET":
        if "application/json" in request.headers.get("Accept", ""):
            return JsonResponse(_item_json(annotator, step, cands))
        return _page(request, annotator, step, cands)
    as_json = request.content_type == "application/json"
    try:
        payload = _json_payload(request) if as_json else tf.payload_from_form(study=study, cands=cands, data=request.POST)
        result = tf.answer_check(study=study, item=items[step - 1], cands=cands, payload=payload)
    except JudgmentError as refused:
        if as_json:
            return JsonResponse({"errors": refused.errors}, status=400)
        return _page(request, annotator, step, cands, errors=refused.errors, status=422)
    next_url = _next_url(annotator, step, len(items))
    if as_json:
        response: HttpResponse = JsonResponse({**result, "next": next_url})
    else:
        response = _page(request, annotator, step, cands, result=result, next_url=next_url, answer=payload)
    tf.progress_write(response, annotator, max(step, tf.progress_read(request, annotator)))
    return response


def _item_json(annotator: Annotator, step: int, cands: list[dict[str, Any]]) -> dict[str, Any]:
    """A practice item for an API client: texts and opaque candidate ids, never systems or the gold answer."""
    study = annotator.study
    item = tf.tutorial_items(study)[step - 1]
    return {"step": step, "total": len(tf.tutorial_items(study)), "source": item.get("source", ""),
            "source_context": item.get("source_context", []), "target_context": item.get("target_context", []),
            "candidates": [{"id": c["id"], "text": c["text"], "highlights": c.get("highlights", [])} for c in cands]}


def _json_payload(request: HttpRequest) -> Any:
    try:
        return json.loads(request.body or b"null")
    except ValueError as exc:
        raise JudgmentError({"body": [f"Malformed JSON: {exc}"]}) from None


def _next_url(annotator: Annotator, step: int, total: int) -> str:
    if step < total:
        return page_url(annotator, "tutorial-step", step + 1)
    return page_url(annotator, "item-current")


def _page(request: HttpRequest, annotator: Annotator, step: int, cands: list[dict[str, Any]], *,
          errors: dict[str, list[str]] | None = None, result: dict[str, Any] | None = None,
          next_url: str = "", status: int = 200, answer: dict[str, Any] | None = None) -> HttpResponse:
    study = annotator.study
    item = tf.tutorial_items(study)[step - 1]
    letters = tf.letters_of(cands)
    rows = {r["id"]: r for r in (result or {}).get("candidates", [])}
    given = answer if isinstance(answer, dict) else {}
    expected = (result or {}).get("expected") or {}
    candidate_views = [{"letter": letters[c["id"]], "public_id": c["id"], "number": k + 1,
                        "lines": highlighted_lines(c["text"], _marked(c, rows.get(c["id"]))),
                        "span_rows": range(tf.SPAN_ROWS), "feedback": rows.get(c["id"]),
                        **_given_and_expected(c["id"], given, expected)}
                       for k, c in enumerate(cands)]
    labels = [{"value": label, "number": k + 1, "checked": label in (given.get("labels") or []),
               "expected": label in (expected.get("labels") or [])} for k, label in enumerate(study.labels)]
    options = [{**o, "expected": expected.get("choice") == o["value"]}
               for o in option_views(study, given.get("choice") if isinstance(given.get("choice"), str) else None)]
    question = study.question or study.spec.default_question(study)
    # Before the answer, span studies practise on the real marking interface (templates/annotation/_spans.html).
    marking = study.is_span_protocol and result is None
    span_parts = _span_parts(annotator, item, cands, candidate_views) if marking else {}
    context = {
        **page_context(study),
        **study.spec.page_parts(len(cands)),
        "study": study, "annotator": annotator, "step": step, "total": len(tf.tutorial_items(study)),
        "protocol": study.protocol, "is_span": study.is_span_protocol,
        "uses_spans": study.uses_spans, "uses_score": study.uses_score,
        "row_severities": study.effective_severities(),
        "row_categories": [c["name"] for c in study.effective_taxonomy()],
        "question": question, "question_is_study_wording": bool(study.question),
        "context": list(item.get("source_context" if study.show_source else "target_context") or []),
        # The span page shows the source beside each candidate itself.
        "source": item.get("source", "") if study.show_source and not marking else "",
        "show_source": study.show_source,
        "candidates": candidate_views, "rank_choices": list(range(1, len(cands) + 1)),
        "options": options, "labels": labels, "multi_label": study.multi_label, "allow_ties": study.allow_ties,
        "answered": result is not None, "practice": True,
        "errors": readable_errors(study=study, errors=errors or {}, letters=letters),
        "result": result, "explanation": instructions_html((result or {}).get("explanation", "")),
        "next_url": next_url,
        "post_url": page_url(annotator, "tutorial-step", step),
        "start_url": page_url(annotator, "start"),
        "marking": marking,
        **span_parts,
    }
    return render(request, "annotation/tutorial.html", context, status=status)


def _given_and_expected(cid: str, given: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
    """A card's answer as given on the practice form and as expected (after the answer), for the shared cards."""
    raw = given.get("ranks")
    ranks: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return {"rank": ranks.get(cid), "chosen": given.get("choice") == cid, "invalid": False,
            "expected_rank": (expected.get("ranks") or {}).get(cid), "expected": expected.get("choice") == cid}


def _marked(cand: dict[str, Any], row: dict[str, Any] | None) -> list[list[int]]:
    """What to mark in a candidate's text: its highlights, or after a span answer the expected error spans."""
    if row is None or not ("found" in row or "missed" in row):
        return list(cand.get("highlights", []))
    return [[v["start"], v["end"]] for v in row.get("found", []) + row.get("missed", []) if v["side"] == "target"]


def _span_parts(annotator: Annotator, item: dict[str, Any], cands: list[dict[str, Any]],
                views: list[dict[str, Any]]) -> dict[str, Any]:
    """The span page's context for a practice item: unsaved stand-ins for the item and its candidates."""
    study = annotator.study
    for view in views:
        view.update(invalid=False, errors=[])
    stand_in_item = Item(study=study, source=item.get("source", ""), source_sentences=[])
    return span_screen(study=study, item=stand_in_item, cands=tf.stand_ins(cands), candidate_views=views,
                       answer=None, show_source=study.show_source)
