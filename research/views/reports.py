"""The study report page and its downloads (staff only).

All three read one cached report (``selectors.study_report_cached``), the
same dict ``agreement SLUG --json`` prints, so page, downloads, API and
command agree by construction.  Policy toggles are GET parameters
(``?ties=drop&spam=keep&excluded=keep``), so every view is a plain,
bookmarkable URL.
"""
from __future__ import annotations

import io
from typing import Any, Iterable, Iterator, Sequence
from urllib.parse import quote

from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase, JsonResponse, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from studies.access import rules as access
from formats.csvcells import csv_writer
from studies.models import Study

from evaluators.reports import selectors, study_stats
from evaluators.reports import svg as report_svg
from evaluators.reports import paper
from evaluators.reports import span_page, span_svg
from evaluators.reports.tables import TABLES, ties_label
from evaluators.reports.text import COEFFICIENT_NAMES, coefficient_name
from research.views.judges import judges_context

#: Every download: the summary tables plus the ratings actually used.
DOWNLOADS = (*TABLES, "ratings")
#: The downloads of an MQM / ESA / DA study: its own ranking, errors and span agreement tables.
SPAN_DOWNLOADS = ("coefficients", "pairwise_kappa", "by_phenomenon", *span_page.SPAN_TABLES, "ratings")
#: Where the span statistics are defined (docs/statistics.md, section 7; the heading's anchor).
SPAN_DOCS_ANCHOR = "#7-span-and-score-protocols-in-the-study-report-evaluatorsreportsspan_reportpy"


def _downloads_of(study: Study) -> tuple[str, ...]:
    """The CSV tables of this study's report (span protocols have their own)."""
    return SPAN_DOWNLOADS if study.spec.per_candidate_annotations else DOWNLOADS


def _table_builder(study: Study, table: str) -> Any:
    """The builder of one CSV table for this study's protocol."""
    if study.spec.per_candidate_annotations and table in span_page.SPAN_TABLES:
        return span_page.SPAN_TABLES[table]
    return TABLES[table]


def _span_context(study: Study, report: dict, query: str) -> dict[str, Any] | None:
    """What the span blocks of the page show (None for the other protocols): tables, plots, download URLs."""
    if not span_page.is_span_report(report):
        return None
    kind = span_page.score_kind(report)
    return {
        "kind": kind, "kind_label": kind.upper(),
        "ranking_rows": span_page.ranking_rows(report),
        "n_significant": sum(bool(h.get("significant")) for h in (report.get("ranking") or {}).get("head_to_head") or []),
        "weights_text": span_page.weights_text((report.get("ranking") or {}).get("score") or {}),
        "score_svg": span_svg.score_svg(report), "errors_svg": span_svg.errors_svg(report),
        "errors": span_page.error_matrix(report), "agreement": span_page.span_agreement_view(report),
        "errors_csv": reverse("evaluators:report-csv", args=[study.slug, "errors"]) + query,
        "agreement_csv": reverse("evaluators:report-csv", args=[study.slug, "span_agreement"]) + query,
        "docs_url": reverse("docs", args=["statistics.md"]) + SPAN_DOCS_ANCHOR,
    }


def _query(options: dict[str, Any]) -> str:
    """The options as a query string (only those differing from the defaults)."""
    defaults, _ = study_stats.report_options({})
    names = {"n_boot": "bootstrap"}
    parts = [f"{names.get(k, k)}={v}" for k, v in options.items() if defaults.get(k) != v]
    return ("?" + "&".join(parts)) if parts else ""


def _flags(options: dict[str, Any]) -> str:
    """The options as command-line flags (only those differing from the defaults)."""
    defaults, _ = study_stats.report_options({})
    names = {"n_boot": "bootstrap"}
    return "".join(f" --{names.get(k, k).replace('_', '-')} {v}" for k, v in options.items() if defaults.get(k) != v)


