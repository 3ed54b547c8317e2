"""The MQM protocol's spec."""
from __future__ import annotations

from typing import Any

from studies.definition.taxonomy import DEFAULT_MQM_TAXONOMY, MQM_SEVERITIES, normalise_taxonomy
from studies.models import Study

from protocols.spans.family import SpanFamily
from protocols.spans.prefill import prefill_settings_schema, with_suggestions
from protocols.mqm.pages import MqmPages
from protocols.mqm.quality import MqmQuality
from protocols.mqm.reports import MqmReports
from protocols.mqm.transfer import MqmTransfer


class Mqm(MqmPages, MqmTransfer, MqmReports, MqmQuality, SpanFamily):
    name = "mqm"
    label = "MQM (error spans with category and severity)"
    default_severities = tuple(MQM_SEVERITIES)
    answer_schema = with_suggestions(SpanFamily.annotations_schema(score=False))
    settings_schema = prefill_settings_schema()
    takes_prefill = True

    def uses_spans(self, study: Study) -> bool:
        return True

    def taxonomy(self, study: Study) -> list[dict[str, Any]]:
        return normalise_taxonomy(study.taxonomy) if study.taxonomy else DEFAULT_MQM_TAXONOMY

    def source_spans_allowed(self, study: Study) -> bool:
        return bool(study.show_source)  # annotators mark only what they see
