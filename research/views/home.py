"""``/``: researchers go to their dashboard; anyone else gets a short page saying what this is.

The admin's "View site" link points here, so a researcher always lands somewhere useful.
Annotators never need this page: they arrive through their invitation (or Prolific) link.
"""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    if request.user.is_active and request.user.is_staff:
        return redirect("studies:list")
    login = reverse("admin:login") + "?" + urlencode({"next": reverse("studies:list")})
    return render(request, "home.html", {"login_url": login})
