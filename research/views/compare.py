"""The human-vs-evaluator comparison page and its researcher API (staff only).

Both call :func:`evaluators.comparison.selectors.study_comparison`, the function
behind ``compare SLUG --json``, so page, API and command cannot disagree.
Writes (running built-in evaluators, importing a score file) go through the
services in :mod:`evaluators.metrics.scores`; evaluators, large imports and the
statistics of a large study run as background jobs (:mod:`evaluators.jobs`),
whose progress the page polls.
"""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from config.http import HtmxHttpRequest
from config.queryparams import SchemaCheckedAPIView
from protocols import registry
from protocols.registry import protocol_named
from studies.access import rules as access
from studies.access.audit import audit
from studies.models import Study

from evaluators.comparison.display import (contrastive_table, corpus_groups, dip_rows, mean_rows, mean_units,
                                           t_test_groups)
from research.forms import CompareOptionsForm, EvaluatorRunForm, ScoreImportForm
from evaluators.comparison.plot import scatter
from evaluators.comparison.readiness import study_compare_readiness
from evaluators.comparison.selectors import evaluators_for_study
from evaluators.jobs import DEFAULT_COMPARISON, comparison_or_job, job_submit, study_jobs
from evaluators.metrics.scores import ScoreFileError, scores_import
from evaluators.metrics.study_corpus import study_references
from evaluators.models import EvaluationJob, JobKind
from evaluators.reports.study_stats import report_options
from research.views.judges import judges_context

METHODS = ("pearson", "spearman", "kendall")


