"""What every ``import_judgments`` format shares: the error, the control-copy suffixes, number parsing,
creating the closed study, and recording its provenance (``judgment_import`` and ``judgment_import_scores``).
"""
from __future__ import annotations

import hashlib
from typing import Any, Sequence

from django.utils import timezone

from config.safetext import json_problems, printable, text_problem
from studies.importing.study_file import ParsedStudy, StudyFileError, items_create, parse_study, unsaved_study
from studies.models import Candidate, Item, Status, Study

PLACEHOLDER = "(text not in the imported file)"
MAX_ERRORS = 50
SPAM_SUFFIX = "~spam"
#: Repeated-item copies (Appraise's CHK items): control copies like spam ones, but nothing scrambled.
CHECK_SUFFIX = "~chk"
CONTROL_SUFFIXES = (SPAM_SUFFIX, CHECK_SUFFIX)


class JudgmentImportError(ValueError):
    """The file cannot be imported; ``errors`` names every problem (by file and line where there is one)."""

    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


def unsafe_input(name: str, content: str, *, slug: str = "", reference_systems: Sequence[str] = ()) -> None:
    """Refuse a NUL character or lone surrogate anywhere in the file (named by line) or in the slug and system names.

    Every import format stores the file's cells as text; PostgreSQL refuses both with a traceback
    and SQLite stores them (config/safetext.py). Checked before anything is read from the database.
    """
    errors = []
    for option, value in [("--slug", slug), *(("--reference-system", system) for system in reference_systems)]:
        problem = text_problem(value)
        if problem:
            errors.append(f"{option}: “{printable(value)}” {problem}")
    if text_problem(content):
        for line_no, line in enumerate(content.splitlines(), start=1):
            problem = text_problem(line)
            if problem:
                errors.append(f"{name}: line {line_no}: {problem}")
                if len(errors) >= MAX_ERRORS:
                    break
    if errors:
        raise JudgmentImportError(errors)


def unsafe_json(value: Any, where: str) -> list[str]:
    """The NUL characters, lone surrogates, NaN and Infinity of a decoded JSON value, each named by ``where`` and field."""
    return [f"{where}: {field}: {problem}" for field, problem, _ in json_problems(value)]


def number(value: Any) -> int | float | str:
    """A finite number (ints kept as ints, so an export round-trips to the same text), else the problem."""
    if isinstance(value, bool):
        return f"{value!r} is not a number"
    if isinstance(value, (int, float)):
        result: int | float = value
    else:
        text = str(value).strip()
        try:
            result = int(text)
        except ValueError:
            try:
                result = float(text)
            except ValueError:
                return f"{value!r} is not a number"
    if isinstance(result, float) and (result != result or result in (float("inf"), float("-inf"))):
        return f"{value!r} is not a finite number"
    return result


def closed_study(name: str, data: dict[str, Any]) -> tuple[Study, ParsedStudy]:
    """The saved, closed study of a study-file dict (validated by ``parse_study``) and the parsed file; no items yet."""
    try:
        parsed: ParsedStudy = parse_study(data)
    except StudyFileError as exc:
        raise JudgmentImportError([f"{name}: {e}" for e in exc.errors][:MAX_ERRORS]) from None
    parsed.fields["status"] = Status.CLOSED
    study = unsaved_study(parsed)
    study.save()
    return study, parsed


def study_create(name: str, data: dict[str, Any]) -> tuple[Study, dict[str, Item]]:
    """The closed study of a study-file dict (validated by ``parse_study``) and its items by external id."""
    study, parsed = closed_study(name, data)
    created = {i.external_id: i for i in items_create(study=study, items=parsed.items)}
    return study, created


#: What each import format is, for the report's facts (``facts.collection.format_name``) and the methods paragraph.
FORMAT_NAMES = {
    "export": "this tool's judgment export (export_judgments)",
    "scores": "a long score CSV (one row per item, system and rater)",
    "appraise-csv": "Appraise's score export",
    "mtme": "an mt-metrics-eval segment score file",
    "mqm-tsv": "the TSV format of Google's WMT MQM human evaluation release",
}


def record_provenance(study: Study, *, name: str, fmt: str, content: str, summary: str, source: str = "",
                      format_name: str = "") -> Study:
    """Record where the judgments came from (file, format, SHA-256, counts, time, the user's ``source``).

    Twice: readable, appended to the study's description, and as data in ``Study.provenance``, which the
    report's ``facts`` block reads (so an edited description never changes what the report says).
    """
    digest = hashlib.sha256(content.encode("utf-8")).hexdigest()
    now = timezone.now()
    imported_at = now.strftime("%Y-%m-%d %H:%M:%S UTC")
    source = source.strip()
    provenance = (f"Imported with import_judgments from {name} (format {fmt}; sha256 {digest}; {summary}) "
                  f"on {imported_at}." + (f" Source: {source}." if source else ""))
    record = {"how": "imported", "format": fmt, "format_name": format_name or FORMAT_NAMES.get(fmt, fmt), "file": name,
              "sha256": digest, "source": source or None, "summary": summary, "imported_at": now.isoformat()}
    Study.objects.filter(pk=study.pk).update(
        description=((study.description + "\n\n") if study.description else "") + provenance, provenance=record)
    study.refresh_from_db()
    return study


#: Where each format's reference flags come from when no ``--reference-system`` is given.
REFERENCE_SOURCES = {
    "mqm-tsv": "by their names (ref, reference or human, optionally one letter or digit, optionally .N)",
    "export": "from the file's is_reference column",
    "scores": "from rows of type REF",
    "appraise-csv": "from rows of type REF",
    "mtme": "from rows of type REF",
}


def references_message(study: Study, fmt: str, given: list[str]) -> str:
    """What an import made references, and how (printed on stderr by ``import_judgments``)."""
    names = list(dict.fromkeys(Candidate.objects.filter(item__study=study, is_reference=True)
                               .order_by("position", "system").values_list("system", flat=True)))
    listed = ", ".join(names)
    if fmt == "mqm-tsv" and given:
        text = f"reference systems (--reference-system): {listed}"
    elif given:
        text = f"reference systems: {listed} ({REFERENCE_SOURCES.get(fmt, 'from the file')}, and --reference-system)"
    elif not names:
        return (f"no reference system ({REFERENCE_SOURCES.get(fmt, 'from the file')}: none): give "
                "--reference-system NAME if the file has human translations")
    else:
        how = "override with --reference-system NAME" if fmt == "mqm-tsv" else "add one with --reference-system NAME"
        text = f"reference systems {REFERENCE_SOURCES.get(fmt, 'from the file')}: {listed} ({how})"
    if len(names) > 1:
        text += (f"; {len(names)} references: bleu, chrf and ter score against all of them, other evaluators need "
                 "`evaluate --reference NAME` (and `compare --reference NAME` ranks the others like systems)")
    return text
