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
from django.db import transaction

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


#: ``Study.provenance`` key of the record of a study closed by its adaptive allocation.
CLOSED_WHEN_SETTLED = "closed_when_settled"


def study_close_when_settled(*, study: Study, record: dict[str, Any]) -> bool:
    """Close an open study whose adaptive allocation has settled (``allocation.close_when_settled``); True when
    closed now.

    ``record`` (the time and the decisive figures, evaluators/live_allocation.py) is stored in
    ``Study.provenance["closed_when_settled"]`` and the status change in the audit log (``via: allocation``), in one
    transaction under the study row's lock. Only an open study, and only once: a study the researcher re-opened
    after it was closed this way stays open (the record is kept).
    """
    with transaction.atomic():
        row = Study.objects.select_for_update().filter(pk=study.pk).values_list("status", "provenance").first()
        if row is None or row[0] != Status.OPEN:
            return False
        provenance = dict(row[1]) if isinstance(row[1], dict) else {}
        if CLOSED_WHEN_SETTLED in provenance:
            return False
        provenance[CLOSED_WHEN_SETTLED] = record
        Study.objects.filter(pk=study.pk).update(status=Status.CLOSED, provenance=provenance)
        audit(None, "status_changed", study, before=Status.OPEN, after=Status.CLOSED, via="allocation",
              settled_at_judgments=record.get("judgments"))
    study.status = Status.CLOSED
    study.provenance = provenance
    return True
