"""Which completion code an annotator gets when they finish: decided on the server, from the QC rule.

Pearmut decides pass/fail in the browser, where an annotator can read or forge
it; here the code exists nowhere before the annotator has finished: the done
page and the API's "nothing left" answer both call :func:`completion_for`.

The rule (docs/crowd.md, "Pass/fail completion codes"):

- the threshold is the study's ``pass_max_failed_share`` when set, else its
  ``auto_exclude_share``; with neither, everyone passes;
- an annotator who answered fewer than ``auto_exclude_min_checks`` spam checks
  passes (one unlucky answer is no evidence, as for automatic exclusion);
- otherwise they pass when failed checks / checks answered ≤ the threshold.

Passing shows ``completion_code``; failing shows ``failed_code``, else the
``screened_out_code``, else no code (the page then shows the contact line).
Each code shown is recorded once in the audit log (action
``completion_code_shown``), so payments can be reconciled with what each
participant saw; ``export_judgments SLUG --audit`` exports it.
"""
from __future__ import annotations

from dataclasses import dataclass

from studies.access.audit import audit
from studies.models import AuditEvent, Study

from annotation.models import Annotator, AssignmentStatus
from annotation.quality.checks import annotator_quality

AUDIT_ACTION = "completion_code_shown"


@dataclass(frozen=True)
class Completion:
    """The outcome of the pass rule for one annotator, and the code that goes with it ("" = none)."""
    passed: bool
    code: str
    checks: int
    failed_checks: int
    threshold: float | None

    @property
    def outcome(self) -> str:
        return "passed" if self.passed else "failed"


def pass_threshold(study: Study) -> float | None:
    """The largest share of failed spam checks that still passes (None: no rule, everyone passes)."""
    if study.pass_max_failed_share is not None:
        return study.pass_max_failed_share
    return study.auto_exclude_share


def passes(*, study: Study, checks: int, failed: int) -> bool:
    """The pass rule on counts (module docstring)."""
    threshold = pass_threshold(study)
    if threshold is None or checks < study.auto_exclude_min_checks or checks == 0:
        return True
    return failed / checks <= threshold


def failed_code(study: Study) -> str:
    """The code of a failed annotator: the failed code, else the screened-out code, else none."""
    return study.failed_code or study.screened_out_code


def completion_for(*, annotator: Annotator) -> Completion:
    """The annotator's outcome and code now (only their current answers to spam checks count)."""
    study = annotator.study
    threshold = pass_threshold(study)
    if threshold is None:
        return Completion(passed=True, code=study.completion_code, checks=0, failed_checks=0, threshold=None)
    quality = annotator_quality(annotator=annotator)
    ok = passes(study=study, checks=quality.spam_seen, failed=quality.spam_failed)
    return Completion(passed=ok, code=study.completion_code if ok else failed_code(study), checks=quality.spam_seen,
                      failed_checks=quality.spam_failed, threshold=threshold)


#: The API's outcome for an annotator with nothing left who answered nothing (the page: "No items are left
#: for you").
NO_WORK = "no-work"


def completion_headers(*, annotator: Annotator) -> dict[str, str]:
    """The API 204's ``X-Completion-Outcome`` and ``X-Completion-Code``: what the done page shows, recorded alike.

    No work: the study's completion code all the same, as INTERFACES.md promises every 204 of a study that has
    one (the outcome tells a client not to pay for it; the page shows no code).
    """
    if not annotator.assignments.filter(status=AssignmentStatus.DONE).exists():
        code = annotator.study.completion_code
        return {"X-Completion-Outcome": NO_WORK, **({"X-Completion-Code": code} if code else {})}
    done = completion_for(annotator=annotator)
    completion_record(annotator=annotator, completion=done, via="api")
    headers = {"X-Completion-Outcome": done.outcome}
    if done.code:
        headers["X-Completion-Code"] = done.code
    return headers


def completion_record(*, annotator: Annotator, completion: Completion, via: str) -> bool:
    """Record the code shown, unless the annotator's last record already says the same; True when written.

    ``via`` is "page" or "api". Revisiting the done page writes nothing new; a
    revised answer to a check that changes the outcome writes a new line.
    """
    study = annotator.study
    last = (AuditEvent.objects.filter(study=study, action=AUDIT_ACTION, details__annotator=annotator.code)
            .order_by("-at", "-pk").values_list("details", flat=True).first())
    if last is not None and last.get("code") == completion.code and last.get("outcome") == completion.outcome:
        return False
    sessions = [{k: v for k, v in s.items() if k != "at"} for s in annotator.external_sessions]
    audit(None, AUDIT_ACTION, study, annotator=annotator.code, external_id=annotator.external_id,
          sessions=sessions, outcome=completion.outcome, code=completion.code, checks=completion.checks,
          failed_checks=completion.failed_checks, threshold=completion.threshold, via=via)
    return True
