"""The researcher's quality page: per-annotator spam checks, reference control, speed; exclusion.

One template serves the page and its htmx fragment (``_quality_table.html``):
sorting links have real hrefs and ``hx-get``; exclude / put back / apply-rule
forms post normally without JavaScript (then redirect back, keeping the sort)
and swap the table in place with htmx.
"""
from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.models import Annotator
from annotation.quality.checks import SORT_KEYS, quality_sorted, study_over_redundancy, study_quality
from annotation.quality.probes import probe_items_q
from annotation.quality.span_controls import study_span_controls
from annotation.handout.exclusion import annotator_exclude, annotator_include, study_apply_auto_exclusion
from config.http import HtmxHttpRequest

from studies.access import rules as access
from studies.access.audit import audit
from studies.models import Study

COLUMNS = [
    ("annotator", "Annotator", ""),
    ("n_judgments", "Judged", "Current answers (revisions replace earlier ones)."),
    ("spam_seen", "Spam seen", "Spam (control) items answered."),
    ("spam_failed", "Spam failed", "Spam checks failed: the scrambled candidate ranked better than or equal to a real one, picked, called a tie, or given the first label."),
    ("spam_failed_share", "Failed %", "Spam failed ÷ spam seen."),
    ("reference_first_rate", "Ref. won", "Share of real items with a reference where the reference won outright."),
    ("median_seconds", "Median s", "Median seconds per item."),
    ("fast_answers", "Too fast", "Answers under the study's minimum time."),
    ("excluded", "Status", "Excluded annotators drop out of reports; nothing is deleted."),
]
#: MQM/ESA: the same columns for control items with a generated error (annotation/quality/span_controls.py).
SPAN_COLUMNS = {
    "spam_seen": ("Controls seen", "Control items answered: a copy of a real item with one generated error "
                  "in one candidate (DA: only those whose original the annotator also scored)."),
    "spam_failed": ("Missed", "Controls missed: no major or critical span overlapping the generated error "
                    "(DA: the copy did not score lower than its original)."),
    "spam_failed_share": ("Missed %", "Missed ÷ controls seen (the miss rate)."),
}
SCORE_DROP_COLUMN = ("score_drop_p", "Score drop p",
                     "One-sided Mann–Whitney U p that the annotator scored originals higher than their degraded "
                     "copies (pairs they saw both of); — with fewer than two pairs. Small is good.")


#: Context probes (annotation/quality/probes.py): the rate of probes caught beside the local checks' catch rate.
PROBE_COLUMNS = [
    ("context_use_rate", "Context use", "Context probes caught ÷ answered, with its 95% Wilson interval: a term, "
     "pronoun, connective or form of address made wrong only in the document's context. Someone who reads each sentence alone "
     "misses them."),
    ("local_catch_rate", "Local catch", "Local checks passed ÷ answered (spam or generated-error controls), with "
     "its 95% Wilson interval: the sentence-level twin of the context-use rate."),
]


def _columns(study: Study) -> list[tuple[str, str, str]]:
    """The table's columns for this study's protocol (span studies: control wording, ESA: the score drop)."""
    columns = list(COLUMNS)
    if study.spec.generated_error_controls:
        columns = [(key, *SPAN_COLUMNS[key]) if key in SPAN_COLUMNS else (key, label, help_text)
                   for key, label, help_text in COLUMNS]
        if study.uses_score:
            at = [key for key, _, _ in columns].index("spam_failed_share") + 1
            columns.insert(at, SCORE_DROP_COLUMN)
    if _has_probes(study):
        at = [key for key, _, _ in columns].index("reference_first_rate")
        columns[at:at] = PROBE_COLUMNS
    return columns


def _has_probes(study: Study) -> bool:
    return bool(study.probe_rate) or study.items.filter(probe_items_q()).exists()


def _sorting(request: HttpRequest) -> tuple[str, str]:
    sort = request.GET.get("sort") or request.POST.get("sort") or ""
    direction = request.GET.get("dir") or request.POST.get("dir") or "asc"
    return (sort if sort in SORT_KEYS else ""), ("desc" if direction == "desc" else "asc")


