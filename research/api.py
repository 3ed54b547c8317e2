"""Researcher API (staff only): the studies and their judgments.

Session or ``Authorization: Token <staff token>`` (rest_framework.authtoken;
``python manage.py create_api_token USERNAME``). The rows are the export's rows
(studies/export.py), streamed, so a large study never sits in memory as JSON.
"""
from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Iterator, Mapping, cast

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.permissions import IsAdminUser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from config.queryparams import SchemaCheckedAPIView
from annotation.dashboard import progress
from annotation.exporting.judgments import csv_lines, judgment_rows
from studies.access import rules as access
from studies.access.audit import audit
from studies.models import Study


class CSVRenderer(BaseRenderer):
    """Lets ``?format=csv`` through DRF's content negotiation; the view streams the body itself."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: str | None = None,
               renderer_context: Mapping[str, Any] | None = None) -> bytes:
        return json.dumps(data).encode() if data is not None else b""


class ResearcherAPIView(SchemaCheckedAPIView):
    """Staff only. Token first, so an unauthenticated call gets 401 with ``WWW-Authenticate: Token``.

    Errors are JSON whatever format the request asked for (``?format=csv`` included): a JSON
    body labelled text/csv would be read as a one-line CSV file. Query parameters are checked
    against the schema before the view runs (its base, config/queryparams.py).
    """

    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAdminUser]

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        response = super().finalize_response(request, response, *args, **kwargs)
        if isinstance(response, Response) and response.status_code >= 400:
            response.accepted_renderer = JSONRenderer()
            response.accepted_media_type = JSONRenderer.media_type
            cast(Any, response).renderer_context = self.get_renderer_context()
        return response


class StudyListAPI(ResearcherAPIView):

    class OutputSerializer(serializers.Serializer):
        slug = serializers.SlugField()
        title = serializers.CharField()
        protocol = serializers.CharField()
        status = serializers.CharField()
        unit = serializers.CharField()
        redundancy = serializers.IntegerField()
        n_items = serializers.IntegerField(help_text="Real items (spam copies not counted).")
        n_spam = serializers.IntegerField(help_text="Generated spam (control) items.")
        n_skipped = serializers.IntegerField(help_text="Real items skipped as clean by the suggestions' source "
                                                       "(prefill_skip_clean): never handed out, not needed.")
        n_annotators = serializers.IntegerField()
        n_done = serializers.IntegerField(help_text="Judged assignments.")
        n_needed = serializers.IntegerField(help_text="(items + spam items − skipped items) × redundancy.")
        progress = serializers.FloatField(help_text="n_done / n_needed, 0 to 1.")

    @extend_schema(summary="Studies with their counts and progress", responses=OutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        studies = progress.study_list(queryset=access.studies_visible_to(request.user)).order_by("-created_at")
        data = [{"slug": s.slug, "title": s.title, "protocol": s.protocol, "status": s.status, "unit": s.unit,
                 "redundancy": s.redundancy, "n_items": s.n_items, "n_spam": s.n_spam,
                 "n_skipped": s.n_skipped, "n_annotators": s.n_annotators, "n_done": s.n_done, "n_needed": s.n_needed,
                 "progress": s.n_done / s.n_needed if s.n_needed else 0.0} for s in studies]
        return Response(self.OutputSerializer(data, many=True).data)


def _json_array(rows: Iterator[dict[str, Any]]) -> Iterator[str]:
    def default(value: Any) -> str:
        if isinstance(value, datetime):
            return value.isoformat()
        raise TypeError(type(value).__name__)

    yield "["
    for k, row in enumerate(rows):
        yield ("," if k else "") + json.dumps(row, default=default, ensure_ascii=False)
    yield "]"


HISTORY_VALUES = {"false": False, "0": False, "true": True, "1": True}


class JudgmentRowSerializer(serializers.Serializer):
    """One (judgment, candidate) row: the export's columns (docs/export.md). Documents the schema only."""

    study = serializers.CharField()
    item = serializers.CharField(help_text="The item's id in the study file (spam copies end in ~spam).")
    document = serializers.CharField()
    annotator = serializers.CharField(help_text="The annotator's non-secret code.")
    system = serializers.CharField()
    is_reference = serializers.BooleanField()
    is_spam = serializers.BooleanField(help_text="The item is a generated spam (control) copy.")
    rank = serializers.IntegerField(allow_null=True, help_text="Ranking: this candidate's rank (1 = best).")
    choice = serializers.CharField(allow_null=True, help_text="Choice: the chosen system's name or the option.")
    # The export's column name; DRF moves declared fields off the class, so it never shadows Field.label.
    label = serializers.CharField(  # type: ignore[assignment]
        allow_null=True, help_text="Judgment: the labels given, joined by '+'.")
    screen_position = serializers.IntegerField(allow_null=True, help_text="1-based position on screen.")
    started_at = serializers.DateTimeField()
    submitted_at = serializers.DateTimeField()
    duration_ms = serializers.IntegerField(allow_null=True)
    is_spam_candidate = serializers.BooleanField(help_text="This candidate is the scrambled one.")
    judgment = serializers.CharField(help_text="The judgment's public id.")
    revision = serializers.IntegerField()
    is_current = serializers.BooleanField()
    phenomenon = serializers.CharField()
    protocol = serializers.CharField()
    chosen = serializers.BooleanField(allow_null=True, help_text="Choice: this candidate was chosen.")
    excluded = serializers.BooleanField(help_text="The annotator has been excluded.")
    client_duration_ms = serializers.IntegerField(
        allow_null=True, help_text="The client's own time on the item, when it sent both its times; duration_ms is "
                                   "the server's (from started_at to the answer's arrival).")


class StudyJudgmentsAPI(ResearcherAPIView):
    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(
        summary="The study's judgments, one row per (judgment, candidate); same columns as the export",
        parameters=[
            OpenApiParameter("format", OpenApiTypes.STR, enum=["json", "csv"], description="json (default) or csv."),
            OpenApiParameter("history", {"type": "string", "enum": ["true", "false", "1", "0"]},
                             description="Include superseded revisions: true or 1; false or 0 (default)."),
        ],
        responses={200: JudgmentRowSerializer(many=True), 403: OpenApiTypes.OBJECT, 404: OpenApiTypes.OBJECT},
        description="Analysts and managers of the study (docs/access.md): 404 without a role on it, 403 for a viewer.")
    def get(self, request: Request, slug: str) -> StreamingHttpResponse | Response:
        study = access.study_for(request.user, slug, "export")
        flag = request.query_params.get("history", "false")
        if flag not in HISTORY_VALUES:  # config/queryparams.py has refused it already; kept for direct calls
            return Response({"errors": {"history": [f"{flag!r} is not one of true, false, 1, 0."]}},
                            status=status.HTTP_400_BAD_REQUEST)
        history = HISTORY_VALUES[flag]
        rows = judgment_rows(study, history=history)
        audit(request.user, "judgments_exported", study, format=request.accepted_renderer.format, history=history,
              via="api")
        if request.accepted_renderer.format == "csv":
            return StreamingHttpResponse(csv_lines(rows), content_type="text/csv; charset=utf-8")
        return StreamingHttpResponse(_json_array(rows), content_type="application/json")
