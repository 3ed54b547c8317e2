"""What the demo's blinding warnings mean for the demo's own studies (``load_demo`` prints them).

``load_demo`` runs the blinding lint (studies/controls/blinding.py) on every demo study it creates. A bare warning
left the reader to guess whether it matters; this module says, for each finding, whether it matters for
that study and why, from what the study is:

* a **connective-deletion** study (every system candidate is ``connective-deleted``, made by
  ``studies.generators.choice.connective_study``): both candidates are the same human reference, one with its
  connective (highlighted) and one without, so the reference is by construction the longer one and the
  only one with a highlight. The question is whether the connective helps, not which version is human:
  the cue does not matter for blinding.
* a **typographic** finding (quotes, ellipsis, dashes, spaces): matters, and ``normalise_typography``
  hides it (the demo studies turn it on, so none is left there).
* any other finding (length, final punctuation, first-letter case, highlights): a difference in the
  texts themselves, which matters whenever the study puts a human reference beside MT, with what it
  does to that protocol's figures.

Pure: no database, only the study file and the lint's report.
"""
from __future__ import annotations

from typing import Any

from studies.controls.blinding import BlindingReport, Finding

#: The system name of the connective generator's second candidate (studies/generators/choice.py).
CONNECTIVE_DELETED = "connective-deleted"

#: What a recognised reference does to each protocol's figures.
_CONSEQUENCE = {
    "ranking": "an annotator who notices can tell the human reference from the MT there and may rank it "
               "higher for being the reference, which would flatter the reference in the ranking",
    "choice": "an annotator who notices can tell the human reference from the MT there and may choose it "
              "for being the reference, which would flatter the reference's share of choices",
    "mqm": "the reference is annotated as one of the translations (not named as the reference); an annotator "
           "who recognises it may mark fewer errors in it, which would flatter the reference's MQM score",
    "esa": "the reference is scored as one of the translations (not named as the reference); an annotator "
           "who recognises it may score it higher, which would flatter the reference's ESA score",
}


def _is_connective_deletion(data: dict[str, Any]) -> bool:
    """Every item's system candidates are the reference with its connective deleted."""
    items = data.get("items") or []
    systems = {c.get("system") for i in items for c in i.get("candidates") or [] if not c.get("is_reference")}
    return bool(items) and systems == {CONNECTIVE_DELETED}


def _values(finding: Finding) -> str:
    return ", ".join(f"{v} in {n}" for v, n in sorted(finding.reference_values.items(), key=lambda x: -x[1]))


def finding_note(data: dict[str, Any], finding: Finding) -> str:
    """Whether one finding of the lint matters for this demo study, and why (one sentence)."""
    where = f"in {finding.n_separated} of {finding.n_items} items ({_values(finding)})"
    if _is_connective_deletion(data) and finding.feature in ("highlights", "length"):
        return (f"does not matter: {where} the reference is the candidate with the highlight and the longer "
                "one by design: the other candidate is the same human reference with its connective deleted, "
                "so both are human, and the study asks whether the connective helps, not which version is human")
    if finding.typographic:
        return (f"matters: {where} typography alone tells the human reference from the MT; normalise_typography "
                "hides it (straight quotes, \"...\", \"-\", plain spaces on annotators' screens)")
    consequence = _CONSEQUENCE.get(str(data.get("protocol")),
                                   "an annotator who notices can tell the human reference from the MT there")
    what = ("the reference's highlights differ from every MT candidate's (they come with the item's data, "
            "not from typography" if finding.feature == "highlights" else
            "the reference differs from every MT candidate in this feature of its text itself (not typography")
    return (f"matters: {where} {what}, so normalise_typography cannot hide it); {consequence}. The demo keeps the "
            "DiaBLa texts as published; for a study of your own, docs/protocols/blinding.md says what to do")


def blinding_notes(data: dict[str, Any], report: BlindingReport) -> list[tuple[str, str]]:
    """(warning, whether and why it matters) for every warning of the report, in its order."""
    notes = [(f.message(), finding_note(data, f)) for f in report.findings]
    if report.instructions_warning:
        notes.append((report.instructions_warning,
                      "matters: annotators who follow the instructions may fail spam checks they should pass"))
    return notes
