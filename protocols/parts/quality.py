"""The protocol's quality control: what a control or spam item checks and how a check passes (annotation.quality, studies.controls)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from studies.models import Candidate, Study


class QualityRules:
    name: ClassVar[str] = ""
    #: The spam check's rule in the researcher's words (the staff preview); ``{label}`` is the study's first label.
    spam_rule_text: ClassVar[str] = "the quality page's rule for this protocol"

    def spam_rule(self, study: Study) -> str:
        """The spam check's rule for a study, in words."""
        return self.spam_rule_text.format(label=study.labels[0] if study.labels else "none")

    def spam_answer_words(self, study: Study, answer: dict[str, Any],
                          candidates: list[Candidate]) -> tuple[list[str], str]:
        """What an annotator answered on a spam item, and what would have passed the check (staff only:
        the scrambled copy is named as such, real candidates by system)."""
        return [], ""
