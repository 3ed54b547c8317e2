"""The planning page reports/<slug>/plan/: a planned study's power per system pair, rank ranges and cost, with the
study's judgments as the pilot (``plan_study --pilot SLUG``; evaluators/stats/planning.py). The pilot is cached
until the study's data changes (``study_pilot_cached``)."""
from __future__ import annotations

from typing import Any

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from evaluators.reports.selectors import study_pilot_cached
from evaluators.stats.planning import DEFAULT_POWER, Pilot, PlanningError, planning_report
from research.forms import PlanForm
from studies.access import rules as access

#: Simulated studies per plan on the page (the command's default; a plan of 14 systems takes about a second).
PAGE_REPLICATES = 1000


@require_GET
@staff_member_required
def plan(request: HttpRequest, slug: str) -> HttpResponse:
    """The form; with a query, the plan (bad values: 400 with the errors at their fields)."""
    study = access.study_for(request.user, slug, "report")
    try:
        pilot: Pilot | None = study_pilot_cached(study=study)
        problem = None
    except PlanningError as exc:
        pilot, problem = None, str(exc)
    context: dict[str, Any] = {"study": study, "pilot": pilot, "problem": problem, "result": None,
                               "replicates": PAGE_REPLICATES}
    asked = any(request.GET.get(name) for name in PlanForm.base_fields)
    form = PlanForm(request.GET if asked else None, systems=sorted(pilot.systems) if pilot else ())
    context["form"] = form
    if pilot is None or not asked:
        if pilot is not None:
            form.initial = {"items": len(pilot.items), "raters_per_item": 1, "power": DEFAULT_POWER}
        return render(request, "evaluators/plan.html", context)
    if not form.is_valid():
        return render(request, "evaluators/plan.html", context, status=400)
    data = form.cleaned_data
    if data.get("seconds_per_judgment"):
        pilot = Pilot(pilot.systems, pilot.items, pilot.scores, pilot.raters_per_cell, pilot.within_variance,
                      data["seconds_per_judgment"], pilot.dropped_items)
    pair = (data["pair_a"], data["pair_b"]) if data.get("pair_a") else None
    try:
        context["result"] = planning_report(
            pilot, items=data.get("items"), raters=data.get("raters_per_item") or 1, systems=data.get("systems"),
            pair=pair, power=data.get("power") or DEFAULT_POWER, replicates=PAGE_REPLICATES)
    except PlanningError as exc:
        form.add_error(None, str(exc))
        return render(request, "evaluators/plan.html", context, status=400)
    return render(request, "evaluators/plan.html", context)
