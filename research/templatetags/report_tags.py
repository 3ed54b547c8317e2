"""Number display for the report page: rounded for reading, unrounded in ``data-value``."""
from __future__ import annotations

from typing import Any

from django import template

from evaluators.reports.text import fmt

register = template.Library()


@register.filter
def num(value: Any, digits: int = 4) -> str:
    """Rounded for display (``—`` when undefined); very small p-values in scientific notation."""
    return fmt(value, int(digits))


@register.filter
def raw(value: Any) -> str:
    """The exact number as in the JSON (``repr`` of the float), empty when undefined."""
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


@register.filter
def percent(value: Any) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


@register.filter
def get(mapping: Any, key: str) -> Any:
    return mapping.get(key) if hasattr(mapping, "get") else None
