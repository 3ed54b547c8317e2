"""The LLM judges on the report and compare pages, and their downloads (staff only).

Both pages show the block of :func:`evaluators.reports.selectors.judges_report_cached` (one computation per change
of the judgments or the judges, shared by the pages and ``judges.json``); ``judges/<pk>.jsonl`` is a judge's answers
as ``export_judge`` writes them, the file ``import_judge`` stores again.
"""
from __future__ import annotations

from typing import Any

from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from evaluators.judges.rows import judge_file_lines
from evaluators.models import LLMJudge
from evaluators.reports import selectors, study_stats
from studies.access import rules as access
from studies.access.audit import audit
from studies.models import Study


def _test_rows(judge: dict[str, Any], phenomena: list[str]) -> list[dict[str, Any]]:
    """One row per scope of the alt-test: every item, then each phenomenon."""
    scopes = [("all items", judge["alt_test"])] + [(p, judge["alt_test_by_phenomenon"][p]) for p in phenomena]
    rows = []
    for scope, test in scopes:
        if "error" in test:
            rows.append({"scope": scope, "error": test["error"]})
            continue
        rows.append({"scope": scope, **test, "n_tested": len(test["per_annotator"]),
                     "n_won": sum(a["rejected"] for a in test["per_annotator"])})
    return rows


def judges_context(request: HttpRequest, study: Study, options: dict[str, Any]) -> dict[str, Any] | None:
    """What the judges' section of a page shows (None when the study has no judge): the block, its rows, links."""
    try:
        block = selectors.judges_report_cached(study=study, options=options)
    except study_stats.ReportError as exc:
        return {"error": str(exc), "judges": []}
    if block is None:
        return None
    can_export = access.can(request.user, "export", study)
    judges = []
    for judge in block["judges"]:
        pk = judge["facts"]["pk"]
        judges.append({**judge, "tests": _test_rows(judge, block["phenomena"]),
                       "agreement_rows": [{"scope": p, **judge["agreement_by_phenomenon"][p]}
                                          for p in block["phenomena"]],
                       "labels_url": reverse("evaluators:report-judge-labels", args=[study.slug, pk])
                       if can_export else None,
                       "export_command": f"python manage.py export_judge {study.slug} --name {judge['name']} "
                                         f"--output {judge['name']}.jsonl"})
    query = request.GET.urlencode() if request.resolver_match and request.resolver_match.url_name == "report" else ""
    return {**block, "judges": judges,
            "json_url": reverse("evaluators:report-judges-json", args=[study.slug]) + (f"?{query}" if query else "")}


@require_GET
@staff_member_required
def judges_json(request: HttpRequest, slug: str) -> HttpResponse:
    """The judges' block as JSON (the report page's policies from the query string)."""
    study = access.study_for(request.user, slug, "report")
    options, errors = study_stats.report_options(request.GET)
    if errors:
        return JsonResponse({"errors": errors}, status=400)
    block = selectors.judges_report_cached(study=study, options=options)
    if block is None:
        raise Http404(f"Study {study.slug} has no LLM judge (python manage.py import_judge).")
    response = JsonResponse(block, json_dumps_params={"allow_nan": False, "ensure_ascii": False})
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-judges.json"'
    return response


@require_GET
@staff_member_required
def judge_labels(request: HttpRequest, slug: str, pk: int) -> StreamingHttpResponse:
    """One judge's answers as JSON Lines, the file ``import_judge`` reads (analysts and up: raw answers)."""
    study = access.study_for(request.user, slug, "export")
    judge = LLMJudge.objects.filter(study=study, pk=pk).first()
    if judge is None:
        raise Http404(f"Study {study.slug} has no judge {pk}.")
    audit(request.user, "judgments_exported", study, format="jsonl", history=False, via="report page",
          judge=judge.name)
    response = StreamingHttpResponse(judge_file_lines(study, judge), content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-judge-{judge.pk}.jsonl"'
    return response
