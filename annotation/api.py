"""The JSON annotation API (INTERFACES.md): one small view per operation.

Annotators authenticate with the token of their invitation link,
``Authorization: Token <token>``; the views call the same services as the pages.
"""
from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import AuthenticationFailed, ParseError
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from . import selectors, services
from .serializers import AssignmentOut, ErrorsOut, JudgmentIn, JudgmentOut
from .models import Annotator


def _annotator(request: Request) -> Annotator:
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, token = header.partition(" ")
    annotator = selectors.annotator_by_token(token.strip()) if scheme.lower() == "token" else None
    if annotator is None:
        raise AuthenticationFailed("Send the token of your invitation link as 'Authorization: Token <token>'.")
    return annotator


class AnnotatorAPIView(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    def get_authenticate_header(self, request: Request) -> str:
        return "Token"


class NextAssignmentAPI(AnnotatorAPIView):
    @extend_schema(summary="The annotator's current item (204 when nothing is left)",
                   responses={200: AssignmentOut, 204: None})
    def get(self, request: Request) -> Response:
        annotator = _annotator(request)
        assignment = services.assignment_next(annotator=annotator)
        if assignment is None:
            code = annotator.study.completion_code
            headers = {"X-Completion-Code": code} if code else {}
            return Response(status=status.HTTP_204_NO_CONTENT, headers=headers)
        candidates = list(assignment.item.candidates.all())
        data = selectors.assignment_payload(
            assignment=assignment, candidates=candidates,
            progress_data=selectors.progress(annotator=annotator))
        return Response(data)


class JudgmentSubmitAPI(AnnotatorAPIView):
    @extend_schema(summary="Submit (or revise) the answer to an assignment", request=JudgmentIn,
                   responses={201: JudgmentOut, 200: JudgmentOut, 400: ErrorsOut, 404: ErrorsOut})
    def post(self, request: Request, assignment: str) -> Response:
        annotator = _annotator(request)
        found = selectors.assignment_for_annotator(annotator=annotator, public_id=assignment)
        if found is None:
            return Response({"errors": {"assignment": ["No such assignment for this annotator."]}},
                            status=status.HTTP_404_NOT_FOUND)
        try:
            payload = request.data
        except ParseError as exc:
            return Response({"errors": {"body": [f"Malformed JSON: {exc.detail}"]}}, status=status.HTTP_400_BAD_REQUEST)
        try:
            judgment, created = services.judgment_submit(assignment=found, payload=payload)
        except services.JudgmentError as exc:
            return Response({"errors": exc.errors}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"judgment": judgment.public_id, "revision": judgment.revision},
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
