"""Invitation links."""
from django.conf import settings
from django.urls import reverse

from .models import Annotator


def invitation_url(annotator: Annotator, base_url: str | None = None) -> str:
    base = (base_url or settings.SITE_URL).rstrip("/")
    return base + reverse("annotation:start", args=[annotator.token])