def _coefficient_rows(report: dict) -> list[dict]:
    """One row per coefficient: the main block beside the other ties variant, with the method."""
    other = report.get("without_ties") or report.get("with_ties")
    weights = report.get("weights", "identity")
    rows = []
    for key in COEFFICIENT_NAMES:
        if key not in report["coefficients"]:
            continue
        rows.append({
            "key": key, "name": coefficient_name(key, weights), "main": report["coefficients"][key],
            "other": (other or {}).get("coefficients", {}).get(key), "method": report["methods"].get(key, ""),
        })
    return rows


#: What each policy of the form does (shown for the policies the study's protocol has).
POLICY_HELP = {
    "ties": "keep “tie” as a category, or drop tied units (both variants are always shown)",
    "spam": "control items out of (drop) or in (keep) agreement",
    "excluded": "annotators excluded for quality out (drop) or in (keep)",
    "pilot": "pilot annotators’ judgments out (drop) or in (keep)",
    "ranking_coding": "label a candidate pair by the winning system (k+1 categories) or by position "
                      "(first / second / tie)",
    "ranking_order": "order the WMT ranking by mean raw score (raw, WMT23) or by mean z-score (z, WMT21/22)",
}


def _context(study: Study, report: dict, options: dict[str, Any]) -> dict[str, Any]:
    query = _query(options)
    ties_main = ties_label(report)
    span = study.spec.per_candidate_annotations
    choices = {**({} if span else {"ties": ("keep", "drop")}),
               "spam": ("drop", "keep"), "excluded": ("drop", "keep"),
               "pilot": ("drop", "keep"), "weights": ("identity", "quadratic", "linear", "ordinal"),
               **({"ranking_coding": study.spec.ranking_codings} if study.spec.ranking_codings else {}),
               **({"ranking_order": ("raw", "z")} if span else {})}
    other_key = "without_ties" if report["policies"]["ties"] == "keep" else "with_ties"
    return {
        "study": study, "report": report, "options": options, "query": query,
        "contests_reference": study.spec.contests_reference,
        "protocol_report_template": study.spec.report_template,
        "ties_main": ties_main, "ties_other": other_key.replace("_", " "), "other": report.get(other_key),
        "other_key": other_key,
        "coefficient_rows": _coefficient_rows(report),
        "phenomena": [{"name": name, **block, "ac1": block["coefficients"].get("gwet_ac1"),
                       "ac1_other": ((block.get(other_key) or {}).get("coefficients") or {}).get("gwet_ac1"),
                       "path": "by_phenomenon/" + quote(name, safe="")}
                      for name, block in report["by_phenomenon"].items()],
        "ranking_svg": report_svg.ranking_svg(report.get("ranking")),
        "phenomenon_svg": report_svg.phenomenon_svg(report["by_phenomenon"]),
        "phenomenon_chart_note": report_svg.phenomenon_chart_note(report["by_phenomenon"]),
        "kappa_svg": report_svg.kappa_heatmap_svg(report.get("pairwise_cohen_kappa", [])),
        "kappa_min_shared": report_svg.KAPPA_MIN_SHARED,
        "downloads": [(name, reverse("evaluators:report-csv", args=[study.slug, name]) + query)
                      for name in _downloads_of(study)],
        "span": _span_context(study, report, query),
        "json_url": reverse("evaluators:report-json", args=[study.slug]) + query,
        "api_url": reverse("api-study-agreement", args=[study.slug]) + query,
        "command": f"python manage.py agreement {study.slug}{_flags(options)} --json",
        "export_command": f"python manage.py export_judgments {study.slug} --format csv --output {study.slug}.csv",
        "judgments_command": f"python manage.py agreement --judgments {study.slug}.csv{_flags(options)} --json",
        "other_key": other_key,
        "choices": choices,
        "methods_paragraph": paper.methods_paragraph(report),
        "policy_help": [(name, POLICY_HELP[name]) for name in choices if name in POLICY_HELP],
        "paper_tables": [(f"{name}.{ext}", reverse("evaluators:report-paper", args=[study.slug, name, ext]) + query)
                         for name in paper.TABLE_NAMES for ext in ("tex", "md")
                         if name != "ranking" or report.get("ranking")],
        "dropped": sorted(report["policies"].get("dropped", {}).items()),
    }


