"""The ESA protocol's spec (DA when the study turns spans off)."""
from __future__ import annotations

from studies.definition.taxonomy import ESA_SEVERITIES
from studies.models import Study

from protocols.spans.family import SpanFamily
from protocols.spans.prefill import prefill_settings_schema, with_suggestions
from protocols.esa.pages import EsaPages
from protocols.esa.quality import EsaQuality
from protocols.esa.reports import EsaReports
from protocols.esa.transfer import EsaTransfer


class Esa(EsaPages, EsaTransfer, EsaReports, EsaQuality, SpanFamily):
    name = "esa"
    label = "ESA (error spans, then a 0–100 score; DA without spans)"
    default_severities = tuple(ESA_SEVERITIES)
    allowed_severities = tuple(ESA_SEVERITIES)
    answer_schema = with_suggestions(SpanFamily.annotations_schema(score=True))
    settings_schema = prefill_settings_schema()
    takes_prefill = True

    def uses_spans(self, study: Study) -> bool:
        return bool(study.esa_spans)

    def uses_score(self, study: Study) -> bool:
        return True
