"""GET /next: one indexed SELECT; POST /submit/<key>: one INSERT. Nothing else."""
from __future__ import annotations

import json
import os
import random

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET, require_POST

from .models import Answer, Row

#: Rows 0 … N-1 exist (bench/loadtest.py inserts them and sets the variable).
N_ROWS = int(os.getenv("BASELINE_ROWS", "1"))


@require_GET
def next_row(request: HttpRequest) -> HttpResponse:
    row = Row.objects.filter(key=random.randrange(N_ROWS)).first()
    if row is None:
        return HttpResponse(status=204)
    return JsonResponse({"assignment": str(row.key), **row.payload})


@require_POST
def submit(request: HttpRequest, key: int) -> HttpResponse:
    try:
        body = json.loads(request.body)
    except ValueError:
        return JsonResponse({"errors": {"body": ["Malformed JSON."]}}, status=400)
    if not isinstance(body, dict) or not isinstance(body.get("ranks"), dict):
        return JsonResponse({"errors": {"ranks": ["Required, an object."]}}, status=400)
    answer = Answer.objects.create(row_key=key, token=request.headers.get("Authorization", "")[:64], answer=body)
    return JsonResponse({"judgment": str(answer.pk)}, status=201)
