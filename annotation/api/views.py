"""The JSON annotation API (INTERFACES.md): one small view per operation.

Annotators authenticate with the token of their invitation link,
``Authorization: Token <token>``; the views call the same services as the pages.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

from django.http import HttpRequest
from drf_spectacular.utils import extend_schema

from rest_framework import status
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed, ParseError
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.items import selectors

from annotation.handout import services

from annotation.handout import skips
from annotation.api.serializers import (AssignmentOut, ConflictOut, ErrorsOut, ExcludedOut, JudgmentIn, JudgmentOut,
                                    SkipIn, SkipOut)
from annotation.quality.completion import completion_headers
from annotation.models import Annotator


def _token(request: HttpRequest | Request) -> str:
    scheme, _, token = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    return token.strip() if scheme.lower() == "token" else ""


NO_TOKEN = "Send the token of your invitation link as 'Authorization: Token <token>'."


def _annotator(request: Request) -> Annotator:
    annotator = selectors.annotator_by_token(_token(request))
    if annotator is None:
        raise AuthenticationFailed(NO_TOKEN)
    return annotator


class Answer(NamedTuple):
    """What an annotation endpoint answers, before rendering: the DRF views and the fast path
    (annotation/api/fastpath.py) render it alike (DRF's ``JSONRenderer``)."""

    status: int
    data: Any = None
    headers: dict[str, str] | None = None


def next_answer(token: str) -> Answer | None:
    """``GET next`` for this token: the current item (200), nothing left (204 with the completion headers) or
    excluded (403). None for an unknown token (the caller answers 401)."""
    found = selectors.annotator_for_next(token)
    if found is None:
        return None
    annotator, last, counts = found
    assignment = services.assignment_next(annotator=annotator, last=last)
    if assignment is None and annotator.excluded:
        # Not "nothing left": say so, with the study's contact and Prolific's screened-out code when set.
        study = annotator.study
        body = {"detail": "This study no longer needs answers from you; your previous answers are kept.",
                "contact": study.contact}
        if study.screened_out_code:
            body["screened_out_code"] = study.screened_out_code
        return Answer(status.HTTP_403_FORBIDDEN, body)
    if assignment is None:
        # The same server-side pass/fail decision as the done page (annotation/quality/completion.py).
        return Answer(status.HTTP_204_NO_CONTENT, headers=completion_headers(annotator=annotator))
    candidates = selectors.item_candidates(assignment)
    data = selectors.assignment_payload(
        assignment=assignment, candidates=candidates,
        progress_data=selectors.progress(
            annotator=annotator, counts=selectors.progress_after(counts, assignment.progress_delta)))
    return Answer(status.HTTP_200_OK, data)


def judgment_answer(token: str, assignment: str, payload: Callable[[], Any]) -> Answer | None:
    """``POST …/<assignment>/judgment``: 201 a new answer or revision, 200 the same answer again, 400 with the
    problems (nothing stored). ``payload`` returns the decoded body or raises ParseError. None when the token is
    unknown or the assignment is not its annotator's (the caller answers 401 or 404)."""
    # The usual case in one query: the token's annotator, their assignment and its candidates together.
    found = selectors.assignment_by_token(token=token, public_id=assignment, candidates=True)
    if found is None:
        return None
    try:
        body = payload()
    except ParseError as exc:
        return Answer(status.HTTP_400_BAD_REQUEST, {"errors": {"body": [f"Malformed JSON: {exc.detail}"]}})
    try:
        judgment, created = services.judgment_submit(assignment=found, payload=body,
                                                      candidates=found.candidates_loaded)
    except services.JudgmentError as exc:
        return Answer(status.HTTP_400_BAD_REQUEST, {"errors": exc.errors})
    return Answer(status.HTTP_201_CREATED if created else status.HTTP_200_OK,
                  {"judgment": judgment.public_id, "revision": judgment.revision})


class AnnotatorTokenAuthentication(BaseAuthentication):
    """The invitation token as ``Authorization: Token <token>``; ``request.user`` is the Annotator.

    Declared in the OpenAPI schema as ``annotatorToken`` (annotation/api/schema.py). A missing or
    unknown token is a 401 with ``WWW-Authenticate: Token``.
    """

    def authenticate(self, request: Request) -> tuple[Annotator, None] | None:
        view = (request.parser_context or {}).get("view")
        if getattr(view, "token_checked_by_view", False):
            return None  # the view looks the token up together with what it needs (one query)
        return _annotator(request), None

    def authenticate_header(self, request: Request) -> str:
        return "Token"


class IsAnnotator(BasePermission):
    """Authentication already refused anyone else with a 401; this tells the schema a token is required."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        return isinstance(request.user, Annotator)


class AnnotatorAPIView(APIView):
    authentication_classes = [AnnotatorTokenAuthentication]
    permission_classes = [IsAnnotator]


class CheckedByTheView(BasePermission):
    def has_permission(self, request: Request, view: APIView) -> bool:
        return True


class NextAssignmentAPI(AnnotatorAPIView):
    # The token is checked with the latest assignment and the progress counts in one query; unknown tokens
    # still get the 401.
    token_checked_by_view = True
    permission_classes = [CheckedByTheView]

    @extend_schema(summary="The annotator's current item (204 when nothing is left, 403 when excluded)",
                   description="The 204 carries `X-Completion-Outcome` (passed or failed: the study's pass rule "
                               "on the annotator's spam checks, decided on the server; no-work when they answered "
                               "nothing because every item already had its annotators) and `X-Completion-Code` "
                               "(the code for that outcome, when the study sets one; for no-work the study's completion code, "
                               "which a client should not pay), as the done page decides.",
                   responses={200: AssignmentOut, 204: None, 403: ExcludedOut})
    def get(self, request: Request) -> Response:
        answer = next_answer(_token(request))
        if answer is None:
            raise AuthenticationFailed(NO_TOKEN)
        return Response(answer.data, status=answer.status, headers=answer.headers)


def _not_theirs(request: Request) -> Response:
    """401 for a bad token (raised), else 404: the assignment is not the caller's."""
    _annotator(request)
    return Response({"errors": {"assignment": ["No such assignment for this annotator."]}},
                    status=status.HTTP_404_NOT_FOUND)


class JudgmentSubmitAPI(AnnotatorAPIView):
    # The token is checked with the assignment in one query; unknown tokens still get the 401.
    token_checked_by_view = True
    permission_classes = [CheckedByTheView]

    @extend_schema(summary="Submit (or revise) the answer to an assignment", request=JudgmentIn,
                   responses={201: JudgmentOut, 200: JudgmentOut, 400: ErrorsOut, 404: ErrorsOut})
    def post(self, request: Request, assignment: str) -> Response:
        answer = judgment_answer(_token(request), assignment, lambda: request.data)
        if answer is None:
            return _not_theirs(request)
        return Response(answer.data, status=answer.status, headers=answer.headers)


class SkipAPI(AnnotatorAPIView):
    """Skip an item with a reason (annotation/handout/skips.py): stored, counted in QC, the item back in the pool."""

    token_checked_by_view = True
    permission_classes = [CheckedByTheView]

    @extend_schema(summary="Skip an assignment with a reason; the item goes back to the pool for others",
                   description="The reason is required (not blank, at most 300 characters). The item is never "
                               "handed to this annotator again; `next` serves their following item. Skipping "
                               "an assignment twice answers the same 200 (the first reason is kept); an "
                               "assignment that has an answer cannot be skipped (409).",
                   request=SkipIn, responses={200: SkipOut, 400: ErrorsOut, 404: ErrorsOut, 409: ConflictOut})
    def post(self, request: Request, assignment: str) -> Response:
        found = selectors.assignment_by_token(token=_token(request), public_id=assignment)
        if found is None:
            return _not_theirs(request)
        try:
            reason = skips.skip_reason_validate(request.data)
        except ParseError as exc:
            return Response({"errors": {"body": [f"Malformed JSON: {exc.detail}"]}}, status=status.HTTP_400_BAD_REQUEST)
        except skips.SkipError as exc:
            return Response({"errors": exc.errors}, status=status.HTTP_400_BAD_REQUEST)
        try:
            skipped, _ = skips.assignment_skip(assignment=found, reason=reason)
        except skips.SkipConflict as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response({"assignment": skipped.public_id, "status": skipped.status, "reason": skipped.skip_reason})
