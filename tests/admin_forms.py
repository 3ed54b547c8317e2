"""POST data of an admin change page exactly as the browser would send it unchanged (main form and inlines)."""
from __future__ import annotations

from typing import Any


def _value(field: Any, bound: Any) -> Any:
    value = field.prepare_value(bound.initial if bound.initial is not None else field.initial)
    if value is None:
        return ""
    return value


def _form_data(form: Any, data: dict[str, Any]) -> None:
    for name, field in form.fields.items():
        bound = form[name]
        value = _value(field, bound)
        if isinstance(value, bool) or field.widget.__class__.__name__ == "CheckboxInput":
            if value:
                data[bound.html_name] = "on"
            continue
        if isinstance(value, (list, tuple)):
            data[bound.html_name] = list(value)
        else:
            data[bound.html_name] = value


def change_form_data(response: Any) -> dict[str, Any]:
    """The admin change page's forms (from the GET response's context) as POST data."""
    data: dict[str, Any] = {}
    _form_data(response.context["adminform"].form, data)
    for inline in response.context.get("inline_admin_formsets", []):
        formset = inline.formset
        for key, value in formset.management_form.initial.items():
            data[f"{formset.prefix}-{key}"] = value
        for form in formset.forms:
            _form_data(form, data)
    return data
