"""Reader and writer of the Google WMT MQM TSV format: re-exported from :mod:`studies.mqm_tsv_format`.

The parser moved to ``studies`` (the bottom layer of ``.importlinter``) so
that ``annotation`` -- ``import_judgments --format mqm-tsv`` and
``export_judgments --format mqm-tsv`` -- can use the same code as the
evaluators; every public name of this module keeps working from here.
Format and behaviour: ``docs/mqm.md``.
"""

from __future__ import annotations

from studies.mqm_tsv_format import (
    BASE_COLUMNS,
    CLOSE,
    MAX_LISTED,
    OPEN,
    Judgment,
    MqmData,
    MqmError,
    MqmTsvError,
    Segment,
    Side,
    Span,
    Unclosed,
    format_mqm_tsv,
    parse_mqm_tsv,
    read_mqm_tsv,
    strip_markers,
    text_line_of,
    write_mqm_tsv,
)

__all__ = [
    "BASE_COLUMNS",
    "OPEN",
    "CLOSE",
    "MAX_LISTED",
    "Side",
    "Unclosed",
    "Span",
    "MqmError",
    "Segment",
    "Judgment",
    "MqmData",
    "MqmTsvError",
    "read_mqm_tsv",
    "parse_mqm_tsv",
    "write_mqm_tsv",
    "format_mqm_tsv",
    "strip_markers",
    "text_line_of",
]
