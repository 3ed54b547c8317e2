"""The audit log: one append-only :class:`~studies.models.AuditEvent` per thing a researcher did (docs/access.md).

Call :func:`audit` where the action happens (a view, an admin action, a command),
after it succeeded. The rows are never updated or deleted by the application; the
admin shows them read-only and ``export_judgments SLUG --audit`` exports a study's.
"""
from __future__ import annotations

import io
import json
from datetime import datetime
from typing import Any, Iterator

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from formats.csvcells import csv_writer
from studies.models import AuditEvent, Study

#: The actions recorded (docs/access.md, "Audit log").
ACTIONS = (
    "status_changed", "settings_changed", "invited", "excluded", "included", "study_imported",
    "judgments_exported", "scores_imported", "prefill_imported", "api_token_created", "member_added", "member_changed",
    "member_removed", "completion_code_shown", "judge_imported",
)

#: The export's columns (export_judgments SLUG --audit).
COLUMNS = ("at", "user", "study", "action", "details")


def audit(user: Any, action: str, study: Study | None = None, **details: Any) -> AuditEvent:
    """Record that ``user`` (None or anonymous: the server) did ``action`` on ``study``; ``details`` must be JSON."""
    if action not in ACTIONS:
        raise ValidationError({"action": [f"{action!r} is not one of {', '.join(ACTIONS)}."]})
    User = get_user_model()
    known = user if isinstance(user, User) and user.pk is not None else None
    return AuditEvent.objects.create(
        user=known, username=known.get_username() if known is not None else "", study=study,
        study_slug=study.slug if study is not None else "", action=action,
        details=json.loads(json.dumps(details, default=str)))


def study_events(study: Study) -> Any:
    """The study's events, oldest first (also those written before a rename: by pk, then by slug)."""
    return AuditEvent.objects.filter(study=study).order_by("at", "pk")


def _row(event: AuditEvent) -> dict[str, Any]:
    at: datetime = event.at
    return {"at": at.isoformat(), "user": event.username, "study": event.study_slug, "action": event.action,
            "details": event.details}


def audit_lines(study: Study, *, fmt: str, raw: bool = False) -> Iterator[str]:
    """The study's events as CSV (details as a JSON string; formula-like text escaped unless ``raw``) or JSON Lines."""
    if fmt == "csv":
        out = io.StringIO()
        writer = csv_writer(out, raw=raw, lineterminator="\n")
        writer.writerow(COLUMNS)
        yield out.getvalue()
        for event in study_events(study).iterator():
            out.seek(0)
            out.truncate(0)
            row = _row(event)
            writer.writerow([row["at"], row["user"], row["study"], row["action"],
                             json.dumps(row["details"], ensure_ascii=False, sort_keys=True)])
            yield out.getvalue()
        return
    for event in study_events(study).iterator():
        yield json.dumps(_row(event), ensure_ascii=False, sort_keys=True) + "\n"
