"""Researcher API: a study's agreement report (staff only, DRF's default IsAdminUser).

``GET /api/v1/studies/<slug>/agreement`` returns exactly the JSON of
``agreement SLUG --json`` (same options as query parameters), computed by the
same function, so the command, the API and the report page cannot disagree.
"""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from config.queryparams import SchemaCheckedAPIView
from studies.access import rules as access
from studies.models import Study

from evaluators.reports import selectors, study_stats

_PARAMS = [
    OpenApiParameter("ties", str, enum=["keep", "drop"], description="Keep 'tie' as a category (default) or drop tied units."),
    OpenApiParameter("spam", str, enum=["drop", "keep"], description="Drop spam items from agreement (default) or keep them."),
    OpenApiParameter("excluded", str, enum=["drop", "keep"], description="Drop excluded annotators (default) or keep them."),
    OpenApiParameter("pilot", str, enum=["drop", "keep"], description="Drop pilot annotators' judgments (default) or keep them."),
    OpenApiParameter("ranking_coding", str, enum=["system", "position"],
                     description="Rankings: label a candidate pair by the winning system (default) or by position "
                                 "(first / second / tie)."),
    OpenApiParameter("weights", str, enum=["identity", "quadratic", "linear", "ordinal"], description="Agreement weights."),
    OpenApiParameter("seed", {"type": "integer", "minimum": 0, "maximum": 2**32 - 1},
                     description="Bootstrap seed of the system ranking, 0 to 2³²−1 (default 0)."),
    OpenApiParameter("bootstrap", {"type": "integer", "minimum": 1, "maximum": 100_000},
                     description="Bootstrap resamples, 1 to 100000 (default 1000)."),
]


class StudyAgreementAPI(SchemaCheckedAPIView):
    @extend_schema(summary="A study's agreement report (same JSON as `agreement SLUG --json`)",
                   parameters=_PARAMS, responses={200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT,
                                                  404: OpenApiTypes.OBJECT},
                   description="Any member of the study (docs/access.md); 404 without a role on it.")
    def get(self, request: Request, slug: str) -> Response:
        study = access.study_for(request.user, slug, "report")
        options, errors = study_stats.report_options(request.query_params)
        if errors:
            return Response({"errors": errors}, status=status.HTTP_400_BAD_REQUEST)
        try:
            report = selectors.study_report_cached(study=study, options=options)
        except study_stats.ReportError as exc:
            return Response({"errors": {"study": [str(exc)]}}, status=status.HTTP_400_BAD_REQUEST)
        return Response(report)
