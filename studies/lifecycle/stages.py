"""The study's lifecycle: draft → pilot → open → closed.

* draft: only the staff preview works; annotator links say the study has not started.
* pilot: only pilot annotators (``invite --pilot``) get work; their judgments
  carry ``pilot`` in the export and reports leave them out unless asked.
* open: every invited annotator (and Prolific arrivals) get work.
* closed: no new work; answers to items already on screen are still kept.

The status stays editable in every direction (a study can be closed and
re-opened, or sent back to pilot); what is fixed once a study has judgments
is in studies/lifecycle/invariants.py.
"""
from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

from studies.access.audit import audit
from studies.models import Status, Study

#: The buttons the study page offers from each status (any status may still be set in the admin).
NEXT_STATUSES: dict[str, tuple[str, ...]] = {
    Status.DRAFT: (Status.PILOT, Status.OPEN),
    Status.PILOT: (Status.OPEN, Status.DRAFT),
    Status.OPEN: (Status.CLOSED,),
    Status.CLOSED: (Status.OPEN,),
}


def study_status_set(*, study: Study, status: str, user: Any = None, via: str = "page") -> Study:
    """Move the study to ``status`` (recorded in the audit log); ValidationError naming the field when it is not a status."""

    if status not in Status.values:
        raise ValidationError({"status": [f"{status!r} is not one of {', '.join(Status.values)}."]})
    before = Study.objects.filter(pk=study.pk).values_list("status", flat=True).first()
    Study.objects.filter(pk=study.pk).update(status=status)
    study.status = status
    audit(user, "status_changed", study, before=before, after=status, via=via)
    return study
