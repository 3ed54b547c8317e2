"""Tutorial (practice) items: what each screen shows, checking an answer against the gold one, progress.

The items live on the study (``Study.tutorial``, made by studies/importing/tutorial.py),
never as Items: nothing here writes a judgment, an assignment or a count, so
a tutorial answer is in no export, report, QC figure or redundancy count.

Feedback is computed here, on the server, after the annotator answered; the
gold answer is never in the page before that. The annotator's answer goes
through the very validator of real answers (``annotation.handout.answers.judgment_validate``)
on unsaved stand-in candidates, so a practice answer is refused exactly as a
real one would be.

Comparison rules (docs/study-file.md, "Tutorial items"):

- ranking: correct when every candidate has its gold rank;
- choice: correct when the same candidate (or option) was chosen;
- judgment: correct when the same set of labels was given;
- mqm / esa: a gold span is *found* when a span of the annotator on the same
  side (target or source) overlaps it by at least one character; spans that
  overlap no gold span are *extra*; a found span with another severity (or,
  for MQM, category) is reported as such; an ESA score is *within range* when
  it is at most ``SCORE_TOLERANCE`` (20) points from the gold score. Correct:
  every gold span found with its severity (and category), no extra span, every
  score within range.

Progress (how many practice screens the annotator has answered) is kept in a
signed cookie scoped to the annotator's own link: no table, no migration; a
new browser starts the practice again, which costs nothing since practice
answers are never counted.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from django.http import HttpRequest, HttpResponse, QueryDict
from django.urls import reverse
from django.utils.translation import gettext as _

from studies.models import Candidate, Item, Study

from annotation.handout.answers import judgment_validate
from annotation.pages.cookies import signed_value
from annotation.pages.links import page_url
from annotation.models import Annotator, Assignment
from annotation.items.rendering import candidate_letter

SCORE_TOLERANCE = 20
#: Span rows of the practice form without JavaScript (per candidate).
SPAN_ROWS = 3
COOKIE_MAX_AGE = 60 * 60 * 24 * 60


# --- the items and their candidates ---------------------------------------------

def tutorial_items(study: Study) -> list[dict[str, Any]]:
    return list(study.tutorial or [])


def ordered_candidates(study: Study, annotator: Annotator, index: int) -> list[dict[str, Any]]:
    """The practice item's candidates in this annotator's seeded order (like real items, never file order)."""
    cands = list(tutorial_items(study)[index]["candidates"])
    random.Random(f"{study.seed}:tutorial:{annotator.sequence}:{index}").shuffle(cands)
    return cands


def letters_of(cands: list[dict[str, Any]]) -> dict[str, str]:
    return {c["id"]: candidate_letter(k) for k, c in enumerate(cands)}


def stand_ins(cands: list[dict[str, Any]]) -> list[Candidate]:
    """Unsaved candidates for the validator: pk = position + 1, the opaque id, the text."""
    return [Candidate(pk=k + 1, public_id=c["id"], system=c["system"], text=c["text"]) for k, c in enumerate(cands)]


# --- the annotator's answer ---------------------------------------------------------

def payload_from_form(*, study: Study, cands: list[dict[str, Any]], data: QueryDict) -> Any:
    """The API payload a practice form describes (incomplete answers are left for the validator to refuse):
    the protocol's own reading of the practice form (its spec's ``tutorial_answer_from_post``)."""
    return study.spec.tutorial_answer_from_post(study, stand_ins(cands), cands, data)


def answer_check(*, study: Study, item: dict[str, Any], cands: list[dict[str, Any]], payload: Any) -> dict[str, Any]:
    """The annotator's answer validated like a real one, then compared with the gold answer: the feedback.

    Raises JudgmentError (the API's 400 body, naming opaque candidate ids) when the answer is refused.
    """
    stand = stand_ins(cands)
    fake = Assignment(item=Item(study=study, source=item.get("source", "")))
    answer, _times = judgment_validate(assignment=fake, payload=payload, candidates=stand)
    by_pk = {str(c.pk): c.public_id for c in stand}
    by_system = {c["system"]: c["id"] for c in cands}
    return feedback(study=study, item=item, cands=cands, answer=_by_id(answer, by_pk),
                    gold=_by_id(item["gold"], by_system))


def _by_id(answer: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """An answer keyed by candidate pk (stored shape) or system (gold) re-keyed by opaque candidate id."""
    if "ranks" in answer:
        return {"ranks": {names[k]: r for k, r in answer["ranks"].items()}}
    if "choice" in answer:
        choice = answer["choice"]
        if "candidate" in choice:
            return {"choice": {"candidate": names[str(choice["candidate"])]}}
        return {"choice": dict(choice)}
    if "annotations" in answer:
        return {"annotations": {names[k]: v for k, v in answer["annotations"].items()}}
    return {"labels": list(answer.get("labels", []))}


# --- comparison -------------------------------------------------------------------

@dataclass
class Feedback:
    """What the practice screen says after an answer; ``data`` is also the JSON answer (opaque ids only)."""
    correct: bool
    messages: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


def feedback(*, study: Study, item: dict[str, Any], cands: list[dict[str, Any]], answer: dict[str, Any],
             gold: dict[str, Any]) -> dict[str, Any]:
    letters = letters_of(cands)
    texts = {c["id"]: c["text"] for c in cands}
    result = study.spec.tutorial_feedback(study=study, answer=answer, gold=gold, letters=letters, texts=texts,
                                          source=item.get("source", ""))
    return {"correct": result.correct, "messages": result.messages, **result.data,
            "explanation": item.get("explanation", "")}


def ranking_feedback(answer: dict, gold: dict, letters: dict[str, str]) -> Feedback:
    given, expected = answer["ranks"], gold["ranks"]
    rows, messages = [], []
    for cid, letter in letters.items():
        ok = given.get(cid) == expected[cid]
        rows.append({"id": cid, "letter": letter, "given": given.get(cid), "expected": expected[cid], "correct": ok})
        if ok:
            messages.append(_("Candidate %(letter)s: rank %(rank)s, as expected.") % {"letter": letter, "rank": expected[cid]})
        else:
            messages.append(_("Candidate %(letter)s: expected rank %(rank)s (you gave %(given)s).")
                            % {"letter": letter, "rank": expected[cid], "given": given.get(cid)})
    correct = all(r["correct"] for r in rows)
    return Feedback(correct, messages, {"candidates": rows, "expected": {"ranks": expected}})


def _choice_text(choice: dict[str, Any], letters: dict[str, str]) -> str:
    if "candidate" in choice:
        return _("candidate %(letter)s") % {"letter": letters[choice["candidate"]]}
    from annotation.pages.screens import OPTION_TEXT  # the options' wording in the interface language

    option = choice.get("option", "")
    return str(OPTION_TEXT[option][0]) if option in OPTION_TEXT else option


def choice_feedback(study: Study, answer: dict, gold: dict, letters: dict[str, str]) -> Feedback:
    given, expected = answer["choice"], gold["choice"]
    ok = given == expected
    message = (_("Expected: %(expected)s. That is your answer.") if ok else
               _("Expected: %(expected)s (you chose %(given)s).")) % {
        "expected": _choice_text(expected, letters), "given": _choice_text(given, letters)}
    public = {"candidate": expected["candidate"]} if "candidate" in expected else dict(expected)
    return Feedback(ok, [message], {"expected": {"choice": public.get("candidate") or public.get("option")},
                                    "expected_letter": letters.get(expected.get("candidate", ""), "")})


def labels_feedback(answer: dict, gold: dict) -> Feedback:
    given, expected = answer["labels"], gold["labels"]
    ok = set(given) == set(expected)
    message = (_("Expected: %(expected)s. That is your answer.") if ok else
               _("Expected: %(expected)s (you chose %(given)s).")) % {
        "expected": ", ".join(expected), "given": ", ".join(given)}
    return Feedback(ok, [message], {"expected": {"labels": expected}})


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> int:
    """Characters two spans share (0 on different sides)."""
    if a["side"] != b["side"]:
        return 0
    return max(0, min(a["end"], b["end"]) - max(a["start"], b["start"]))


def score_range(gold: float) -> tuple[float, float]:
    """The scores accepted for a gold ESA score: ±SCORE_TOLERANCE, within 0–100."""
    return max(0, gold - SCORE_TOLERANCE), min(100, gold + SCORE_TOLERANCE)


def _span_view(span: dict[str, Any], texts: dict[str, str]) -> dict[str, Any]:
    view = {k: span[k] for k in ("start", "end", "side", "severity", "category") if k in span}
    view["text"] = texts[span["side"]][span["start"]:span["end"]]
    return view


def _span_words(view: dict[str, Any]) -> str:
    label = view["severity"] + (f", {view['category']}" if view.get("category") else "")
    where = _(" in the source") if view["side"] == "source" else ""
    return f"“{view['text']}”{where} ({label})"


def spans_feedback(study: Study, answer: dict, gold: dict, letters: dict[str, str], texts: dict[str, str],
           source: str) -> Feedback:
    rows: list[dict[str, Any]] = []
    messages: list[str] = []
    correct = True
    for cid, letter in letters.items():
        given = answer["annotations"][cid]
        expected = gold["annotations"][cid]
        row, lines, ok = _candidate_spans(study, given, expected, {"target": texts[cid], "source": source})
        rows.append({"id": cid, "letter": letter, **row})
        correct = correct and ok
        messages.extend(_("Candidate %(letter)s: %(line)s") % {"letter": letter, "line": line} for line in lines)
    return Feedback(correct, messages, {"candidates": rows})


def _candidate_spans(study: Study, given: dict, expected: dict,
                     texts: dict[str, str]) -> tuple[dict[str, Any], list[str], bool]:
    row: dict[str, Any] = {}
    lines: list[str] = []
    ok = True
    if study.uses_spans:
        mine, gold_spans = given.get("spans", []), expected.get("spans", [])
        found, missed = [], []
        for g in gold_spans:
            best = max(mine, key=lambda s: _overlap(s, g), default=None)
            if best is None or _overlap(best, g) == 0:
                missed.append(_span_view(g, texts))
                continue
            view = {**_span_view(g, texts), "severity_ok": best["severity"] == g["severity"]}
            if "category" in g:
                view["category_ok"] = best.get("category") == g["category"]
            found.append(view)
        extra = [_span_view(s, texts) for s in mine if not any(_overlap(s, g) for g in gold_spans)]
        row.update(found=found, missed=missed, extra=extra)
        lines += _span_lines(found, missed, extra, bool(gold_spans))
        ok = not missed and not extra and all(v["severity_ok"] and v.get("category_ok", True) for v in found)
    if study.uses_score:
        low, high = score_range(expected["score"])
        within = low <= given["score"] <= high
        row["score"] = {"given": given["score"], "expected": expected["score"], "range": [low, high], "within": within}
        lines.append((_("score %(given)s is within the expected range %(low)s–%(high)s.") if within else
                      _("score %(given)s is outside the expected range %(low)s–%(high)s.")) %
                     {"given": _num(given["score"]), "low": _num(low), "high": _num(high)})
        ok = ok and within
    return row, lines, ok


def _num(value: float) -> str:
    return f"{value:g}"


def _span_lines(found: list[dict], missed: list[dict], extra: list[dict], has_gold: bool) -> list[str]:
    lines: list[str] = []
    if not has_gold and not extra:
        lines.append(_("no error, as expected."))
    for view in found:
        line = _("found %(span)s.") % {"span": _span_words(view)}
        if not view["severity_ok"]:
            line += " " + _("Expected severity: %(severity)s.") % {"severity": view["severity"]}
        if not view.get("category_ok", True):
            line += " " + _("Expected category: %(category)s.") % {"category": view["category"]}
        lines.append(line)
    lines += [_("missed %(span)s.") % {"span": _span_words(view)} for view in missed]
    lines += [_("you marked “%(text)s”, which the expected answer does not count as an error.") % {"text": view["text"]}
              for view in extra]
    return lines


# --- progress -------------------------------------------------------------------------

def _cookie_name(annotator: Annotator) -> str:
    return f"tutorial_{annotator.code}"


def _salt(annotator: Annotator) -> str:
    return f"annotation.pages.tutorial:{annotator.pk}"


def progress_read(request: HttpRequest, annotator: Annotator) -> int:
    """Practice screens answered so far in this browser (0 without a valid cookie)."""
    value = signed_value(request, _cookie_name(annotator), salt=_salt(annotator), default="0")
    return int(value) if value.isdigit() else 0


def progress_write(response: HttpResponse, annotator: Annotator, answered: int) -> None:
    response.set_signed_cookie(_cookie_name(annotator), str(answered), salt=_salt(annotator), max_age=COOKIE_MAX_AGE,
                               path=reverse("annotation:cookie-start"), httponly=True,
                               samesite="Lax")


def tutorial_entry_url(request: HttpRequest, annotator: Annotator, *, done_count: int) -> str:
    """Where the start page's button leads first: the next practice screen, or "" (straight to the items).

    Only before the first real answer: an annotator who already judged items (on another device,
    say) is not sent back to practice.
    """
    total = len(tutorial_items(annotator.study))
    if not total or done_count:
        return ""
    answered = progress_read(request, annotator)
    if answered >= total:
        return ""
    return page_url(annotator, "tutorial-step", answered + 1)