def _study_and_options(request: HttpRequest, slug: str,
                       action: str = "report") -> tuple[Study, dict[str, Any], dict[str, list[str]]]:
    study = access.study_for(request.user, slug, action)
    options, errors = study_stats.report_options(request.GET)
    return study, options, errors


@require_GET
@staff_member_required
def report(request: HttpRequest, slug: str) -> HttpResponse:
    """The study report: agreement with methods, per phenomenon, control, ranking; plots and downloads."""
    study, options, errors = _study_and_options(request, slug)
    if errors:
        return render(request, "evaluators/report_error.html",
                      {"study": study, "errors": errors, "options": options}, status=400)
    try:
        data = selectors.study_report_cached(study=study, options=options)
    except study_stats.ReportError as exc:
        return render(request, "evaluators/report_error.html",
                      {"study": study, "errors": {"study": [str(exc)]}, "options": options}, status=400)
    return render(request, "evaluators/report.html",
                  {**_context(study, data, options), "judges": judges_context(request, study, options)})


@require_GET
@staff_member_required
def report_json(request: HttpRequest, slug: str) -> HttpResponse:
    """The report as JSON, byte-for-byte the structure of ``agreement SLUG --json``."""
    study, options, errors = _study_and_options(request, slug)
    if errors:
        return JsonResponse({"errors": errors}, status=400)
    data = selectors.study_report_cached(study=study, options=options)
    response = JsonResponse(data, json_dumps_params={"allow_nan": False, "ensure_ascii": False})
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-report.json"'
    return response


@require_GET
@staff_member_required
def report_paper_table(request: HttpRequest, slug: str, table: str, ext: str) -> HttpResponse:
    """The ranking or agreement table for a paper: LaTeX (booktabs, ``.tex``) or Markdown (``.md``)."""
    if table not in paper.TABLE_NAMES or ext not in ("tex", "md"):
        raise Http404(f"No table {table}.{ext}; tables: " + ", ".join(f"{t}.tex, {t}.md" for t in paper.TABLE_NAMES))
    study, options, errors = _study_and_options(request, slug)
    if errors:
        return JsonResponse({"errors": errors}, status=400)
    text = paper.table(selectors.study_report_cached(study=study, options=options), table,
                       "latex" if ext == "tex" else "markdown")
    kind = "text/x-tex" if ext == "tex" else "text/markdown"
    response = HttpResponse(text, content_type=f"{kind}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-{table}.{ext}"'
    return response


def _csv_stream(columns: list[str], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if v is None else v for v in row])
        if buffer.tell() > 65536:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate(0)
    yield buffer.getvalue()


@require_GET
@staff_member_required
def report_csv(request: HttpRequest, slug: str, table: str) -> HttpResponseBase:
    """One table of the report as CSV (unrounded numbers); ``ratings`` is the long table agreement used."""
    if table not in DOWNLOADS and table not in SPAN_DOWNLOADS:
        raise Http404(f"No table {table!r}; tables: {', '.join(DOWNLOADS)}")
    # The ratings table is the judgments themselves (one row per rating): a raw export, analysts and up.
    study, options, errors = _study_and_options(request, slug, "export" if table == "ratings" else "report")
    if table not in _downloads_of(study):
        raise Http404(f"No table {table!r} for a {study.protocol} study; tables: {', '.join(_downloads_of(study))}")
    if errors:
        return JsonResponse({"errors": errors}, status=400)
    rows: Iterable[Sequence[Any]]
    if table == "ratings":
        frame = study_stats.study_ratings(study, **options)
        columns, rows = list(frame.columns), frame.itertuples(index=False, name=None)
    else:
        columns, rows = _table_builder(study, table)(selectors.study_report_cached(study=study, options=options))
    response = StreamingHttpResponse(_csv_stream(columns, rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-{table}.csv"'
    return response

