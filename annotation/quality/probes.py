"""Context probes on the quality side: which answers caught them, and the context-use rate (reads only).

A context probe (studies/controls/context_probes.py, made by studies/controls/spam.py) is a control
copy whose one changed word is wrong only in the document's context. Whether an answer caught it is
the protocol's rule (``QualityRules.probe_caught``: ranking, the changed candidate ranked below its
original; choice, the original chosen; judgment, no "good" label; MQM/ESA/pairwise, a span on the
changed words or a lower score than the original).

Per annotator: the **context-use rate** = probes caught ÷ probes answered, beside the **local control
catch rate** = spam (or generated-error) checks passed ÷ checks answered, each with a 95% Wilson score
interval (Wilson 1927; Brown, Cai & DasGupta 2001 recommend it for small n). An annotator who reads
each sentence alone passes the local checks and catches probes no more often than chance; one who
reads the document catches both. The interface (``unit``: sentence items or document blocks) is the
study's, so a study's rows are one interface; the report groups by it.

``context_use_summary`` is pure (no database) for reports and the simulation in bench/.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from django.db.models import Q

from studies.controls.spam import PROBE_KEY
from studies.models import Candidate, Study

#: z of a two-sided 95% interval.
_Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = _Z95) -> tuple[float, float] | None:
    """Wilson score interval of a binomial share (Wilson 1927); None for n = 0.

    Unlike the normal interval it stays inside [0, 1] and is not empty at 0 or n successes.
    """
    if n <= 0:
        return None
    share = successes / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class ProbeRecord:
    """One probe copy: its changed candidate, the unchanged original beside it (None: changed in place),
    where the error is in the changed text, and its kind."""
    item_id: int
    probe_pk: int
    original_pk: int | None
    start: int
    end: int
    kind: str
    distance: int


def probe_items_q(prefix: str = "") -> Q:
    """Rows whose item (``prefix``: the path to it, e.g. ``"item__"``) is a context probe."""
    return Q(**{f"{prefix}metadata__has_key": PROBE_KEY})


def study_probes(study: Study) -> dict[int, ProbeRecord]:
    """The study's context probes by item pk (one query)."""
    rows = (Candidate.objects.filter(probe_items_q("item__"), item__study=study)
            .values_list("pk", "item_id", "system", "is_spam", "item__metadata").order_by())
    by_item: dict[int, dict[str, Any]] = {}
    for pk, item_id, system, is_spam, metadata in rows:
        entry = by_item.setdefault(item_id, {"record": metadata.get(PROBE_KEY) or {}, "systems": {}, "changed": None})
        entry["systems"][system] = pk
        if is_spam:
            entry["changed"] = pk
    probes = {}
    for item_id, entry in by_item.items():
        record = entry["record"]
        if entry["changed"] is None or not isinstance(record.get("start"), int):
            continue
        probes[item_id] = ProbeRecord(
            item_id=item_id, probe_pk=entry["changed"], original_pk=entry["systems"].get(record.get("original_system")),
            start=record["start"], end=record["end"], kind=str(record.get("kind", "")),
            distance=int(record.get("distance", 0)))
    return probes


def probe_caught(*, study: Study, answer: Mapping[str, Any], probe: ProbeRecord) -> bool:
    """Whether one answer caught a probe (the protocol's rule)."""
    return study.spec.probe_caught(study, dict(answer), probe)


def rate_block(caught: int, seen: int) -> dict[str, Any]:
    """``{"seen", "caught", "rate", "ci_low", "ci_high"}`` (rate and interval None before the first)."""
    interval = wilson_interval(caught, seen)
    return {"seen": seen, "caught": caught, "rate": caught / seen if seen else None,
            "ci_low": interval[0] if interval else None, "ci_high": interval[1] if interval else None}


def context_use_summary(*, unit: str, probes: Mapping[str, Sequence[tuple[str, bool]]],
                        local: Mapping[str, tuple[int, int]]) -> dict[str, Any]:
    """The report's context-probe block from per-annotator outcomes (pure: no database).

    ``probes``: annotator code → [(kind, caught)] per probe answered; ``local``: annotator code →
    (local checks passed, local checks answered). Returns the interface ``unit``, the pooled
    context-use rate and local catch rate with Wilson intervals, the rate by kind of probe, and
    the same two rates per annotator.
    """
    by_kind: dict[str, list[bool]] = {}
    annotators: dict[str, dict[str, Any]] = {}
    for code in sorted(set(probes) | set(local)):
        outcomes = list(probes.get(code, []))
        for kind, caught in outcomes:
            by_kind.setdefault(kind, []).append(caught)
        passed, seen = local.get(code, (0, 0))
        annotators[code] = {"context_use": rate_block(sum(c for _, c in outcomes), len(outcomes)),
                            "local_catch": rate_block(passed, seen)}
    all_probes = [c for outcomes in probes.values() for _, c in outcomes]
    return {
        "unit": unit,
        "context_use": rate_block(sum(all_probes), len(all_probes)),
        "local_catch": rate_block(sum(p for p, _ in local.values()), sum(n for _, n in local.values())),
        "by_kind": {kind: rate_block(sum(v), len(v)) for kind, v in sorted(by_kind.items())},
        "annotators": annotators,
    }

