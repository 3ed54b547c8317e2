"""Annotator pages (placeholder until the htmx pages land)."""
from django.http import HttpRequest, HttpResponse


def start(request: HttpRequest, token: str) -> HttpResponse:
    return HttpResponse("start")


def item_current(request: HttpRequest, token: str) -> HttpResponse:
    return HttpResponse("item")


def item_detail(request: HttpRequest, token: str, assignment: str) -> HttpResponse:
    return HttpResponse("item")


def done(request: HttpRequest, token: str) -> HttpResponse:
    return HttpResponse("done")
