"""One annotator of one study (staff only): progress, speed, failed spam checks, revisions, timeline.

Linked from the quality table and the study page's annotator list. Exclusion uses
the quality page's forms (same URLs, same services); they come back to the quality page.
"""
from __future__ import annotations

import statistics

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from annotation.dashboard.annotator_detail import JudgmentRow, annotator_activity, annotator_counts
from annotation.pages.links import invitation_url
from annotation.models import Annotator
from annotation.quality.checks import annotator_quality
from studies.access import rules as access
from studies.models import Study

#: Timeline chart geometry (SVG user units; the chart scales to the page width).
CHART_WIDTH, CHART_HEIGHT, CHART_PAD = 720, 160, 24


def _timeline_bars(rows: list[JudgmentRow]) -> dict:
    """One bar per judgment in submission order, height = seconds on the item.

    The scale stops at three times the median so that one answer left open over lunch
    does not flatten every other bar; taller bars are drawn clipped and say so in their title.
    """
    seconds = [r.seconds for r in rows if r.seconds is not None]
    if not seconds:
        return {"bars": [], "top": 0}
    top = max(min(max(seconds), 3 * statistics.median(seconds)), 1.0)
    plot_h = CHART_HEIGHT - 2 * CHART_PAD
    step = (CHART_WIDTH - 2 * CHART_PAD) / len(rows)
    bars = []
    for i, r in enumerate(rows):
        value = r.seconds or 0.0
        h = max(plot_h * min(value, top) / top, 1.0)
        kind = "fast" if r.fast else ("spam" if r.is_spam else "")
        bars.append({"x": round(CHART_PAD + i * step + step * 0.1, 2), "w": round(max(step * 0.8, 0.5), 2),
                     "y": round(CHART_HEIGHT - CHART_PAD - h, 2), "h": round(h, 2), "kind": kind, "row": r,
                     "clipped": value > top})
    return {"bars": bars, "top": top, "width": CHART_WIDTH, "height": CHART_HEIGHT, "pad": CHART_PAD,
            "base": CHART_HEIGHT - CHART_PAD, "right": CHART_WIDTH - CHART_PAD}


@require_GET
@staff_member_required
def annotator_page(request: HttpRequest, slug: str, code: str) -> HttpResponse:
    study = access.study_for(request.user, slug, "quality")
    annotator = get_object_or_404(Annotator, study=study, code=code)
    timeline, failed = annotator_activity(annotator=annotator)
    return render(request, "studies/annotator.html", {
        "study": study, "a": annotator, "counts": annotator_counts(annotator=annotator),
        "q": annotator_quality(annotator=annotator), "timeline": timeline, "failed": failed,
        "revisions": [r for r in timeline if r.revision > 1], "chart": _timeline_bars(timeline),
        # The link carries the secret token: managers only (docs/access.md), not analysts.
        "link": invitation_url(annotator, request.build_absolute_uri("/")) if access.can(request.user, "invite", study)
        else "",
        "last_activity": timeline[-1].submitted_at if timeline else None,
    })
