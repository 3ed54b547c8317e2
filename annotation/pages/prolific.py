"""The Prolific entry: who may come in with a participant id (docs/crowd.md, "Who gets in").

The entry ``p/<slug>/`` is off until a manager gives the study its Prolific STUDY_ID
(``Study.prolific_study_id``); every arrival must carry that STUDY_ID. A participant id
(``PROLIFIC_PID``) is bound to the SESSION_ID and the browser that first used it: the
annotator keeps the SESSION_ID (``Annotator.entry_session``) and the browser a signed
cookie naming the id. Anyone else arriving with the same id (another browser, another
session) is refused and never learns the annotator's link, so a participant id that is
known or guessed is not a key to someone else's work. Ids invited with ``invite --ids``
are bound the same way, on their first use; one that has already been opened through
its own invitation link cannot be entered through ``p/<slug>/`` at all.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse

from studies.access.audit import audit
from studies.models import Study

from annotation.pages.cookies import signed_value
from annotation.models import Annotator
from annotation.handout.services import annotator_for_external_id

#: How long a browser stays bound (Prolific studies run for days, not months).
BROWSER_COOKIE_MAX_AGE = 60 * 60 * 24 * 90
_SALT = "annotation.pages.prolific.browser"
#: What Prolific's ids look like (PROLIFIC_PID, STUDY_ID, SESSION_ID): 24 hex digits today; letters and digits here.
PROLIFIC_ID = re.compile(r"[A-Za-z0-9]{1,200}")


@dataclass(frozen=True)
class Entry:
    """The outcome of one arrival: the annotator let in, or None when the id belongs to another browser or session."""
    annotator: Annotator | None


def entry_enabled(study: Study | None) -> bool:
    """True when the study takes Prolific arrivals (a manager set its Prolific STUDY_ID)."""
    return study is not None and bool(study.prolific_study_id)


def prolific_entry_set(*, study: Study, study_id: str, by: Any = None, via: str = "page") -> str:
    """Turn the Prolific entry on with Prolific's STUDY_ID, or off with ""; recorded in the audit log.

    ValidationError naming the field for an id that is not 1 to 200 letters and digits. Returns what changed.
    """
    study_id = study_id.strip()
    if study_id and not PROLIFIC_ID.fullmatch(study_id):
        raise ValidationError({"prolific_study_id": [
            "Prolific's STUDY_ID is 1 to 200 letters and digits (Prolific shows it in the study's URL and details)"]})
    if study_id == study.prolific_study_id:
        return f"The Prolific entry of {study.slug} is unchanged."
    Study.objects.filter(pk=study.pk).update(prolific_study_id=study_id)
    study.prolific_study_id = study_id
    audit(by, "settings_changed", study, fields=["prolific_study_id"], via=via)
    if study_id:
        return f"The Prolific entry of {study.slug} is on for Prolific study {study_id}."
    return f"The Prolific entry of {study.slug} is off: its link answers 404."


def _cookie_name(study: Study) -> str:
    return f"prolific-{study.pk}"


def browser_participant(request: HttpRequest, study: Study) -> str:
    """The participant id this browser entered the study with ("" for none, or a cookie that was not ours)."""
    return signed_value(request, _cookie_name(study), salt=_SALT)


def browser_bind(response: HttpResponse, study: Study, pid: str, *, secure: bool) -> None:
    """Remember in this browser that it entered the study as ``pid`` (signed: it cannot be written by hand)."""
    response.set_signed_cookie(_cookie_name(study), pid, salt=_SALT, max_age=BROWSER_COOKIE_MAX_AGE, httponly=True,
                               secure=secure, samesite="Lax")


def _used(annotator: Annotator) -> bool:
    """True when the annotator has opened their own link (an invitation with this id, ``invite --ids``)."""
    return annotator.instructions_seen_at is not None or annotator.assignments.exists()


def _arrived_before(annotator: Annotator, session_id: str) -> bool:
    """True when this SESSION_ID entered before binding existed (an annotator from an earlier version's entry):
    the session that created the annotator comes back and binds it."""
    return any(entry.get("prolific_session_id") == session_id for entry in annotator.external_sessions)


def prolific_enter(*, study: Study, pid: str, session_id: str, browser_pid: str) -> Entry:
    """Let ``pid`` in (creating its annotator on first arrival, binding it to ``session_id``), or refuse.

    ``browser_pid`` is what this browser's signed cookie says (:func:`browser_participant`). A bound id
    comes in only with its SESSION_ID and from a browser whose cookie names it; a refused arrival
    stores nothing (not even the attempt among the annotator's sessions).
    """
    annotator = study.annotators.filter(external_id=pid).first()
    if annotator is not None and annotator.entry_session:
        if annotator.entry_session != session_id or browser_pid != pid:
            return Entry(annotator=None)
    elif annotator is not None and _used(annotator) and not _arrived_before(annotator, session_id):
        return Entry(annotator=None)  # invited with this id and already at work through its own link
    else:
        annotator = annotator if annotator is not None else annotator_for_external_id(study=study, external_id=pid)
        unbound = Annotator.objects.filter(pk=annotator.pk, entry_session="")
        if not _arrived_before(annotator, session_id):
            unbound = unbound.filter(instructions_seen_at__isnull=True)
        bound = unbound.update(entry_session=session_id)
        if not bound:  # another arrival bound it at the same moment: only its own session goes on
            annotator.refresh_from_db(fields=["entry_session"])
            if annotator.entry_session != session_id:
                return Entry(annotator=None)
        annotator.entry_session = session_id
    session = {"prolific_study_id": study.prolific_study_id, "prolific_session_id": session_id}
    return Entry(annotator=annotator_for_external_id(study=study, external_id=pid, session=session))