def _num(value: Any, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _evaluator_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One display row per evaluator: item- and system-level numbers, formatted, plus its scatter plot."""
    human = result["human"]["systems"]
    rows = []
    for e in result["evaluators"]:
        il, sl = e.get("item_level") or {}, e.get("system_level") or {}
        ac1 = il.get("ac1") or {}
        better = "lower" if not e["system_score_higher_is_better"] else "higher"
        points = [(s, human[s]["score"], v["score"]) for s, v in e["systems"].items() if s in human]
        rows.append({
            "name": e["name"], "kind": e["kind"], "description": e["description"],
            "direction": "higher" if e["higher_is_better"] else "lower",
            "system_score": {"dip_eq1": "DiP Eq. 1 (Σ ref − sys)", "corpus": "corpus"}.get(e["system_score"], "mean"),
            "dip": e["system_score"] == "dip_eq1", "score_direction": better,
            "item_n": il.get("n"), "ac1": _num(ac1.get("value")),
            "ac1_ci": f"{_num(ac1.get('ci_low'))} … {_num(ac1.get('ci_high'))}" if ac1.get("value") is not None else "",
            "accuracy": _num(il.get("accuracy")), "tau": _num(il.get("kendall_tau")),
            "item_note": il.get("note", ""),
            "correlations": [{"method": m, "value": _num((sl.get(m) or {}).get("value")),
                              "ci": (f"{_num(sl[m]['ci_low'])} … {_num(sl[m]['ci_high'])}"
                                     if sl.get(m) and sl[m].get("ci_low") is not None else ""),
                              "note": (sl.get(m) or {}).get("note", "")} for m in METHODS],
            "plot": scatter(points, x_label=f"human {_human_label(result, result['human']['score'])}"
                            if result["human"]["score"] in ("mqm", "esa")
                            else f"human {result['human']['score'].replace('_', ' ')}",
                            y_label=f"{e['name']} ({better} is better)"),
        })
    return rows


def _human_label(result: dict[str, Any], human_score: str) -> str:
    """What the human column holds: the pairwise score chosen, or an MQM/ESA study's own score."""
    kind = result["human"].get("score")
    if kind in registry.names() and protocol_named(kind).comparison_score_label:
        return protocol_named(kind).comparison_score_label
    return {"expected_wins": "expected wins", "win_rate": "win rate", "bt": "Bradley–Terry"}[human_score]


def _meta_rows(meta: dict[str, Any] | None) -> dict[str, Any] | None:
    """The meta-evaluation block as table rows: per metric both levels, and the PERM-BOTH matrix best first."""
    if not meta:
        return None
    order = [c["metric"] for c in meta["clusters"]]
    ranks = {c["metric"]: c["rank"] for c in meta["clusters"]}
    sig = meta.get("significance", {})
    matrix = []
    for a in order:
        cells = []
        for b in order:
            p = sig.get(a, {}).get(b)
            cells.append({"p": p, "significant": p is not None and p <= meta["settings"].get("p_threshold", 0.05)})
        matrix.append({"metric": a, "rank": ranks[a], "cells": cells})
    return {"rows": [{"metric": m, "rank": ranks[m], **meta["system"][m],
                      **{f"seg_{k}": v for k, v in meta["segment"][m].items()}} for m in order],
            "order": order, "matrix": matrix, "settings": meta["settings"], "notes": meta.get("notes", [])}


def _system_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Systems in human rank order (then any only the evaluators scored), with every evaluator's score and rank."""
    human = result["human"]["systems"]
    names = sorted(human, key=lambda s: (human[s]["rank"] or 0, s))
    names += sorted({s for e in result["evaluators"] for s in e["systems"]} - set(names))
    rows = []
    for system in names:
        h = human.get(system)
        cells = []
        for e in result["evaluators"]:
            v = e["systems"].get(system)
            cells.append({"score": _num(v["score"], 4) if v else "—", "rank": v["rank"] if v else None,
                          "dip_n": v.get("dip_n_items") if v and e["system_score"] == "dip_eq1" else None})
        rows.append({"system": system, "human_score": _num(h["score"]) if h else "—",
                     "human_rank": h["rank"] if h else None, "cells": cells})
    return rows


def _page(request: HttpRequest, study: Study, *, run_form: EvaluatorRunForm | None = None,
          import_form: ScoreImportForm | None = None, import_errors: list[str] | None = None,
          status_code: int = 200) -> HttpResponse:
    references = study_references(study)
    options_form = CompareOptionsForm(request.GET or None)
    if options_form.is_valid() and _reference_known(options_form, references):
        options = options_form.options()
    else:  # no query (or a bad one, reported beside the form): the defaults
        options = dict(DEFAULT_COMPARISON)
        if request.GET:
            status_code = 400
    result, pending = comparison_or_job(study=study, options=options, user=request.user)
    if result is None:
        return render(request, "evaluators/compare_pending.html", {
            "study": study, "job": pending, "options": options, **_jobs_context(study, pending)}, status=status_code)
    t_tests = t_test_groups(result)
    detail_links = (sum(len(g["tests"]) for g in t_tests) + len(result.get("williams") or [])) > INLINE_DETAIL_ROWS
    return render(request, "evaluators/compare.html", {
        "study": study, "result": result, "options_form": options_form, "options": options,
        "detail_links": detail_links, "query": request.GET.urlencode(),
        "may_scores": access.can(request.user, "scores", study),
        "evaluator_rows": _evaluator_rows(result), "system_rows": _system_rows(result),
        "evaluator_names": [e["name"] for e in result["evaluators"]],
        "evaluator_heads": [{"name": e["name"], "dip": e["system_score"] == "dip_eq1",
                             "corpus": e["system_score"] == "corpus",
                             "better": "higher" if e["system_score_higher_is_better"] else "lower"}
                            for e in result["evaluators"]],
        "dip_rows": dip_rows(result), "mean_rows": mean_rows(result), "mean_units": mean_units(result),
        "t_test_groups": t_tests, "contrastive": contrastive_table(result.get("contrastive")),
        "corpus_groups": corpus_groups(result),
        "meta": _meta_rows(result.get("meta")),
        "human_label": _human_label(result, options["human_score"]),
        "run_form": run_form or EvaluatorRunForm(references=references),
        "import_form": import_form or ScoreImportForm(), "study_references": references,
        "import_errors": import_errors or [],
        "readiness": study_compare_readiness(study=study),
        # The report's default policies: the block is the report page's, computed once for both.
        "judges": judges_context(request, study, report_options({})[0]),
        **_jobs_context(study),
    }, status=status_code)


@require_GET
@staff_member_required
def compare_page(request: HttpRequest, slug: str) -> HttpResponse:
    return _page(request, access.study_for(request.user, slug, "compare"))


#: Above this many rows of paired t-tests and Williams tests together, the compare page links to them (one
#: evaluator's t-tests fetched when its section is opened) instead of printing them: on a WMT release (14
#: systems, 14 evaluators: 1,274 t-tests and 91 Williams tests) they were 500 of the page's 630 KB.
INLINE_DETAIL_ROWS = 300


@require_GET
@staff_member_required
def compare_detail(request: HtmxHttpRequest, slug: str, part: str) -> HttpResponse:
    """One evaluator's paired t-tests or scatter plot (``?evaluator=NAME``) or the Williams tests, for the page's options.

    From the same comparison as the page (cached or computed by its job); an htmx request gets the table only.
    """
    study = access.study_for(request.user, slug, "compare")
    if part not in ("t-tests", "williams", "plot"):
        raise Http404("no such part of the comparison")
    options_form = CompareOptionsForm(request.GET or None)
    if request.GET.get("human_score") or request.GET.get("bootstrap") or request.GET.get("seed") or \
            request.GET.get("reference"):
        if not (options_form.is_valid() and _reference_known(options_form, study_references(study))):
            return HttpResponse("Bad options: " + "; ".join(f"{k}: {' '.join(str(e) for e in v)}" for k, v in options_form.errors.items()),
                                status=400, content_type="text/plain; charset=utf-8")
        options = options_form.options()
    else:
        options = dict(DEFAULT_COMPARISON)
    result, _pending = comparison_or_job(study=study, options=options, user=request.user)
    if result is None:
        return HttpResponse("The comparison is still being computed: reload the compare page.", status=409,
                            content_type="text/plain; charset=utf-8")
    query = request.GET.copy()
    query.pop("evaluator", None)
    context: dict[str, Any] = {"study": study, "result": result, "part": part, "query": query.urlencode()}
    if part == "t-tests":
        name = request.GET.get("evaluator", "")
        group = next((g for g in t_test_groups(result) if g["name"] == name), None)
        if group is None:
            raise Http404(f"no evaluator {name!r} in this comparison")
        context |= {"g": group, "heading": f"Paired t-tests of {name}"}
        fragment = "evaluators/_t_test_table.html"
    elif part == "plot":
        name = request.GET.get("evaluator", "")
        row = next((e for e in _evaluator_rows(result) if e["name"] == name and e.get("plot")), None)
        if row is None:
            raise Http404(f"no scatter plot of {name!r} in this comparison")
        context |= {"e": row, "p": row["plot"], "heading": f"Human vs {name}"}
        fragment = "evaluators/_scatter_figure.html"
    else:
        context["heading"] = "Williams tests between evaluators"
        fragment = "evaluators/_williams_table.html"
    return render(request, fragment if request.htmx else "evaluators/compare_detail.html", context)


@require_POST
@staff_member_required
def compare_run(request: HttpRequest, slug: str) -> HttpResponse:
    study = access.study_for(request.user, slug, "scores")
    form = EvaluatorRunForm(request.POST, references=study_references(study))
    if not form.is_valid():
        return _page(request, study, run_form=form, status_code=400)
    names = list(dict.fromkeys(form.cleaned_data["evaluators"]))
    params: dict[str, Any] = {"evaluators": names}
    if form.cleaned_data.get("reference"):
        params["reference"] = form.cleaned_data["reference"]
    if form.cleaned_data.get("nlp"):
        params["nlp"] = form.cleaned_data["nlp"]
    if form.cleaned_data.get("paired") and form.cleaned_data["paired"] != "bs":
        params["paired"] = form.cleaned_data["paired"]
    job = job_submit(study=study, kind=JobKind.EVALUATE, params=params, user=request.user)
    messages.info(request, f"Queued {', '.join(names)} (job {job.pk}); its progress is shown below under "
                           "“Background jobs”, and the tables update when it is done.")
    return _back(request, study)


@require_POST
@staff_member_required
def compare_import(request: HttpRequest, slug: str) -> HttpResponse:
    study = access.study_for(request.user, slug, "scores")
    form = ScoreImportForm(request.POST, request.FILES)
    if not form.is_valid():
        return _page(request, study, import_form=form, status_code=400)
    file_name, content = form.cleaned_data["file"]
    if len(content.encode()) > settings.SCORE_IMPORT_INLINE_BYTES:
        job = job_submit(study=study, kind=JobKind.IMPORT_SCORES, payload=content, user=request.user,
                         params={"file_name": file_name, "name": form.cleaned_data.get("name") or "",
                                 "higher_is_better": form.higher_is_better()})
        audit(request.user, "scores_imported", study, file=file_name, job=job.pk, background=True, via="compare page")
        messages.info(request, f"{file_name} is large: it is imported in the background (job {job.pk}); "
                               "its progress and any errors are shown under “Background jobs”.")
        return _back(request, study)
    try:
        evaluators = scores_import(study=study, file_name=file_name, content=content,
                                   name=form.cleaned_data.get("name") or None, higher_is_better=form.higher_is_better())
    except ScoreFileError as exc:
        return _page(request, study, import_form=form, import_errors=exc.errors, status_code=400)
    audit(request.user, "scores_imported", study, file=file_name, via="compare page",
          evaluators={e.name: e.scores.count() for e in evaluators})
    for evaluator in evaluators:
        messages.success(request, f"{evaluator.name}: {evaluator.scores.count()} scores imported.")
    return _back(request, study)


@require_GET
@staff_member_required
def compare_jobs(request: HttpRequest, slug: str) -> HttpResponse:
    """The background-jobs panel (polled by htmx while a job is queued or running).

    ``?watch=ID&watch=ID`` names the jobs the page saw active: when one of them
    has finished since, the page must show new numbers, so htmx is told to
    reload it (``HX-Refresh``).
    """
    study = access.study_for(request.user, slug, "compare")
    watched = [int(v) for v in request.GET.getlist("watch") if v.isdigit()]
    response = render(request, "evaluators/_jobs.html", _jobs_context(study, _pending_job(request, study)))
    if watched and EvaluationJob.objects.filter(study=study, pk__in=watched, finished_at__isnull=False).exists():
        response["HX-Refresh"] = "true"
    return response


def _jobs_context(study: Study, pending: EvaluationJob | None = None) -> dict[str, Any]:
    """The jobs panel's context: recent jobs, the pending comparison (if any), and what to poll."""
    jobs = study_jobs(study)
    active = [j.pk for j in jobs if j.active] + ([pending.pk] if pending is not None and pending.active else [])
    poll_url = ""
    if active:
        query = "&".join(f"watch={pk}" for pk in active) + (f"&pending={pending.pk}" if pending is not None else "")
        poll_url = reverse("compare-jobs", args=[study.slug]) + "?" + query
    waiting = any(j.state == "queued" and (timezone.now() - j.created_at).total_seconds() > 60
                  for j in jobs + ([pending] if pending is not None else []))
    return {"study": study, "jobs": jobs, "pending": pending, "poll_url": poll_url, "jobs_waiting": waiting}


def _reference_known(form: CompareOptionsForm, references: list[str]) -> bool:
    """Whether the form's reference (if any) is one of the study's; if not, the error is put on the form."""
    chosen = form.cleaned_data.get("reference")
    if chosen and chosen not in references:
        form.add_error("reference", f"{chosen!r} is not a reference of this study; its references: "
                                    f"{', '.join(references) or 'none'}")
        return False
    return True


def _pending_job(request: HttpRequest, study: Study) -> EvaluationJob | None:
    value = request.GET.get("pending", "")
    return EvaluationJob.objects.filter(study=study, pk=int(value)).first() if value.isdigit() else None


def _back(request: HttpRequest, study: Study) -> HttpResponse:
    """Back to the page with the options the researcher had chosen (post/redirect/get)."""
    query = request.GET.urlencode()
    return redirect(reverse("compare-report", args=[study.slug]) + (f"?{query}" if query else ""))


class StudyCompareAPI(SchemaCheckedAPIView):
    """``GET /api/v1/studies/<slug>/compare``: the JSON of ``compare SLUG --json``."""

    @extend_schema(
        summary="Human judgments vs automatic evaluators (same JSON as `compare SLUG --json`)",
        parameters=[
            OpenApiParameter("human_score", str, enum=["expected_wins", "win_rate", "bt"],
                             description="Human system score (default expected_wins)."),
            OpenApiParameter("bootstrap", {"type": "integer", "minimum": 1, "maximum": 10_000},
                             description="Bootstrap resamples for CIs, 1 to 10000 (default 1000)."),
            OpenApiParameter("seed", {"type": "integer", "minimum": 0, "maximum": 2**32 - 1},
                             description="Bootstrap seed, 0 to 2³²−1 (default 0)."),
            OpenApiParameter("evaluator", str, many=True, description="Only these evaluators (repeatable)."),
            OpenApiParameter("reference", str,
                             description="One of the study's reference systems: the other references are ranked "
                                         "like systems and only evaluators scored against it are compared "
                                         "(default: every reference stays a reference; each evaluator names its "
                                         "own). 400 listing the references for another name."),
        ],
        responses={200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT,
                   403: OpenApiTypes.OBJECT, 404: OpenApiTypes.OBJECT},
        description="On a study with more judgments than COMPARE_INLINE_JUDGMENTS the statistics are computed by a "
                    "background task: until they are ready the answer is 202 with the job's state and progress "
                    "and a Retry-After header. Analysts and managers of the study (docs/access.md): 404 without a "
                    "role on it, 403 for a viewer.",
    )
    def get(self, request: Request, slug: str) -> Response:
        study = access.study_for(request.user, slug, "compare")
        form = CompareOptionsForm(request.query_params)
        if not form.is_valid() or not _reference_known(form, study_references(study)):
            errors = {field: [e["message"] for e in errs] for field, errs in form.errors.get_json_data().items()}
            return Response({"errors": errors}, status=status.HTTP_400_BAD_REQUEST)
        names = request.query_params.getlist("evaluator")
        if names:
            known = {e.name for e in evaluators_for_study(study=study)}
            unknown = [n for n in names if n not in known]
            if unknown:
                return Response({"errors": {"evaluator": [f"no scores for {', '.join(unknown)}; available: "
                                                          f"{', '.join(sorted(known)) or 'none'}"]}},
                                status=status.HTTP_400_BAD_REQUEST)
        result, job = comparison_or_job(study=study, options={"names": names or None, **form.options()},
                                        user=request.user)
        if result is None and job is not None:
            return Response({"state": job.state, "job": job.pk, "progress": job.percent,
                             "detail": "The comparison of this large study is being computed in the background; "
                                       "ask again shortly (or run `python manage.py compare SLUG --json`)."},
                            status=status.HTTP_202_ACCEPTED, headers={"Retry-After": "5"})
        return Response(result)
