"""Display of times on the researcher's monitoring pages (dashboard, study page, annotator page)."""
from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils import timezone

register = template.Library()


@register.filter
def duration(value: timedelta | float | int | None) -> str:
    """A rounded, readable duration: '45 s', '12 min', '3 h 20 min', '2 d 4 h' ('—' when None)."""
    if value is None:
        return "—"
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    seconds = max(seconds, 0.0)
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


@register.filter
def ago(value: datetime | None) -> str:
    """'just now', '12 min ago', '3 h 20 min ago' for a past moment ('never' when None)."""
    if value is None:
        return "never"
    seconds = (timezone.now() - value).total_seconds()
    return "just now" if seconds < 60 else f"{duration(seconds)} ago"
