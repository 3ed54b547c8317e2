"""What the span protocols share in quality control, the spam check in words."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from annotation.quality.span_controls import candidate_score, span_check_passed, study_controls
from protocols.parts.quality import QualityRules
from studies.controls.spam import CONTROL_ERROR_KEY

if TYPE_CHECKING:
    from studies.models import Candidate, Study


class SpanQuality(QualityRules):
    generated_error_controls = True
    spam_rule_text = "passes only when a major or critical span overlaps the generated error"

    def spam_answer_words(self, study: Study, answer: dict[str, Any],
                          candidates: list[Candidate]) -> tuple[list[str], str]:
        """The annotator's spans and score on the degraded candidate, and where the generated error was."""
        bad = next((c for c in candidates if c.is_spam), None)
        if bad is None:
            return [], ""
        entry = answer.get("annotations", {}).get(str(bad.pk), {})
        answered = [f"{s['severity']} [{s['start']}, {s['end']}) “{bad.text[s['start']:s['end']]}”"
                    + (" in the source" if s.get("side") == "source" else "") for s in entry.get("spans", [])]
        answered = answered or (["no error marked"] if study.uses_spans else [])
        if "score" in entry:
            answered.append(f"score {entry['score']}")
        if not study.uses_spans:
            return answered, "a lower score for the degraded copy than for its original"
        record = bad.item.metadata.get(CONTROL_ERROR_KEY) if bad.item_id else None
        if not record:
            return answered, "a major or critical span on the scrambled copy"
        return answered, (f"a major or critical span overlapping [{record['start']}, {record['end']}) "
                          f"“{bad.text[record['start']:record['end']]}” ({record['kind']}: “{record['before']}” → "
                          f"“{record['after']}”)")

    def spam_check_failed(self, study: Study, answer: dict[str, Any], spam_pk: int, control: Any = None) -> bool:
        """Fails unless a major or critical span overlaps the generated error. DA's check needs the
        annotator's answer to the original too, so a single DA answer never fails here (the quality
        figures count DA checks)."""
        if not study.uses_spans:
            return False
        if control is None:
            control = next((c for c in study_controls(study).values() if c.candidate_pk == spam_pk), None)
        return not span_check_passed(answer=answer, candidate_pk=spam_pk, error=control.error if control else None)

    probe_rule_text = ("caught when a span of any severity overlaps the changed words, or (with scores) the changed "
                       "candidate scores lower than its unchanged original")

    def probe_caught(self, study: Study, answer: dict[str, Any], probe: Any) -> bool:
        """A target span of any severity overlapping the error (a context error may fairly be called minor),
        or a lower score for the changed candidate than for the original beside it."""
        entry = (answer.get("annotations") or {}).get(str(probe.probe_pk))
        spans = entry.get("spans") or [] if isinstance(entry, dict) else []
        for span in spans:
            if span.get("side", "target") == "target" and span["start"] < probe.end and probe.start < span["end"]:
                return True
        if study.uses_score and probe.original_pk is not None:
            changed, original = candidate_score(answer, probe.probe_pk), candidate_score(answer, probe.original_pk)
            return changed is not None and original is not None and changed < original
        return False
