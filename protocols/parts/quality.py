"""The protocol's quality control: what a control or spam item checks and how a check passes (annotation.quality, studies.controls)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from studies.models import Candidate, Study


class QualityRules:
    name: ClassVar[str] = ""
    #: Spam items are control copies with one generated error (studies/controls/error_injection.py), checked
    #: by the spans marked on them; otherwise a spam item's candidate is a scrambled text.
    generated_error_controls: ClassVar[bool] = False
    #: The scores of control copies are compared with their originals' (one-sided Mann–Whitney per annotator).
    compares_control_scores: ClassVar[bool] = False
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

    def spam_check_failed(self, study: Study, answer: dict[str, Any], spam_pk: int, control: Any = None) -> bool:
        """Whether one answer to a spam item fails the check (docs/protocols/spam-and-quality.md).

        ``spam_pk`` is the scrambled (or degraded) candidate; ``control`` the item's control record
        where the protocol uses generated errors (annotation.quality.span_controls.SpanControl).
        """
        return False

    def reference_won(self, study: Study, answer: dict[str, Any], reference_pk: int) -> bool | None:
        """Whether the hidden reference won outright on a real item (None: the protocol has no such control)."""
        return None

    #: When a context probe counts as caught, in the researcher's words (docs/protocols/spam-and-quality.md).
    probe_rule_text: ClassVar[str] = "never: this protocol has no context-probe rule"

    def probe_caught(self, study: Study, answer: dict[str, Any], probe: Any) -> bool:
        """Whether one answer to a context probe caught its error (``probe``:
        annotation.quality.probes.ProbeRecord: the changed candidate ``probe_pk``, the unchanged original
        ``original_pk`` beside it or None, and the error's ``start``/``end`` in the changed text)."""
        return False