def _context(study: Study, sort: str, direction: str, errors: dict[str, str] | None = None,
             reasons: dict[str, str] | None = None) -> dict:
    annotators = list(study.annotators.order_by("sequence"))
    by_code = {a.code: a for a in annotators}
    rows = quality_sorted(study_quality(study=study, annotators=annotators), sort=sort, descending=direction == "desc")
    columns = []
    for key, label, help_text in _columns(study):
        next_dir = "desc" if key == sort and direction == "asc" else "asc"
        aria = ("ascending" if direction == "asc" else "descending") if key == sort else "none"
        columns.append({"key": key, "label": label, "help": help_text, "next_dir": next_dir, "aria_sort": aria,
                        "numeric": key not in ("annotator", "excluded")})
    return {
        "study": study, "columns": columns, "sort": sort, "dir": direction,
        "rows": [{"q": q, "a": by_code[q.annotator], "error": (errors or {}).get(q.annotator, ""),
                  "reason": (reasons or {}).get(q.annotator, "")} for q in rows],
        "n_excluded": sum(a.excluded for a in annotators),
        "n_pilot": sum(a.is_pilot for a in annotators),
        "n_over_redundancy": study_over_redundancy(study=study),
        "show_score_drop": study.spec.compares_control_scores,
        "show_probes": _has_probes(study),
        "span_controls": study_span_controls(study=study),
    }


def _respond(request: HtmxHttpRequest, context: dict, status: int = 200) -> HttpResponse:
    context["may_exclude"] = access.can(request.user, "exclude", context["study"])
    template = "studies/_quality_table.html" if request.htmx else "studies/quality.html"
    return render(request, template, context, status=status)


def _back(study: Study, sort: str, direction: str) -> HttpResponse:
    url = reverse("studies:quality", args=[study.slug])
    return redirect(f"{url}?sort={sort}&dir={direction}" if sort else url)


@require_GET
@staff_member_required
def study_quality_page(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    study = access.study_for(request.user, slug, "quality")
    sort, direction = _sorting(request)
    return _respond(request, _context(study, sort, direction))


@require_POST
@staff_member_required
def quality_exclude(request: HtmxHttpRequest, slug: str, code: str) -> HttpResponse:
    """Exclude one annotator with a reason; a missing reason is shown next to that annotator's form."""
    study = access.study_for(request.user, slug, "exclude")
    annotator = get_object_or_404(Annotator, study=study, code=code)
    sort, direction = _sorting(request)
    reason = request.POST.get("reason", "")
    try:
        annotator_exclude(annotator=annotator, reason=reason)
    except ValidationError as exc:
        message = " ".join(exc.message_dict.get("reason", exc.messages))
        context = _context(study, sort, direction, errors={code: f"reason: {message}"}, reasons={code: reason})
        # htmx only swaps 2xx responses: the fragment with the error comes back as 200; a plain post gets a 400 page.
        return _respond(request, context, status=200 if request.htmx else 400)
    audit(request.user, "excluded", study, annotator=annotator.code, reason=reason, via="quality page")
    if request.htmx:
        return _respond(request, _context(study, sort, direction))
    return _back(study, sort, direction)


@require_POST
@staff_member_required
def quality_include(request: HtmxHttpRequest, slug: str, code: str) -> HttpResponse:
    """Put an excluded annotator back: their judgments count again."""
    study = access.study_for(request.user, slug, "exclude")
    annotator = get_object_or_404(Annotator, study=study, code=code)
    over = annotator_include(annotator=annotator)
    audit(request.user, "included", study, annotator=annotator.code, over_redundancy=over, via="quality page")
    sort, direction = _sorting(request)
    if request.htmx:
        return _respond(request, _context(study, sort, direction))
    return _back(study, sort, direction)


@require_POST
@staff_member_required
def quality_apply_rule(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Apply the study's automatic exclusion rule to everyone now (e.g. after changing the share)."""
    study = access.study_for(request.user, slug, "exclude")
    for excluded in study_apply_auto_exclusion(study=study):
        audit(request.user, "excluded", study, annotator=excluded.code, reason=excluded.exclusion_reason,
              via="quality page: automatic rule")
    sort, direction = _sorting(request)
    if request.htmx:
        return _respond(request, _context(study, sort, direction))
    return _back(study, sort, direction)
