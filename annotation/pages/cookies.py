"""Signed cookies of the annotator pages: one way to read them (a forged, expired or foreign value reads as absent)."""
from __future__ import annotations

from django.core import signing
from django.http import HttpRequest


def signed_value(request: HttpRequest, name: str, *, salt: str, default: str = "",
                 max_age: int | None = None) -> str:
    """The text in the signed cookie ``name``; ``default`` without one, or with one whose signature fails."""
    try:
        value = request.get_signed_cookie(name, default=default, salt=salt, max_age=max_age)
    except signing.BadSignature:
        return default
    return value if isinstance(value, str) else default
