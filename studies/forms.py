"""Forms of the researcher's pages."""
from __future__ import annotations

import json
from typing import Any

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.urls import reverse
from django.utils.html import format_html

from protocols import registry
from studies.importing.study_file import REDUNDANCY_MAX, REDUNDANCY_MIN, StudyFileError, read_items_file
from studies.lifecycle.invariants import candidate_change_errors, item_change_errors, study_change_errors
from studies.models import CHOICE_OPTIONS, LOCKED_CODE, Candidate, Item, Study
from formats.jsonlimits import JSONTooDeep, json_loads_limited

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
        data = json_loads_limited(study_text)
    except JSONTooDeep as exc:
        raise StudyFileError([f"study file: {exc}"])
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
    pilot = forms.BooleanField(required=False, help_text="Pilot annotators: the only ones with work while the study "
                                                         "is in pilot; their judgments are left out of reports.")


class LineListField(forms.CharField):
    """A list of short strings typed one per line, or comma separated on one line; stored as a JSON list.

    One per line wins when the text has several lines, so a label may itself
    contain a comma. Blank entries are dropped, surrounding spaces trimmed.
    """

    widget = forms.Textarea(attrs={"rows": 4, "cols": 40})

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list):
            return "\n".join(str(v) for v in value)
        return value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        if isinstance(value, list):
            return [str(v) for v in value]
        text = super().to_python(value) or ""
        parts = text.splitlines() if "\n" in text.strip() else text.split(",")
        return [p.strip() for p in parts if p.strip()]


def options_errors(options: list[str]) -> list[str]:
    bad = [o for o in options if o not in CHOICE_OPTIONS]
    errors = [f"Unknown option {o!r}: allowed are {', '.join(CHOICE_OPTIONS)}." for o in bad]
    if len(set(options)) != len(options):
        errors.append("An option is repeated.")
    return errors


def labels_errors(labels: list[str]) -> list[str]:
    seen: set[str] = set()
    repeated = [x for x in labels if x in seen or seen.add(x)]  # type: ignore[func-returns-value]
    errors = [f"Label {x!r} is repeated." for x in dict.fromkeys(repeated)]
    errors += [f"Label {x[:20]!r}… is longer than 100 characters." for x in labels if len(x) > 100]
    return errors


class StudyAdminForm(forms.ModelForm):
    """The study's admin form: options and labels as lists, and the running-study invariants with a way out."""

    protocol = forms.ChoiceField(choices=registry.choices, initial="ranking",
                                 help_text="How annotators answer: a registered protocol (manage.py protocols).")
    options = LineListField(help_text="Choice: extra answers besides the candidates, one per line or comma "
                                      f"separated, from: {', '.join(CHOICE_OPTIONS)}.")
    labels = LineListField(help_text="Judgment: the labels an annotator may give, one per line "
                                     "(or comma separated on one line).")

    class Meta:
        model = Study
        fields = "__all__"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("taxonomy", "severities", "mqm_weights", "allocation"):
            if name in self.fields:  # callable defaults (list, dict): compare with the stored value, not a hidden copy
                self.fields[name].show_hidden_initial = False
        redundancy = self.fields.get("redundancy")
        if isinstance(redundancy, forms.IntegerField):  # the study file's range, not the column's 0-32767
            redundancy.min_value, redundancy.max_value = REDUNDANCY_MIN, REDUNDANCY_MAX
            redundancy.validators = [v for v in redundancy.validators if not hasattr(v, "limit_value")] + [
                MinValueValidator(REDUNDANCY_MIN), MaxValueValidator(REDUNDANCY_MAX)]
            redundancy.widget.attrs.update(min=REDUNDANCY_MIN, max=REDUNDANCY_MAX)
            redundancy.help_text = f"Distinct annotators who judge each item ({REDUNDANCY_MIN}–{REDUNDANCY_MAX})."

    def clean_options(self) -> list[str]:
        options = self.cleaned_data["options"]
        errors = options_errors(options)
        if errors:
            raise forms.ValidationError(errors)
        return options

    def clean_labels(self) -> list[str]:
        labels = self.cleaned_data["labels"]
        errors = labels_errors(labels)
        if errors:
            raise forms.ValidationError(errors)
        return labels

    def _post_clean(self) -> None:
        super()._post_clean()  # type: ignore[misc]  # (a private hook: the instance now holds the proposed values)
        locked = study_change_errors(study=self.instance)
        for name, message in locked.items():
            self.add_error(name if name in self.fields else None, forms.ValidationError(message, code=LOCKED_CODE))
        if locked:
            url = reverse("admin:studies_study_copy", args=[self.instance.pk])
            handed_out = set(locked) == {"protocol_settings"} and "handed out" in locked["protocol_settings"]
            self.add_error(None, format_html(
                '{} <a href="{}">Copy as new study</a> to run it with the new settings '
                '(same items and candidates, no annotators or judgments).',
                "Items of this study were already handed out, so which items are skipped as clean is fixed."
                if handed_out else "This study already has judgments, so what gives them their meaning is fixed.",
                url))


class CandidateAdminForm(forms.ModelForm):
    """A candidate in the item admin: its text and system are fixed once the study has judgments."""

    class Meta:
        model = Candidate
        fields = "__all__"

    def _post_clean(self) -> None:
        super()._post_clean()  # type: ignore[misc]  # private hook, missing from the stubs
        if not self.has_changed():
            return  # an untouched row of the inline (extra or existing) is no change
        for name, message in candidate_change_errors(candidate=self.instance).items():
            self.add_error(name if name in self.fields else None, forms.ValidationError(message, code=LOCKED_CODE))


class ItemAdminForm(forms.ModelForm):
    """An item in the admin: the source and context annotators saw are fixed once the study has judgments."""

    class Meta:
        model = Item
        fields = "__all__"

    def _post_clean(self) -> None:
        super()._post_clean()  # type: ignore[misc]  # private hook, missing from the stubs
        for name, message in item_change_errors(item=self.instance).items():
            self.add_error(name if name in self.fields else None, forms.ValidationError(message, code=LOCKED_CODE))
