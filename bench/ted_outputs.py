"""The system outputs of one Google MQM TSV file (a TED release), shared by the bench scripts that score them."""
from __future__ import annotations

import csv
import re
from collections import defaultdict
from pathlib import Path

_MARK = re.compile(r"</?v>")


def read_outputs(path: Path, reference: str) -> tuple[dict[str, dict[tuple[str, int], str]], set[tuple[str, int]]]:
    """``{system: {(doc, seg_id): target without error markers}}`` and the (doc, seg_id) every system has.

    Exits naming the systems when ``reference`` is not one of them.
    """
    outputs: dict[str, dict[tuple[str, int], str]] = defaultdict(dict)
    csv.field_size_limit(1 << 24)
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            outputs[row["system"]][(row["doc"], int(row["seg_id"]))] = _MARK.sub("", row["target"]).strip()
    if reference not in outputs:
        raise SystemExit(f"{path}: no system {reference!r}; systems: {', '.join(sorted(outputs))}")
    return outputs, set.intersection(*(set(o) for o in outputs.values()))
