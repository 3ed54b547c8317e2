"""Forms of the researcher's pages."""
from __future__ import annotations

import json
from typing import Any

from django import forms

from .importing import StudyFileError, read_items_file

MAX_INVITE = 200


class StudyImportForm(forms.Form):
    """A study file (JSON) and optionally its items in a separate file (JSON Lines or CSV)."""

    study_file = forms.FileField(label="Study file (JSON)",
                                 help_text="slug, title, protocol, settings and (unless given separately) items.")
    items_file = forms.FileField(label="Items file (optional)", required=False,
                                 help_text="JSON Lines (one item a line) or CSV (one candidate a row, .csv).")


def decode_upload(upload: Any, field: str) -> str:
    """The upload's text; StudyFileError naming the field when it is not UTF-8."""
    raw = upload.read()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise StudyFileError([f"{field}: not UTF-8 text (byte {exc.start})"])


def load_study_texts(study_text: str, items_name: str = "", items_text: str = "") -> tuple[Any, list | None]:
    """Decode a study file and optional items file; StudyFileError with the line of any JSON error."""
    try:
        data = json.loads(study_text)
    except json.JSONDecodeError as exc:
        raise StudyFileError([f"study file: line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg})"])
    items = None
    if items_name:
        try:
            items = read_items_file(items_name, items_text)
        except StudyFileError as exc:
            raise StudyFileError([f"items file {items_name}: {e}" for e in exc.errors])
    return data, items


class InviteForm(forms.Form):
    count = forms.IntegerField(min_value=1, max_value=MAX_INVITE, initial=3,
                               help_text=f"How many invitation links to create (1–{MAX_INVITE}).")
